"""The Linux .desktop entry, AppStream metainfo and hicolor icons are valid and agree.

Validated with the standard tools, ``desktop-file-validate`` (desktop-file-utils) and
``appstreamcli validate`` (appstream). They are required: on Debian
``apt-get install -y --no-install-recommends desktop-file-utils appstream`` (.ci/run does it).
"""

from __future__ import annotations

import configparser
import shutil
import struct
import subprocess
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINUX = ROOT / "packaging" / "linux"
APP_ID = "io.continuum.Continuum"
DESKTOP = LINUX / f"{APP_ID}.desktop"
METAINFO = LINUX / f"{APP_ID}.metainfo.xml"
HICOLOR = ROOT / "resources" / "icons" / "hicolor"
SIZES = (16, 32, 48, 64, 128, 256)
APT = "apt-get install -y --no-install-recommends desktop-file-utils appstream"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed; on Debian/Ubuntu: {APT}")
    return path


def test_desktop_file_validates() -> None:
    done = subprocess.run(
        [_tool("desktop-file-validate"), str(DESKTOP)], capture_output=True, text=True, timeout=30
    )
    # It prints hints even for valid files; only a non-zero exit (an error) fails.
    assert done.returncode == 0, done.stdout + done.stderr


def test_metainfo_validates() -> None:
    # --no-net: the screenshot and homepage URLs are not fetched (no network in tests).
    done = subprocess.run(
        [_tool("appstreamcli"), "validate", "--pedantic", "--no-net", str(METAINFO)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_desktop_and_metainfo_agree() -> None:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(DESKTOP, encoding="utf-8")
    section = entry["Desktop Entry"]
    assert section["Icon"] == APP_ID
    assert section["Exec"].split()[0] == "continuum"
    component = ET.parse(METAINFO).getroot()
    assert component.findtext("id") == APP_ID
    assert component.findtext("launchable") == DESKTOP.name
    assert component.findtext("provides/binary") == "continuum"
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "version"
    ]
    releases = component.findall("releases/release")
    assert releases and releases[0].get("version") == version, (
        f'the newest <release> in {METAINFO.name} must be version="{version}" (pyproject.toml)'
    )
    notes = releases[0].find("description")
    assert notes is not None and len("".join(notes.itertext()).split()) >= 10, "release notes"
    homepage = component.find("url[@type='homepage']")
    assert homepage is not None and (homepage.text or "").startswith("https://")


@pytest.mark.parametrize("size", SIZES)
def test_png_icon_sizes(size: int) -> None:
    png = HICOLOR / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
    assert png.is_file(), f"missing {png}; run packaging/render_icons.py"
    head = png.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", head[16:24]) == (size, size)


def test_scalable_icon_matches_source() -> None:
    scalable = HICOLOR / "scalable" / "apps" / f"{APP_ID}.svg"
    source = ROOT / "resources" / "icons" / "continuum.svg"
    assert scalable.read_bytes() == source.read_bytes(), "run packaging/render_icons.py"


def test_metainfo_screenshots_are_in_the_gallery() -> None:
    """Every screenshot the metainfo names is a PNG kept in docs/screenshots/."""
    gallery = ROOT / "docs" / "screenshots"
    images = [node.text or "" for node in ET.parse(METAINFO).getroot().iter("image")]
    assert images, "the metainfo shows no screenshots"
    for url in images:
        assert url.startswith("https://"), url
        png = gallery / url.rsplit("/", 1)[1]
        assert png.is_file(), f"{url} names {png}, which is missing"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
