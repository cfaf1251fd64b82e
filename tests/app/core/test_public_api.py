"""The public surface is deliberate: everything in ``app.__all__`` exists, and ``app`` has no Qt."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import app


def test_all_names_exist_and_are_sorted() -> None:
    for name in app.__all__:
        assert hasattr(app, name), name
    assert len(set(app.__all__)) == len(app.__all__)


def test_the_spec_names_are_public() -> None:
    for name in (
        "Agent",
        "AgentRunConfig",
        "RetryPolicy",
        "UserMessage",
        "InternalMessage",
        "AssistantMessage",
        "ToolMessage",
        "ToolCall",
        "StopReason",
        "ResumePoint",
        "ResumeKind",
        "AgentResumeError",
        "SessionBusyError",
        "SyncAgent",
        "AgentClient",
        "SQLiteSessionExtension",
        "JSONLExtension",
        "EventType",
        "TextDelta",
        "ToolCallComplete",
        "StepEnd",
        "ModelRequest",
        "tool",
    ):
        assert name in app.__all__, name
    from app.testing import ScriptedModel  # noqa: F401


def test_app_imports_without_qt() -> None:
    """Import the whole core with PySide6 and qasync made unimportable."""
    script = textwrap.dedent(
        """
        import importlib, pkgutil, sys

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("PySide6", "qasync", "shiboken6"):
                    raise ImportError("Qt is blocked in this test: " + name)
                return None

        sys.meta_path.insert(0, Block())
        import app
        for module in pkgutil.walk_packages(app.__path__, "app."):
            if module.name.startswith("app.simulator.__main__"):
                continue
            importlib.import_module(module.name)
        loaded = [m for m in sys.modules if m.split(".")[0] in ("PySide6", "qasync", "shiboken6")]
        assert not loaded, loaded
        print("ok", len([m for m in sys.modules if m.startswith("app")]))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok")
