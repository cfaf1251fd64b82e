"""Render the app icon's PNG sizes from ``resources/icons/continuum.svg``.

Writes ``resources/icons/hicolor/<N>x<N>/apps/io.continuum.Continuum.png`` for every size in
``SIZES`` and a copy of the SVG as ``hicolor/scalable/apps/io.continuum.Continuum.svg`` (the
freedesktop hicolor layout, named after the app id of the .desktop entry and the AppStream
metainfo). Uses PySide6's QtSvg, so it needs nothing beyond the app's own dependencies; it runs
on the offscreen platform, no display needed.

    .venv/bin/python packaging/render_icons.py            # (re)write the PNGs
    .venv/bin/python packaging/render_icons.py --check    # exit 1 if one is missing or wrong-sized
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SVG = ROOT / "resources" / "icons" / "continuum.svg"
HICOLOR = ROOT / "resources" / "icons" / "hicolor"
APP_ID = "io.continuum.Continuum"
SIZES = (16, 32, 48, 64, 128, 256)


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


def main(argv: list[str]) -> int:
    _app = _gui()
    from PySide6.QtGui import QImage

    if "--check" in argv:
        bad = []
        for size in SIZES:
            image = QImage(str(png_path(size)))
            if image.isNull() or (image.width(), image.height()) != (size, size):
                bad.append(str(png_path(size).relative_to(ROOT)))
        if bad:
            print("missing or wrong-sized icons (run packaging/render_icons.py):", *bad, sep="\n  ")
            return 1
        print(f"all {len(SIZES)} icon sizes present")
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
