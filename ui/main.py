"""Entry point: ``continuum`` — QApplication on a qasync loop, one instance per data folder.

* The start has two phases: a light window (:mod:`ui.start_window`: the saved theme and place,
  the conversations' titles, a focused editor) is shown before the agent core, httpx, Markdown
  and the transcript are imported; then the core is loaded a module at a time (the window
  keeps taking keys in between), the data folder is opened and the
  :class:`ui.window.MainWindow` takes the light window's place and what was typed in it.

* ``--data-dir`` overrides the platform data folder (platformdirs); logs rotate in the platform
  log folder (or ``<data-dir>/logs`` when the data folder is given).
* A second launch on the same data folder asks the first to come forward and exits
  (:mod:`ui.single_instance`).
* On X11, missing libraries Qt's xcb plugin needs are named (with the install command) before
  Qt starts; Qt itself would abort with a misleading message (:mod:`ui.xcb_check`).
* A global ``sys.excepthook`` (qasync routes slot errors there) logs the traceback to the log
  file and shows the person one sentence — never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from .single_instance import SingleInstance

__all__ = ["SingleInstance", "install_excepthook", "main"]

log = logging.getLogger("ui")
# qasync loops must stay referenced until the process ends (see ENVIRONMENT.md).
_LOOPS: list[Any] = []


DISTRIBUTION = "continuum-chat"  # the name on the package index (pyproject.toml)


def _version() -> str:
    """The installed distribution's version (pip, pipx, the bundles); ``app.__version__`` only
    for a source tree that was never installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        from app import __version__

        return __version__


class _Version(argparse.Action):
    """``--version``: read from the installed metadata; the core is not imported for it."""

    def __call__(self, parser: argparse.ArgumentParser, *_args: Any, **_kwargs: Any) -> None:
        print(f"Continuum {_version()}")
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="continuum", description="Continuum chat app")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="folder for conversations and settings (default: the platform's)",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    return parser


def _quick_parse(argv: Sequence[str]) -> argparse.Namespace | None:
    """The usual command lines — none, or ``--data-dir FOLDER`` — read without argparse; its
    first use looks for translations of its messages, ~3-4 ms of a cold start. ``None`` for
    anything else (help, the version, Qt's own options, a mistake), which argparse reads."""
    if not argv:
        return argparse.Namespace(data_dir=None, version=None)
    if len(argv) == 2 and argv[0] == "--data-dir" and argv[1] and not argv[1].startswith("-"):
        return argparse.Namespace(data_dir=Path(argv[1]), version=None)
    if len(argv) == 1 and argv[0].startswith("--data-dir=") and len(argv[0]) > len("--data-dir="):
        return argparse.Namespace(data_dir=Path(argv[0].removeprefix("--data-dir=")), version=None)
    return None


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    arguments = sys.argv[1:] if argv is None else argv
    quick = _quick_parse(arguments)
    if quick is not None:
        return quick
    args, _qt_args = _parser().parse_known_args(arguments)
    return args


def _data_dir(args: argparse.Namespace) -> tuple[Path, Path]:
    if args.data_dir is not None:
        data = args.data_dir.expanduser().resolve()
        return data, data / "logs"
    import platformdirs  # only here: importing it costs ~7 ms of a cold start

    return (
        Path(platformdirs.user_data_dir("Continuum", appauthor=False)),
        Path(platformdirs.user_log_dir("Continuum", appauthor=False)),
    )


#: The log file's size at which it is rotated (three old ones are kept).
LOG_MAX_BYTES = 1_000_000
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _setup_logging(folder: Path) -> None:
    """Log to ``folder/continuum.log``. Phase one writes through a plain file handler;
    :func:`_rotating_log` puts the rotating one in its place with the core (importing
    ``logging.handlers`` costs ~7 ms of a cold start: pickle, queue, copy)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(folder / "continuum.log", encoding="utf-8")
    except OSError:
        handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter(_FORMAT))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def _rotating_log() -> None:
    """Replace phase one's plain file handler by a rotating one on the same file."""
    import logging.handlers

    root = logging.getLogger()
    for handler in list(root.handlers):
        if type(handler) is logging.FileHandler:
            rotating = logging.handlers.RotatingFileHandler(
                handler.baseFilename, maxBytes=LOG_MAX_BYTES, backupCount=3, encoding="utf-8"
            )
            rotating.setFormatter(handler.formatter)
            root.addHandler(rotating)
            root.removeHandler(handler)
            handler.close()


def install_excepthook(report: Callable[[str], None]) -> None:
    """Log unexpected exceptions in full; show the person one line through ``report``."""

    def hook(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, error, tb)
            return
        log.error("unexpected error", exc_info=(kind, error, tb))
        try:
            report(
                f"Something went wrong: {error or kind.__name__}. "
                "Details are in the log file; your conversations are saved."
            )
        except Exception:  # the reporter itself must never raise out of the hook
            pass

    sys.excepthook = hook


def _uses_no_feature(_module: object) -> bool:
    return False


def skip_pyside_source_scan() -> None:
    """Stop PySide6 from reading the source of every module imported after it.

    PySide6's import hook (``shibokensupport.feature``) reads each newly imported module's
    source file (``inspect.getsource``) to see whether it names PySide6, so that a module
    using ``from __feature__ import snake_case``/``true_property`` can be switched back when
    another one is not. Continuum imports ~40 modules before its start window and ~370 before
    the main window: ~5 ms and ~45 ms of reading files. It uses no ``__feature__`` (a test
    keeps it so), and with no module selecting one the answer changes nothing: every module
    is then taken as not using PySide6. The hook is PySide6's own, private: if it is not
    there, nothing is done.
    """
    feature = sys.modules.get("shibokensupport.feature")
    if feature is not None and callable(getattr(feature, "_mod_uses_pyside", None)):
        setattr(feature, "_mod_uses_pyside", _uses_no_feature)  # noqa: B010 (a module's)


#: Imported one at a time after the start window is shown, with a loop turn between them.
CORE_MODULES = ("httpx", "app", "app.services", "ui.transcript", "ui.window")


async def _load_core() -> None:
    import asyncio
    import importlib

    _rotating_log()

    for name in CORE_MODULES:
        importlib.import_module(name)
        await asyncio.sleep(0)  # keys and paints for the start window are handled between


def main(
    argv: Sequence[str] | None = None,
    *,
    on_stage: Callable[[str, Any], None] | None = None,
) -> int:
    """Run the app; ``on_stage("shown", start_window)`` and ``on_stage("ready", main_window)``
    tell a benchmark or a test when each phase's window is on screen."""
    arguments = sys.argv[1:] if argv is None else argv
    args = _parse(arguments)
    data_dir, log_dir = _data_dir(args)
    _setup_logging(log_dir)

    from .xcb_check import xcb_problem

    # Before Qt: a missing xcb library makes it abort with a misleading message (issue 11).
    problem = xcb_problem(os.environ, sys.platform, arguments)
    if problem is not None:
        log.error("%s", problem)
        print(problem, file=sys.stderr)
        return 2

    # QMessageBox and ui.plain are imported after the start window is shown: a Qt class's enums
    # become Python enum classes when the class is first used, ~0.1-7 ms each (QMessageBox's
    # three, here); phase one makes none it does not need.
    from PySide6.QtWidgets import QApplication

    skip_pyside_source_scan()  # before the start window's modules are imported
    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "continuum"])
    assert isinstance(app, QApplication)
    app.setApplicationName("Continuum")
    app.setOrganizationName("Continuum")
    # Matches packaging/linux/io.continuum.Continuum.desktop, so Wayland shows its icon.
    app.setDesktopFileName("io.continuum.Continuum")
    instance = SingleInstance(data_dir)
    if not instance.claim():
        if instance.answered:
            print("Continuum is already running; its window was brought forward.")
        else:
            print(
                "Continuum is already running on this data folder but did not answer; "
                "switch to its window, or end it and start Continuum again."
            )
            return 1
        return 0

    from .start_window import StartWindow

    start = StartWindow(data_dir)
    start.show()
    if on_stage is not None:
        on_stage("shown", start)
    app.processEvents()  # painted now, before the event loop and the core are loaded
    front: list[Callable[[], None]] = [start.activate]  # what a second launch brings forward
    instance.on_activate(lambda: front[-1]())  # (a launch before this waits for it)
    start.set_icon()

    import asyncio  # not before: the start window is shown without it

    from .eventloop import ContinuumEventLoop

    loop = ContinuumEventLoop(app)
    _LOOPS.append(loop)
    asyncio.set_event_loop(loop)
    window: Any = None

    def report(text: str) -> None:
        if window is not None:
            window.statusBar().showMessage(text, 15000)

    install_excepthook(report)

    def loop_error(_loop: Any, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if error is not None:
            sys.excepthook(type(error), error, error.__traceback__)
        else:
            log.error("event loop: %s", context.get("message"))

    loop.set_exception_handler(loop_error)

    async def run() -> int:
        nonlocal window
        await start.painted()
        await _load_core()
        from PySide6.QtWidgets import QMessageBox

        from app.services import AppServices

        from .plain import plain_message_box
        from .window import MainWindow

        services = AppServices(data_dir)
        try:
            kept = await services.open_recovering()
        except Exception as err:  # a StorageError says what to do; show it, do not crash
            log.error("could not open the data folder", exc_info=err)
            plain_message_box(
                start,
                QMessageBox.Icon.Critical,
                "Continuum cannot open its data",
                f"{err}\n\nData folder: {data_dir}",
            ).exec()
            return 1
        if kept is not None:
            plain_message_box(
                start,
                QMessageBox.Icon.Warning,
                "Continuum started a new conversation database",
                "The conversation database was damaged, so Continuum kept it aside as\n"
                f"{kept}\nand started a new, empty one. Nothing was deleted: a recovery tool "
                "(or a backup) may still get the old conversations back.",
            ).exec()
        if start.dismissed:  # closed while starting: nothing was changed, end here
            await services.close()
            return 0
        window = MainWindow(services, log_dir=log_dir)
        front.append(window.activate)
        start.hand_over(window)
        if on_stage is not None:
            on_stage("ready", window)
        from .collector import MainThreadCollector, settle_startup_objects

        settle_startup_objects()  # full collections stop walking the start-up objects
        MainThreadCollector(app)  # and run on this thread only (parented: lives with the app)
        await window.run()
        # Ending: a launch from now on starts a new instance instead of asking this one.
        instance.close()
        return 0

    try:
        with loop:
            code: int = loop.run_until_complete(run())  # qasync is untyped: run() gives the int
    finally:
        instance.close()
    return code


if __name__ == "__main__":
    raise SystemExit(main())
