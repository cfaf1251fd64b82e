"""The .deb, built offline from the session's bundle with packaging/build_deb.py: its control
data and contents (``dpkg-deb``), lintian with no error or warning, then the real thing as root —
``dpkg -i``, the installed ``continuum`` started offscreen and on a real X server (Xvfb, with
the system's xcb libraries the package depends on), ``dpkg -r`` and nothing of it left."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.packaging.conftest import Bundle, load, need_root, run, smoke, tool
from tests.ui.test_xcb_start import xvfb  # noqa: F401 - the fixture (a real X server)

pytestmark = pytest.mark.timeout(1200)

build_deb = load("build_deb")
bundle_check = load("bundle_check")
PACKAGE = "continuum-chat"
APP_ID = "io.continuum.Continuum"
INSTALLED = [
    "/opt/continuum/continuum",
    "/opt/continuum/_internal/LICENSE",
    "/usr/bin/continuum",
    f"/usr/share/applications/{APP_ID}.desktop",
    f"/usr/share/metainfo/{APP_ID}.metainfo.xml",
    f"/usr/share/icons/hicolor/scalable/apps/{APP_ID}.svg",
    f"/usr/share/icons/hicolor/48x48/apps/{APP_ID}.png",
    f"/usr/share/icons/hicolor/256x256/apps/{APP_ID}.png",
    "/usr/share/man/man1/continuum.1.gz",
    f"/usr/share/doc/{PACKAGE}/copyright",
    f"/usr/share/doc/{PACKAGE}/changelog.gz",
]


@pytest.fixture(scope="module")
def deb(bundle: Bundle, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tool("dpkg-deb")
    where = tmp_path_factory.mktemp("deb")
    return build_deb.build(
        bundle.path, where / "out", where / "work", "gzip", (bundle.glibc, bundle.system)
    )


def _field(deb: Path, name: str) -> str:
    return run(["dpkg-deb", "--field", str(deb), name]).stdout.strip()


def test_control_data(deb: Path, bundle: Bundle) -> None:
    info = run(["dpkg-deb", "--info", str(deb)]).stdout
    assert f"Package: {PACKAGE}" in info and "Version: 0.2.0" in info
    depends = [d.strip() for d in _field(deb, "Depends").split(",")]
    baseline = bundle_check.format_version(bundle_check.GLIBC_BASELINE)
    assert depends[0] == f"libc6 (>= {bundle_check.format_version(bundle.glibc)})"
    assert bundle.glibc <= bundle_check.GLIBC_BASELINE, f"needs glibc newer than {baseline}"
    # The X/GL libraries a fresh machine lacked, and the rest Qt's xcb plugin links.
    for package in (
        "libxcb-cursor0",
        "libxcb-icccm4",
        "libxcb-keysyms1",
        "libxcb-image0",
        "libxcb-render-util0",
        "libxkbcommon-x11-0",
        "libx11-xcb1",
        "libgl1",
        "libegl1",
        "libfontconfig1",
    ):
        assert package in depends, f"{package} missing from Depends: {depends}"
    print(f"\nDepends: {', '.join(depends)}")
    print(f"bundle build {bundle.seconds:.0f} s; .deb {deb.stat().st_size / 1e6:.1f} MB (gzip)")


def test_contents(deb: Path) -> None:
    listing = run(["dpkg-deb", "--contents", str(deb)]).stdout
    paths = {line.split()[5].lstrip(".") for line in listing.splitlines()}
    for path in INSTALLED:
        assert path in paths, f"{path} is not in the package"
    assert "/usr/bin/continuum -> /opt/continuum/continuum" in listing
    for line in listing.splitlines():
        mode, owner = line.split()[:2]
        assert owner == "root/root", line
        assert mode.startswith("l") or "w" not in mode[4:], f"group/other-writable: {line}"
    assert not any("__pycache__" in p or p.endswith(".pyc") for p in paths)
    assert not any("/translations/" in p or "libqgtk3" in p for p in paths)


def test_lintian_finds_no_error_or_warning(deb: Path) -> None:
    # binaries/spelling reads every string of Qt's and Python's binaries (a fifth of lintian's
    # time here) and can only ever yield info tags about third-party text.
    done = run(
        [tool("lintian"), "-X", "binaries/spelling", "--tag-display-limit", "0", str(deb)],
        ok=False,
        timeout=600,
    )
    problems = [ln for ln in done.stdout.splitlines() if ln[:2] in ("E:", "W:")]
    assert not problems, "\n".join(problems) + done.stderr[-2000:]
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture
def installed(deb: Path) -> Iterator[Path]:
    need_root("dpkg -i")
    run(["dpkg", "-i", str(deb)], timeout=300)
    try:
        yield deb
    finally:
        subprocess.run(["dpkg", "--purge", PACKAGE], capture_output=True, timeout=300)


def test_install_start_and_remove(installed: Path, tmp_path: Path, xvfb: str) -> None:  # noqa: F811
    status = run(["dpkg-query", "-W", "-f=${Status} ${Version}", PACKAGE]).stdout
    assert status == "install ok installed 0.2.0"
    for path in INSTALLED:
        assert os.path.lexists(path), f"{path} was not installed"
    run(["desktop-file-validate", f"/usr/share/applications/{APP_ID}.desktop"])
    assert run(["/usr/bin/continuum", "--version"]).stdout.strip() == "Continuum 0.2.0"

    # The installed command, as a person starts it: offscreen, then on a real X server.
    line = smoke("/usr/bin/continuum", tmp_path / "offscreen")
    assert "platform=offscreen" in line
    line = smoke("/usr/bin/continuum", tmp_path / "xcb", QT_QPA_PLATFORM="xcb", DISPLAY=xvfb)
    assert "platform=xcb" in line

    owned = run(["dpkg-query", "-L", PACKAGE]).stdout.split()
    run(["dpkg", "-r", PACKAGE], timeout=300)
    status = run(["dpkg-query", "-W", "-f=${Status}", PACKAGE], ok=False).stdout
    assert status in ("", "deinstall ok config-files", "unknown ok not-installed"), status
    left = [p for p in owned if os.path.lexists(p) and not os.path.isdir(p)]
    assert not left, f"dpkg -r left files behind: {left[:10]}"
    assert not os.path.lexists("/opt/continuum"), "dpkg -r left /opt/continuum behind"
    assert not os.path.lexists("/usr/bin/continuum")
