"""The core in five lines: a conversation saved in SQLite that picks up where it stopped.

python examples/core_in_five_lines.py [BASE_URL MODEL]   (default: a local Ollama, llama3.2)
"""

import asyncio
import sys
from pathlib import Path

from app import Agent, AgentRunConfig, SQLiteSessionExtension, tool
from app.providers import OpenAICompatibleModel


@tool(side_effects=True)
def write_file(path: str, text: str) -> str:
    """Write text to a file in the current folder."""
    target = Path.cwd() / Path(path).name
    target.write_text(text, encoding="utf-8")
    return f"wrote {len(text)} characters to {target.name}"


async def main(base_url: str = "http://127.0.0.1:11434/v1", model: str = "llama3.2") -> None:
    storage = SQLiteSessionExtension("chats.sqlite")
    agent = await Agent.create(
        OpenAICompatibleModel(base_url, model),
        config=AgentRunConfig("my-session"),
        tools=[write_file],
        extensions=[storage],
    )
    try:
        reply = await agent.run("Refactor the parser")
    except Exception:
        if (point := await agent.resume_point()) is None:  # reads the tail, writes nothing
            raise
        print(point.kind, point.description)
        reply = await agent.resume()  # never re-runs a tool
    print(reply.content)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:3]))
