"""Cold start to window shown: the real app against a bare PySide6 ``QMainWindow``.

Each launch is a fresh ``python -m bench._start …`` subprocess (offscreen), timed from spawn to
the ``shown`` line its first event-loop turn after ``show()`` prints — for the app, the start
window of phase one (:mod:`ui.start_window`) — and, for the app, on to the ``ready`` line the
first turn after the main window took over. Launches alternate between
the two so drift hits both alike; one unmeasured launch of each first writes bytecode caches
(into a private ``PYTHONPYCACHEPREFIX``: this machine sets ``PYTHONDONTWRITEBYTECODE``, which
would otherwise make every launch recompile the app's sources — an installed app has its
``.pyc`` files). The page cache is warm; dropping it needs root and disturbs the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _launch(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(seconds to the first window shown, seconds to the main window ready); the bare
    window is ready when shown."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench._start", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    shown = time.perf_counter() - started
    ready = shown
    if line.strip() == "shown" and args[0] == "app":
        line = proc.stdout.readline()
        ready = time.perf_counter() - started
        wanted = "ready"
    else:
        wanted = "shown"
    proc.wait(30)
    if line.strip() != wanted:
        raise RuntimeError(f"launch {args[0]} did not show its window (exit {proc.returncode})")
    return shown, ready


_IMPORTS = """
import json, time
t0 = time.perf_counter()
import PySide6.QtWidgets
t1 = time.perf_counter()
import ui.main
ui.main.skip_pyside_source_scan()  # as ui.main.main() does before it imports the rest
import ui.start_window
t2 = time.perf_counter()
import app.services, ui.window
t3 = time.perf_counter()
print(json.dumps([t1 - t0, t2 - t1, t3 - t2]))
"""


def imports(runs: int = 5) -> dict[str, float]:
    """The import budget, in fresh processes (bytecode cached): PySide6.QtWidgets alone (what a
    bare window needs), then phase one's modules, then the core and the main window."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPYCACHEPREFIX=f"{tmp}/pyc")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        samples = []
        for _ in range(runs + 1):  # the first writes the bytecode caches
            out = subprocess.run(
                [sys.executable, "-c", _IMPORTS],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                check=True,
                timeout=60,
            ).stdout
            samples.append(json.loads(out.strip().splitlines()[-1]))
    qt, one, two = (statistics.median(s[i] for s in samples[1:]) * 1000 for i in range(3))
    return {"qtwidgets_ms": qt, "phase_one_ms": one, "phase_two_ms": two}


def measure(launches: int = 7) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPYCACHEPREFIX=f"{tmp}/pyc")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        # A launch as a person makes it, with no --data-dir: the platform's folders (found by
        # platformdirs, which --data-dir spares), pointed into the temporary folder. Only on
        # Linux: elsewhere the folders are not moved by XDG variables, and the launch would
        # open the person's own data (or ask a running Continuum to come forward).
        linux = sys.platform.startswith("linux")
        home = dict(env, XDG_DATA_HOME=f"{tmp}/share", XDG_STATE_HOME=f"{tmp}/state")
        data = f"{tmp}/data"
        app_args, bare_args, default_args = ["app", data], ["bare"], ["app", "-"]
        _launch(bare_args, env)  # bytecode caches; the data folder is created by the app's
        _launch(app_args, env)
        if linux:
            _launch(default_args, home)
        app_s, ready_s, bare_s, default_s = [], [], [], []
        for _ in range(launches):
            bare_s.append(_launch(bare_args, env)[0])
            shown, ready = _launch(app_args, env)
            app_s.append(shown)
            ready_s.append(ready)
            if linux:
                default_s.append(_launch(default_args, home)[0])
    app_ms, bare_ms = statistics.median(app_s) * 1000, statistics.median(bare_s) * 1000
    ready_ms = statistics.median(ready_s) * 1000
    default_ms = statistics.median(default_s) * 1000 if default_s else float("nan")
    return {
        "launches": launches,
        # The first window on screen (the start window: titles, a focused editor).
        "app_ms": app_ms,
        "bare_ms": bare_ms,
        "ratio": app_ms / bare_ms,
        # The same with the platform's data folder (no --data-dir).
        "default_ms": default_ms,
        "default_ratio": default_ms / bare_ms,
        # The main window has taken over: everything works.
        "ready_ms": ready_ms,
        "ready_ratio": ready_ms / bare_ms,
        "app_samples_ms": [s * 1000 for s in app_s],
        "ready_samples_ms": [s * 1000 for s in ready_s],
        "bare_samples_ms": [s * 1000 for s in bare_s],
        "imports": imports(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--launches", type=int, default=7)
    args = parser.parse_args()
    print(json.dumps(measure(args.launches), indent=2))


if __name__ == "__main__":
    main()
