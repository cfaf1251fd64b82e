"""The UI's declared surface: ``ui/`` imports only ``app`` and ``app.services``, and only
names those two declare in ``__all__`` (a pure check of the source; no Qt needed)."""

from __future__ import annotations

import ast
from pathlib import Path

import app
import app.services

UI = Path(__file__).parents[3] / "ui"
DECLARED = {"app": set(app.__all__) | {"__version__"}, "app.services": set(app.services.__all__)}


def ui_imports_of_app() -> list[tuple[str, str, str]]:
    """``(file, module, name)`` for every import of an ``app`` module in ``ui/``."""
    found = []
    for path in sorted(UI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ImportFrom)
                and node.level == 0
                and node.module
                and (node.module == "app" or node.module.startswith("app."))
            ):
                found += [(path.name, node.module, alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                found += [
                    (path.name, alias.name, "")
                    for alias in node.names
                    if alias.name == "app" or alias.name.startswith("app.")
                ]
    return found


def test_the_ui_uses_only_the_declared_surface() -> None:
    imports = ui_imports_of_app()
    assert imports  # the walk found the UI's imports
    outside = [(f, m, n) for f, m, n in imports if m not in DECLARED or n not in DECLARED[m]]
    assert outside == []


def test_every_declared_name_is_importable() -> None:
    for module, names in (("app", app), ("app.services", app.services)):
        missing = [n for n in names.__all__ if not hasattr(names, n)]
        assert missing == [], module
