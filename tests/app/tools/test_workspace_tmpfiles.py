"""Continuum's own temporary files: a write killed with SIGKILL leaves one; the model never sees
it, no tool takes it as a path, and it is removed once its writer is certainly dead (never while
the writer lives)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.tools.workspace import Workspace, WorkspaceError, temporary_is_stale

REPO = Path(__file__).resolve().parents[3]

# The child writes through the real tool; its first fsync (the temporary file, fully written)
# announces itself and then waits on stdin for ever, so the parent kills it at that exact point.
CHILD = r"""
import os, sys
from app.tools.workspace import Workspace

def stop_here(fd):
    sys.stdout.write("temporary file written\n")
    sys.stdout.flush()
    sys.stdin.read()

os.fsync = stop_here
Workspace(sys.argv[1]).write_file("sub/big.txt", "new " * 100_000)
"""


def temporaries(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.startswith(".continuum-"))


def test_a_write_killed_midway_leaves_nothing_the_model_sees(tmp_path: Path) -> None:
    root = tmp_path / "work"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "big.txt").write_text("old text")
    workspace = Workspace(root)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == b"temporary file written\n"
        [temporary] = temporaries(root / "sub")
        assert (root / "sub" / temporary).stat().st_size == 400_000

        # While its writer lives, the file is hidden but left alone.
        assert workspace.list_directory("sub") == "big.txt (8 bytes)"
        assert temporaries(root / "sub") == [temporary]
        assert temporary.startswith(f".continuum-{child.pid}-")
    finally:
        child.kill()
        child.wait()
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                stream.close()
    assert child.returncode == -signal.SIGKILL
    assert temporaries(root / "sub") == [temporary]  # the kill left it behind

    assert workspace.list_directory("sub") == "big.txt (8 bytes)"
    assert temporaries(root / "sub") == []  # its writer is dead: removed
    assert workspace.read_file("sub/big.txt") == "old text"  # the target was never touched


def dead_pid() -> int:
    """The pid of a child that has exited and been reaped."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


def test_a_write_into_the_folder_also_removes_abandoned_files(tmp_path: Path) -> None:
    stale = tmp_path / f".continuum-{dead_pid()}-0123456789ab.tmp"
    live = tmp_path / f".continuum-{os.getppid()}-0123456789ab.tmp"  # a live process: kept
    stale.write_text("partial")
    live.write_text("partial")
    workspace = Workspace(tmp_path)
    assert workspace.write_file("a.txt", "text") == "Created a.txt (4 bytes)."
    assert temporaries(tmp_path) == [live.name]
    assert workspace.list_directory() == "a.txt (4 bytes)"


@pytest.mark.parametrize(
    "name", [".continuum-123-0123456789ab.tmp", ".continuum-x1y2z3.tmp", "sub/.continuum-1-ab.tmp"]
)
def test_temporary_names_are_never_targets(tmp_path: Path, name: str) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / name).write_text("someone's partial write")
    workspace = Workspace(tmp_path)
    for attempt in (
        lambda: workspace.read_file(name),
        lambda: workspace.write_file(name, "x"),
        lambda: workspace.edit_file(name, "partial", "x"),
    ):
        with pytest.raises(WorkspaceError, match="temporary files.*choose another file name"):
            attempt()
    assert (tmp_path / name).read_text() == "someone's partial write"


ALIVE, DEAD = {1, 4242}, {777}


@pytest.mark.parametrize(
    ("name", "age", "stale"),
    [
        ("notes.txt", 10**9, False),  # not ours, whatever its age
        (".continuum-777-0123456789ab.tmp", 0.0, True),  # its writer is dead
        (".continuum-4242-0123456789ab.tmp", 10**9, False),  # another live process: kept
        (".continuum-100-0123456789ab.tmp", 0.0, False),  # this process, a write in progress
        (".continuum-100-ffffffffffff.tmp", 0.0, True),  # this pid, but no write of ours
        (".continuum-a1b2c3d4.tmp", 60.0, False),  # an older version's name: by age
        (".continuum-a1b2c3d4.tmp", 7200.0, True),
    ],
)
def test_the_stale_rule(name: str, age: float, stale: bool) -> None:
    assert (
        temporary_is_stale(
            name,
            age=age,
            own_pid=100,
            own_active={".continuum-100-0123456789ab.tmp"},
            pid_alive=lambda pid: pid in ALIVE or pid not in DEAD,
        )
        is stale
    )
