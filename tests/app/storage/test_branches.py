"""The conversation tree in the stores (SQLite and memory): appends after a given message, the
current branch, versions, switching, the tail's cost, and the migration of linear histories."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app import AssistantMessage, UserMessage
from app.storage import InMemorySessionStore, SQLiteSessionStore
from app.storage.base import SessionStore
from app.storage.branches import TAIL_UP
from app.storage.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION


@pytest.fixture(params=["sqlite", "memory"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    made: SessionStore = (
        SQLiteSessionStore(tmp_path / "c.sqlite")
        if request.param == "sqlite"
        else InMemorySessionStore()
    )
    yield made
    await made.close()


async def texts(store: SessionStore, session: str = "s") -> list[str]:
    return [str(m.content) for m in await store.load(session)]


async def chain(store: SessionStore, n: int, session: str = "s") -> list[int]:
    seqs = []
    for i in range(n):
        message = UserMessage(f"q{i}") if i % 2 == 0 else AssistantMessage(f"a{i}")
        seqs.append(await store.append(session, "r", message))
    return seqs


async def test_a_linear_history_is_one_chain_ending_at_the_leaf(store: SessionStore) -> None:
    assert await chain(store, 4) == [1, 2, 3, 4]
    records = await store.load_records("s")
    assert [r.parent_seq for r in records] == [None, 1, 2, 3]
    assert await store.leaf("s") == 4
    assert await store.versions("s") == []
    assert await store.leaf("nobody") is None


async def test_an_append_after_an_earlier_message_forks_and_becomes_current(
    store: SessionStore,
) -> None:
    await chain(store, 4)  # q0 a1 q2 a3
    new = await store.append("s", "r2", UserMessage("q2 edited"), parent=2)
    assert new == 5
    assert await texts(store) == ["q0", "a1", "q2 edited"]
    assert await store.leaf("s") == 5
    assert await store.versions("s") == [(3, 5)]
    assert [m.content for m in await store.tail("s", 2)] == ["a1", "q2 edited"]
    # The next append follows the new leaf.
    await store.append("s", "r2", AssistantMessage("a for the edit"))
    assert await texts(store) == ["q0", "a1", "q2 edited", "a for the edit"]
    # Nothing was lost: the whole tree is there, in the order it was saved.
    assert [r.seq for r in await store.tree("s")] == [1, 2, 3, 4, 5, 6]


async def test_select_branch_goes_to_the_newest_message_under_it(store: SessionStore) -> None:
    await chain(store, 4)
    await store.append("s", "r", UserMessage("q2 again"), parent=2)  # 5
    await store.append("s", "r", AssistantMessage("a5"))  # 6
    assert await store.select_branch("s", 3) == 4
    assert await texts(store) == ["q0", "a1", "q2", "a3"]
    assert await store.select_branch("s", 5) == 6
    assert await texts(store) == ["q0", "a1", "q2 again", "a5"]
    # A message in the middle: down to the newest leaf under it (here the newer branch).
    assert await store.select_branch("s", 2) == 6
    with pytest.raises(LookupError, match="no message 99"):
        await store.select_branch("s", 99)
    assert await store.leaf("s") == 6


async def test_a_new_first_message_is_a_version_of_the_first(store: SessionStore) -> None:
    await chain(store, 2)
    assert await store.append("s", "r", UserMessage("another start"), parent=None) == 3
    assert await texts(store) == ["another start"]
    assert await store.versions("s") == [(1, 3)]
    assert await store.parent_of("s", 3) is None


async def test_append_many_chains_after_the_given_parent(store: SessionStore) -> None:
    await chain(store, 3)
    seqs = await store.append_many(
        "s", "r", [AssistantMessage("x"), UserMessage("y"), AssistantMessage("z")], parent=1
    )
    assert seqs == [4, 5, 6]
    assert await texts(store) == ["q0", "x", "y", "z"]
    assert [r.parent_seq for r in await store.load_records("s")] == [None, 1, 4, 5]


async def test_an_append_after_a_missing_message_saves_nothing(store: SessionStore) -> None:
    await chain(store, 2)
    with pytest.raises(LookupError, match="no message 7"):
        await store.append("s", "r", UserMessage("lost?"), parent=7)
    with pytest.raises(LookupError, match="no message 7"):
        await store.append_many("s", "r", [UserMessage("a"), UserMessage("b")], parent=7)
    assert [r.seq for r in await store.tree("s")] == [1, 2]
    assert await store.leaf("s") == 2


async def test_load_branch_reads_any_branch_without_switching(store: SessionStore) -> None:
    await chain(store, 4)
    await store.append("s", "r", UserMessage("other"), parent=2)  # 5
    assert [r.seq for r in await store.load_branch("s", 4)] == [1, 2, 3, 4]
    assert await store.load_branch("s", None) == []
    assert await store.leaf("s") == 5


async def test_records_after_a_seq_follow_the_branch(store: SessionStore) -> None:
    await chain(store, 4)
    await store.append("s", "r", UserMessage("other"), parent=2)  # 5
    assert [r.seq for r in await store.load_records("s", after_seq=1)] == [2, 5]
    assert [r.seq for r in await store.load_records("s", after_seq=0, limit=2)] == [1, 2]


# --- SQLite only -------------------------------------------------------------------------------


def query_plan(path: Path, sql: str, params: tuple[object, ...]) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [str(r[3]) for r in conn.execute("EXPLAIN QUERY PLAN " + sql, params)]


async def test_the_tail_of_a_forked_branch_walks_up_through_the_index(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "c.sqlite")
    await chain(store, 400)
    await store.append("s", "r", UserMessage("fork"), parent=200)
    assert [m.content for m in await store.tail("s", 3)] == ["q198", "a199", "fork"]
    await store.close()
    plan = query_plan(tmp_path / "c.sqlite", TAIL_UP, ("s", 401, 3))
    # Each step up is one lookup by (session_id, seq); no pass over the session's messages.
    assert any("SEARCH m USING INDEX" in step and "seq=?" in step for step in plan), plan
    assert not any(step.startswith("SCAN m") for step in plan), plan


async def test_a_load_reads_a_linear_branch_by_one_range_and_any_other_by_its_leaf(
    tmp_path: Path,
) -> None:
    """The whole-branch read of a never-forked conversation takes its leaf in the same statement
    (one thread hop); a forked, empty or unknown conversation falls back to the leaf's walk."""
    from app.storage.branches import _LINEAR_DATA

    store = SQLiteSessionStore(tmp_path / "c.sqlite")
    try:
        await chain(store, 4)
        assert await texts(store) == ["q0", "a1", "q2", "a3"]
        await store.append("s", "r", UserMessage("fork"), parent=2)
        assert await texts(store) == ["q0", "a1", "fork"]
        assert await store.select_branch("s", 3) == 4
        assert await texts(store) == ["q0", "a1", "q2", "a3"]
        await store.create_session("empty")
        assert await texts(store, "empty") == [] and await texts(store, "unknown") == []
        await store.append("t", "r", UserMessage("t1"), parent=None)
        assert await texts(store, "t") == ["t1"]
    finally:
        await store.close()
    plan = query_plan(tmp_path / "c.sqlite", _LINEAR_DATA, ("s",))
    assert any("sqlite_autoindex_messages_1 (session_id=? AND seq<?)" in p for p in plan), plan
    assert not any(step.startswith("SCAN") or "TEMP B-TREE" in step for step in plan), plan


def make_v6_database(path: Path) -> None:
    """A schema-6 database (before the tree) with two linear conversations."""
    from app.messages import message_to_json

    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    for step in MIGRATIONS[:6]:
        for statement in step:
            conn.execute(statement)
    for session, n in (("a", 5), ("b", 3)):
        for seq in range(1, n + 1):
            message = (
                UserMessage(f"{session}{seq}") if seq % 2 else AssistantMessage(f"{session}{seq}")
            )
            kind = "user" if seq % 2 else "assistant"
            conn.execute(
                "INSERT INTO messages(session_id, seq, request_id, kind, data, created_at) "
                "VALUES (?, ?, 'r', ?, ?, ?)",
                (session, seq, kind, message_to_json(message), float(seq)),
            )
    conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
    conn.execute("PRAGMA user_version=6")
    conn.execute("COMMIT")
    conn.close()


async def test_linear_histories_migrate_into_one_chain_each(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    make_v6_database(path)
    store = SQLiteSessionStore(path)
    assert await texts(store, "a") == ["a1", "a2", "a3", "a4", "a5"]
    assert [r.parent_seq for r in await store.load_records("a")] == [None, 1, 2, 3, 4]
    assert await store.leaf("a") == 5 and await store.leaf("b") == 3
    assert await store.versions("a") == []
    # It grows and forks like a new one.
    assert await store.append("b", "r", UserMessage("b2 edited"), parent=1) == 4
    assert await texts(store, "b") == ["b1", "b2 edited"]
    await store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("SELECT forked FROM sessions ORDER BY id").fetchall() == [(0,), (1,)]


async def test_a_stop_record_belongs_to_the_branch_it_ended(tmp_path: Path) -> None:
    from app.storage.journal import SessionJournal, StopKind

    store = SQLiteSessionStore(tmp_path / "c.sqlite")
    journal = SessionJournal(store)
    await chain(store, 2)  # q0 a1
    await store.append("s", "r", UserMessage("q0, edited"), parent=None)  # 3
    await journal.record_stop("s", StopKind.CONNECTION, "The connection dropped.")
    stop = await journal.stop_record("s")
    assert stop is not None and stop.kind is StopKind.CONNECTION
    await store.select_branch("s", 1)  # the first version ended normally: not its reason
    assert await journal.stop_record("s") is None
    await store.select_branch("s", 3)
    assert (await journal.stop_record("s")) == stop
    await store.close()
