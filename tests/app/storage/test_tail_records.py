"""Reading a branch from its end (SQLite and memory stores): ``tail_records`` gives the last n
records of the current branch, or the n above a message, with their seqs and parents — the
same records a whole read gives, so a conversation opened from its end and scrolled up shows
exactly what opening it whole shows."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app import AssistantMessage, UserMessage
from app.storage import InMemorySessionStore, SQLiteSessionStore
from app.storage.base import SessionStore


@pytest.fixture(params=["sqlite", "memory"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    made: SessionStore = (
        SQLiteSessionStore(tmp_path / "c.sqlite")
        if request.param == "sqlite"
        else InMemorySessionStore()
    )
    yield made
    await made.close()


async def chain(store: SessionStore, n: int, session: str = "s") -> None:
    for i in range(n):
        message = UserMessage(f"q{i}") if i % 2 == 0 else AssistantMessage(f"a{i}")
        await store.append(session, "r", message)


@pytest.mark.parametrize(
    ("n", "before", "seqs"),
    [
        (3, None, [8, 9, 10]),
        (20, None, list(range(1, 11))),  # more than there are: all of them
        (3, 8, [5, 6, 7]),
        (3, 2, [1]),
        (3, 1, []),  # nothing above the first message
        (0, None, []),
    ],
)
async def test_the_tail_of_a_linear_branch(
    store: SessionStore, n: int, before: int | None, seqs: list[int]
) -> None:
    await chain(store, 10)
    records = await store.tail_records("s", n, before=before)
    assert [r.seq for r in records] == seqs
    whole = {r.seq: r for r in await store.load_records("s")}
    assert all(r == whole[r.seq] for r in records)  # the same records a whole read gives


async def test_the_tail_of_a_forked_branch_follows_its_parents(store: SessionStore) -> None:
    await chain(store, 6)  # q0 a1 q2 a3 q4 a5 (seqs 1..6)
    await store.append("s", "r2", UserMessage("q2 edited"), parent=2)  # 7
    await store.append("s", "r2", AssistantMessage("a edited"))  # 8
    assert [r.seq for r in await store.tail_records("s", 3)] == [2, 7, 8]
    assert [r.seq for r in await store.tail_records("s", 5, before=7)] == [1, 2]
    assert [str(r.message.content) for r in await store.tail_records("s", 4)] == [
        "q0",
        "a1",
        "q2 edited",
        "a edited",
    ]
    # Read piece by piece from the end, the branch is exactly the whole read.
    pieces: list[int] = []
    before: int | None = None
    while True:
        part = await store.tail_records("s", 1, before=before)
        if not part:
            break
        pieces[:0] = [r.seq for r in part]
        before = part[0].seq
    assert pieces == [r.seq for r in await store.load_records("s")]


async def test_a_message_of_another_conversation_is_refused(store: SessionStore) -> None:
    await chain(store, 2)
    with pytest.raises(LookupError):
        await store.tail_records("s", 3, before=99)
    assert await store.tail_records("nobody", 3) == []
