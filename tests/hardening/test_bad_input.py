"""Hostile text through the app's services and the simulator's echo: saved, answered, and
reloaded exactly by a fresh ``AppServices`` (and exported without loss)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from pathlib import Path

import pytest

from app import AssistantMessage, EventType, UserMessage
from app.services import AppServices
from app.simulator import Reply
from app.storage.sqlite import SearchHit, SQLiteSessionStore

from .conftest import BOUND, open_services

# 100k lines and ~3.4 MB, one word a line: the simulator's echo streams one token per word, so
# spaced-out lines ("line_1 = 1  # ok", five words) made 500k streamed tokens and ~25 s of the
# suite for the same lines and size.
CODE_BLOCK = (
    "```python\n" + "\n".join(f"line_{i}=compute({i},'ok')#ok" for i in range(100_000)) + "\n```"
)
TEXTS = {
    "NUL bytes": "before\x00after \x00\x00 end\x00",
    "lone surrogates": "broken \ud800 paste \udfff end \ud83d",
    "paired surrogates": "smile \ud83d\ude00 ok",  # a pair split into two code points
    "RTL and emoji": "مرحبا بالعالم — שלום עולם 👩‍👩‍👧‍👦 🇯🇵 e\u0301 \u202eevil\u202c \ufeff",
    "100k-line code block": CODE_BLOCK,
}


def as_stored(text: str) -> str:
    """What the store gives back: the text itself; a surrogate *pair* comes back joined as the
    one character it encodes (the same text in UTF-16), lone surrogates stay as they were."""
    stored: str = json.loads(json.dumps(text))
    return stored


def as_sent(text: str) -> str:
    """What a provider can receive: pairs joined, lone surrogates as U+FFFD."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


async def reopened_history(
    data_dir: Path, session_id: str
) -> tuple[list[object], dict[str, object]]:
    fresh = AppServices(data_dir)
    try:
        await fresh.open()
        history: list[object] = list(await fresh.history(session_id))
        exported = json.loads(await fresh.export_json(session_id))
        assert await fresh.storage.storage.integrity_check() == ["ok"]
        return history, exported
    finally:
        await fresh.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", TEXTS)
async def test_hostile_text_round_trips(services: AppServices, name: str) -> None:
    text = TEXTS[name]
    session = await services.new_session(text[:40])  # titles take the same text
    async with asyncio.timeout(90):
        events = [e async for e in services.stream(session.id, text)]
    assert events[-1].type is EventType.RUN_COMPLETED
    reply = events[-1].reply  # type: ignore[attr-defined]
    assert reply.content == as_sent(text)  # the echo of what the provider received
    sent = services._simulator.model_requests()[-1].body
    assert sent.decode("utf-8")  # valid UTF-8 on the wire
    assert (await services.resume_info(session.id)).blocked_reason == "completed"
    await services.close()

    history, exported = await reopened_history(services.data_dir, session.id)
    assert history[0] == UserMessage(as_stored(text))  # as typed, lone surrogates included
    assert name == "paired surrogates" or as_stored(text) == text
    assert isinstance(history[1], AssistantMessage) and history[1].content == as_sent(text)
    assert [m["message"]["content"] for m in exported["messages"]] == [  # type: ignore[index]
        as_stored(text),
        as_sent(text),
    ]


async def test_ten_megabyte_paste(services: AppServices) -> None:
    line = "2025-01-01T00:00:00 INFO worker-17 processed batch with 4096 items in 12 ms\n"
    text = "Why is this log so slow?\n" + line * (10 * 2**20 // len(line) + 1)
    assert len(text.encode()) >= 10 * 2**20
    services._simulator.enqueue(Reply(text="That is a lot of log; here is what stands out."))
    session = await services.new_session("big paste")
    async with asyncio.timeout(BOUND * 2):
        events = [e async for e in services.stream(session.id, text)]
    assert events[-1].type is EventType.RUN_COMPLETED
    body = services._simulator.model_requests()[-1].json()
    assert body["messages"][-1]["content"] == text  # the whole paste reached the provider
    hits = await services.search("slow")
    assert [h.session_id for h in hits] == [session.id]
    await services.close()
    history, _ = await reopened_history(services.data_dir, session.id)
    assert history[0] == UserMessage(text)


async def test_hostile_titles_drafts_and_search_words_are_stored(services: AppServices) -> None:
    """Plain text columns cannot hold lone surrogates: they are repaired, never an error."""
    session = await services.new_session("title \ud800 with \x00 NUL")
    await services.rename_session(session.id, "renamed \udfff")
    assert [s.title for s in await services.list_sessions()] == ["renamed \ufffd"]
    await services.journal.save_draft(session.id, "draft \ud800")
    assert await services.journal.draft(session.id) == "draft \ufffd"
    assert await services.search("\ud800") == []
    assert await services.search("\x00\x00") == []
    await services.history(session.id)


async def test_reopened_services_reload_every_hostile_message(tmp_path: Path) -> None:
    """Several hostile messages in one conversation, reloaded in order by a fresh process."""
    data = tmp_path / "data"
    services = await open_services(data)
    session = await services.new_session()
    texts = [TEXTS["NUL bytes"], TEXTS["lone surrogates"], TEXTS["RTL and emoji"]]
    for text in texts:
        async with asyncio.timeout(BOUND):
            [e async for e in services.stream(session.id, text)]
    await services.close()
    history, _ = await reopened_history(data, session.id)
    assert [m.content for m in history] == [  # type: ignore[attr-defined]
        t for text in texts for t in (text, as_sent(text))
    ]


# --- search over messages holding lone surrogates (issue 11, item 10) ------------------------


def assert_valid(hits: list[SearchHit]) -> None:
    for hit in hits:
        hit.snippet.encode("utf-8")  # every snippet is valid text (no lone surrogate)


async def test_search_finds_every_hit_when_a_message_holds_a_lone_surrogate(
    tmp_path: Path,
) -> None:
    store = SQLiteSessionStore(tmp_path / "x.sqlite")
    try:
        # One conversation each: a search shows each conversation's newest match.
        await store.append("broken", "r1", UserMessage("needle in a broken \ud800 paste \udfff"))
        await store.append("lone", "r2", AssistantMessage("another needle \ud83d here", model="m"))
        await store.append(
            "emoji", "r2", AssistantMessage("needle with an emoji 😀 and no surrogate", model="m")
        )
        await store.append("clean", "r3", UserMessage("a clean needle"))
        hits = await store.search("needle")
        assert_valid(hits)
        assert [(h.session_id, h.seq) for h in hits] == [
            ("clean", 1),
            ("emoji", 1),
            ("lone", 1),
            ("broken", 1),
        ]
        assert all("[needle]" in h.snippet for h in hits)
        [broken] = await store.search("paste")
        assert broken.snippet == "needle in a broken \ufffd [paste] \ufffd"
        assert [h.session_id for h in await store.search("clean")] == ["clean"]
        # The history itself keeps the text exactly as typed.
        assert (await store.load("broken"))[0] == UserMessage(
            "needle in a broken \ud800 paste \udfff"
        )
        assert await store.integrity_check() == ["ok"]
    finally:
        await store.close()


async def test_search_repairs_an_index_written_before_the_fix(tmp_path: Path) -> None:
    """Databases already hold index text that SQLite decoded from ``\\ud800`` escapes into
    bytes that are not UTF-8: search still answers, and repairs those rows."""
    path = tmp_path / "x.sqlite"
    store = SQLiteSessionStore(path)
    await store.append("clean", "r", UserMessage("a clean needle"))
    await store.close()
    with contextlib.closing(sqlite3.connect(path)) as conn:  # as the old code wrote it
        conn.execute(
            "INSERT INTO messages(session_id, seq, request_id, kind, data, created_at) "
            "VALUES ('old', 1, 'r', 'user', ?, 0)",
            (json.dumps({"type": "user", "content": "old needle \ud800 text"}),),
        )
        conn.commit()
        (raw,) = conn.execute(
            "SELECT hex(text) FROM messages_fts WHERE text LIKE 'old%'"
        ).fetchone()
        assert "EDA080" in raw  # the bad bytes really are in the index
    store = SQLiteSessionStore(path)
    try:
        hits = await store.search("needle")
        assert_valid(hits)
        assert sorted(h.session_id for h in hits) == ["clean", "old"]
        assert await store.search("text") == [SearchHit("old", 1, "old needle \ufffd [text]")]
    finally:
        await store.close()
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute(
            "SELECT count(*) FROM messages_fts WHERE hex(text) LIKE '%EDA080%'"
        ).fetchone() == (0,)


async def test_services_search_with_a_lone_surrogate_in_another_conversation(
    services: AppServices,
) -> None:
    broken = await services.new_session("broken")
    clean = await services.new_session("clean")
    async with asyncio.timeout(BOUND):
        [e async for e in services.stream(broken.id, "the haystack \ud800 has a needle")]
        [e async for e in services.stream(clean.id, "this haystack too")]
    hits = await services.search("haystack")
    assert_valid(hits)
    # Each conversation once (its newest match: the simulator's echo of the question).
    assert sorted(h.session_id for h in hits) == sorted([broken.id, clean.id])
    assert all("[haystack]" in h.snippet for h in hits)
    assert await services.search("\ud800 needle") != []


async def test_search_answers_when_its_index_repair_cannot_be_written(tmp_path: Path) -> None:
    """The repair of an old index row is a write: on a full disk (or a read-only database) the
    search must still answer (the hit shown with U+FFFD), not fail as "not saved"."""
    path = tmp_path / "x.sqlite"
    store = SQLiteSessionStore(path)
    await store.append("clean", "r", UserMessage("a clean needle"))
    await store.close()
    with contextlib.closing(sqlite3.connect(path)) as conn:  # as the old code wrote it
        conn.execute(
            "INSERT INTO messages(session_id, seq, request_id, kind, data, created_at) "
            "VALUES ('old', 1, 'r', 'user', ?, 0)",
            (json.dumps({"type": "user", "content": "old needle \ud800 text"}),),
        )
        # The old code indexed it with its insert; schema 14 indexes in batches: index it now.
        conn.execute(
            "INSERT INTO messages_fts(rowid, text) SELECT id, text FROM messages_text "
            "WHERE id > (SELECT upto FROM messages_indexed)"
        )
        conn.execute("UPDATE messages_indexed SET upto = (SELECT MAX(id) FROM messages)")
        conn.commit()
    store = SQLiteSessionStore(path)
    try:
        await store.append("clean", "r", UserMessage("opened for writing"))
        conn = await store._connection()
        await conn.execute("PRAGMA query_only = ON")  # every write now fails: SQLITE_READONLY
        hits = await store.search("needle")
        assert_valid(hits)
        assert sorted(h.session_id for h in hits) == ["clean", "old"]
        await conn.execute("PRAGMA query_only = OFF")
    finally:
        await store.close()
