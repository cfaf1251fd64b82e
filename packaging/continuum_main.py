"""PyInstaller entry point for the standalone Continuum (``packaging/continuum.spec``).

Runs ``ui.main.main`` exactly as the ``continuum`` console script does. One addition for the
smoke test (``packaging/smoke_test.sh``): with ``CONTINUUM_SMOKE_QUIT_AFTER_SHOWN=1`` set, it
watches for the main window; once it is shown it prints one ``smoke:`` line (title, icon, Qt
platform) and closes the window the normal way, so the app goes through its real shutdown and
exits with its own status. Nothing changes when the variable is unset.
"""

from __future__ import annotations

import os
import sys


def _keyring_summary() -> str:
    """keyring's backend entry points (proves its metadata was bundled) and the one in use."""
    from importlib.metadata import entry_points

    import keyring

    names = sorted(ep.name for ep in entry_points(group="keyring.backends"))
    return f"{type(keyring.get_keyring()).__module__}(entry_points={','.join(names) or 'NONE'})"


def _arm_smoke_quit() -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    timer = QTimer(app)

    def poll() -> None:
        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, QMainWindow) and widget.isVisible():
                timer.stop()
                print(f"smoke: window shown: title={widget.windowTitle()!r} "
                      f"icon={'yes' if not widget.windowIcon().isNull() else 'NO'} "
                      f"platform={QApplication.platformName()} "
                      f"keyring={_keyring_summary()}", flush=True)
                # Let it paint once, then close it as a person would.
                QTimer.singleShot(500, widget.close)
                return

    timer.timeout.connect(poll)
    timer.start(100)


def run() -> int:
    from ui.main import main

    argv = sys.argv[1:]
    if os.environ.get("CONTINUUM_SMOKE_QUIT_AFTER_SHOWN") == "1" and "--version" not in argv \
            and "--help" not in argv and "-h" not in argv:
        _arm_smoke_quit()
    return main(argv)


if __name__ == "__main__":
    raise SystemExit(run())
