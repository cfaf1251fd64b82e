"""Launch driver for the cold-start figure: ``python -m bench._start app DATA_DIR | bare``.

Prints ``shown`` on the first event-loop turn after the window is shown, then exits at once
(``os._exit``) — the same way for both, so only the start path differs.

``app`` runs the real entry point, :func:`ui.main.main` (logging, QApplication, single-instance
check, the qasync loop, ``AppServices.open()``, ``MainWindow``); ``bare`` is a plain PySide6
``QMainWindow``.
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
    import ui.main

    claim_activation = ui.main.SingleInstance.on_activate

    def on_activate(self: ui.main.SingleInstance, callback: object) -> None:
        # Called just before window.show() in ui.main.main: the timer fires on the first loop
        # turn after the window is shown.
        from PySide6.QtCore import QTimer

        claim_activation(self, callback)  # type: ignore[arg-type]
        QTimer.singleShot(0, _shown)

    ui.main.SingleInstance.on_activate = on_activate  # type: ignore[method-assign]
    ui.main.main(["--data-dir", data_dir])


if __name__ == "__main__":
    if sys.argv[1] == "bare":
        bare()
    else:
        app(sys.argv[2])
