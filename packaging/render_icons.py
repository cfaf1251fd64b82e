"""Render the app icon's PNG sizes from ``resources/icons/continuum.svg``.

Writes ``resources/icons/hicolor/<N>x<N>/apps/io.continuum.Continuum.png`` for every size in
``SIZES`` and a copy of the SVG as ``hicolor/scalable/apps/io.continuum.Continuum.svg`` (the
freedesktop hicolor layout, named after the app id of the .desktop entry and the AppStream
metainfo), and the Windows ``.ico`` and macOS ``.icns`` the PyInstaller spec uses
(``packaging/icons/continuum.ico``/``.icns``: PNG images of each size, in the containers' own
formats, written by :func:`ico_bytes` and :func:`icns_bytes`). Uses PySide6's QtSvg, so it
needs nothing beyond the app's own dependencies; it runs
on the offscreen platform, no display needed.

    .venv/bin/python packaging/render_icons.py            # (re)write the PNGs, .ico, .icns
    .venv/bin/python packaging/render_icons.py --check    # exit 1 if one is missing or wrong-sized
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SVG = ROOT / "resources" / "icons" / "continuum.svg"
HICOLOR = ROOT / "resources" / "icons" / "hicolor"
APP_ID = "io.continuum.Continuum"
SIZES = (16, 32, 48, 64, 128, 256)
ICO = ROOT / "packaging" / "icons" / "continuum.ico"
ICNS = ROOT / "packaging" / "icons" / "continuum.icns"
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# The ICNS element types that hold a PNG of one size (Apple's icns format).
ICNS_TYPES = {
    16: b"icp4",
    32: b"icp5",
    64: b"icp6",
    128: b"ic07",
    256: b"ic08",
    512: b"ic09",
    1024: b"ic10",
}


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """A Windows icon holding one PNG per size (PNG entries are valid since Windows Vista)."""
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries, data = b"", b""
    for size in sizes:
        png = pngs[size]
        side = 0 if size >= 256 else size  # 0 means 256 in an ICO directory entry
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset + len(data))
        data += png
    return header + entries + data


def read_ico(blob: bytes) -> dict[int, bytes]:
    """Size -> PNG bytes of an icon written by :func:`ico_bytes` (for the checks)."""
    _reserved, kind, count = struct.unpack_from("<HHH", blob, 0)
    if kind != 1:
        raise ValueError("not an icon file")
    images = {}
    for i in range(count):
        side, _h, _c, _r, _p, _bpp, length, offset = struct.unpack_from(
            "<BBBBHHII", blob, 6 + 16 * i
        )
        images[side or 256] = blob[offset : offset + length]
    return images


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    """A macOS icon family: one PNG element per size of :data:`ICNS_TYPES`."""
    body = b"".join(
        ICNS_TYPES[size] + struct.pack(">I", 8 + len(pngs[size])) + pngs[size]
        for size in sorted(pngs)
    )
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def read_icns(blob: bytes) -> dict[int, bytes]:
    """Size -> PNG bytes of an icon family written by :func:`icns_bytes`."""
    if blob[:4] != b"icns" or struct.unpack_from(">I", blob, 4)[0] != len(blob):
        raise ValueError("not an icns file (or a wrong length)")
    sizes = {kind: size for size, kind in ICNS_TYPES.items()}
    images, at = {}, 8
    while at < len(blob):
        kind, length = blob[at : at + 4], struct.unpack_from(">I", blob, at + 4)[0]
        images[sizes[kind]] = blob[at + 8 : at + length]
        at += length
    return images


def png_size(png: bytes) -> tuple[int, int]:
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def png_path(size: int) -> Path:
    return HICOLOR / f"{size}x{size}" / "apps" / f"{APP_ID}.png"


def _gui() -> object:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    return QGuiApplication.instance() or QGuiApplication([sys.argv[0]])


def render(size: int) -> object:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        raise SystemExit(f"cannot read {SVG}")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    return image


def png_bytes(size: int) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not render(size).save(buffer, "PNG"):  # type: ignore[attr-defined]
        raise SystemExit(f"could not encode the {size} px icon")
    buffer.close()
    return bytes(data.data())


def _container_problems() -> list[str]:
    bad = []
    for path, reader, sizes in ((ICO, read_ico, ICO_SIZES), (ICNS, read_icns, tuple(ICNS_TYPES))):
        try:
            images = reader(path.read_bytes())
            ok = sorted(images) == sorted(sizes) and all(
                png_size(png) == (size, size) for size, png in images.items()
            )
        except (OSError, ValueError, KeyError, struct.error):
            ok = False
        if not ok:
            bad.append(str(path.relative_to(ROOT)))
    return bad


def main(argv: list[str]) -> int:
    _app = _gui()
    from PySide6.QtGui import QImage

    if "--check" in argv:
        bad = _container_problems()
        for size in SIZES:
            image = QImage(str(png_path(size)))
            if image.isNull() or (image.width(), image.height()) != (size, size):
                bad.append(str(png_path(size).relative_to(ROOT)))
        if bad:
            print("missing or wrong-sized icons (run packaging/render_icons.py):", *bad, sep="\n  ")
            return 1
        print(f"all {len(SIZES)} icon sizes, {ICO.name} and {ICNS.name} present")
        return 0
    scalable = HICOLOR / "scalable" / "apps" / f"{APP_ID}.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    scalable.write_bytes(SVG.read_bytes())
    print(scalable.relative_to(ROOT))
    for size in SIZES:
        target = png_path(size)
        target.parent.mkdir(parents=True, exist_ok=True)
        image = render(size)
        if not image.save(str(target), "PNG"):  # type: ignore[attr-defined]
            raise SystemExit(f"could not write {target}")
        print(target.relative_to(ROOT))
    ICO.parent.mkdir(parents=True, exist_ok=True)
    ICO.write_bytes(ico_bytes({size: png_bytes(size) for size in ICO_SIZES}))
    ICNS.write_bytes(icns_bytes({size: png_bytes(size) for size in ICNS_TYPES}))
    print(ICO.relative_to(ROOT), ICNS.relative_to(ROOT), sep="\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
