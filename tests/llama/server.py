"""Start and stop llama.cpp's own HTTP server (``xllamacpp``) on the tiny hand-set model.

:class:`LlamaServer` writes the model (:mod:`tests.llama.model`) and runs
:mod:`tests.llama.serve` as a child process on a free 127.0.0.1 port; ``stop()`` closes its
stdin (it exits), ``kill()`` sends SIGKILL. :func:`require_wheel` fails the test under
``CI=true`` when ``xllamacpp`` or ``gguf`` is missing and skips it (saying why) elsewhere.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from .model import write_model

ROOT = Path(__file__).resolve().parents[2]
WAIT = 30.0  # a guard against hanging, never a measured time


def require_wheel() -> None:
    """Fail (in CI) or skip (elsewhere) when the llama.cpp wheel or ``gguf`` is missing."""
    missing = [name for name in ("xllamacpp", "gguf") if importlib.util.find_spec(name) is None]
    if not missing:
        return
    reason = (
        f"{' and '.join(missing)} not installed: llama.cpp server tests need "
        "`pip install -e '.[test]'`"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class LlamaServer:
    """One llama.cpp server process on the tiny model; ``base_url`` ends in ``/v1``."""

    def __init__(self, workdir: Path, *, n_ctx: int = 4096) -> None:
        self.workdir = workdir
        self.n_ctx = n_ctx
        self.model_path = workdir / "tiny-llama.gguf"
        if not self.model_path.exists():
            write_model(self.model_path)
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = workdir / "llama-server.log"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        """Start the server (again, on the same port after a stop) and wait until it listens."""
        if self.port == 0:
            self.port = free_port()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tests.llama.serve", str(self.model_path),
                 str(self.port), str(self.n_ctx)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env, cwd=ROOT,
            )  # fmt: skip
        assert self.proc.stdout is not None
        line: list[bytes] = []
        reader = threading.Thread(target=lambda: line.append(self.proc.stdout.readline()))  # type: ignore[union-attr]
        reader.start()
        reader.join(WAIT)
        if not line or not line[0].startswith(b"READY"):
            self.kill()
            tail = self.log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"llama.cpp server did not start on port {self.port}:\n{tail}")

    def stop(self) -> None:
        """Ask the server to exit (stdin closed) and wait; SIGKILL if it does not."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(WAIT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(WAIT)
        if proc.stdout is not None:
            proc.stdout.close()

    def kill(self) -> None:
        """SIGKILL the server (mid-stream, if a test wants that)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        proc.kill()
        proc.wait(WAIT)
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()
