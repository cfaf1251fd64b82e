"""The start-up objects are set aside from garbage collection; later garbage is still freed.

Run in a child interpreter: freezing the test process itself (even undone at teardown) held
earlier tests' cyclic garbage, Qt objects among it, until a later collection — which may run
on an aiosqlite worker thread, where freeing a Qt object segfaults.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """
import gc, weakref
from ui.collector import settle_startup_objects

class Node:
    def __init__(self):
        self.me = self  # a cycle: only the collector frees it

before = Node()
assert any(o is before for o in gc.get_objects())
frozen = settle_startup_objects()
assert frozen == gc.get_freeze_count() > 1000, frozen
assert not any(o is before for o in gc.get_objects())  # a full collection skips it
after = Node()
assert any(o is after for o in gc.get_objects())
gone = weakref.ref(after)
del after
gc.collect()
assert gone() is None  # garbage made after settling is still freed
print("ok")
"""


def test_settling_freezes_what_is_alive_and_later_garbage_is_still_freed() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "ok"


def test_the_due_generation_follows_cpythons_counts() -> None:
    from ui.collector import due_generation

    thresholds = (700, 10, 10)
    assert due_generation((0, 0, 0), thresholds) is None
    assert due_generation((699, 9, 9), thresholds) is None
    assert due_generation((700, 0, 0), thresholds) == 0
    assert due_generation((700, 10, 0), thresholds) == 1
    assert due_generation((5, 3, 10), thresholds) == 2
    assert due_generation((10**6, 0, 0), (0, 10, 10)) is None  # a threshold of 0: never


def test_collections_run_on_the_main_thread_only(qtbot: Any) -> None:
    """With the collector on, a thread allocating cycles never collects; the timer does."""
    import gc
    import threading
    import weakref

    from ui.collector import MainThreadCollector

    class Node:
        def __init__(self) -> None:
            self.me = self

    threads: list[str] = []

    def seen(phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            threads.append(threading.current_thread().name)

    def churn() -> None:
        for _ in range(50_000):
            Node()  # cycles: CPython collects in this thread when a threshold passes

    def in_a_worker() -> None:
        worker = threading.Thread(target=churn, name="worker")
        worker.start()
        worker.join()

    was_enabled = gc.isenabled()
    gc.callbacks.append(seen)
    collector = None
    try:
        gc.collect()  # earlier tests' garbage (Qt objects) freed here, not in the worker
        gc.enable()  # CPython's own way first: the worker collects
        in_a_worker()
        assert "worker" in threads
        threads.clear()
        collector = MainThreadCollector(every_ms=1)
        probe = Node()
        gone = weakref.ref(probe)
        del probe
        in_a_worker()
        assert "worker" not in threads
        qtbot.waitUntil(lambda: gone() is None, timeout=5_000)  # the timer collected it
        assert threads and set(threads) == {threading.current_thread().name}
    finally:
        gc.callbacks.remove(seen)
        if collector is not None:
            collector.stop()
            collector.deleteLater()
        if not was_enabled:
            gc.disable()  # the UI tests run with automatic collection off (conftest)
