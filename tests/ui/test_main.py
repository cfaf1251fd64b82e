"""Entry point pieces: single instance per data folder, the excepthook, --version."""

from __future__ import annotations

import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from ui.main import SingleInstance, install_excepthook, main


def test_second_instance_asks_the_first_to_come_forward(
    qapp: Any, qtbot: Any, tmp_path: Path
) -> None:
    first = SingleInstance(tmp_path)
    assert first.claim()
    activated: list[bool] = []
    first.on_activate(lambda: activated.append(True))
    second = SingleInstance(tmp_path)
    assert not second.claim()
    qtbot.waitUntil(lambda: bool(activated), timeout=3000)
    first.close()


def test_excepthook_reports_one_sentence_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    shown: list[str] = []
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    install_excepthook(shown.append)
    try:
        raise ValueError("disk on fire")
    except ValueError as err:
        with caplog.at_level("CRITICAL"):
            sys.excepthook(type(err), err, err.__traceback__)
    assert len(shown) == 1 and "disk on fire" in shown[0]
    assert "Traceback" not in shown[0]


def test_version_flag(capsys: Any) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert "Continuum" in capsys.readouterr().out


def test_a_file_left_by_a_killed_instance_is_taken_over(qapp: Any, tmp_path: Path) -> None:
    import socket as sockets

    first = SingleInstance(tmp_path)
    path = Path(first._impl.path)
    # What a SIGKILLed instance leaves: a socket file nobody listens on.
    stale = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()
    assert path.exists()
    try:
        assert first.claim()  # taken over, not "already running"
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0  # the user's alone
        second = SingleInstance(tmp_path)
        assert not second.claim()
    finally:
        first.close()
    assert not path.exists()
    again = SingleInstance(tmp_path)
    try:
        assert again.claim()
    finally:
        again.close()


def test_another_data_folder_is_another_instance(qapp: Any, tmp_path: Path) -> None:
    first = SingleInstance(tmp_path / "a")
    other = SingleInstance(tmp_path / "b")
    try:
        assert first.claim() and other.claim()
    finally:
        first.close()
        other.close()
