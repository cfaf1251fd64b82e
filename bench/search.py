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
:func:`_one_cpu`); the figure is the median latency of each query, and the ratio of the large
corpus to the small one (goal: flat, within 2×). The same queries asking 50 conversations at
once (all the sidebar showed before it had pages) are measured too, as
``large_ms_50``/``small_ms_50``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app import AssistantMessage, SQLiteSessionStore, UserMessage
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
) -> dict[str, dict[str, float]]:
    """The median latency (ms) of each query over each store, the stores timed interleaved:
    each repeat times the query once over every store, in turn (the order alternating), so a
    noisy spell of the machine falls on both corpora alike instead of on whichever was timed
    then."""
    result: dict[str, dict[str, float]] = {key: {} for key in stores}
    keys = list(stores)
    for name, query in QUERIES.items():
        samples: dict[str, list[float]] = {key: [] for key in keys}
        for store in stores.values():  # warm: the pages it reads are in the cache
            await store.search_page(query, limit=limit)
        for repeat in range(repeats):
            for key in keys if repeat % 2 == 0 else keys[::-1]:
                started = time.perf_counter()
                hits = (await stores[key].search_page(query, limit=limit)).hits
                samples[key].append(time.perf_counter() - started)
                assert hits, f"{name!r} found nothing"
                found[key][name] = len(hits)  # conversations shown: each costs its snippet
        for key in keys:
            result[key][name] = statistics.median(samples[key]) * 1000
    return result


async def measure(large: int = 100_000, small: int = 1_000, repeats: int = 15) -> dict[str, Any]:
    """Median latency (ms) of each query over each corpus, and the large/small ratios."""
    runs: dict[str, dict[str, float]] = {}
    found: dict[str, dict[str, int]] = {"large": {}, "small": {}}
    found_50: dict[str, dict[str, int]] = {"large": {}, "small": {}}
    fill_s: dict[str, float] = {}
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
            for suffix, limit, shown in (("", PAGE, found), ("_50", 50, found_50)):
                for key, latencies in (await _latencies(stores, repeats, shown, limit)).items():
                    runs[f"{key}{suffix}"] = latencies
        finally:
            for store in stores.values():
                await store.close()
    ratios = {name: runs["large"][name] / runs["small"][name] for name in QUERIES}
    return {
        "messages": {"large": large, "small": small},
        "fill_s": fill_s,
        "large_ms": runs["large"],
        "small_ms": runs["small"],
        "hits": found,
        "ratios": ratios,
        "page": PAGE,
        "large_ms_50": runs["large_50"],
        "small_ms_50": runs["small_50"],
        "hits_50": found_50,
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
