"""Build the Debian package from the PyInstaller bundle, offline, with ``dpkg-deb``.

One job: lay out the package tree and call ``dpkg-deb --build``. Nothing is downloaded and no
``debian/`` source tree is needed. The package ``continuum-chat`` installs:

* the bundle under ``/opt/continuum/`` (add-on software, so ``/opt`` is its FHS place),
* ``/usr/bin/continuum`` -> ``/opt/continuum/continuum``,
* the desktop entry, the hicolor icons and the AppStream metainfo in ``/usr/share``,
* ``/usr/share/doc/continuum-chat/copyright`` (the MIT license) and ``changelog.gz``, the
  manual page ``continuum(1)`` and lintian overrides for what a bundle is by nature.

``Depends:`` comes from the bundle itself (``bundle_check.py``: the libraries its files link
that it does not carry, mapped to the packages that installed them here), with ``libc6
(>= <highest glibc the bundle needs>)``. No maintainer scripts: Debian's icon-cache and
desktop-database triggers run on their own, so ``dpkg -r`` leaves nothing behind.

    python3 packaging/build_deb.py [--bundle dist/continuum] [--out dist]

Pure parts (control file, changelog, permissions) are tested in
``tests/packaging/test_bundle_rules.py``; the built package in ``tests/packaging/test_deb.py``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from bundle_check import BundleError, check, debian_packages, format_version  # noqa: E402

PACKAGE = "continuum-chat"
APP_ID = "io.continuum.Continuum"
PREFIX = "/opt/continuum"
MAINTAINER = "The Continuum developers <maintainers@continuum-chat.invalid>"
HOMEPAGE = "https://github.com/continuum-chat/continuum"
SUMMARY = "chat with language models without losing a word"
DESCRIPTION = """\
Continuum is a desktop chat app for large language models whose conversations
survive every interruption: pressing Stop, a dropped connection, a provider
outage, an output limit, or the app being killed. Every completed message is
saved at once in a local SQLite file, and a Resume bar picks the request up
where it stopped. No tool ever runs twice because of a resume.

It works with local servers (Ollama, llama.cpp), OpenAI-compatible and
Anthropic endpoints, and has a built-in offline simulator. API keys are kept
only in the system keyring.

This package carries a self-contained build (Python, Qt) under /opt/continuum."""

# Tags lintian raises that are this package's nature, each with the reason.
LINTIAN_OVERRIDES = {
    "dir-or-file-in-opt": "a self-contained add-on application, which the FHS places in /opt",
    "embedded-library": "the bundle carries its own Python and Qt runtime by design",
    "custom-library-search-path": "PySide6 and PyInstaller use $ORIGIN rpaths inside the bundle",
    "shared-library-lacks-prerequisites": "Python extension modules resolve libpython at load",
    "library-not-linked-against-libc": "Python extension modules that call no libc function",
    "hardening-no-pie": "PyInstaller's prebuilt bootloader, as shipped in its wheel",
}


def version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "version"
    ]


def architecture() -> str:
    return subprocess.run(
        ["dpkg", "--print-architecture"], capture_output=True, text=True, check=True
    ).stdout.strip()


def depends(packages: set[str], glibc: tuple[int, int]) -> str:
    """The ``Depends:`` value: libc6 with the glibc the bundle needs, then the rest sorted."""
    rest = sorted(packages - {"libc6"})
    return ", ".join([f"libc6 (>= {format_version(glibc)})", *rest])


def control(*, version: str, arch: str, installed_kb: int, depends: str) -> str:
    body = "\n".join(f" {line}" if line else " ." for line in DESCRIPTION.splitlines())
    return (
        f"Package: {PACKAGE}\n"
        f"Version: {version}\n"
        f"Architecture: {arch}\n"
        f"Maintainer: {MAINTAINER}\n"
        f"Installed-Size: {installed_kb}\n"
        f"Depends: {depends}\n"
        "Section: net\n"
        "Priority: optional\n"
        f"Homepage: {HOMEPAGE}\n"
        f"Description: {SUMMARY}\n"
        f"{body}\n"
    )


def changelog(*, version: str, when: str) -> str:
    """A Debian changelog entry (``when`` in RFC 2822, as ``date -R`` prints it)."""
    return (
        f"{PACKAGE} ({version}) unstable; urgency=medium\n\n"
        f"  * Release {version}: see the AppStream metainfo's release notes.\n\n"
        f" -- {MAINTAINER}  {when}\n"
    )


def copyright_file() -> str:
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8").strip().splitlines()
    body = "\n".join(f" {line}" if line.strip() else " ." for line in license_text[2:])
    return (
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
        "Upstream-Name: Continuum\n"
        f"Source: {HOMEPAGE}\n\n"
        "Files: *\n"
        "Copyright: 2026 The Continuum developers\n"
        "License: MIT\n"
        f"{body}\n\n"
        "Files: opt/continuum/_internal/*\n"
        "Copyright: the authors of Python, Qt, PySide6 and the Python packages bundled\n"
        "License: various-free\n"
        " Each bundled component keeps its own license; the Python packages' licenses are\n"
        " in their *.dist-info folders under /opt/continuum/_internal.\n"
    )


def file_mode(path: Path) -> int:
    """0755 for directories and executables (a user-executable bit), else 0644."""
    if path.is_dir():
        return 0o755
    return 0o755 if path.stat().st_mode & 0o100 and ".so" not in path.name else 0o644


def _gzip(text: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
        out.write(text.encode("utf-8"))


def lay_out(bundle: Path, tree: Path, ver: str) -> None:
    """The package's files (everything except DEBIAN/control) under ``tree``."""
    app = tree / PREFIX.lstrip("/")
    shutil.copytree(bundle, app, symlinks=True)
    (tree / "usr/bin").mkdir(parents=True)
    (tree / "usr/bin/continuum").symlink_to(f"{PREFIX}/continuum")
    share = tree / "usr/share"
    linux = HERE / "linux"
    for source, target in (
        (linux / f"{APP_ID}.desktop", share / "applications" / f"{APP_ID}.desktop"),
        (linux / f"{APP_ID}.metainfo.xml", share / "metainfo" / f"{APP_ID}.metainfo.xml"),
    ):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    shutil.copytree(ROOT / "resources" / "icons" / "hicolor", share / "icons" / "hicolor")
    man = (HERE / "linux" / "continuum.1").read_text(encoding="utf-8")
    _gzip(man.replace("@VERSION@", ver), share / "man" / "man1" / "continuum.1.gz")
    doc = share / "doc" / PACKAGE
    doc.mkdir(parents=True)
    (doc / "copyright").write_text(copyright_file(), encoding="utf-8")
    when = time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime(_source_time()))
    _gzip(changelog(version=ver, when=when), doc / "changelog.gz")
    overrides = share / "lintian" / "overrides" / PACKAGE
    overrides.parent.mkdir(parents=True)
    overrides.write_text("".join(f"{PACKAGE}: {tag} *\n" for tag in sorted(LINTIAN_OVERRIDES)))
    for path in [tree, *tree.rglob("*")]:
        if not path.is_symlink():
            path.chmod(file_mode(path))


def _source_time() -> int:
    """SOURCE_DATE_EPOCH when set (reproducible builds), else now."""
    return int(os.environ.get("SOURCE_DATE_EPOCH", time.time()))


def md5sums(tree: Path) -> str:
    lines = []
    for path in sorted(tree.rglob("*")):
        if path.is_file() and not path.is_symlink() and "DEBIAN" not in path.parts:
            digest = hashlib.md5(path.read_bytes(), usedforsecurity=False).hexdigest()
            lines.append(f"{digest}  {path.relative_to(tree).as_posix()}\n")
    return "".join(lines)


def installed_size_kb(tree: Path) -> int:
    total = 0
    for path in tree.rglob("*"):
        if "DEBIAN" in path.parts:
            continue
        total += 1 if path.is_symlink() or path.is_dir() else -(-path.stat().st_size // 1024)
    return total


def build(
    bundle: Path,
    out: Path,
    work: Path,
    compression: str = "xz",
    checked: tuple[tuple[int, int], set[str]] | None = None,
) -> Path:
    """Build ``<out>/continuum-chat_<version>_<arch>.deb``; raise BundleError on a bad bundle.
    ``compression``: ``xz`` (smallest, for releases) or ``gzip`` (several times faster; tests)."""
    for tool in ("dpkg-deb", "dpkg"):
        if shutil.which(tool) is None:
            raise BundleError(f"{tool} is missing; the .deb is built on Debian/Ubuntu (dpkg)")
    glibc, system = checked or check(bundle)  # checked: a check() result already made
    packages = set(debian_packages(system).values())
    ver, arch = version(), architecture()
    tree = work / f"{PACKAGE}_{ver}_{arch}"
    if tree.exists():
        shutil.rmtree(tree)
    lay_out(bundle, tree, ver)
    debian = tree / "DEBIAN"
    debian.mkdir(mode=0o755)
    (debian / "md5sums").write_text(md5sums(tree), encoding="utf-8")
    (debian / "control").write_text(
        control(
            version=ver,
            arch=arch,
            installed_kb=installed_size_kb(tree),
            depends=depends(packages, glibc),
        ),
        encoding="utf-8",
    )
    for name in ("md5sums", "control"):
        (debian / name).chmod(0o644)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{tree.name}.deb"
    done = subprocess.run(
        # gzip at level 1 for tests (dpkg-deb's default level 9 is several times slower).
        ["dpkg-deb", "--root-owner-group", f"-Z{compression}"]
        + (["-z1"] if compression == "gzip" else [])
        + ["--build", str(tree), str(target)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise BundleError(f"dpkg-deb failed: {done.stderr.strip()}")
    shutil.rmtree(tree)
    return target


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, default=ROOT / "dist" / "continuum")
    parser.add_argument("--out", type=Path, default=ROOT / "dist")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "deb")
    parser.add_argument("--compression", choices=("xz", "gzip"), default="xz")
    args = parser.parse_args(argv)
    start = time.monotonic()
    try:
        deb = build(args.bundle, args.out, args.work, args.compression)
    except BundleError as exc:
        print(f".deb build FAILED: {exc}", file=sys.stderr)
        return 1
    size = deb.stat().st_size / 1e6
    print(f"{deb} ({size:.1f} MB) in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
