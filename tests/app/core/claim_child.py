"""A child process resuming one conversation through ``SQLiteSessionExtension``.

``python claim_child.py DB SESSION OPENAI_BASE_URL LOG hold|plain``: resumes SESSION with one tool,
``side_effect``, that appends this process's id to LOG and prints ``IN_TOOL``; in ``hold`` mode
it then waits for a line on stdin (so the parent decides when the request ends). Prints
``BUSY <message>`` if the conversation is claimed elsewhere, ``COMPLETED`` when the request ends.
"""

from __future__ import annotations

import asyncio
import os
import sys

from app import AgentRunConfig, SessionBusyError
from app.agent import Agent
from app.providers import OpenAICompatibleModel
from app.storage.sqlite import SQLiteSessionExtension


async def main(db: str, session_id: str, base_url: str, log: str, mode: str) -> None:
    async def side_effect() -> str:
        """Append a line to the side-effect log."""
        with open(log, "a") as handle:
            handle.write(f"{os.getpid()}\n")
        print("IN_TOOL", flush=True)
        if mode == "hold":
            await asyncio.to_thread(sys.stdin.readline)
        return "done"

    model = OpenAICompatibleModel(base_url, "sim-echo")
    storage = SQLiteSessionExtension(db)
    agent = await Agent.create(
        model, AgentRunConfig(session_id), tools=[side_effect], extensions=[storage]
    )
    try:
        async for _event in agent.stream_resume():
            pass
    except SessionBusyError as err:
        print(f"BUSY {err}", flush=True)
    else:
        print("COMPLETED", flush=True)
    finally:
        await model.aclose()
        await storage.storage.close()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
