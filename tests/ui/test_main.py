"""Entry point pieces: single instance per data folder, the excepthook, --version."""

from __future__ import annotations

import logging
import re
import stat
import subprocess
import sys
import threading
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
    assert not second.claim() and second.answered
    qtbot.waitUntil(lambda: bool(activated), timeout=3000)
    first.close()


def test_a_launch_before_the_first_listens_waits_for_it(
    qapp: Any, qtbot: Any, tmp_path: Path
) -> None:
    """The first instance holds the folder's lock from its first milliseconds but makes its
    socket only once its start window is shown: a launch in between waits and is heard."""
    first = SingleInstance(tmp_path)
    assert first.claim()
    second = SingleInstance(tmp_path)
    unheard = threading.Event()
    ask = second._impl._ask

    def asked() -> bool:
        heard = ask()
        if not heard:
            unheard.set()
        return heard

    second._impl._ask = asked  # type: ignore[union-attr]
    result: list[bool] = []
    asking = threading.Thread(target=lambda: result.append(second.claim()))
    asking.start()
    activated: list[bool] = []
    try:
        assert unheard.wait(10)  # it asked before the first listened, and was not heard
        first.on_activate(lambda: activated.append(True))  # listens now
        qtbot.waitUntil(lambda: bool(activated), timeout=5000)
    finally:
        asking.join(10)
        first.close()
    assert result == [False] and second.answered


_HOLDER = """
import sys
from pathlib import Path
from ui.single_instance import SingleInstance
instance = SingleInstance(Path(sys.argv[1]))
print("claimed" if instance.claim() else "refused", flush=True)
instance.listen()
print("listening", flush=True)
sys.stdin.read()
"""


def test_a_killed_instance_never_blocks_the_next_start(qapp: Any, tmp_path: Path) -> None:
    """SIGKILL leaves the lock file and the socket file; the kernel has let go of the lock,
    so the next launch claims the folder and takes the socket file over."""
    root = Path(__file__).resolve().parents[2]
    with subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(tmp_path)],
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        assert holder.stdout is not None
        try:
            assert holder.stdout.readline().strip() == "claimed"
            assert holder.stdout.readline().strip() == "listening"
            refused = SingleInstance(tmp_path)
            assert not refused.claim() and refused.answered  # it runs, and heard the request
        finally:
            holder.kill()  # SIGKILL
            holder.wait(10)
    after = SingleInstance(tmp_path)
    try:
        assert Path(after._impl.path).exists()  # the killed one's socket file is still there
        assert after.claim()
        after.listen()
        third = SingleInstance(tmp_path)
        assert not third.claim() and third.answered
    finally:
        after.close()


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
        first.listen()
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0  # the user's alone
        second = SingleInstance(tmp_path)
        assert not second.claim() and second.answered
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


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--data-dir", "/tmp/x"],
        ["--data-dir=/tmp/y z"],
        ["--data-dir", "relative/folder"],
        ["--data-dir", "-odd"],  # argparse's business (an option-looking value)
        ["--data", "/tmp/abbrev"],
        ["--data-dir="],
        ["--data-dir", ""],
        ["-platform", "offscreen"],
        ["--data-dir", "/tmp/x", "-style", "Fusion"],
    ],
)
def test_the_quick_reading_of_a_command_line_is_argparses(argv: list[str]) -> None:
    """The usual command lines skip argparse (its first use costs a cold start ~3-4 ms); any
    line read quickly reads as argparse reads it, and every other line goes to argparse."""
    from ui.main import _parser, _quick_parse

    quick = _quick_parse(argv)
    if quick is not None:
        assert quick == _parser().parse_known_args(argv)[0]
    usual = (
        [],
        ["--data-dir", "/tmp/x"],
        ["--data-dir=/tmp/y z"],
        ["--data-dir", "relative/folder"],
    )
    assert (quick is not None) is (argv in usual)


def test_no_module_selects_a_pyside_feature() -> None:
    """ui.main.skip_pyside_source_scan takes every module as not using PySide6, which is
    right only while none selects a ``__feature__`` (snake_case, true_property)."""
    root = Path(__file__).resolve().parents[2]
    using = [
        str(path.relative_to(root))
        for folder in ("app", "ui", "bench", "examples")
        for path in (root / folder).rglob("*.py")
        if re.search(r"^\s*(from|import)\s+__feature__", path.read_text("utf-8"), re.M)
    ]
    assert using == []


def test_the_lock_file_goes_with_the_instance_and_a_stale_handle_is_noticed(
    qapp: Any, tmp_path: Path
) -> None:
    """The lock file is removed when the instance ends (none pile up in the runtime folder);
    a launch that opened it just before, and then gets the lock, sees that the path names
    another file (or none) and starts over, so two launches never both claim the folder."""
    import fcntl
    import os

    from ui.single_instance import _same_file

    first = SingleInstance(tmp_path)
    assert first.claim()
    lock = Path(first._impl.lock_path)
    assert lock.exists()
    late = os.open(lock, os.O_RDWR)  # a second launch, between its open and its flock
    try:
        first.close()
        assert not lock.exists()
        fcntl.flock(late, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the old file's lock: free now
        assert not _same_file(late, str(lock))  # ... which claim() notices
        again = SingleInstance(tmp_path)
        assert again.claim()
        assert _same_file(again._impl._lock, str(lock))
        again.listen()
        other = SingleInstance(tmp_path)
        try:
            # the folder has one instance, whatever the stale handle
            assert not other.claim() and other.answered
        finally:
            again.close()
    finally:
        os.close(late)


def test_a_running_instance_that_never_answers(
    qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """The folder's lock is held but nobody listens (a hung instance): after ASK_WAIT the
    launch gives up, says what to do, and exits with 1; it never starts a second instance."""
    import ui.single_instance

    monkeypatch.setattr(ui.single_instance, "ASK_WAIT", 0.2)
    holder = SingleInstance(tmp_path)
    assert holder.claim()  # and never listens
    try:
        launch = SingleInstance(tmp_path)
        assert not launch.claim() and not launch.answered
        assert main(["--data-dir", str(tmp_path)]) == 1
        assert "did not answer" in capsys.readouterr().out
    finally:
        holder.close()
        root = logging.getLogger()
        for handler in list(root.handlers):  # main()'s log file, in tmp_path
            if str(getattr(handler, "baseFilename", "")).startswith(str(tmp_path)):
                root.removeHandler(handler)
                handler.close()


def test_a_lock_file_replaced_under_a_launch_is_claimed_again(
    qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """claim() starts over when the file it locked is no longer the one at the path (its
    holder removed it as it ended); a path that keeps changing leaves it unprotected."""
    import ui.single_instance

    real = ui.single_instance._same_file
    answers = iter([False])
    monkeypatch.setattr(
        ui.single_instance, "_same_file", lambda fd, path: next(answers, None) or real(fd, path)
    )
    first = SingleInstance(tmp_path)
    try:
        assert first.claim() and first._impl._lock is not None  # the second try held
    finally:
        first.close()
    monkeypatch.setattr(ui.single_instance, "_same_file", lambda fd, path: False)
    never = SingleInstance(tmp_path)
    assert never.claim() and never._impl._lock is None  # started, unprotected
