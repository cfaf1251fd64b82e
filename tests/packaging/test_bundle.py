"""The standalone bundle the session built (tests/packaging/conftest.py): it leaves out what
packaging/bundle_contents.py says, carries the license and its own metadata, passes the glibc
and system-library check, and starts offscreen with the window shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.packaging.conftest import Bundle, load, run, smoke

pytestmark = pytest.mark.timeout(1200)

contents = load("bundle_contents")
bundle_check = load("bundle_check")


def _size_mb(folder: Path) -> float:
    return (
        sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink()) / 1e6
    )


def test_left_out(bundle: Bundle) -> None:
    internal = bundle.path / "_internal"
    names = {p.relative_to(internal).as_posix() for p in internal.rglob("*")}
    shipped = [n for n in names if not contents.keep(n)]
    assert not shipped, f"left-out files are in the bundle: {sorted(shipped)[:10]}"
    for package in ("mypy", "yaml", "pytest", "numpy"):
        assert not (internal / package).exists(), f"{package} is in the bundle"
    assert not any("/translations/" in n for n in names)
    assert (internal / "LICENSE").is_file()
    assert any(n.startswith("continuum_chat-0.2.0.dist-info") for n in names), "no own metadata"
    print(f"\nbundle {_size_mb(bundle.path):.0f} MB in {len(names)} entries")


def test_glibc_and_system_libraries(bundle: Bundle) -> None:
    assert bundle.glibc <= bundle_check.GLIBC_BASELINE
    assert bundle.glibc >= (2, 17), "objdump -T found no glibc versions at all"
    assert not bundle_check.unexpected(bundle.system)
    assert {"libxcb-cursor.so.0", "libGL.so.1", "libc.so.6"} <= bundle.system


def test_the_check_fails_a_bundle_that_needs_a_newer_glibc(bundle: Bundle) -> None:
    with pytest.raises(bundle_check.BundleError, match="newer than the documented baseline"):
        bundle_check.check(bundle.path, baseline=(2, 17))


def test_starts_offscreen(bundle: Bundle, tmp_path: Path) -> None:
    binary = bundle.path / "continuum"
    assert run([str(binary), "--version"]).stdout.strip() == "Continuum 0.2.0"
    assert "platform=offscreen" in smoke(binary, tmp_path / "data")
