"""Search: query latency over 100,000 messages against the same queries over 1,000.

Two stores are filled the same way (sessions of 100 messages, each saved with ``append_many``
at ``synchronous=normal``: filling is not what is timed), with text drawn from one vocabulary
in a Zipf-like mix, so a word's share of the messages is the same in both corpora. Then each
query of :data:`QUERIES` — a rare word, a common one, a prefix, two letters, two words — runs
through ``SQLiteSessionStore.search_page`` as the sidebar asks it while the person types (the
app's search: every word, the last as a prefix; the newest matching message of each
conversation, its first page of ``PAGE`` conversations found among the newest 2,000 matches,
with snippets; the sidebar asks the next page when the list is scrolled to its end) several
times, over both corpora interleaved (each repeat times the query once over each, the order
alternating, so a noisy spell of a shared machine falls on both alike) and on one CPU (see
:func:`_one_cpu`); the figure is the median latency of each query.

The index is measured in the two states a person meets: right after the messages were saved
(``as_filled``: every 64 messages a segment, FTS5 merging four of a size) and after the app's
idle merge (:func:`app.services.upkeep.tidy_search_index`, which the window runs when nothing
has happened for a few seconds; its time is ``tidy_s``). The headline ratios (``ratios``:
goal flat, within 2×) compare each corpus's first page, idle-merged; ``as_filled_ratios`` the
same before the merge. A first page is not the same work in both: 1,000 messages are 10
conversations and a rare word is in one of them, so the small corpus shows 1 to 10 hits where
the large one shows 15, each with its snippet; ``same_page_ratios`` compare the same work
(the large corpus asked for as many conversations as the small one found). The same
queries asking 50 conversations at once (all the sidebar showed before it had pages) are
measured too, as ``large_ms_50``/``small_ms_50``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app import AssistantMessage, SQLiteSessionStore, UserMessage
from app.services.upkeep import tidy_search_index
from app.storage.search import PAGE

PER_SESSION = 100
WORDS = 30
VOCABULARY = [f"w{i:04d}" for i in range(5_000)]
#: name → what the person types.
QUERIES = {
    "rare word": "w4000",
    "mid word": "w0200",
    "common word": "w0003",
    "prefix": "w01",
    "two letters": "w0",  # the first keys of a word typed (every word starts with w)
    "two words": "w0010 w0500",
}


def _texts(n: int, seed: int = 18) -> list[str]:
    rng = random.Random(seed)
    weights = [1 / (rank + 1) for rank in range(len(VOCABULARY))]
    words = rng.choices(VOCABULARY, weights=weights, k=n * WORDS)
    return [" ".join(words[i * WORDS : (i + 1) * WORDS]) for i in range(n)]


async def _fill(store: SQLiteSessionStore, n: int) -> None:
    texts = _texts(n)
    for start in range(0, n, PER_SESSION):
        chunk = texts[start : start + PER_SESSION]
        messages = [
            UserMessage(t) if i % 2 == 0 else AssistantMessage(t) for i, t in enumerate(chunk)
        ]
        await store.append_many(f"s{start // PER_SESSION:05d}", "r", messages)


@contextlib.contextmanager
def _one_cpu() -> Iterator[None]:
    """This thread, and the threads it starts meanwhile (each store's aiosqlite thread), on one
    CPU (Linux; elsewhere nothing changes). A search is two hops to its store's thread, and
    where the scheduler puts that thread decides what a hop costs (on a 2-vCPU VM: ~30 µs on
    the caller's CPU, ~70-100 µs from the other one). It placed the two stores' threads
    differently by the order they were timed in and from run to run, which moved a query's
    median ratio by up to ~0.7 with nothing about the corpus changed."""
    if not hasattr(os, "sched_setaffinity"):
        yield
        return
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(allowed)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


async def _latencies(
    stores: dict[str, SQLiteSessionStore],
    repeats: int,
    found: dict[str, dict[str, int]],
    limit: int = PAGE,
    limits: dict[str, dict[str, int]] | None = None,
) -> dict[str, dict[str, float]]:
    """The median latency (ms) of each query over each store, the stores timed interleaved:
    each repeat times the query once over every store, in turn (the order alternating), so a
    noisy spell of the machine falls on both corpora alike instead of on whichever was timed
    then. ``limits[store][query]``, where given, is the page size asked of that store."""
    result: dict[str, dict[str, float]] = {key: {} for key in stores}
    keys = list(stores)
    for name, query in QUERIES.items():
        samples: dict[str, list[float]] = {key: [] for key in keys}
        asked = {key: (limits or {}).get(key, {}).get(name, limit) for key in keys}
        for key, store in stores.items():  # warm: the pages it reads are in the cache
            await store.search_page(query, limit=asked[key])
        for repeat in range(repeats):
            for key in keys if repeat % 2 == 0 else keys[::-1]:
                started = time.perf_counter()
                hits = (await stores[key].search_page(query, limit=asked[key])).hits
                samples[key].append(time.perf_counter() - started)
                assert hits, f"{name!r} found nothing"
                found[key][name] = len(hits)  # conversations shown: each costs its snippet
        for key in keys:
            result[key][name] = statistics.median(samples[key]) * 1000
    return result


def _segments(store: SQLiteSessionStore) -> int:
    """How many segments the store's search index has (read from its file)."""
    with contextlib.closing(sqlite3.connect(store.path)) as conn:
        return int(conn.execute("SELECT count(DISTINCT segid) FROM messages_fts_idx").fetchone()[0])


def _ratios(runs: dict[str, dict[str, float]]) -> dict[str, float]:
    return {name: runs["large"][name] / runs["small"][name] for name in QUERIES}


async def measure(large: int = 100_000, small: int = 1_000, repeats: int = 15) -> dict[str, Any]:
    """Median latency (ms) of each query over each corpus, and the large/small ratios (see the
    module docstring for the states and pages compared)."""
    runs: dict[str, dict[str, float]] = {}
    fill_s: dict[str, float] = {}
    tidy_s: dict[str, float] = {}
    segments: dict[str, dict[str, int]] = {"as_filled": {}, "merged": {}}
    stores: dict[str, SQLiteSessionStore] = {}
    with tempfile.TemporaryDirectory(dir=Path.cwd()) as tmp, _one_cpu():
        try:
            for key, n in (("small", small), ("large", large)):
                store = stores[key] = SQLiteSessionStore(
                    Path(tmp) / f"{key}.sqlite", synchronous="normal"
                )
                started = time.perf_counter()
                await _fill(store, n)
                fill_s[key] = time.perf_counter() - started
            shown: dict[str, dict[str, dict[str, int]]] = {}
            shown["as_filled"] = {"large": {}, "small": {}}
            for key, latencies in (await _latencies(stores, repeats, shown["as_filled"])).items():
                runs[f"{key}_as_filled"] = latencies
            for key, store in stores.items():
                segments["as_filled"][key] = _segments(store)
                started = time.perf_counter()
                await tidy_search_index(store.database)
                tidy_s[key] = time.perf_counter() - started
                segments["merged"][key] = _segments(store)
            for suffix, limit in (("", PAGE), ("_50", 50)):
                shown[suffix] = {"large": {}, "small": {}}
                for key, latencies in (
                    await _latencies(stores, repeats, shown[suffix], limit)
                ).items():
                    runs[f"{key}{suffix}"] = latencies
            # The same work: the large corpus asked for what the small one found.
            same = {"large": dict(shown[""]["small"])}
            shown["same_page"] = {"large": {}, "small": {}}
            for key, latencies in (
                await _latencies(stores, repeats, shown["same_page"], PAGE, same)
            ).items():
                runs[f"{key}_same_page"] = latencies
        finally:
            for store in stores.values():
                await store.close()
    ratios = _ratios(runs)
    return {
        "messages": {"large": large, "small": small},
        "fill_s": fill_s,
        "tidy_s": tidy_s,
        "segments": segments,
        "page": PAGE,
        "large_ms": runs["large"],
        "small_ms": runs["small"],
        "hits": shown[""],
        "ratios": ratios,
        "same_page_large_ms": runs["large_same_page"],
        "same_page_small_ms": runs["small_same_page"],
        "same_page_hits": shown["same_page"],
        "same_page_ratios": _ratios({key: runs[f"{key}_same_page"] for key in ("large", "small")}),
        "as_filled_large_ms": runs["large_as_filled"],
        "as_filled_small_ms": runs["small_as_filled"],
        "as_filled_ratios": _ratios({key: runs[f"{key}_as_filled"] for key in ("large", "small")}),
        "large_ms_50": runs["large_50"],
        "small_ms_50": runs["small_50"],
        "hits_50": shown["_50"],
        "median_50_ms": {
            "large": statistics.median(runs["large_50"].values()),
            "small": statistics.median(runs["small_50"].values()),
        },
        "median_large_ms": statistics.median(runs["large"].values()),
        "median_small_ms": statistics.median(runs["small"].values()),
        "worst": max(ratios, key=lambda name: ratios[name]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--small", type=int, default=1_000)
    args = parser.parse_args()
    print(asyncio.run(measure(args.large, args.small)))


if __name__ == "__main__":
    main()
