"""The import contracts in pyproject.toml do what .ci/check says: run on a small tree that breaks
each of them (app importing Qt, ui importing a private app module), lint-imports fails naming
each import; on the same tree without those imports it passes."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def write_tree(root: Path, *, broken: bool) -> None:
    files = {
        "app/__init__.py": "from . import agent\n",
        "app/agent.py": "import PySide6.QtCore\n" if broken else "import asyncio\n",
        "app/services/__init__.py": "from ..agent import *\n",
        "app/services/requests.py": "",
        "ui/__init__.py": "",
        "ui/window.py": "import app\nfrom app.services import requests\nimport PySide6.QtWidgets\n"
        + ("from app.agent import *\n" if broken else ""),
        "PySide6/__init__.py": "",
        "PySide6/QtCore.py": "",
        "PySide6/QtWidgets.py": "",
        "qasync/__init__.py": "",
        "shiboken6/__init__.py": "",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    lines = ["[importlinter]\nroot_packages =\n    app\n    ui\ninclude_external_packages = True\n"]
    for i, contract in enumerate(config["contracts"]):
        lines.append(f"[importlinter:contract:{i}]")
        for key, value in contract.items():
            value = "\n    " + "\n    ".join(value) if isinstance(value, list) else value
            lines.append(f"{key} = {value}")
    (root / ".importlinter").write_text("\n".join(lines) + "\n")


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_the_contracts_catch_qt_in_app_and_a_private_app_import_in_ui(tmp_path: Path) -> None:
    write_tree(tmp_path, broken=True)
    done = lint(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "app.agent -> PySide6" in done.stdout
    assert "ui.window -> app.agent" in done.stdout
    assert "ui.window -> app.services" not in done.stdout  # the declared surface is allowed
    assert "Contracts: 0 kept, 2 broken." in done.stdout


def test_the_contracts_pass_a_tree_that_keeps_them(tmp_path: Path) -> None:
    write_tree(tmp_path, broken=False)
    done = lint(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: 2 kept, 0 broken." in done.stdout
