"""Run a child process, read its milestone lines, and SIGKILL it at the chosen one."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Killed:
    lines: list[str]  # everything the child printed, including lines after the milestone
    reached: bool  # the milestone was seen before the deadline
    returncode: int | None
    stderr_tail: str

    @property
    def by_sigkill(self) -> bool:
        return self.returncode == -signal.SIGKILL


def run_and_kill(
    argv: Sequence[str],
    *,
    stderr_path: Path,
    is_milestone: Callable[[str], bool],
    timeout: float,
    delay: float = 0.0,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    tail_chars: int = 3000,
) -> Killed:
    """Start ``argv``; SIGKILL it ``delay`` seconds after the first line ``is_milestone`` accepts
    (or at ``timeout`` / when it exits on its own)."""
    with open(stderr_path, "wb") as stderr:
        proc = subprocess.Popen(
            list(argv),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            bufsize=1,
            env=dict(env) if env is not None else None,
            cwd=cwd,
        )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            lines.put(raw.rstrip("\n"))
        lines.put(None)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    seen: list[str] = []
    reached = False
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                break
            seen.append(line)
            if is_milestone(line):
                reached = True
                if delay:
                    time.sleep(delay)  # the kill lands at a chosen moment after the milestone
                break
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        reader.join(timeout=30)
        assert proc.stdout is not None
        proc.stdout.close()
    while True:  # whatever the child printed before it died
        try:
            rest = lines.get_nowait()
        except queue.Empty:
            break
        if rest is not None:
            seen.append(rest)
    tail = stderr_path.read_text(errors="replace")[-tail_chars:]
    return Killed(seen, reached, proc.returncode, tail)
