"""Before Qt starts on Linux/X11: are the libraries Qt's xcb platform plugin needs installed?

Without them Qt aborts (SIGABRT) with a message that names ``libxcb-cursor0`` whatever is
actually missing, and the log stays empty (issue 11, item 16). :func:`xcb_problem` decides, from
the environment and a library loader (``ctypes.CDLL`` by default, injectable for tests), whether
Qt will use xcb and which libraries are missing, and returns the message to show — naming the
missing libraries and the command that installs them (Debian/Ubuntu apt, Fedora dnf) — or
``None``. No Qt import here: this runs before any ``QApplication`` exists.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["XCB_LIBRARIES", "XcbLibrary", "missing_libraries", "uses_xcb", "xcb_problem"]


@dataclass(frozen=True, slots=True)
class XcbLibrary:
    soname: str  # what the dynamic loader looks for
    deb: str  # Debian/Ubuntu package
    rpm: str  # Fedora package


# Every X library Qt 6's xcb plugin (libqxcb.so and libQt6XcbQpa.so.6) links, as its NEEDED
# entries list them (``objdump -p``); any one missing makes Qt abort.
XCB_LIBRARIES: tuple[XcbLibrary, ...] = (
    XcbLibrary("libxcb.so.1", "libxcb1", "libxcb"),
    XcbLibrary("libX11.so.6", "libx11-6", "libX11"),
    XcbLibrary("libX11-xcb.so.1", "libx11-xcb1", "libX11-xcb"),
    XcbLibrary("libxkbcommon.so.0", "libxkbcommon0", "libxkbcommon"),
    XcbLibrary("libxcb-util.so.1", "libxcb-util1", "xcb-util"),
    XcbLibrary("libxcb-randr.so.0", "libxcb-randr0", "libxcb"),
    XcbLibrary("libxcb-render.so.0", "libxcb-render0", "libxcb"),
    XcbLibrary("libxcb-shm.so.0", "libxcb-shm0", "libxcb"),
    XcbLibrary("libxcb-sync.so.1", "libxcb-sync1", "libxcb"),
    XcbLibrary("libxcb-xfixes.so.0", "libxcb-xfixes0", "libxcb"),
    XcbLibrary("libxcb-cursor.so.0", "libxcb-cursor0", "xcb-util-cursor"),
    XcbLibrary("libxcb-icccm.so.4", "libxcb-icccm4", "xcb-util-wm"),
    XcbLibrary("libxcb-keysyms.so.1", "libxcb-keysyms1", "xcb-util-keysyms"),
    XcbLibrary("libxcb-image.so.0", "libxcb-image0", "xcb-util-image"),
    XcbLibrary("libxcb-render-util.so.0", "libxcb-render-util0", "xcb-util-renderutil"),
    XcbLibrary("libxcb-shape.so.0", "libxcb-shape0", "libxcb"),
    XcbLibrary("libxcb-xkb.so.1", "libxcb-xkb1", "libxcb"),
    XcbLibrary("libxkbcommon-x11.so.0", "libxkbcommon-x11-0", "libxkbcommon-x11"),
)


def uses_xcb(env: Mapping[str, str], platform: str, argv: Sequence[str] = ()) -> bool:
    """Whether Qt will try its xcb plugin first (Linux only; ``-platform`` / QT_QPA_PLATFORM)."""
    if not platform.startswith("linux"):
        return False
    chosen = env.get("QT_QPA_PLATFORM", "")
    args = list(argv)
    for i, arg in enumerate(args[:-1]):
        if arg in ("-platform", "--platform"):
            chosen = args[i + 1]
    if chosen:
        first = chosen.split(";")[0].split(":")[0].strip().lower()
        return first == "xcb"
    # Qt's own default: Wayland in a Wayland session, else xcb when there is an X display.
    if env.get("WAYLAND_DISPLAY") or env.get("XDG_SESSION_TYPE", "").lower() == "wayland":
        return False
    return bool(env.get("DISPLAY"))


def _load(soname: str) -> object:
    import ctypes  # only when xcb is used: the import is ~3 ms of a cold start

    return ctypes.CDLL(soname)


def missing_libraries(loader: Callable[[str], object] = _load) -> list[XcbLibrary]:
    """The libraries of :data:`XCB_LIBRARIES` that ``loader`` cannot load (it raises OSError)."""
    missing = []
    for library in XCB_LIBRARIES:
        try:
            loader(library.soname)
        except OSError:
            missing.append(library)
    return missing


def xcb_problem(
    env: Mapping[str, str],
    platform: str,
    argv: Sequence[str] = (),
    loader: Callable[[str], object] | None = None,
) -> str | None:
    """What to tell the person when Qt's xcb plugin cannot load, or ``None`` when it can."""
    if not uses_xcb(env, platform, argv):
        return None
    missing = missing_libraries(loader or _load)
    if not missing:
        return None
    names = ", ".join(lib.deb for lib in missing)
    debs = " ".join(lib.deb for lib in missing)
    rpms = " ".join(dict.fromkeys(lib.rpm for lib in missing))
    return (
        f"Continuum cannot open its window: the X11 (xcb) libraries Qt needs are missing: "
        f"{names}.\n"
        f"Install them, then start Continuum again:\n"
        f"  Debian/Ubuntu: sudo apt install {debs}\n"
        f"  Fedora:        sudo dnf install {rpms}\n"
        "(Or, in a Wayland session, start it with QT_QPA_PLATFORM=wayland.)"
    )
