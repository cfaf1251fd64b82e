"""PyInstaller entry point for the standalone Continuum (``packaging/continuum.spec``).

Runs ``ui.main.main`` exactly as the ``continuum`` console script does. One addition for the
smoke test (``packaging/smoke_test.sh``): with ``CONTINUUM_SMOKE_QUIT_AFTER_SHOWN=1`` set, it
waits for the main window (``on_stage``); once it has taken over from the start window it
prints one ``smoke:`` line (title, icon, Qt platform, keyring backend, whether the MCP
client imports) and closes the window the normal way, so the app goes through its real
shutdown and exits with its own status. Nothing changes when the variable is unset.
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


def _mcp_summary() -> str:
    """Whether the MCP client (a default dependency since 0.2.0) imports in this build."""
    try:
        import mcp.client.stdio  # noqa: F401
    except Exception as exc:  # reported on the smoke line, which the smoke test checks
        return f"NO({type(exc).__name__}: {exc})"
    return "yes"


def _smoke_quit(stage: str, window: object) -> None:
    """``ui.main.main``'s ``on_stage``: once the main window has taken over from the start
    window, print the smoke line and close it as a person would (after it painted)."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMainWindow

    if stage != "ready" or not isinstance(window, QMainWindow):
        return
    print(
        f"smoke: window shown: title={window.windowTitle()!r} "
        f"icon={'yes' if not window.windowIcon().isNull() else 'NO'} "
        f"platform={QApplication.platformName()} "
        f"keyring={_keyring_summary()} "
        f"mcp={_mcp_summary()}",
        flush=True,
    )
    QTimer.singleShot(500, window.close)


def run() -> int:
    from ui.main import main

    argv = sys.argv[1:]
    if os.environ.get("CONTINUUM_SMOKE_QUIT_AFTER_SHOWN") == "1":
        return main(argv, on_stage=_smoke_quit)
    return main(argv)


if __name__ == "__main__":
    raise SystemExit(run())
