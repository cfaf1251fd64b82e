"""Check a built bundle's ELF files: the glibc they need, and the system libraries they link.

One job: read every ELF file of the onedir bundle with ``objdump`` (binutils) and answer two
questions the .deb and the tarball depend on:

* **glibc baseline.** The highest ``GLIBC_x.y`` symbol version any file needs (``objdump -T``).
  The build fails when it is newer than :data:`GLIBC_BASELINE`, the one the README promises.
* **System libraries.** The sonames files link (``NEEDED`` in ``objdump -p``) that the bundle
  does not carry. Each must be one the bundle may take from the system (glibc's, GL/EGL, Wayland
  and the X libraries of :data:`bundle_contents.SYSTEM_SONAMES`); anything else means a library
  was left out by mistake. They map to Debian packages (``ldconfig -p`` + ``dpkg -S``) for the
  .deb's ``Depends:``.

    python3 packaging/bundle_check.py dist/continuum            # glibc + system libraries
    python3 packaging/bundle_check.py dist/continuum --depends  # also the Debian packages

The parsing and deciding are pure functions (``tests/packaging/test_bundle_rules.py``).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bundle_contents import SYSTEM_SONAMES

# Debian 12 "bookworm" (the build machine's): its libpython3.11 and libstdc++ need 2.35/2.36.
GLIBC_BASELINE: tuple[int, int] = (2, 36)

# Besides SYSTEM_SONAMES, what every Linux desktop provides and PyInstaller never bundles.
BASE_SONAMES: frozenset[str] = frozenset(
    {
        "ld-linux-x86-64.so.2",
        "ld-linux-aarch64.so.1",
        "libc.so.6",
        "libm.so.6",
        "libdl.so.2",
        "libpthread.so.0",
        "librt.so.1",
        "libutil.so.1",
        "libresolv.so.2",
        "libGL.so.1",
        "libEGL.so.1",
        "libxcb.so.1",
        "libwayland-client.so.0",
        "libwayland-cursor.so.0",
        "libwayland-egl.so.1",
    }
)
ALLOWED_SYSTEM: frozenset[str] = BASE_SONAMES | SYSTEM_SONAMES

_GLIBC = re.compile(r"\bGLIBC_(\d+)\.(\d+)(?:\.\d+)?\b")
_NEEDED = re.compile(r"^\s*NEEDED\s+(\S+)\s*$", re.MULTILINE)


class BundleError(Exception):
    """The bundle breaks a rule; the message says what and what to do."""


def parse_glibc(objdump_t: str) -> set[tuple[int, int]]:
    """The ``GLIBC_x.y`` versions named in ``objdump -T`` output."""
    return {(int(m[1]), int(m[2])) for m in _GLIBC.finditer(objdump_t)}


def parse_needed(objdump_p: str) -> list[str]:
    """The ``NEEDED`` sonames in ``objdump -p`` output, in order."""
    return _NEEDED.findall(objdump_p)


def glibc_verdict(
    per_file: dict[str, set[tuple[int, int]]], baseline: tuple[int, int] = GLIBC_BASELINE
) -> tuple[tuple[int, int], list[str]]:
    """The highest glibc version needed, and the files that need one newer than ``baseline``."""
    highest = max((v for versions in per_file.values() for v in versions), default=(0, 0))
    newer = sorted(f for f, versions in per_file.items() if any(v > baseline for v in versions))
    return highest, newer


def system_sonames(needed: dict[str, list[str]], bundled: Iterable[str]) -> set[str]:
    """The sonames some file links that no file of the bundle provides."""
    have = set(bundled)
    return {soname for names in needed.values() for soname in names if soname not in have}


def unexpected(system: Iterable[str], allowed: frozenset[str] = ALLOWED_SYSTEM) -> list[str]:
    """System sonames the bundle may not rely on (a library left out by mistake)."""
    return sorted(set(system) - allowed)


def dpkg_package(dpkg_s: str) -> str:
    """``libc6:amd64: /usr/lib/...`` (one line of ``dpkg -S``) -> ``libc6``."""
    return dpkg_s.split(": ", 1)[0].split(":", 1)[0].strip()


def format_version(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


# --- reading a real bundle -------------------------------------------------------------------


def _objdump(*args: str) -> str:
    tool = shutil.which("objdump")
    if tool is None:
        raise BundleError("objdump is missing: apt-get install binutils")
    done = subprocess.run([tool, *args], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise BundleError(f"objdump {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def elf_files(root: Path) -> list[Path]:
    """Every regular ELF file under ``root`` (symlinks are named by their targets)."""
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        with path.open("rb") as handle:
            if handle.read(4) == b"\x7fELF":
                found.append(path)
    return found


def read_bundle(root: Path) -> tuple[dict[str, set[tuple[int, int]]], dict[str, list[str]]]:
    """Per ELF file (relative path): the glibc versions and the sonames it needs."""
    glibc: dict[str, set[tuple[int, int]]] = {}
    needed: dict[str, list[str]] = {}
    for path in elf_files(root):
        name = path.relative_to(root).as_posix()
        glibc[name] = parse_glibc(_objdump("-T", str(path)))
        needed[name] = parse_needed(_objdump("-p", str(path)))
    return glibc, needed


def bundled_names(root: Path) -> set[str]:
    return {p.name for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def _ldconfig() -> dict[str, str]:
    tool = shutil.which("ldconfig") or "/sbin/ldconfig"
    done = subprocess.run([tool, "-p"], capture_output=True, text=True, timeout=60)
    paths: dict[str, str] = {}
    for line in done.stdout.splitlines()[1:]:
        name, _, rest = line.strip().partition(" ")
        if "=>" in rest and ("x86-64" in rest or "AArch64" in rest):
            paths.setdefault(name, rest.split("=>", 1)[1].strip())
    return paths


def debian_packages(sonames: Iterable[str]) -> dict[str, str]:
    """soname -> the Debian package that installed it here (``ldconfig -p``, ``dpkg -S``)."""
    paths = _ldconfig()
    dpkg = shutil.which("dpkg")
    if dpkg is None:
        raise BundleError("dpkg is missing: the .deb's Depends can only be found on Debian")
    packages: dict[str, str] = {}
    missing = []
    for soname in sorted(sonames):
        path = paths.get(soname)
        if path is None:
            missing.append(soname)
            continue
        resolved = str(Path(path).resolve())
        candidates = [path, resolved]
        for candidate in (path, resolved):  # merged /usr: dpkg knows one of the two spellings
            if candidate.startswith("/lib"):
                candidates.append("/usr" + candidate)
            elif candidate.startswith("/usr/lib"):
                candidates.append(candidate[4:])
        for candidate in candidates:
            done = subprocess.run([dpkg, "-S", candidate], capture_output=True, text=True)
            if done.returncode == 0 and done.stdout.strip():
                packages[soname] = dpkg_package(done.stdout.splitlines()[0])
                break
        else:
            missing.append(soname)
    if missing:
        raise BundleError(
            "these libraries the bundle takes from the system are not installed here, so the "
            f".deb's Depends cannot name their packages: {', '.join(missing)}. Install them "
            "(README: 'Linux (X11): system libraries Qt needs') and build again."
        )
    return packages


def check(
    root: Path, baseline: tuple[int, int] = GLIBC_BASELINE
) -> tuple[tuple[int, int], set[str]]:
    """Fail (BundleError) on a too-new glibc or an unexpected system library; else return the
    highest glibc version needed and the system sonames."""
    if not root.is_dir():
        raise BundleError(f"no bundle at {root}; run packaging/build_pyinstaller.sh")
    glibc, needed = read_bundle(root)
    if not glibc:
        raise BundleError(f"no ELF files under {root}")
    highest, newer = glibc_verdict(glibc, baseline)
    if newer:
        raise BundleError(
            f"the bundle needs glibc {format_version(highest)}, newer than the documented "
            f"baseline {format_version(baseline)} (README 'glibc'): {', '.join(newer[:10])}. "
            "Build on an older distribution, or raise the baseline in packaging/bundle_check.py "
            "and the README together."
        )
    system = system_sonames(needed, bundled_names(root))
    odd = unexpected(system)
    if odd:
        users = sorted(f for f, names in needed.items() if set(names) & set(odd))
        raise BundleError(
            f"bundled files link libraries that are neither bundled nor expected from the system: "
            f"{', '.join(odd)} (needed by {', '.join(users[:5])}). A rule in "
            "packaging/bundle_contents.py dropped too much, or add them to SYSTEM_SONAMES."
        )
    return highest, system


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", type=Path, help="the onedir bundle, e.g. dist/continuum")
    parser.add_argument("--depends", action="store_true", help="print the Debian packages too")
    args = parser.parse_args(argv)
    try:
        highest, system = check(args.bundle)
        print(
            f"glibc: the bundle needs {format_version(highest)} "
            f"(baseline {format_version(GLIBC_BASELINE)}): OK"
        )
        print(f"system libraries ({len(system)}): {' '.join(sorted(system))}")
        if args.depends:
            packages = debian_packages(system)
            print(f"Debian packages: {', '.join(sorted(set(packages.values())))}")
    except BundleError as exc:
        print(f"bundle check FAILED: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
