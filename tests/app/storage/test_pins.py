"""Pinned conversations: the stores list them first, most recently pinned first, then the rest
newest first; a pin survives reopening the SQLite file (schema 10's ``sessions.pinned_at``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.messages import UserMessage
from app.storage import InMemorySessionStore, SQLiteSessionStore
from app.storage.base import SessionInfo, listing_order


@pytest.mark.parametrize(
    ("sessions", "expected"),
    [
        # (id, updated_at, pinned_at)
        ([("a", 1.0, None), ("b", 2.0, None), ("c", 3.0, None)], ["c", "b", "a"]),
        ([("a", 1.0, 5.0), ("b", 2.0, None), ("c", 3.0, None)], ["a", "c", "b"]),
        ([("a", 1.0, 5.0), ("b", 2.0, 9.0), ("c", 3.0, None)], ["b", "a", "c"]),
        ([("a", 9.0, 1.0), ("b", 1.0, 2.0)], ["b", "a"]),  # pin time, not update time
        ([("b", 2.0, None), ("a", 2.0, None)], ["a", "b"]),  # a tie: by id, stable
    ],
)
def test_listing_order(
    sessions: list[tuple[str, float, float | None]], expected: list[str]
) -> None:
    infos = [SessionInfo(sid, None, 0.0, up, 1, pin) for sid, up, pin in sessions]
    assert [i.id for i in sorted(infos, key=listing_order)] == expected


async def _three(store: SQLiteSessionStore | InMemorySessionStore) -> None:
    for sid in ("old", "mid", "new"):
        await store.append(sid, "r", UserMessage(sid))


@pytest.mark.parametrize("kind", ["sqlite", "memory"])
async def test_pinned_first_then_newest(kind: str, tmp_path: Path) -> None:
    store = (
        SQLiteSessionStore(tmp_path / "c.sqlite") if kind == "sqlite" else InMemorySessionStore()
    )
    try:
        await _three(store)
        assert [s.id for s in await store.list_sessions()] == ["new", "mid", "old"]
        await store.pin_session("old", True)
        await store.pin_session("mid", True)
        listed = await store.list_sessions()
        assert [s.id for s in listed] == ["mid", "old", "new"]
        assert listed[0].pinned_at is not None and listed[2].pinned_at is None
        # A new message does not move a pinned one below another pinned one, nor unpin it.
        await store.append("old", "r", UserMessage("more"))
        assert [s.id for s in await store.list_sessions()] == ["mid", "old", "new"]
        await store.rename_session("old", "Renamed")
        info = await store.get_session("old")
        assert info is not None and info.pinned_at is not None and info.title == "Renamed"
        await store.pin_session("mid", False)
        assert [s.id for s in await store.list_sessions()] == ["old", "new", "mid"]
    finally:
        await store.close()


async def test_pin_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    store = SQLiteSessionStore(path)
    await _three(store)
    await store.pin_session("old", True)
    await store.close()
    reopened = SQLiteSessionStore(path)
    try:
        listed = await reopened.list_sessions()
        assert [s.id for s in listed] == ["old", "new", "mid"]
        assert listed[0].pinned_at is not None
        await reopened.pin_session("missing", True)  # no such conversation: nothing happens
        assert len(await reopened.list_sessions()) == 3
    finally:
        await reopened.close()
