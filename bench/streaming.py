"""Streaming N tokens (default 20,000) at full speed into the real window, against the same
stream read by plain ``httpx`` + ``httpx-sse`` and thrown away.

The simulator runs in its own process (``python -m app.simulator --default tokens=N``), as a
remote provider would: it does not share this process's GIL or event loop. Both runs happen
here, on the app's qasync loop over an offscreen QApplication, with a 5 ms precise QTimer
probe; the longest gap between two ticks is the worst event-loop stall.

The app run is the real path: ``AppServices`` (its database, journal, draft saves),
``MainWindow`` shown, ``ConversationController.send`` → the OpenAI-compatible provider → the
``TranscriptModel`` and the painted ``TranscriptView``; timed until the request task is done.
Every paint of the transcript during the stream is timed too (a frame's drawing: p50/p99/max),
beside the probe's tick gaps (p99: how long the loop is busy between two ticks, layout included).

The pair (reference, then app) runs :data:`PAIRS` times in one process, on one simulator: the
rate and CPU ratios are the medians of the pairs' (this machine is shared: one pair's ratio
varied by ±0.08 from run to run; 5 pairs since 2026-12-06, 3 before), the longest stall and
the frame times the worst of all runs, the tick gaps' p99 that of all runs' ticks together (a
run has ~70 ticks, so its own p99 is its longest gap).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._qt import StallProbe, percentile, run_qt, simulator_process

os.environ.setdefault("CONTINUUM_API_KEY", "sim")


async def _reference(base_url: str, tokens: int) -> dict[str, float]:
    import httpx
    from httpx_sse import aconnect_sse

    probe = StallProbe()
    body = {"model": "sim-echo", "stream": True, "messages": [{"role": "user", "content": "go"}]}
    async with httpx.AsyncClient(timeout=None) as client:
        probe.start()
        started = time.perf_counter()
        cpu = time.process_time()
        events = 0
        async with aconnect_sse(
            client, "POST", base_url + "/chat/completions", json=body
        ) as source:
            async for _event in source.aiter_sse():
                events += 1
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu
        probe.stop()
    assert events >= tokens, (events, tokens)
    return {
        "tokens_per_s": tokens / elapsed,
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "longest_stall_ms": probe.longest_ms,
    }


async def _app(base_url: str, tokens: int) -> dict[str, float]:
    from PySide6.QtWidgets import QListView

    from app.services import AppServices
    from app.settings import Settings
    from ui.transcript.view import TranscriptView
    from ui.window import MainWindow

    frames: list[float] = []
    painting = [False]
    base_paint = TranscriptView.paintEvent if "paintEvent" in vars(TranscriptView) else None

    def timed_paint(view: Any, event: Any) -> None:
        started = time.perf_counter()
        (base_paint or QListView.paintEvent)(view, event)
        if painting[0]:
            frames.append(time.perf_counter() - started)

    TranscriptView.paintEvent = timed_paint  # type: ignore[method-assign]

    with tempfile.TemporaryDirectory() as tmp:
        services = AppServices(Path(tmp))
        await services.open()
        services.save_settings(
            Settings(provider_kind="openai", base_url=base_url, model="sim-echo")
        )
        window = MainWindow(services)
        window.show()
        await window.models.apply_settings()
        await asyncio.sleep(0.2)  # let the shown window settle
        from ui.collector import MainThreadCollector, settle_startup_objects

        settle_startup_objects()  # as the app does once its window is ready (ui.main) ...
        collector = MainThreadCollector()  # ... collecting on this thread only
        finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        window.controller.runFinished.connect(lambda: finished.done() or finished.set_result(None))
        probe = StallProbe()
        probe.start()
        painting[0] = True
        started = time.perf_counter()
        cpu = time.process_time()
        assert window.controller.send("go")
        task = window.controller.task
        assert task is not None
        await task
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu
        painting[0] = False
        probe.stop()
        await asyncio.wait_for(finished, 15)  # its follow-up (Resume bar refresh) is done
        rows = window.transcript_model.items()
        text = rows[-1].text if rows else ""
        words = len(text.split())
        collector.stop()
        window.close()  # its own shutdown: the request's helpers (a title), then the services
        shutdown = window._shutdown_task
        if shutdown is not None:
            await asyncio.wait_for(shutdown, 15)
        else:
            await services.close()
    if words != tokens:
        raise RuntimeError(
            f"the transcript shows {words} words, expected {tokens}; "
            f"last error: {window.controller.last_error}"
        )
    return {
        "tokens_per_s": tokens / elapsed,
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "longest_stall_ms": probe.longest_ms,
        "stall_p99_ms": probe.percentile_ms(0.99),
        "gaps_ms": [gap * 1000 for gap in probe.gaps],
        "frames": len(frames),
        "frame_p50_ms": percentile(frames, 0.5) * 1000,
        "frame_p99_ms": percentile(frames, 0.99) * 1000,
        "frame_max_ms": max(frames, default=0.0) * 1000,
        "chars": len(text),
    }


#: Reference-then-app pairs measured; the ratios reported are the pairs' medians.
PAIRS = 5

#: The app's figures reported as the worst of all its runs.
_WORST = ("longest_stall_ms", "frame_p99_ms", "frame_max_ms")


def measure(tokens: int = 20_000, pairs: int = PAIRS) -> dict[str, Any]:
    with simulator_process(f"tokens={tokens}") as base_url:

        async def run() -> list[tuple[dict[str, Any], dict[str, Any]]]:
            return [
                (await _reference(base_url, tokens), await _app(base_url, tokens))
                for _ in range(pairs)
            ]

        runs: list[tuple[dict[str, Any], dict[str, Any]]] = run_qt(run)
    # Rates: the app's over the reference's; CPU seconds of this process for the same stream:
    # the reference's over the app's (what the app adds, less disturbed by other work).
    rates = [app["tokens_per_s"] / ref["tokens_per_s"] for ref, app in runs]
    cpus = [ref["cpu_seconds"] / app["cpu_seconds"] for ref, app in runs]
    middle = sorted(range(pairs), key=lambda i: rates[i])[pairs // 2]
    reference, app = runs[middle]
    app = {**app, **{key: max(run[key] for _, run in runs) for key in _WORST}}
    # The p99 of the loop's tick gaps over every run's ticks (one run has ~70: its own p99 is
    # its longest gap, which the longest-stall figure already reports); each run's too.
    gaps = [gap for _, run in runs for gap in run.pop("gaps_ms")]
    app["stall_p99_ms"] = percentile(gaps, 0.99)
    app["stall_p99_ms_per_run"] = [run["stall_p99_ms"] for _, run in runs]
    app["ticks"] = len(gaps)
    return {
        "tokens": tokens,
        "pairs": pairs,
        "app": app,  # the median pair's, with the worst stalls and frames of all runs
        "httpx_sse": reference,
        "rate_ratio": statistics.median(rates),
        "cpu_ratio": statistics.median(cpus),
        "rate_ratios": rates,
        "cpu_ratios": cpus,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tokens", type=int, default=20_000)
    args = parser.parse_args()
    print(json.dumps(measure(args.tokens), indent=2))


if __name__ == "__main__":
    main()
