"""The window's place between runs: its geometry, the sidebar's width and visibility, the zoom.

Kept in ``window.json`` in the data folder (not in ``settings.json``: nothing here is a choice
a person makes in Settings, and a damaged file only costs the window's place). Reading never
fails: a missing, unreadable or wrong file gives the defaults and a line in the log. Writing is
atomic (a temporary file renamed over the old one). Pure parsing, tested on its own; the window
applies what it reads.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

__all__ = [
    "STATE_FILE",
    "ZOOM_STEPS",
    "WindowState",
    "load_state",
    "parse_state",
    "save_state",
    "zoom_step",
]

log = logging.getLogger(__name__)

STATE_FILE = "window.json"
#: The zoom levels of View → Zoom In / Out (as browsers step them).
ZOOM_STEPS = (0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0)


class WindowState(NamedTuple):
    """What ``window.json`` holds (a named tuple: the start window reads it, see ui.theme)."""

    geometry: bytes = b""  # QWidget.saveGeometry()
    splitter: bytes = b""  # QSplitter.saveState()
    sidebar: bool = True  # shown (the person's choice; a narrow window folds it anyway)
    zoom: float = 1.0
    #: The colours the window last painted with (``"light"``/``"dark"``, ``""`` unknown): the
    #: start window uses it for the "system" theme, whose scheme it does not ask the desktop.
    scheme: str = ""
    extra: Mapping[str, Any] = MappingProxyType({})  # keys a newer version wrote: kept


def zoom_step(zoom: float, direction: int) -> float:
    """The zoom after one step ``direction`` (+1 in, -1 out, 0 reset) from ``zoom``."""
    if direction == 0:
        return 1.0
    if direction > 0:
        return next((z for z in ZOOM_STEPS if z > zoom + 1e-6), ZOOM_STEPS[-1])
    return next((z for z in reversed(ZOOM_STEPS) if z < zoom - 1e-6), ZOOM_STEPS[0])


def _bytes(value: Any) -> bytes:
    if not isinstance(value, str):
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""


def parse_state(data: Any) -> WindowState:
    """A :class:`WindowState` from the file's JSON; anything wrong in it is left at its default."""
    if not isinstance(data, dict):
        return WindowState()
    zoom = data.get("zoom")
    known = {"geometry", "splitter", "sidebar", "zoom", "scheme"}
    scheme = data.get("scheme")
    return WindowState(
        geometry=_bytes(data.get("geometry")),
        splitter=_bytes(data.get("splitter")),
        sidebar=data["sidebar"] if isinstance(data.get("sidebar"), bool) else True,
        zoom=float(zoom)
        if isinstance(zoom, int | float) and ZOOM_STEPS[0] <= zoom <= ZOOM_STEPS[-1]
        else 1.0,
        scheme=scheme if scheme in ("light", "dark") else "",
        extra={k: v for k, v in data.items() if k not in known},
    )


def load_state(data_dir: Path) -> WindowState:
    path = data_dir / STATE_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return WindowState()
    except OSError as err:
        log.warning("window state not read (%s): %s", path, err)
        return WindowState()
    try:
        return parse_state(json.loads(text))
    except ValueError as err:
        log.warning("window state ignored, not JSON (%s): %s", path, err)
        return WindowState()


def save_state(data_dir: Path, state: WindowState) -> None:
    """Write ``state`` atomically; a failure (a full disk) is logged: it only costs the place."""
    data = {
        **state.extra,
        "geometry": base64.b64encode(state.geometry).decode("ascii"),
        "splitter": base64.b64encode(state.splitter).decode("ascii"),
        "sidebar": state.sidebar,
        "zoom": state.zoom,
        "scheme": state.scheme,
    }
    path = data_dir / STATE_FILE
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as err:
        log.warning("window state not saved (%s): %s", path, err)
