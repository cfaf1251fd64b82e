"""The pure rules of packaging/: what the bundle leaves out, the objdump readers, the glibc
verdict, the .deb's control/changelog and the .ico/.icns containers (tables, no build)."""

from __future__ import annotations

import email.parser
import re
from pathlib import Path

from tests.packaging.conftest import PACKAGING, ROOT, load

contents = load("bundle_contents")
bundle_check = load("bundle_check")
build_deb = load("build_deb")
render_icons = load("render_icons")

QT = "PySide6/Qt"


def test_keep_table() -> None:
    cases = {
        f"{QT}/plugins/platforms/libqxcb.so": True,
        f"{QT}/plugins/platforms/libqwayland.so": True,
        f"{QT}/plugins/platforms/libqoffscreen.so": True,
        f"{QT}/plugins/platforms/libqeglfs.so": False,
        f"{QT}/plugins/platforms/libqvnc.so": False,
        f"{QT}/plugins/platformthemes/libqgtk3.so": False,
        f"{QT}/plugins/platformthemes/libqxdgdesktopportal.so": True,
        f"{QT}/plugins/imageformats/libqjpeg.so": True,
        f"{QT}/plugins/imageformats/libqwebp.so": True,
        f"{QT}/plugins/imageformats/libqgif.so": True,
        f"{QT}/plugins/imageformats/libqsvg.so": True,
        f"{QT}/plugins/imageformats/libqtiff.so": False,
        f"{QT}/plugins/iconengines/libqsvgicon.so": True,
        f"{QT}/plugins/platforminputcontexts/libibusplatforminputcontextplugin.so": True,
        f"{QT}/plugins/tls/libqopensslbackend.so": False,
        f"{QT}/plugins/wayland-shell-integration/libxdg-shell.so": True,
        f"{QT}/plugins/wayland-shell-integration/libivi-shell.so": False,
        f"{QT}/plugins/wayland-graphics-integration-client/libqt-plugin-wayland-egl.so": True,
        f"{QT}/plugins/wayland-graphics-integration-client/libvulkan-server.so": False,
        f"{QT}/translations/qtbase_de.qm": False,
        f"{QT}/lib/libQt6Core.so.6": True,
        f"{QT}/lib/libicudata.so.73": True,  # QtCore links ICU: it stays
        f"{QT}/lib/libQt6EglFSDeviceIntegration.so.6": False,
        "libQt6EglFSDeviceIntegration.so.6": False,
        "libgtk-3.so.0": False,
        "libX11.so.6": False,  # from the system
        "libxcb-cursor.so.0": False,
        "libfontconfig.so.1": False,
        "libpython3.11.so.1.0": True,
        "libstdc++.so.6": True,
        "resources/icons/continuum.svg": True,
        "keyring-25.7.0.dist-info/entry_points.txt": True,
    }
    for dest, expected in cases.items():
        assert contents.keep(dest) is expected, dest
    toc = [(dest, f"/src/{dest}", "BINARY") for dest in cases]
    assert [e[0] for e in contents.filter_toc(toc)] == [d for d, k in cases.items() if k]


def test_system_sonames_are_what_ui_xcb_check_looks_for() -> None:
    """Every library the app's own xcb check asks for, the bundle takes from the system (or
    PyInstaller never bundles it), so the .deb depends on it and the tarball names it."""
    from ui.xcb_check import XCB_LIBRARIES

    for library in XCB_LIBRARIES:
        assert library.soname in bundle_check.ALLOWED_SYSTEM, library


OBJDUMP_T = """
/x/libstdc++.so.6:     file format elf64-x86-64

DYNAMIC SYMBOL TABLE:
0000000000000000      DF *UND*  0000000000000000 (GLIBC_2.36) arc4random
0000000000000000      DF *UND*  0000000000000000 (GLIBC_2.2.5) memcpy
0000000000000000  w   D  *UND*  0000000000000000  GLIBC_PRIVATE __libc_single_threaded
0000000000000000      DF *UND*  0000000000000000 (GLIBCXX_3.4.30) foo
"""

OBJDUMP_P = """
Dynamic Section:
  NEEDED               libQt6Core.so.6
  NEEDED               libc.so.6
  SONAME               libQt6Gui.so.6
  RUNPATH              $ORIGIN
"""


def test_objdump_readers() -> None:
    assert bundle_check.parse_glibc(OBJDUMP_T) == {(2, 36), (2, 2)}
    assert bundle_check.parse_needed(OBJDUMP_P) == ["libQt6Core.so.6", "libc.so.6"]
    assert bundle_check.parse_needed("") == []


def test_glibc_verdict_table() -> None:
    files = {"a.so": {(2, 17), (2, 34)}, "b.so": {(2, 36)}, "c.so": set()}
    assert bundle_check.glibc_verdict(files, (2, 36)) == ((2, 36), [])
    assert bundle_check.glibc_verdict(files, (2, 35)) == ((2, 36), ["b.so"])
    assert bundle_check.glibc_verdict(files, (2, 28)) == ((2, 36), ["a.so", "b.so"])
    assert bundle_check.glibc_verdict({"x": {(2, 4)}}, (2, 36)) == ((2, 4), [])
    assert bundle_check.glibc_verdict({}, (2, 36)) == ((0, 0), [])
    # Versions compare as numbers, not strings: 2.4 < 2.36.
    assert bundle_check.glibc_verdict({"x": {(2, 4)}}, (2, 36))[1] == []


def test_system_sonames_and_unexpected() -> None:
    needed = {
        "_internal/libQt6Gui.so.6": ["libQt6Core.so.6", "libGL.so.1", "libc.so.6"],
        "_internal/libqxcb.so": ["libxcb-cursor.so.0", "libQt6Gui.so.6"],
        "_internal/oops.so": ["libharfbuzz.so.0"],
    }
    system = bundle_check.system_sonames(needed, {"libQt6Core.so.6", "libQt6Gui.so.6"})
    assert system == {"libGL.so.1", "libc.so.6", "libxcb-cursor.so.0", "libharfbuzz.so.0"}
    assert bundle_check.unexpected(system) == ["libharfbuzz.so.0"]
    assert bundle_check.dpkg_package("libc6:amd64: /usr/lib/x86_64-linux-gnu/libc.so.6") == "libc6"
    assert bundle_check.dpkg_package("libgl1:arm64: /usr/lib/libGL.so.1") == "libgl1"


def test_depends_and_control() -> None:
    depends = build_deb.depends({"libxcb1", "libc6", "libgl1"}, (2, 36))
    assert depends == "libc6 (>= 2.36), libgl1, libxcb1"
    text = build_deb.control(version="0.2.0", arch="amd64", installed_kb=1234, depends=depends)
    fields = email.parser.Parser().parsestr(text)
    assert fields["Package"] == "continuum-chat"
    assert fields["Version"] == "0.2.0" and fields["Architecture"] == "amd64"
    assert fields["Installed-Size"] == "1234" and fields["Depends"] == depends
    assert fields["Homepage"].startswith("https://")
    description = text.split("Description: ", 1)[1].splitlines()
    assert description[0] == build_deb.SUMMARY
    # Extended description: every line starts with a space, blank lines are " ."
    assert all(line.startswith(" ") for line in description[1:]), description
    assert " ." in description and text.endswith("\n")


def test_changelog_and_copyright() -> None:
    entry = build_deb.changelog(version="0.2.0", when="Fri, 04 Dec 2026 12:00:00 +0000")
    assert re.match(r"^continuum-chat \(0\.2\.0\) unstable; urgency=medium\n\n  \* ", entry)
    assert re.search(r"\n -- .+ <.+>  Fri, 04 Dec 2026 12:00:00 \+0000\n$", entry)
    copyright_text = build_deb.copyright_file()
    assert "License: MIT" in copyright_text and "Permission is hereby granted" in copyright_text
    assert "\n\n Permission" not in copyright_text  # continuation lines only


def test_file_modes(tmp_path: Path) -> None:
    exe = tmp_path / "continuum"
    exe.write_text("")
    exe.chmod(0o775)
    lib = tmp_path / "libfoo.so.1"
    lib.write_text("")
    lib.chmod(0o755)
    data = tmp_path / "x.txt"
    data.write_text("")
    data.chmod(0o600)
    assert build_deb.file_mode(exe) == 0o755
    assert build_deb.file_mode(lib) == 0o644
    assert build_deb.file_mode(data) == 0o644
    assert build_deb.file_mode(tmp_path) == 0o755


def _png(size: int) -> bytes:
    head = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + size.to_bytes(4, "big") * 2
    return head + bytes(size % 7)  # any body: the containers do not look inside


def test_ico_and_icns_round_trip() -> None:
    pngs = {size: _png(size) for size in render_icons.ICO_SIZES}
    blob = render_icons.ico_bytes(pngs)
    assert blob[:4] == b"\x00\x00\x01\x00"
    assert render_icons.read_ico(blob) == pngs
    pngs = {size: _png(size) for size in render_icons.ICNS_TYPES}
    blob = render_icons.icns_bytes(pngs)
    assert blob[:4] == b"icns" and int.from_bytes(blob[4:8], "big") == len(blob)
    assert render_icons.read_icns(blob) == pngs


def test_committed_ico_and_icns_hold_every_size() -> None:
    ico = render_icons.read_ico((PACKAGING / "icons" / "continuum.ico").read_bytes())
    assert sorted(ico) == sorted(render_icons.ICO_SIZES)
    icns = render_icons.read_icns((PACKAGING / "icons" / "continuum.icns").read_bytes())
    assert sorted(icns) == sorted(render_icons.ICNS_TYPES)
    for size, png in [*ico.items(), *icns.items()]:
        assert render_icons.png_size(png) == (size, size), size


def test_the_readme_states_the_glibc_baseline_the_build_checks() -> None:
    baseline = bundle_check.format_version(bundle_check.GLIBC_BASELINE)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"glibc {baseline}" in readme, f"README.md must name the baseline glibc {baseline}"


def test_man_page_names_every_option_of_help() -> None:
    """The manual page the .deb installs documents each option ``continuum --help`` lists."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", "from ui.main import main; main(['--help'])"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    options = set(re.findall(r"--[a-z][a-z-]+", done.stdout))
    assert {"--data-dir", "--version", "--help"} <= options, done.stdout + done.stderr
    page = (PACKAGING / "linux" / "continuum.1").read_text(encoding="utf-8")
    for option in options:
        assert option.replace("-", r"\-") in page, f"continuum.1 does not document {option}"
