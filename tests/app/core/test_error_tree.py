"""One exception tree: every exception class the ``app`` package defines derives from
ContinuumError, except the few the errors module documents as deliberately outside it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import app
import app.errors
from app.errors import ContinuumError

# Documented in app/errors.py's docstring as deliberately outside the tree.
OUTSIDE = {
    "app.testing.ScriptExhaustedError",  # an AssertionError, so pytest reports a failed test
    "app.simulator.script.SpecError",  # the simulator's own script errors
    "app.simulator.http.BadRequest",  # an unreadable request, answered inside the simulator
}


def _exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(app.__path__, "app."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__.startswith("app"):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def test_every_public_exception_is_in_the_tree() -> None:
    classes = _exception_classes()
    assert "app.errors.WorkspaceError" in classes  # the walk reaches the errors module
    outside = sorted(
        name
        for name, cls in classes.items()
        if not issubclass(cls, ContinuumError)
        and name not in OUTSIDE
        and not cls.__qualname__.startswith("_")
    )
    assert outside == []


def test_the_documented_exceptions_exist_and_are_drawn() -> None:
    doc = app.errors.__doc__ or ""
    for name in OUTSIDE:
        assert name.rsplit(".", 1)[1] in doc
    for name in app.errors.__all__:
        value = getattr(app.errors, name)
        if isinstance(value, type) and issubclass(value, BaseException):
            assert issubclass(value, ContinuumError)
            assert name in doc, f"{name} is not drawn in app/errors.py's tree"


def test_moved_exceptions_stay_importable_where_they_were_and_keep_their_builtin() -> None:
    from app.messages import MessageFormatError
    from app.secrets import NoKeyringError
    from app.services import SessionLockedError
    from app.settings import SettingsFormatError
    from app.tools import ToolArgumentError
    from app.tools.mcp import McpServerError
    from app.tools.workspace import WorkspaceError

    for cls, builtin in [
        (MessageFormatError, ValueError),
        (SettingsFormatError, ValueError),
        (ToolArgumentError, ValueError),
        (WorkspaceError, ValueError),
        (McpServerError, RuntimeError),
        (NoKeyringError, RuntimeError),
        (SessionLockedError, Exception),
    ]:
        assert issubclass(cls, ContinuumError) and issubclass(cls, builtin), cls
