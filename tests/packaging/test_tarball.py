"""The portable tarball, built from the session's bundle with packaging/build_tarball.py: what
it holds, then unpacked as a person would and ``install.sh`` run into a temporary prefix (the
command, a valid menu entry pointing at the unpacked app, the icons), the app started through
the installed command, and ``install.sh --uninstall`` taking exactly that away again."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest

from tests.packaging.conftest import Bundle, load, run, smoke, tool

pytestmark = pytest.mark.timeout(1200)

build_tarball = load("build_tarball")
bundle_check = load("bundle_check")
APP_ID = "io.continuum.Continuum"
NAME = "continuum-chat-0.2.0-linux-"


@pytest.fixture(scope="module")
def tarball(bundle: Bundle, tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("tarball")
    return build_tarball.build(
        bundle.path, where / "out", where / "work", (bundle.glibc, bundle.system)
    )


def test_contents(tarball: Path) -> None:
    assert tarball.name.startswith(NAME) and tarball.name.endswith(".tar.gz")
    with tarfile.open(tarball) as tar:
        members = {m.name: m for m in tar.getmembers()}
        top = tarball.name.removesuffix(".tar.gz")
        assert all(name == top or name.startswith(top + "/") for name in members)
        for name in (
            "continuum",
            "install.sh",
            "LICENSE",
            "README.txt",
            "system-libraries.txt",
            f"share/applications/{APP_ID}.desktop",
            f"share/metainfo/{APP_ID}.metainfo.xml",
            f"share/icons/hicolor/128x128/apps/{APP_ID}.png",
            "_internal/LICENSE",
        ):
            assert f"{top}/{name}" in members, f"{name} is not in the tarball"
        assert members[f"{top}/install.sh"].mode & 0o111
        assert members[f"{top}/continuum"].mode & 0o111
        assert all(m.uid == 0 and m.gid == 0 for m in members.values())
        readme = tar.extractfile(f"{top}/README.txt").read().decode()  # type: ignore[union-attr]
        wanted = tar.extractfile(f"{top}/system-libraries.txt").read().decode().split()  # type: ignore[union-attr]
    baseline = bundle_check.format_version(bundle_check.GLIBC_BASELINE)
    assert f"glibc {baseline} or newer" in readme
    assert "libxcb-cursor.so.0" in wanted and "libX11.so.6" in wanted
    print(f"\ntarball {tarball.stat().st_size / 1e6:.1f} MB")


def test_unpack_install_start_uninstall(tarball: Path, tmp_path: Path) -> None:
    with tarfile.open(tarball) as tar:
        tar.extractall(tmp_path / "unpacked", filter="tar")
    app = tmp_path / "unpacked" / tarball.name.removesuffix(".tar.gz")
    prefix = tmp_path / "prefix"
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    out = run(["sh", str(app / "install.sh"), "--prefix", str(prefix)], env=env).stdout
    assert "Installed:" in out and "Missing system libraries" not in out, out

    command = prefix / "bin" / "continuum"
    assert command.is_symlink() and command.resolve() == (app / "continuum").resolve()
    desktop = prefix / "share" / "applications" / f"{APP_ID}.desktop"
    run([tool("desktop-file-validate"), str(desktop)])
    entry = desktop.read_text(encoding="utf-8")
    assert f"Exec={app}/continuum %U" in entry and f"TryExec={app}/continuum" in entry
    for size in ("16x16", "48x48", "256x256"):
        assert (prefix / f"share/icons/hicolor/{size}/apps/{APP_ID}.png").is_file()
    assert (prefix / f"share/icons/hicolor/scalable/apps/{APP_ID}.svg").is_file()
    assert (prefix / f"share/metainfo/{APP_ID}.metainfo.xml").is_file()

    assert run([str(command), "--version"]).stdout.strip() == "Continuum 0.2.0"
    assert "platform=offscreen" in smoke(command, tmp_path / "data")

    out = run(["sh", str(app / "install.sh"), "--prefix", str(prefix), "--uninstall"]).stdout
    assert "Removed" in out
    left = [p for p in prefix.rglob("*") if not p.is_dir()]
    assert not left, f"--uninstall left {left}"
    assert (app / "continuum").is_file(), "--uninstall must not touch the unpacked app"
    again = run(["sh", str(app / "install.sh"), "--prefix", str(prefix), "--uninstall"], ok=False)
    assert again.returncode == 1 and "Nothing to remove" in again.stderr


def test_install_sh_names_a_missing_system_library(tarball: Path, tmp_path: Path) -> None:
    with tarfile.open(tarball) as tar:
        tar.extractall(tmp_path / "unpacked", filter="tar")
    app = tmp_path / "unpacked" / tarball.name.removesuffix(".tar.gz")
    with (app / "system-libraries.txt").open("a", encoding="utf-8") as listing:
        listing.write("libcontinuum-not-there.so.9\n")
    out = run(["sh", str(app / "install.sh"), "--prefix", str(tmp_path / "p")]).stdout
    assert "Missing system libraries" in out and "libcontinuum-not-there.so.9" in out, out
    assert "libxcb-cursor.so.0" not in out.split("Missing system libraries", 1)[1], out


def test_install_sh_refuses_an_unknown_option(tarball: Path, tmp_path: Path) -> None:
    with tarfile.open(tarball) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("/install.sh"))
        script = tar.extractfile(member).read()  # type: ignore[union-attr]
    (tmp_path / "install.sh").write_bytes(script)
    done = run(["sh", str(tmp_path / "install.sh"), "--prefx", "/tmp/x"], ok=False)
    assert done.returncode == 2 and "unknown option '--prefx'" in done.stderr
    done = run(["sh", str(tmp_path / "install.sh"), "--prefix", str(tmp_path / "p")], ok=False)
    assert done.returncode == 1 and "unpack the whole archive" in done.stderr
