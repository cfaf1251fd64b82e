"""The suite survives a background run: a shell job started with ``&`` inherits SIGINT ignored.

The Ctrl+C test in ``test_agent.py`` sends SIGINT to its own process; with SIGINT ignored that
signal would never arrive and the test would wait forever. It must install the default handler
for its duration (and restore the inherited one afterwards).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CTRL_C_TEST = "tests/app/core/test_agent.py::test_ctrl_c_in_the_calling_thread_stops_a_sync_request"


def test_the_ctrl_c_test_finishes_when_sigint_is_ignored(tmp_path: Path) -> None:
    # `trap '' INT` sets SIGINT to SIG_IGN, which exec keeps: exactly what `cmd &` gives a job.
    pytest_argv = [
        sys.executable,
        "-m",
        "pytest",
        CTRL_C_TEST,
        "-q",
        "-p",
        "no:cacheprovider",
        "-o",
        "timeout=30",
        "--basetemp",
        str(tmp_path / "inner"),
    ]
    script = "trap '' INT; exec " + " ".join(shlex.quote(a) for a in pytest_argv)
    done = subprocess.run(
        ["sh", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=90
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "1 passed" in done.stdout
