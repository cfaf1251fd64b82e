"""``python -m build`` makes a wheel and an sdist that install into a fresh venv and start.

The wheel is built from the sdist (``python -m build``'s default), so this also proves the sdist
is complete. The fresh venv gets the wheel only (``--no-deps``); its dependencies come from the
running environment's site-packages through a ``.pth`` line — a plain path entry, so the
editable install's finder there is *not* activated and ``app``/``ui`` must come from the wheel.
That keeps the test offline for the dependencies and well under a minute. (The build itself
installs ``setuptools`` into build's isolated environment from the package index.)
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]

pytestmark = pytest.mark.timeout(300)


def _run(
    cmd: list[str], *, cwd: Path, env: dict[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (
        f"{' '.join(map(str, cmd))} exited {done.returncode}\n"
        f"--- stdout ---\n{done.stdout[-4000:]}\n--- stderr ---\n{done.stderr[-4000:]}"
    )
    return done


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    try:
        import build  # noqa: F401
    except ImportError:
        pytest.fail(
            "the 'build' package is missing: pip install build "
            "(it belongs in the test extra of pyproject.toml)"
        )
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], cwd=out)
    wheels = list(out.glob("continuum_chat-*.whl"))
    sdists = list(out.glob("continuum_chat-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in out.iterdir())
    return {"wheel": wheels[0], "sdist": sdists[0]}


@pytest.fixture(scope="module")
def venv(dist: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with only the wheel installed; dependencies borrowed read-only."""
    where = tmp_path_factory.mktemp("venv") / "v"
    _run([sys.executable, "-m", "venv", "--without-pip", str(where)], cwd=where.parent)
    python = where / "bin" / "python"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-index",
            "--no-deps",
            str(dist["wheel"]),
        ],
        cwd=where.parent,
    )
    site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            cwd=where.parent,
        ).stdout.strip()
    )
    (site / "zz_continuum_test_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return where


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


def test_wheel_contents(dist: dict[str, Path]) -> None:
    names = zipfile.ZipFile(dist["wheel"]).namelist()
    assert "app/__init__.py" in names and "ui/main.py" in names
    assert "app/py.typed" in names
    assert not any(n.startswith(("tests/", "bench/")) for n in names), "tests leaked into wheel"
    info = f"continuum_chat-{VERSION}.dist-info"
    entry_points = zipfile.ZipFile(dist["wheel"]).read(f"{info}/entry_points.txt").decode()
    assert "continuum = ui.main:main" in entry_points
    assert f"{info}/licenses/LICENSE" in names, "the LICENSE is not in the wheel"
    metadata = zipfile.ZipFile(dist["wheel"]).read(f"{info}/METADATA").decode()
    assert "Name: continuum-chat" in metadata and "License-Expression: MIT" in metadata
    requires = [ln for ln in metadata.splitlines() if ln.startswith("Requires-Dist: mcp")]
    assert requires and all("extra ==" not in ln for ln in requires), requires


def test_sdist_contents(dist: dict[str, Path]) -> None:
    with tarfile.open(dist["sdist"]) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "LICENSE", "app/__init__.py", "ui/main.py"} <= names
    # What a distribution packager needs: the tests, the build scripts, desktop entry,
    # metainfo, icons (and the screenshots the metainfo test reads).
    for name in (
        "tests/packaging/test_deb.py",
        "tests/conftest.py",
        "packaging/continuum.spec",
        "packaging/build_deb.py",
        "packaging/build_all.sh",
        "packaging/install.sh",
        "packaging/linux/io.continuum.Continuum.desktop",
        "packaging/linux/io.continuum.Continuum.metainfo.xml",
        "packaging/linux/continuum.1",
        "packaging/icons/continuum.ico",
        "packaging/icons/continuum.icns",
        "resources/icons/hicolor/256x256/apps/io.continuum.Continuum.png",
        "docs/screenshots/answer-light.png",
        ".ci/run",
    ):
        assert name in names, f"{name} is not in the sdist"
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


def test_installed_wheel_starts(venv: Path) -> None:
    bin_ = venv / "bin"
    # app and ui come from the wheel, not from the source tree.
    where = _run(
        [
            str(bin_ / "python"),
            "-c",
            "import app, ui; print(app.__file__); print(ui.__file__); print(app.__version__)",
        ],
        cwd=venv,
        env=_env(),
    ).stdout
    app_file, ui_file, core_version = where.split()
    assert app_file.startswith(str(venv)) and ui_file.startswith(str(venv)), where
    assert core_version == VERSION  # what the About box and continuum-chat --version say

    out = _run([str(bin_ / "continuum"), "--version"], cwd=venv, env=_env(), timeout=60)
    assert out.stdout.strip() == f"Continuum {VERSION}"

    out = _run([str(bin_ / "continuum"), "--help"], cwd=venv, env=_env(), timeout=60)
    assert "--data-dir" in out.stdout and "--version" in out.stdout

    for script in ("continuum-chat", "continuum-sim"):
        _run([str(bin_ / script), "--help"], cwd=venv, env=_env(), timeout=60)


def test_installed_wheel_has_window_icon(dist: dict[str, Path], venv: Path) -> None:
    names = zipfile.ZipFile(dist["wheel"]).namelist()
    assert "resources/icons/continuum.svg" in names
    found = _run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "from ui.window import RESOURCES; "
            "print((RESOURCES / 'icons' / 'continuum.svg').is_file())",
        ],
        cwd=venv,
        env=_env(),
    ).stdout.strip()
    assert found == "True"


def test_pipx_installs_the_wheel_and_the_app_starts(dist: dict[str, Path], tmp_path: Path) -> None:
    """README's first install route: ``pipx install`` of the wheel, with its real dependencies
    resolved from the package index (mcp among them, not an extra). The commands land in pipx's
    bin folder, the app from that venv shows its window (smoke mode) with the MCP client
    importable, and ``pipx uninstall`` takes the commands away again."""
    pipx = Path(sys.executable).with_name("pipx")
    if not pipx.exists():
        pytest.fail("pipx is missing: pip install -e '.[test]' (it is in the test extra)")
    env = _env()
    env.update(
        PIPX_HOME=str(tmp_path / "pipx"),
        PIPX_BIN_DIR=str(tmp_path / "bin"),
        PIPX_MAN_DIR=str(tmp_path / "man"),
    )
    _run([str(pipx), "install", str(dist["wheel"])], cwd=tmp_path, env=env, timeout=600)
    bin_ = tmp_path / "bin"
    assert {p.name for p in bin_.iterdir()} == {"continuum", "continuum-chat", "continuum-sim"}
    out = _run([str(bin_ / "continuum"), "--version"], cwd=tmp_path, env=env, timeout=60)
    assert out.stdout.strip() == f"Continuum {VERSION}"

    python = tmp_path / "pipx" / "venvs" / "continuum-chat" / "bin" / "python"
    env.update(CONTINUUM_SMOKE_QUIT_AFTER_SHOWN="1")
    out = _run(
        [str(python), str(ROOT / "packaging" / "continuum_main.py"), "--data-dir", "data"],
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("smoke:")), "")
    assert "window shown: title='Continuum'" in line and "mcp=yes" in line, out.stdout
    # The app came from the pipx venv, not from this source tree.
    where = _run([str(python), "-c", "import ui; print(ui.__file__)"], cwd=tmp_path, env=env).stdout
    assert where.startswith(str(tmp_path / "pipx")), where

    _run([str(pipx), "uninstall", "continuum-chat"], cwd=tmp_path, env=env, timeout=120)
    assert not list(bin_.iterdir())
