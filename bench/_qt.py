"""Shared helpers for the Qt benchmarks: an offscreen QApplication on the app's qasync loop,
a stall probe, RSS, and a simulator in its own process (so it does not share our GIL)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# qasync loops must stay referenced until the process ends (see ENVIRONMENT.md).
_LOOPS: list[Any] = []


def run_qt(main: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """Run ``main()`` on the app's own event loop class over an offscreen QApplication."""
    from PySide6.QtWidgets import QApplication

    from ui.eventloop import ContinuumEventLoop

    app = QApplication.instance() or QApplication([sys.argv[0]])
    loop = ContinuumEventLoop(app)
    _LOOPS.append(loop)
    asyncio.set_event_loop(loop)
    errors: list[Any] = []
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    with loop:
        result = loop.run_until_complete(main())
    if errors:
        print(f"event loop errors: {errors[:3]}", file=sys.stderr)
    return result


class StallProbe:
    """A 5 ms precise QTimer; the longest gap between two of its ticks is the worst stall."""

    def __init__(self, interval_ms: int = 5) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.interval_ms = interval_ms
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)
        self._last = 0.0
        self.longest = 0.0
        self.ticks = 0
        self.gaps: list[float] = []

    def _tick(self) -> None:
        now = time.perf_counter()
        if self._last:
            gap = now - self._last
            self.longest = max(self.longest, gap)
            self.gaps.append(gap)
        self._last = now
        self.ticks += 1

    def start(self) -> None:
        self._last = 0.0
        self.longest = 0.0
        self.ticks = 0
        self.gaps = []
        self._timer.start()

    def stop(self) -> None:
        self._tick()  # a stall that lasts until the end counts too
        self._timer.stop()

    @property
    def longest_ms(self) -> float:
        return self.longest * 1000

    def percentile_ms(self, fraction: float) -> float:
        """The gap (ms) that ``fraction`` of all gaps stay at or under (0 if none)."""
        return percentile(self.gaps, fraction) * 1000


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile of ``values`` (0.0 for none)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(min(int(round(fraction * len(ordered) + 0.5)) - 1, len(ordered) - 1), 0)
    return ordered[rank]


def rss_mb() -> float:
    """Resident set size of this process, in MiB (Linux /proc)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


@contextlib.contextmanager
def simulator_process(default_spec: str) -> Iterator[str]:
    """``python -m app.simulator`` on a free port, every request answered by ``default_spec``;
    yields its OpenAI-compatible base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.simulator", "--port", "0", "--default", default_spec],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = ""
        for line in proc.stdout:
            match = re.search(r"OpenAI-compatible base URL:\s*(\S+)", line)
            if match:
                url = match.group(1)
                break
        if not url:
            raise RuntimeError("the simulator did not start")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
