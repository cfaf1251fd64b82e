"""Launch driver for the cold-start figure: ``python -m bench._start app DATA_DIR | bare``
(``DATA_DIR`` ``-``: no ``--data-dir``, the platform's folder).

Prints ``shown`` on the first event-loop turn after the first window is shown; ``app`` then
prints ``ready`` on the first turn after the main window has taken over, and both exit at once
(``os._exit``) — the same way, so only the start path differs.

``app`` runs the real entry point, :func:`ui.main.main` (logging, QApplication, single-instance
check, the start window, the qasync loop, the core imported, ``AppServices.open_recovering()``,
``MainWindow``); ``bare`` is a plain PySide6 ``QMainWindow``.
"""

from __future__ import annotations

import os
import sys


def _shown() -> None:
    sys.stdout.write("shown\n")
    sys.stdout.flush()
    os._exit(0)


def bare() -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMainWindow

    app = QApplication([sys.argv[0]])
    window = QMainWindow()
    window.resize(1100, 760)
    window.show()
    QTimer.singleShot(0, _shown)
    app.exec()


def app(data_dir: str) -> None:
    from PySide6.QtCore import QTimer

    import ui.main

    def say(line: str, last: bool) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        if last:
            os._exit(0)

    def on_stage(stage: str, _window: object) -> None:
        QTimer.singleShot(0, lambda: say(stage, stage == "ready"))

    ui.main.main([] if data_dir == "-" else ["--data-dir", data_dir], on_stage=on_stage)


if __name__ == "__main__":
    if sys.argv[1] == "bare":
        bare()
    else:
        app(sys.argv[2])
