"""A search a page at a time, and a long last word looked up as the words it starts.

Real SQLite files throughout: the pages put together must be exactly one long search, and the
words a last word starts (listed from the index, see ``app.storage.search._EXPANDED``) must find
exactly what the prefix finds, in the same order, marked alike.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from pathlib import Path

import pytest

from app import AssistantMessage, UserMessage
from app.storage import SQLiteSessionStore
from app.storage.search import (
    _CONTINUATIONS,
    _EXPANDED,
    _FIRST,
    _NEWEST,
    SCANNED,
    SearchCursor,
    SearchHit,
    _FirstOf,
    _statement,
    fts_query,
)


def _rows(hits: list[SearchHit]) -> list[tuple[str, int, str]]:
    return [(h.session_id, h.seq, h.snippet) for h in hits]


async def _all_pages(store: SQLiteSessionStore, text: str, limit: int) -> list[SearchHit]:
    page = await store.search_page(text, limit=limit)
    hits = list(page.hits)
    while page.more is not None:
        assert len(page.hits) == limit  # a page short of its limit has no next
        page = await store.search_page(text, limit=limit, after=page.more)
        hits += page.hits
    return hits


async def test_pages_put_together_are_one_long_search(tmp_path: Path) -> None:
    """Conversations whose messages interleave (a row of an already shown conversation sits
    between pages), several page sizes: the same hits, order and snippets as one search."""
    store = SQLiteSessionStore(tmp_path / "c.sqlite")
    try:
        for n in range(150):  # 12 conversations taking turns, some messages without the word
            text = f"round {n} " + ("needle in hay" if n % 7 else "only hay")
            message = UserMessage(text) if n % 2 else AssistantMessage(text)
            await store.append(f"s{(n * 5) % 12:02d}", "r", message)
        whole = await store.search("needle", limit=1000)
        assert len(whole) == 12
        for limit in (1, 2, 5, 7, 12, 13):
            assert _rows(await _all_pages(store, "needle", limit)) == _rows(whole), limit
        first = await store.search_page("needle", limit=12)
        assert len(first.hits) == 12 and first.more is not None
        assert (await store.search_page("needle", limit=5, after=first.more)).hits == []
        short = await store.search_page("needle", limit=13)
        assert len(short.hits) == 12 and short.more is None
        assert (await store.search_page("needle", limit=0)).hits == []
        with pytest.raises(ValueError):
            await store.search_page("hay", limit=5, after=first.more)
    finally:
        await store.close()


async def test_pages_look_through_the_same_newest_matches_as_one_search(
    tmp_path: Path,
) -> None:
    """SCANNED bounds the pages together, not each page: a conversation whose newest match is
    older than the newest SCANNED matches is on no page, as it is in no single search."""
    store = SQLiteSessionStore(tmp_path / "c.sqlite")
    try:
        await store.append_many("old", "r", [UserMessage("needle from long ago")])
        for n in range(SCANNED // 100):  # then SCANNED matches in conversations of 100
            await store.append_many(
                f"s{n:02d}", "r", [UserMessage(f"needle {n} {i}") for i in range(100)]
            )
        whole = await store.search("needle", limit=1000)
        assert "old" not in {h.session_id for h in whole} and len(whole) == SCANNED // 100
        pages = await _all_pages(store, "needle", 3)
        assert _rows(pages) == _rows(whole)
        page = await store.search_page("needle", limit=len(whole))
        assert page.more is not None and page.more.scanned == SCANNED - 99  # s00's newest
        rest = await store.search_page("needle", limit=5, after=page.more)
        assert rest.hits == [] and rest.more is None  # its 99 older rows; then "old" is past
        assert (
            await store.search_page(
                "needle", after=SearchCursor("needle", 10**9, frozenset(), SCANNED)
            )
        ).hits == []
    finally:
        await store.close()


def _reference(path: Path, text: str) -> list[tuple[str, int, str]]:
    """The search as it was before the words a last word starts were listed: the prefix."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.create_function("continuum_first_of", 1, _FirstOf())
        rows = conn.execute(_NEWEST, (fts_query(text), SCANNED, 1000, _FIRST)).fetchall()
    return [(str(r[1]), int(r[2]), bytes(r[3]).decode("utf-8")) for r in rows]


def _marks(snippet: str) -> list[str]:
    return sorted(set(re.findall(r"\[([^\]]*)\]", snippet)))


MANY = [f"word{chr(97 + n // 26)}{chr(97 + n % 26)}" for n in range(_CONTINUATIONS + 4)]
TEXTS = [
    "The band played on",
    "bandana and bands at the Bandstand",
    "a BANDWIDTH problem",
    "bandé en français, café au lait",
    "python and pythonic code",
    "PYTHONS everywhere",
    "band",
    "nothing relevant here",
    "order 66 and order66 and orders",
    "cafeteria or café",
    "word " + " ".join(MANY[: len(MANY) // 2]),
    " ".join(MANY[len(MANY) // 2 :]),
    "bandwagon x",
]
QUERIES = [
    "band",  # the word and several words it starts (one with an accent folded)
    "Band",  # case folded
    "bandw",  # only longer words
    "pyth",  # no word of its own, two words it starts
    "python",
    "order66",  # letters and digits
    "orde",
    "cafe",  # an indexed word with its accent removed
    "word",  # more words than _CONTINUATIONS: the prefix as before
    "worda",
    "the band",  # two words: the first exact, the last expanded
    "\ufffd band",  # a first word of no letters (ignored, as in the prefix's query)
    "- Band",
    "zzzz",  # nothing
    "café",  # not ASCII: the prefix as before
    "ban",  # within the prefix index: the prefix as before
]


async def test_a_long_last_word_finds_what_its_prefix_finds(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    store = SQLiteSessionStore(path)
    try:
        for n, text in enumerate(TEXTS):  # three conversations taking turns
            await store.append(f"s{n % 3}", "r", UserMessage(text))
            await store.append(f"t{n}", "r", AssistantMessage(f"{n}: {text}"))
        await store.close()  # every message indexed, for the reference below
        expected = {q: _reference(path, q) for q in QUERIES}
        assert sum(bool(rows) for rows in expected.values()) >= 11
        store = SQLiteSessionStore(path)
        for query in QUERIES:
            got = _rows(await store.search(query, limit=1000))
            want = expected[query]
            assert [(s, q) for s, q, _ in got] == [(s, q) for s, q, _ in want], query
            for (_s, _q, mine), (_s2, _q2, theirs) in zip(got, want, strict=True):
                assert _marks(mine) == _marks(theirs), query
                assert _marks(mine), query  # the match is marked
    finally:
        await store.close()


async def test_the_words_listed_are_the_index_as_it_is_now(tmp_path: Path) -> None:
    """The word list is read in the search's own statement: a word written after an earlier
    search is found, a conversation deleted is not."""
    store = SQLiteSessionStore(tmp_path / "c.sqlite")
    try:
        await store.append("a", "r", UserMessage("zebra crossing"))
        assert [h.session_id for h in await store.search("zebr")] == ["a"]
        await store.append("b", "r", UserMessage("a zebrafish swims"))
        await store.append("c", "r", UserMessage("zebras graze"))
        hits = await store.search("zebr")
        assert [(h.session_id, h.snippet) for h in hits] == [
            ("c", "[zebras] graze"),
            ("b", "a [zebrafish] swims"),
            ("a", "[zebra] crossing"),
        ]
        await store.delete_session("b")
        assert [h.session_id for h in await store.search("zebr")] == ["c", "a"]
        assert [h.session_id for h in await store.search("zebrafi")] == []
    finally:
        await store.close()


def test_which_last_words_are_listed_as_the_words_they_start() -> None:
    def expanded(text: str) -> bool:
        query = fts_query(text)
        assert query is not None
        return _statement(text, query)[0] is _EXPANDED

    assert expanded("band") and expanded("Python3") and expanded("the band")
    assert not expanded("ban")  # the prefix index answers up to 3 characters
    assert not expanded("café") and not expanded("band-aid") and not expanded('"band"')
    assert not expanded("band ban")  # only the last word counts
    query = fts_query("the Band")
    assert query is not None
    _, extra = _statement("the Band", query)
    assert extra == ('"the" ', "band", "band\U0010ffff", _CONTINUATIONS)
