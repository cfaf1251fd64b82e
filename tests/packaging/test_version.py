"""One version everywhere: the core's ``__version__`` (the About box, ``continuum-chat
--version``) is the distribution's version in pyproject.toml."""

from __future__ import annotations

import tomllib
from pathlib import Path

import app

ROOT = Path(__file__).resolve().parents[2]


def test_the_core_version_is_the_distribution_version() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert app.__version__ == project["version"]
