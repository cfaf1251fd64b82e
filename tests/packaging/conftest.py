"""The standalone bundle, built once per test session with the real PyInstaller and checked
with ``packaging/bundle_check.py``; the .deb and tarball tests reuse it.

A missing tool (PyInstaller, objdump, dpkg-deb, lintian, Xvfb) fails the test with the command
that installs it: these tests are part of CI (``.ci/run`` installs everything). Only steps that
need root (``dpkg -i``) are skipped, with the reason, when run locally as another user; under CI
(``CI=true``) they fail instead.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
UNDER_CI = os.environ.get("CI", "").lower() == "true"
APT = "apt-get install -y --no-install-recommends binutils lintian xvfb xauth"


def load(name: str) -> ModuleType:
    """A script of packaging/ as a module (packaging/ is not a package; its scripts import each
    other by file name, so the folder goes on sys.path)."""
    if str(PACKAGING) not in sys.path:
        sys.path.insert(0, str(PACKAGING))
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, PACKAGING / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed; on Debian/Ubuntu: {APT} (.ci/run does it)")
    return path


def need_root(what: str) -> None:
    if os.geteuid() == 0:
        return
    if UNDER_CI:
        pytest.fail(f"{what} needs root, and CI runs as root: run .ci/run as root")
    pytest.skip(f"{what} needs root (CI runs it as root)")


def run(
    cmd: list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 300,
    ok: bool = True,
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        cmd,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    if ok:
        assert done.returncode == 0, (
            f"{' '.join(map(str, cmd))} exited {done.returncode}\n"
            f"--- stdout ---\n{done.stdout[-4000:]}\n--- stderr ---\n{done.stderr[-4000:]}"
        )
    return done


def smoke(binary: Path | str, data: Path, **env_extra: str) -> str:
    """Start a built app the way packaging/smoke_test.sh does (the window is shown, then closed
    normally) and return its ``smoke:`` line; the exit status and the data folder are checked."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(QT_QPA_PLATFORM="offscreen", CONTINUUM_SMOKE_QUIT_AFTER_SHOWN="1")
    env.update(env_extra)
    done = run([str(binary), "--data-dir", str(data)], env=env, cwd=data.parent, timeout=120)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("smoke:")), "")
    assert "window shown: title='Continuum'" in line and "icon=yes" in line, done.stdout
    assert "mcp=yes" in line, f"the MCP client does not import in this build: {line}"
    assert "entry_points=NONE" not in line, "keyring's backend entry points are missing"
    assert (data / "continuum.sqlite").is_file()
    log = data / "logs" / "continuum.log"
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    assert "Traceback" not in text and "ERROR" not in text, text[-3000:]
    return line


@dataclass(frozen=True)
class Bundle:
    path: Path  # the onedir folder: <path>/continuum and <path>/_internal
    glibc: tuple[int, int]  # the highest glibc version its files need
    system: set[str]  # the sonames it takes from the system
    seconds: float  # how long PyInstaller took (printed by the tests, not asserted)


@pytest.fixture(scope="session")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    """packaging/continuum.spec built with this Python's PyInstaller, then bundle_check.check.

    ``CONTINUUM_TEST_BUNDLE=dist/continuum`` (never set in CI) checks and uses a bundle built
    before instead, to iterate on the .deb and tarball tests without a 1-3 minute rebuild."""
    prebuilt = os.environ.get("CONTINUUM_TEST_BUNDLE")
    if prebuilt and not UNDER_CI:
        path = Path(prebuilt).resolve()
        glibc, system = load("bundle_check").check(path)
        return Bundle(path=path, glibc=glibc, system=system, seconds=0.0)
    if importlib.util.find_spec("PyInstaller") is None:
        pytest.fail("PyInstaller is missing: pip install -e '.[test]' (it is in the test extra)")
    tool("objdump")
    tool("ldd")
    where = tmp_path_factory.mktemp("pyinstaller")
    start = time.monotonic()
    run(
        [
            sys.executable,
            "-m",
            "PyInstaller",
            "--noconfirm",
            "--log-level",
            "WARN",
            "--distpath",
            str(where / "dist"),
            "--workpath",
            str(where / "build"),
            str(PACKAGING / "continuum.spec"),
        ],
        cwd=where,
        timeout=900,
    )
    seconds = time.monotonic() - start
    path = where / "dist" / "continuum"
    glibc, system = load("bundle_check").check(path)
    return Bundle(path=path, glibc=glibc, system=system, seconds=seconds)
