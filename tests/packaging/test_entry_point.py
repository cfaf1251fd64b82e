"""The PyInstaller entry script (``packaging/continuum_main.py``) starts the real app, shows the
window with its icon, and closes cleanly in smoke mode — the same check ``smoke_test.sh`` makes
on the frozen build, here from source in about a second."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_entry_script_smoke_mode(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(
        QT_QPA_PLATFORM="offscreen", CONTINUUM_SMOKE_QUIT_AFTER_SHOWN="1", PYTHONPATH=str(ROOT)
    )
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "packaging" / "continuum_main.py"),
            "--data-dir",
            str(tmp_path / "data"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("smoke:")), "")
    assert "window shown: title='Continuum'" in line and "icon=yes" in line, done.stdout
    assert "entry_points=NONE" not in line
    assert (tmp_path / "data" / "continuum.sqlite").is_file()
    log = tmp_path / "data" / "logs" / "continuum.log"
    assert "Traceback" not in (log.read_text() if log.exists() else "")
