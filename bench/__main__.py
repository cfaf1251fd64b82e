"""``python -m bench [--quick] [--only NAME ...] [--no-save]``: SPEC Part C, measured here.

Every figure is a ratio against a reference measured in the same invocation (see each module's
docstring for what exactly is timed). Prints one table and writes it, with the raw figures, to
``bench/results/<timestamp>.json``. A benchmark, not a test: it never fails; the "met?" column
says where a SPEC target is missed. "Flat" means at most 2× the small case (noise margin).

Figures (``--only`` names): coldstart, streaming, provider_rates, render, markdown_worst, open,
resume_point, store, search, sidebar.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
FLAT = 2.0

Row = dict[str, Any]


def _row(
    figure: str,
    value: float,
    reference: float | None,
    unit: str,
    target: str,
    met: bool | None,
    ref_label: str,
) -> Row:
    ratio = value / reference if reference else None
    return {
        "figure": figure,
        "value": value,
        "reference": reference,
        "unit": unit,
        "reference_is": ref_label,
        "ratio": ratio,
        "target": target,
        "met": met,
    }


def _module_json(module: str, *args: str) -> Any:
    """Run ``python -m bench.<module> args`` (Qt figures get their own process) → its JSON."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run(
        [sys.executable, "-m", f"bench.{module}", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if proc.returncode:
        raise RuntimeError(f"bench.{module} failed:\n{proc.stderr[-3000:]}")
    out = proc.stdout
    return json.loads(out[out.index("{") :])


def coldstart(quick: bool) -> tuple[list[Row], Any]:
    from bench.coldstart import measure

    raw = measure(launches=5 if quick else 15)
    ratio = raw["ratio"]
    return [
        _row(
            f"cold start to window shown (median of {raw['launches']})",
            raw["app_ms"],
            raw["bare_ms"],
            "ms",
            "≤ 1.3× bare (never above 1.5×)",
            ratio <= 1.3,
            "bare PySide6 QMainWindow",
        ),
        _row(
            "the same, no --data-dir (the platform's folder, found by platformdirs)",
            raw["default_ms"],
            raw["bare_ms"],
            "ms",
            "(reported)",
            None,
            "bare PySide6 QMainWindow",
        ),
        _row(
            "imports before the first window (ui.main, ui.start_window)",
            raw["imports"]["phase_one_ms"],
            raw["imports"]["qtwidgets_ms"],
            "ms",
            "(budget, reported)",
            None,
            "import PySide6.QtWidgets",
        ),
        _row(
            "imports after it (the core, httpx, the main window)",
            raw["imports"]["phase_two_ms"],
            raw["imports"]["qtwidgets_ms"],
            "ms",
            "(reported)",
            None,
            "import PySide6.QtWidgets",
        ),
        _row(
            "cold start until the main window works",
            raw["ready_ms"],
            raw["bare_ms"],
            "ms",
            "(reported)",
            None,
            "bare PySide6 QMainWindow",
        ),
    ], raw


def streaming(quick: bool) -> tuple[list[Row], Any]:
    tokens = 5_000 if quick else 20_000
    raw = _module_json("streaming", "--tokens", str(tokens))
    app, ref = raw["app"], raw["httpx_sse"]
    label = "httpx + httpx-sse, discarded"
    pairs = raw.get("pairs", 1)
    return [
        _row(
            f"stream {tokens:,} tokens: rate (the median of {pairs} pairs)",
            app["tokens_per_s"],
            ref["tokens_per_s"],
            "tok/s",
            "(info)",
            None,
            label,
        ),
        _row(
            f"stream {tokens:,} tokens: CPU time of this process",
            app["cpu_seconds"] * 1000,
            ref["cpu_seconds"] * 1000,
            "ms",
            "≤ 1.25× (a rate ≥ 0.8×)",
            app["cpu_seconds"] <= 1.25 * ref["cpu_seconds"],
            label,
        ),
        _row(
            f"stream {tokens:,} tokens: longest loop stall",
            app["longest_stall_ms"],
            ref["longest_stall_ms"],
            "ms",
            "≤ 50 ms",
            app["longest_stall_ms"] <= 50,
            label,
        ),
        _row(
            f"stream {tokens:,} tokens: loop tick gap p99 ({app.get('ticks', 0)} ticks, all runs)",
            app["stall_p99_ms"],
            ref["longest_stall_ms"],
            "ms",
            "≤ 16 ms",
            app["stall_p99_ms"] <= 16,
            "longest stall of the httpx reference",
        ),
        _row(
            f"stream {tokens:,} tokens: transcript paint p99 ({app['frames']} frames)",
            app["frame_p99_ms"],
            None,
            "ms",
            "≤ 16 ms",
            app["frame_p99_ms"] <= 16,
            "",
        ),
        _row(
            f"stream {tokens:,} tokens: transcript paint max",
            app["frame_max_ms"],
            None,
            "ms",
            "≤ 50 ms",
            app["frame_max_ms"] <= 50,
            "",
        ),
    ], raw


def provider_rates(quick: bool) -> tuple[list[Row], Any]:
    from bench.provider_rates import measure

    tokens = 5_000 if quick else 20_000
    results = asyncio.run(measure(tokens, repeats=1 if quick else 3))
    raw = {f"{protocol}/{name}": rate for (protocol, name), rate in results.items()}
    rows = []
    for protocol in ("openai", "anthropic"):
        top = results[(protocol, "simulator")]
        for name in ("provider", "parser"):
            rows.append(
                _row(
                    f"{protocol}: {tokens:,} tokens through the {name}",
                    results[(protocol, name)],
                    top,
                    "tok/s",
                    "(info)",
                    None,
                    "simulator read by a bare socket",
                )
            )
    return rows, raw


def render(quick: bool) -> tuple[list[Row], Any]:
    raw = _module_json("render", "--deltas", "20" if quick else "60")
    base = raw["1000"]["median_ms"]
    rows = []
    for length in ("1000", "10000", "100000"):
        ratio = raw[length]["ratio_vs_1k"]
        rows.append(
            _row(
                f"render one delta, message {int(length) // 1000}k chars",
                raw[length]["median_ms"],
                base,
                "ms",
                f"flat (≤ {FLAT:g}× 1k)",
                ratio <= FLAT,
                "same at 1k chars",
            )
        )
    return rows, raw


def markdown_worst(quick: bool) -> tuple[list[Row], Any]:
    raw = _module_json("markdown_worst", "--piece", "5000" if quick else "2000")
    rows = []
    for name, figures in raw.items():
        worst = figures["worst_frame_ms"]
        rows.append(
            _row(
                f"worst frame streaming 200 KB of {name!r}",
                worst,
                None,
                "ms",
                "≤ 50 ms",
                worst <= 50 and figures["complete"],
                "(absolute)",
            )
        )
    return rows, raw


def open_conversation(quick: bool) -> tuple[list[Row], Any]:
    from bench.open_conversation import measure

    messages = 2_000 if quick else 10_000
    raw = measure(messages, repeats=1 if quick else 3)
    big, small = raw[str(messages)], raw["100"]
    label = "100-message conversation"
    return [
        _row(
            f"open {messages:,}-message conversation: first paint",
            big["first_paint_ms"],
            small["first_paint_ms"],
            "ms",
            "≤ 150 ms",
            big["first_paint_ms"] <= 150,
            label,
        ),
        _row(
            f"open {messages:,}-message conversation: RSS growth",
            big["rss_growth_mb"],
            small["rss_growth_mb"],
            "MiB",
            "≤ 100 MB",
            big["rss_growth_mb"] <= 100,
            label,
        ),
    ], raw


def resume_point(quick: bool) -> tuple[list[Row], Any]:
    from bench.resume_point import measure

    raw = asyncio.run(measure(repeats=40 if quick else 200))
    big, small = raw["100000"]["median_ms"], raw["1000"]["median_ms"]
    return [
        _row(
            "resume_point() on 100k messages",
            big,
            small,
            "ms",
            f"≤ 5 ms, flat (≤ {FLAT:g}× 1k)",
            big <= 5 and big / small <= FLAT,
            "same on 1k messages",
        )
    ], raw


def store(quick: bool) -> tuple[list[Row], Any]:
    from bench.store import measure

    n = 1_000 if quick else 10_000
    raw = asyncio.run(measure(n))
    sdk = raw["openai_agents_sqlite_session"]
    if not sdk:
        raise RuntimeError("openai-agents is not installed (the bench extra)")
    rows = []
    for key, sync, judged in (
        ("continuum_full", "FULL", True),
        ("continuum_normal", "NORMAL", False),
    ):
        ours = raw[key]
        label = "Agents SDK SQLiteSession (WAL, FULL)"
        rows.append(
            _row(
                f"store: append {n:,} one by one, synchronous={sync}",
                ours["append_s"] * 1000,
                sdk["append_s"] * 1000,
                "ms",
                "≤ 1.0× SDK" if judged else "(info)",
                ours["append_s"] <= sdk["append_s"] if judged else None,
                label,
            )
        )
        rows.append(
            _row(
                f"store: load {n:,}, synchronous={sync}",
                ours["load_s"] * 1000,
                sdk["load_s"] * 1000,
                "ms",
                "≤ 1.0× SDK" if judged else "(info)",
                ours["load_s"] <= sdk["load_s"] if judged else None,
                label,
            )
        )
    return rows, raw


def search(quick: bool) -> tuple[list[Row], Any]:
    from bench.search import QUERIES, measure

    large = 20_000 if quick else 100_000
    raw = asyncio.run(measure(large=large, small=1_000))
    worst = raw["worst"]
    label = "same queries over 1k messages"
    size = f"search {large // 1000}k messages"

    def slowest(kind: str) -> str:
        return max(QUERIES, key=lambda name: raw[f"{kind}_ratios"][name])

    return [
        _row(
            f"{size}: median query latency (first page, index merged when idle)",
            raw["median_large_ms"],
            raw["median_small_ms"],
            "ms",
            "flat (≤ 2×)",
            raw["median_large_ms"] <= FLAT * raw["median_small_ms"],
            label,
        ),
        _row(
            f"{size}: slowest query ({worst}; first page, index merged when idle)",
            raw["large_ms"][worst],
            raw["small_ms"][worst],
            "ms",
            "flat (≤ 2×)",
            raw["ratios"][worst] <= FLAT,
            label,
        ),
        *(
            _row(
                f"{size}: slowest query, {words} ({name})",
                raw[f"{kind}_large_ms"][name],
                raw[f"{kind}_small_ms"][name],
                "ms",
                "(info)",
                None,
                label,
            )
            for kind, words in (
                ("as_filled", "before the idle merge"),
                ("same_page", "as many hits as over 1k"),
            )
            for name in (slowest(kind),)
        ),
    ], raw


def sidebar(quick: bool) -> tuple[list[Row], Any]:
    count = 300 if quick else 1_000
    raw = _module_json(
        "sidebar",
        "--conversations",
        str(count),
        "--launches",
        "3" if quick else "5",
        "--many",
        "3000" if quick else "10000",
    )
    label = "10 conversations"
    rows = [
        _row(
            f"cold start, {count:,} conversations: first window shown",
            raw["shown_big_ms"],
            raw["shown_small_ms"],
            "ms",
            "flat (≤ 1.5×)",
            raw["shown_big_ms"] <= 1.5 * raw["shown_small_ms"],
            label,
        ),
        _row(
            f"cold start, {count:,} conversations: main window works",
            raw["ready_big_ms"],
            raw["ready_small_ms"],
            "ms",
            "flat (≤ 1.5×)",
            raw["ready_big_ms"] <= 1.5 * raw["ready_small_ms"],
            label,
        ),
        _row(
            f"sidebar: list {count:,} conversations",
            raw["fill_big_ms"],
            raw["fill_small_ms"],
            "ms",
            "≤ 16 ms (one frame)",
            raw["fill_big_ms"] <= 16,
            label,
        ),
        _row(
            f"sidebar: a sent message moves one of {count:,} to the top",
            raw["update_big_ms"],
            raw["update_small_ms"],
            "ms",
            "≤ 16 ms (one frame)",
            raw["update_big_ms"] <= 16,
            label,
        ),
        _row(
            f"sidebar: slowest page scrolling {count:,} ({raw['pages_big']} pages)",
            raw["scroll_big_ms"],
            raw["scroll_small_ms"],
            "ms",
            "≤ 16 ms",
            raw["scroll_big_ms"] <= 16,
            label,
        ),
    ]
    if raw.get("many"):
        many = f"{raw['many']:,}"
        rows += [
            _row(
                f"sidebar: list {many} conversations",
                raw["fill_many_ms"],
                raw["fill_small_ms"],
                "ms",
                "≤ 16 ms (one frame)",
                raw["fill_many_ms"] <= 16,
                label,
            ),
            _row(
                f"sidebar: a sent message moves one of {many} to the top",
                raw["update_many_ms"],
                raw["update_small_ms"],
                "ms",
                "≤ 16 ms (one frame)",
                raw["update_many_ms"] <= 16,
                label,
            ),
            _row(
                f"sidebar: slowest page scrolling {many} ({raw['pages_many']} pages)",
                raw["scroll_many_ms"],
                raw["scroll_small_ms"],
                "ms",
                "≤ 16 ms",
                raw["scroll_many_ms"] <= 16,
                label,
            ),
        ]
    return rows, raw


FIGURES: dict[str, Callable[[bool], tuple[list[Row], Any]]] = {
    "coldstart": coldstart,
    "streaming": streaming,
    "provider_rates": provider_rates,
    "render": render,
    "markdown_worst": markdown_worst,
    "open": open_conversation,
    "resume_point": resume_point,
    "store": store,
    "search": search,
    "sidebar": sidebar,
}


def _fmt(value: float | None) -> str:
    if value is None:
        return "—"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"


def table(rows: list[Row]) -> str:
    head = ("figure", "value", "reference", "ratio", "SPEC target", "met?")
    lines = [
        [
            r["figure"],
            f"{_fmt(r['value'])} {r['unit']}",
            f"{_fmt(r['reference'])} {r['unit']}" if r["reference"] is not None else "—",
            f"{r['ratio']:.2f}×" if r["ratio"] is not None else "—",
            r["target"],
            {True: "yes", False: "NO", None: "—"}[r["met"]],
        ]
        for r in rows
    ]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines, strict=False)]
    out = [
        "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)),
        "  ".join("-" * w for w in widths),
    ]
    out += ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in lines]
    return "\n".join(out)


def _git() -> dict[str, Any]:
    def run(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10
            ).stdout.strip()
        except OSError:
            return ""

    return {"commit": run("rev-parse", "HEAD"), "dirty": bool(run("status", "--porcelain"))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes: a smoke run")
    parser.add_argument(
        "--only",
        action="append",
        choices=sorted(FIGURES),
        metavar="NAME",
        help=f"run only this figure (repeatable): {', '.join(FIGURES)}",
    )
    parser.add_argument("--no-save", action="store_true", help="do not write the JSON file")
    args = parser.parse_args(argv)
    names = args.only or list(FIGURES)
    rows: list[Row] = []
    raw: dict[str, Any] = {}
    errors: dict[str, str] = {}
    started = time.perf_counter()
    for name in names:
        print(f"… {name}", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        try:
            figure_rows, raw[name] = FIGURES[name](args.quick)
            rows.extend(figure_rows)
        except Exception as err:  # one broken figure must not hide the others
            errors[name] = f"{type(err).__name__}: {err}"
            print(f"  {name} failed: {errors[name]}", file=sys.stderr)
        print(f"  {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    print(table(rows))
    for name, error in errors.items():
        print(f"FAILED {name}: {error.splitlines()[0]}")
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    report = {
        "timestamp": stamp,
        "quick": args.quick,
        "figures": names,
        "seconds": time.perf_counter() - started,
        "git": _git(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "rows": rows,
        "errors": errors,
        "raw": raw,
    }
    try:
        from PySide6 import __version__ as pyside

        report["pyside6"] = pyside
    except ImportError:
        pass
    if not args.no_save:
        RESULTS.mkdir(exist_ok=True)
        path = RESULTS / f"{stamp}.json"
        path.write_text(json.dumps(report, indent=2), encoding="utf-8")
        print(f"\nwritten: {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
