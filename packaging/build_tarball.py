"""Build the portable tarball (for Linux distributions without dpkg) from the PyInstaller bundle.

One job: ``continuum-chat-<version>-linux-<arch>.tar.gz`` holding one folder with the bundle
(``continuum`` and ``_internal/``), ``install.sh`` (the command, menu entry and icons for one
user or, as root, under /usr/local; ``--uninstall`` removes exactly those), the desktop entry,
icons and metainfo under ``share/``, ``system-libraries.txt`` (what the bundle takes from the
system, which install.sh looks for), ``README.txt`` and ``LICENSE``. The glibc baseline is
checked first (``bundle_check.py``) and written into README.txt and install.sh.

    python3 packaging/build_tarball.py [--bundle dist/continuum] [--out dist]
"""

from __future__ import annotations

import argparse
import platform
import shutil
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from build_deb import APP_ID, PACKAGE, version  # noqa: E402
from bundle_check import GLIBC_BASELINE, BundleError, check, format_version  # noqa: E402

README = """\
Continuum {version}, portable build for Linux ({arch})

Needs glibc {glibc} or newer (Debian 12, Ubuntu 23.04, Fedora 37 and later) and the X11
libraries listed in system-libraries.txt, which every X desktop has; on a minimal system:
  Debian/Ubuntu: sudo apt install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 \\
    libxcb-render-util0 libxcb-shape0 libxcb-xkb1 libxkbcommon-x11-0 libxcb-util1 libgl1 libegl1
  Fedora:        sudo dnf install xcb-util-cursor xcb-util-wm xcb-util-keysyms xcb-util-image \\
    xcb-util-renderutil libxkbcommon-x11 mesa-libGL mesa-libEGL

Start it from here:     ./continuum
Menu entry and command: ./install.sh        (then `continuum`; ./install.sh --uninstall undoes it)

Conversations live in ~/.local/share/Continuum/ and stay when you delete this folder.
"""


def lay_out(bundle: Path, folder: Path, ver: str, system: set[str]) -> None:
    shutil.copytree(bundle, folder, symlinks=True)
    glibc = format_version(GLIBC_BASELINE)
    script = (HERE / "install.sh").read_text(encoding="utf-8").replace("GLIBC_BASELINE", glibc)
    (folder / "install.sh").write_text(script, encoding="utf-8")
    (folder / "install.sh").chmod(0o755)
    share = folder / "share"
    (share / "applications").mkdir(parents=True)
    (share / "metainfo").mkdir()
    shutil.copyfile(
        HERE / "linux" / f"{APP_ID}.desktop", share / "applications" / f"{APP_ID}.desktop"
    )
    shutil.copyfile(
        HERE / "linux" / f"{APP_ID}.metainfo.xml", share / "metainfo" / f"{APP_ID}.metainfo.xml"
    )
    shutil.copytree(ROOT / "resources" / "icons" / "hicolor", share / "icons" / "hicolor")
    wanted = sorted(s for s in system if not s.startswith("ld-linux"))
    (folder / "system-libraries.txt").write_text("\n".join(wanted) + "\n", encoding="utf-8")
    (folder / "README.txt").write_text(
        README.format(version=ver, arch=platform.machine(), glibc=glibc), encoding="utf-8"
    )
    shutil.copyfile(ROOT / "LICENSE", folder / "LICENSE")


def _owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def build(
    bundle: Path,
    out: Path,
    work: Path,
    checked: tuple[tuple[int, int], set[str]] | None = None,
) -> Path:
    """Build ``<out>/continuum-chat-<version>-linux-<arch>.tar.gz``; BundleError on a bad one."""
    _glibc, system = checked or check(bundle)  # checked: a check() result already made
    ver = version()
    name = f"{PACKAGE}-{ver}-linux-{platform.machine()}"
    folder = work / name
    if folder.exists():
        shutil.rmtree(folder)
    work.mkdir(parents=True, exist_ok=True)
    lay_out(bundle, folder, ver, system)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{name}.tar.gz"
    with tarfile.open(target, "w:gz", compresslevel=6) as tar:
        tar.add(folder, arcname=name, filter=_owned_by_root)
    shutil.rmtree(folder)
    return target


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, default=ROOT / "dist" / "continuum")
    parser.add_argument("--out", type=Path, default=ROOT / "dist")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "tarball")
    args = parser.parse_args(argv)
    start = time.monotonic()
    try:
        target = build(args.bundle, args.out, args.work)
    except BundleError as exc:
        print(f"tarball build FAILED: {exc}", file=sys.stderr)
        return 1
    size = target.stat().st_size / 1e6
    print(f"{target} ({size:.1f} MB) in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
