"""SIGKILL while a message with an image is being appended: afterwards the message and its
blob are both there or neither is (never a message pointing at a missing blob, never a blob
without its message), and the database is sound."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from .childproc import run_and_kill

CHILD = Path(__file__).with_name("attachment_child.py")
ROOT = Path(__file__).parents[2]


def _state(db: Path) -> tuple[str, set[str], set[str]]:
    with sqlite3.connect(db) as conn:
        ok = str(conn.execute("PRAGMA integrity_check").fetchone()[0])
        referenced = {
            part["digest"]
            for (data,) in conn.execute("SELECT data FROM messages")
            for part in json.loads(data)["content"]
        }
        stored = {str(d) for (d,) in conn.execute("SELECT digest FROM attachments")}
    return ok, referenced, stored


@pytest.mark.parametrize("delay", [0.0, 0.004, 0.012, 0.03])
def test_kill_mid_append_leaves_message_and_blob_together(tmp_path: Path, delay: float) -> None:
    db = tmp_path / "kill.sqlite"
    killed = run_and_kill(
        [sys.executable, str(CHILD), str(db)],
        stderr_path=tmp_path / "stderr.txt",
        is_milestone=lambda line: line == "APPEND 3",
        timeout=60,
        delay=delay,
        cwd=ROOT,
    )
    assert killed.reached and killed.by_sigkill, killed.stderr_tail
    ok, referenced, stored = _state(db)
    assert ok == "ok"
    assert referenced == stored  # both or neither, for every message
    saved = {int(line.split()[1]) for line in killed.lines if line.startswith("SAVED")}
    assert len(referenced) >= len(saved) >= 3  # every committed message survived
