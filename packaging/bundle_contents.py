"""What the standalone bundle leaves out, and which libraries it takes from the system.

One job: the rules ``continuum.spec`` applies to PyInstaller's collected files (pure functions on
destination paths, table-tested in ``tests/packaging/test_bundle_rules.py``). The .deb builder and
the bundle check read :data:`SYSTEM_SONAMES` too: those libraries are never shipped in the
bundle, so the .deb declares them in ``Depends:`` and the tarball's README names them.

Why each group goes:

* Qt plugins for embedded devices (eglfs, linuxfb, vnc, Vulkan display, evdev/tuio input),
  network-information backends (the app talks HTTP through httpx, not Qt), TLS backends (Qt's
  network stack only serves the single-instance local socket), image formats the app never
  reads (icns, ico, tga, tiff, wbmp: attachments are PNG, JPEG, GIF and WebP), Wayland shells
  other than xdg-shell and the compositor-side buffer integrations.
* Qt's own translations: the app's text is English and it loads no QTranslator.
* The GTK 3 platform theme and the GTK/cairo/pango stack only it links: the app draws its own
  light and dark themes; file dialogs still go through the XDG desktop portal plugin.
* The X11, xcb, xkbcommon, fontconfig and freetype libraries: every X desktop has them, Qt's xcb
  plugin must use the same ones as the X server's other clients, and a bundled fontconfig older
  than the system's misreads its configuration. ``ui/xcb_check.py`` names any that are missing.
* Dev-only Python packages an import graph drags in (mypy through pydantic's plugin, PyYAML
  through uvicorn's optional config loader).

ICU (libicudata is 31 MB) stays: ``libQt6Core.so.6`` links it (NEEDED), so it is not optional.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import PurePosixPath

QT = "PySide6/Qt"

DROPPED_PATTERNS: tuple[str, ...] = (
    f"{QT}/translations/*",
    f"{QT}/plugins/egldeviceintegrations/*",
    f"{QT}/plugins/generic/*",
    f"{QT}/plugins/networkinformation/*",
    f"{QT}/plugins/tls/*",
    f"{QT}/plugins/platforms/libqeglfs.so",
    f"{QT}/plugins/platforms/libqlinuxfb.so",
    f"{QT}/plugins/platforms/libqminimalegl.so",
    f"{QT}/plugins/platforms/libqvkkhrdisplay.so",
    f"{QT}/plugins/platforms/libqvnc.so",
    f"{QT}/plugins/platformthemes/libqgtk3.so",
    f"{QT}/plugins/imageformats/libqicns.so",
    f"{QT}/plugins/imageformats/libqico.so",
    f"{QT}/plugins/imageformats/libqtga.so",
    f"{QT}/plugins/imageformats/libqtiff.so",
    f"{QT}/plugins/imageformats/libqwbmp.so",
    f"{QT}/plugins/wayland-shell-integration/libfullscreen-shell-v1.so",
    f"{QT}/plugins/wayland-shell-integration/libivi-shell.so",
    f"{QT}/plugins/wayland-shell-integration/libqt-shell.so",
    f"{QT}/plugins/wayland-shell-integration/libwl-shell-plugin.so",
    f"{QT}/plugins/wayland-graphics-integration-client/lib*-server.so",
)

# Libraries (by file name, wherever PyInstaller put them) only the dropped plugins link.
DROPPED_LIBRARIES: frozenset[str] = frozenset(
    {
        "libQt6EglFSDeviceIntegration.so.6",
        "libQt6EglFsKmsSupport.so.6",
        "libQt6WlShellIntegration.so.6",
        # The GTK 3 theme plugin's stack.
        "libgtk-3.so.0",
        "libgdk-3.so.0",
        "libgdk_pixbuf-2.0.so.0",
        "libatk-1.0.so.0",
        "libatk-bridge-2.0.so.0",
        "libatspi.so.0",
        "libcairo.so.2",
        "libcairo-gobject.so.2",
        "libpango-1.0.so.0",
        "libpangocairo-1.0.so.0",
        "libpangoft2-1.0.so.0",
        "libepoxy.so.0",
        "libharfbuzz.so.0",
        "libthai.so.0",
        "libdatrie.so.1",
        "libfribidi.so.0",
        "libgraphite2.so.3",
        "libpixman-1.so.0",
        "libjpeg.so.62",
        "libXi.so.6",
        "libXcomposite.so.1",
        "libXdamage.so.1",
        "libXinerama.so.1",
        "libXcursor.so.1",
        "libXrandr.so.2",
        "libXext.so.6",
        "libXfixes.so.3",
        "libXrender.so.1",
        "libgio-2.0.so.0",
        "libgmodule-2.0.so.0",
        "libmount.so.1",
        "libblkid.so.1",
        "libselinux.so.1",
        # Only libXdmcp, fontconfig and freetype (now from the system) or GTK linked these.
        "libbsd.so.0",
        "libmd.so.0",
        "libexpat.so.1",
        "libpng16.so.16",
        "libgobject-2.0.so.0",
    }
)

# Taken from the system, never bundled (see the module docstring); PyInstaller itself already
# leaves out libc, libGL/libEGL, libxcb.so.1 and the Wayland client libraries.
SYSTEM_SONAMES: frozenset[str] = frozenset(
    {
        "libX11.so.6",
        "libX11-xcb.so.1",
        "libXau.so.6",
        "libXdmcp.so.6",
        "libxkbcommon.so.0",
        "libxkbcommon-x11.so.0",
        "libxcb-cursor.so.0",
        "libxcb-glx.so.0",
        "libxcb-icccm.so.4",
        "libxcb-image.so.0",
        "libxcb-keysyms.so.1",
        "libxcb-randr.so.0",
        "libxcb-render-util.so.0",
        "libxcb-render.so.0",
        "libxcb-shape.so.0",
        "libxcb-shm.so.0",
        "libxcb-sync.so.1",
        "libxcb-util.so.1",
        "libxcb-xfixes.so.0",
        "libxcb-xkb.so.1",
        "libfontconfig.so.1",
        "libfreetype.so.6",
    }
)

# Python packages never imported at run time (PyInstaller ``excludes``).
EXCLUDED_MODULES: tuple[str, ...] = (
    "PyQt5",
    "PyQt6",
    "PySide2",  # qasync probes for every Qt binding; only PySide6 is used
    "tkinter",
    "pytest",
    "tests",
    "bench",
    "IPython",
    "matplotlib",
    "numpy",
    "mypy",
    "ast_serialize",
    "pydantic.mypy",
    "pydantic.v1.mypy",
    "yaml",
)


def keep(dest: str) -> bool:
    """Whether a file PyInstaller collected (its path inside ``_internal/``) is shipped."""
    path = PurePosixPath(dest)
    if path.name in DROPPED_LIBRARIES or path.name in SYSTEM_SONAMES:
        return False
    return not any(fnmatchcase(path.as_posix(), pattern) for pattern in DROPPED_PATTERNS)


def filter_toc(toc: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The entries of a PyInstaller TOC (dest, source, kind) that :func:`keep` keeps."""
    return [entry for entry in toc if keep(entry[0])]
