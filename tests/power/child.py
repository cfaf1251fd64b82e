"""The recorded process: appends through the real store with ``synchronous=FULL``, run under the
LD_PRELOAD recorder (:mod:`tests.power.shim`), marking each append's return in the recording.

Usage: python -m tests.power.child SCENARIO DB SEED COUNT [SYNCHRONOUS]

* ``appends``: ``COUNT`` messages of seeded lengths (some spill onto overflow pages) appended to
  one conversation by :class:`~app.storage.sqlite.SQLiteSessionStore`, in three runs of the
  store (open, append, close: each close checkpoints the ``-wal`` into the file and deletes it,
  each reopen starts a new ``-wal``), as the app does across restarts.
* ``agent``: one whole agent request with a tool (:class:`~app.testing.ScriptedModel` asks for
  ``write_note``, then answers), through :class:`~app.SQLiteSessionExtension`.

After each append returns (for the agent: each ``MESSAGE_SAVED`` event), the child calls the
shim's ``power_mark`` with ``SAVED <session> <seq> <sha256 of the message's JSON>``: the
recording then says, at every cut point, which messages must survive it. ``SYNCHRONOUS`` is
``full`` (the default, the app's setting) or ``normal`` (to show what that setting loses).
"""

from __future__ import annotations

import asyncio
import ctypes
import hashlib
import random
import sys
from typing import Literal

from app import (
    Agent,
    AgentRunConfig,
    MessageSavedEvent,
    SQLiteSessionExtension,
    ToolCall,
    tool,
)
from app.messages import AssistantMessage, Message, UserMessage, message_to_json
from app.testing import ScriptedModel, text_step, tool_step

SESSION = "power"

_mark = ctypes.CDLL(None).power_mark
_mark.argtypes = [ctypes.c_char_p]
_mark.restype = None


def mark(text: str) -> None:
    _mark(text.encode("utf-8"))


def saved(session_id: str, seq: int, message: Message) -> None:
    digest = hashlib.sha256(message_to_json(message).encode("utf-8")).hexdigest()
    mark(f"SAVED {session_id} {seq} {digest}")


def text_of_length(rng: random.Random, n: int, index: int) -> str:
    words = ["power", "cut", "page", "sector", "wal", "journal", "sync", "torn", "ok", "λόγος"]
    out = [f"message {index}:"]
    size = len(out[0])
    while size < n:
        word = rng.choice(words)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


Sync = Literal["full", "normal"]


async def appends(db: str, seed: int, count: int, synchronous: Sync) -> None:
    rng = random.Random(seed)
    runs = 3
    index = 0
    for run in range(runs):
        store = SQLiteSessionExtension(db, synchronous=synchronous).storage
        await store.open()
        mark(f"OPENED {run}")
        if run == 0:
            await store.create_session(SESSION, "power cut")
        for _ in range(count * (run + 1) // runs - count * run // runs):
            length = rng.choice([20, 200, 1500]) if rng.random() < 0.85 else rng.randint(5000, 9000)
            text = text_of_length(rng, length, index)
            message: Message = UserMessage(text) if index % 2 == 0 else AssistantMessage(text)
            seq = await store.append(SESSION, f"req-{index // 2}", message)
            saved(SESSION, seq, message)
            index += 1
        await store.close()
        mark(f"CLOSED {run}")


async def agent_request(db: str, seed: int, synchronous: Sync) -> None:
    @tool(side_effects=True)
    def write_note(name: str) -> str:
        """Write a note."""
        return f"wrote {name}"

    model = ScriptedModel(
        [
            tool_step(ToolCall("call_1", "write_note", {"name": f"n{seed}"}), text="Writing it."),
            text_step(f"Done: the note n{seed} is written."),
        ]
    )
    extension = SQLiteSessionExtension(db, synchronous=synchronous)
    agent = await Agent.create(
        model, config=AgentRunConfig(SESSION), tools=[write_note], extensions=[extension]
    )
    async for event in agent.stream("Please write a note"):
        if isinstance(event, MessageSavedEvent) and event.seq is not None:
            saved(SESSION, event.seq, event.message)
    await extension.storage.close()
    mark("CLOSED agent")


def main(argv: list[str]) -> None:
    scenario, db, seed, count = argv[0], argv[1], int(argv[2]), int(argv[3])
    synchronous: Sync = "normal" if argv[4:5] == ["normal"] else "full"
    if scenario == "appends":
        asyncio.run(appends(db, seed, count, synchronous))
    elif scenario == "agent":
        asyncio.run(agent_request(db, seed, synchronous))
    else:
        raise SystemExit(f"unknown scenario {scenario!r} (appends or agent)")


if __name__ == "__main__":
    main(sys.argv[1:])
