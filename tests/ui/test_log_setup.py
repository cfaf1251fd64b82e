"""The log file: phase one writes through a plain file handler (no ``logging.handlers`` import
before the window shows); with the core, a rotating handler takes its place on the same file,
and nothing written in between is lost."""

from __future__ import annotations

import logging
import logging.handlers
from collections.abc import Iterator
from pathlib import Path

import pytest

from ui.main import LOG_MAX_BYTES, _rotating_log, _setup_logging


@pytest.fixture
def root_handlers() -> Iterator[None]:
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        if handler not in before:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)


def _on(path: Path) -> list[logging.FileHandler]:
    """The root logger's handlers that write ``path`` (pytest has handlers of its own)."""
    handlers = logging.getLogger().handlers
    return [
        h for h in handlers if isinstance(h, logging.FileHandler) and Path(h.baseFilename) == path
    ]


def test_phase_one_logs_plainly_then_the_log_rotates(tmp_path: Path, root_handlers: None) -> None:
    _setup_logging(tmp_path / "logs")
    log_file = tmp_path / "logs" / "continuum.log"
    [plain] = _on(log_file)
    assert type(plain) is logging.FileHandler
    logging.getLogger("test").info("before the core")
    _rotating_log()
    files = _on(log_file)
    assert [type(h) for h in files] == [logging.handlers.RotatingFileHandler]
    [rotating] = files
    assert isinstance(rotating, logging.handlers.RotatingFileHandler)
    assert rotating.maxBytes == LOG_MAX_BYTES
    assert rotating.backupCount == 3
    logging.getLogger("test").info("after the core")
    text = log_file.read_text(encoding="utf-8")
    assert "INFO test: before the core" in text and "INFO test: after the core" in text
    # Past the size, the next record rotates the file.
    rotating.maxBytes = 200
    for number in range(10):
        logging.getLogger("test").info("line %d %s", number, "x" * 40)
    assert (tmp_path / "logs" / "continuum.log.1").exists()
