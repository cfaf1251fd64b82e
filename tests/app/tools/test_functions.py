"""Python functions as tools: schema from hints and docstrings, options, and running calls.

Every call goes through the real :meth:`FunctionTool.invoke`: sync functions in a worker thread,
async ones on the loop; failures, bad arguments and timeouts become failed results for the model.
"""

from __future__ import annotations

import asyncio
import enum
import json
import threading
from typing import Annotated, Any, Literal, Optional

import pytest

from app.messages import ToolCall
from app.model import ToolSpec
from app.tools import FunctionTool, ToolResult, as_tool, tool


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Size(enum.IntEnum):
    SMALL = 1
    LARGE = 2


def call(name: str = "t", **arguments: Any) -> ToolCall:
    return ToolCall("call-1", name, arguments)


async def invoke(function_tool: FunctionTool, **arguments: Any) -> ToolResult:
    return await asyncio.wait_for(function_tool.invoke(call(function_tool.name, **arguments)), 10)


# --- schema ---------------------------------------------------------------------------------


def everything(
    text: str,
    count: int,
    ratio: float,
    flag: bool,
    tags: list[str],
    options: dict,  # type: ignore[type-arg]
    mapping: dict[str, int],
    color: Color,
    size: Size,
    mode: Literal["fast", "slow"] = "fast",
    limit: Optional[int] = None,  # noqa: UP045 - the spelling under test
    note: str | None = None,
    described: Annotated[str, "described by Annotated"] = "x",
    untyped=3,  # type: ignore[no-untyped-def]
) -> str:
    """Do everything at once.

    This second paragraph is not part of the description.

    Args:
        text: Some text.
        count (int): How many.
        ratio: A ratio that needs
            two lines to explain.
        described: This loses to the Annotated text.
        untyped: Anything goes.

    Returns:
        A summary.
    """
    return "done"


def test_schema_from_type_hints_and_docstring() -> None:
    spec = as_tool(everything)
    assert spec.name == "everything"
    assert spec.description == "Do everything at once."
    properties = spec.parameters["properties"]
    assert spec.parameters["type"] == "object"
    assert properties["text"] == {"type": "string", "description": "Some text."}
    assert properties["count"] == {"type": "integer", "description": "How many."}
    assert properties["ratio"] == {
        "type": "number",
        "description": "A ratio that needs two lines to explain.",
    }
    assert properties["flag"] == {"type": "boolean"}
    assert properties["tags"] == {"type": "array", "items": {"type": "string"}}
    assert properties["options"] == {"type": "object"}
    assert properties["mapping"] == {"type": "object"}
    assert properties["color"] == {"enum": ["red", "green"]}
    assert properties["size"] == {"enum": [1, 2]}
    assert properties["mode"] == {"enum": ["fast", "slow"], "default": "fast"}
    assert properties["limit"] == {
        "anyOf": [{"type": "integer"}, {"type": "null"}],
        "default": None,
    }
    assert properties["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
    assert properties["described"] == {
        "type": "string",
        "description": "described by Annotated",
        "default": "x",
    }
    assert properties["untyped"] == {"description": "Anything goes.", "default": 3}
    assert list(properties) == [
        "text",
        "count",
        "ratio",
        "flag",
        "tags",
        "options",
        "mapping",
        "color",
        "size",
        "mode",
        "limit",
        "note",
        "described",
        "untyped",
    ]
    assert spec.parameters["required"] == [
        "text",
        "count",
        "ratio",
        "flag",
        "tags",
        "options",
        "mapping",
        "color",
        "size",
    ]
    assert "Returns" not in json.dumps(spec.parameters)
    json.dumps(spec.parameters)  # the schema is plain JSON
    assert spec.spec == ToolSpec("everything", "Do everything at once.", spec.parameters)


def test_no_required_key_when_everything_has_a_default() -> None:
    def search(query: str = "", page: int = 1, exact: bool = False) -> None:
        """Search."""

    parameters = as_tool(search).parameters
    assert "required" not in parameters
    assert parameters["properties"]["query"]["default"] == ""
    assert parameters["properties"]["page"]["default"] == 1
    assert parameters["properties"]["exact"]["default"] is False


def test_non_json_defaults_are_not_advertised() -> None:
    def f(items: list[str] = [], color: Color = Color.RED) -> None:  # noqa: B006
        """F."""

    properties = as_tool(f).parameters["properties"]
    assert "default" not in properties["items"]
    assert "default" not in properties["color"]
    assert "required" not in as_tool(f).parameters


def test_description_falls_back_to_the_name() -> None:
    def fetch_weather(city: str) -> str:
        return city

    assert as_tool(fetch_weather).description == "fetch weather"
    assert as_tool(fetch_weather, description="Override.").description == "Override."


def test_var_args_are_not_parameters() -> None:
    def f(a: int, *args: int, **kwargs: Any) -> None:
        """F."""

    parameters = as_tool(f).parameters
    assert list(parameters["properties"]) == ["a"]
    assert parameters["required"] == ["a"]


def test_unsupported_parameters_are_refused_when_the_tool_is_made() -> None:
    def positional(a: int, /) -> None: ...

    def odd_type(a: complex) -> None: ...

    with pytest.raises(TypeError, match="positional-only"):
        as_tool(positional)
    with pytest.raises(TypeError, match="complex"):
        as_tool(odd_type)


# --- the decorator --------------------------------------------------------------------------


@tool
def bare_add(a: int, b: int = 2) -> int:
    """Add two numbers."""
    return a + b


@tool(name="renamed-tool", side_effects=True, timeout=2.5, description="Custom text.")
def with_options(path: str) -> str:
    """Original docstring."""
    return path.upper()


def test_bare_decorator_keeps_the_function_callable() -> None:
    assert bare_add(1) == 3
    assert bare_add(1, b=5) == 6
    made = as_tool(bare_add)
    assert isinstance(made, FunctionTool)
    assert made.name == "bare_add" and made.description == "Add two numbers."
    assert made.side_effects is False and made.timeout is None
    assert made.function is bare_add
    assert as_tool(bare_add) is made  # the tool made at decoration time is reused
    assert as_tool(made) is made


def test_decorator_with_options() -> None:
    assert with_options("x") == "X"
    made = as_tool(with_options)
    assert made.name == "renamed-tool"
    assert made.description == "Custom text."
    assert made.side_effects is True
    assert made.timeout == 2.5
    assert made.parameters["required"] == ["path"]


@pytest.mark.parametrize(
    "bad", ["has space", "", "x" * 65, "dotted.name", "ünïcode", "semi;colon", "slash/name"]
)
def test_invalid_tool_names_are_refused(bad: str) -> None:
    def f() -> None: ...

    with pytest.raises(ValueError, match="tool name"):
        as_tool(f, name=bad)
    with pytest.raises(ValueError, match="tool name"):
        tool(name=bad)(f)


@pytest.mark.parametrize("good", ["a", "x" * 64, "read-file_2", "CamelCase"])
def test_valid_tool_names_are_kept(good: str) -> None:
    def f() -> None: ...

    assert as_tool(f, name=good).name == good


# --- running calls --------------------------------------------------------------------------


async def test_sync_tool_runs_in_a_worker_thread_without_blocking_the_loop() -> None:
    entered = threading.Event()
    release = threading.Event()
    seen: dict[str, int] = {}

    def slow_sync(x: int) -> str:
        """Block until released."""
        seen["thread"] = threading.get_ident()
        entered.set()
        return "released" if release.wait(10) else "never released"

    running = asyncio.create_task(invoke(as_tool(slow_sync), x=1))
    assert await asyncio.to_thread(entered.wait, 10)
    # The loop is free while the tool blocks: this coroutine runs and releases it.
    release.set()
    result = await running
    assert result == ToolResult("released", success=True)
    assert seen["thread"] != threading.get_ident()


async def test_async_tool_runs_on_the_loop() -> None:
    seen: dict[str, Any] = {}

    async def fetch(url: str) -> dict[str, Any]:
        """Fetch."""
        seen["thread"] = threading.get_ident()
        seen["loop"] = asyncio.get_running_loop()
        return {"url": url, "status": 200}

    result = await invoke(as_tool(fetch), url="https://example.invalid/")
    assert result.success
    assert json.loads(result.content) == {"url": "https://example.invalid/", "status": 200}
    assert seen["thread"] == threading.get_ident()
    assert seen["loop"] is asyncio.get_running_loop()


@pytest.mark.parametrize("is_async", [False, True])
async def test_exceptions_become_failed_results(is_async: bool) -> None:
    def broken_sync(path: str) -> str:
        raise FileNotFoundError(f"no such file: {path}")

    async def broken_async(path: str) -> str:
        raise FileNotFoundError(f"no such file: {path}")

    result = await invoke(as_tool(broken_async if is_async else broken_sync), path="a.txt")
    assert result.success is False
    assert result.content == "FileNotFoundError: no such file: a.txt"


async def test_timeout_stops_a_slow_async_tool() -> None:
    cancelled = asyncio.Event()

    @tool(timeout=0.05)
    async def hangs() -> str:
        """Never finishes."""
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()
        return "unreachable"

    result = await invoke(as_tool(hangs))
    assert result.success is False
    assert "hangs" in result.content and "0.05 seconds" in result.content
    assert cancelled.is_set()


async def test_a_tools_own_timeout_error_is_its_failure_not_ours() -> None:
    async def own_timeout() -> str:
        raise TimeoutError("the upstream server timed out")

    without_limit = await invoke(as_tool(own_timeout))
    assert without_limit == ToolResult("TimeoutError: the upstream server timed out", False)
    with_limit = await invoke(as_tool(own_timeout, timeout=30))
    assert with_limit == ToolResult("TimeoutError: the upstream server timed out", False)

    def sync_timeout() -> str:
        raise TimeoutError("socket timed out")

    assert await invoke(as_tool(sync_timeout)) == ToolResult(
        "TimeoutError: socket timed out", False
    )


async def test_fast_tool_within_its_timeout_succeeds() -> None:
    async def quick(x: int) -> int:
        return x * 2

    assert await invoke(as_tool(quick, timeout=30), x=21) == ToolResult("42", True)


async def test_cancellation_is_not_turned_into_a_result() -> None:
    started = asyncio.Event()

    async def waits() -> str:
        started.set()
        await asyncio.Event().wait()
        return "unreachable"

    task = asyncio.create_task(as_tool(waits).invoke(call("waits")))
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)


@pytest.mark.parametrize(
    ("value", "content"),
    [
        (None, ""),
        ("plain text", "plain text"),
        ("", ""),
        (
            {"ok": True, "name": "Zoë 😀", "n": [1, 2]},
            '{"ok": true, "name": "Zoë 😀", "n": [1, 2]}',
        ),
        ([1, "two", None], '[1, "two", null]'),
        (42, "42"),
        (1.5, "1.5"),
        (False, "false"),
    ],
)
async def test_return_values_become_content(value: Any, content: str) -> None:
    def returns() -> Any:
        return value

    async def returns_async() -> Any:
        return value

    assert await invoke(as_tool(returns)) == ToolResult(content, True)
    assert await invoke(as_tool(returns_async)) == ToolResult(content, True)


async def test_non_json_return_values_are_stringified() -> None:
    class Thing:
        def __str__(self) -> str:
            return "a thing"

    def returns_thing() -> Any:
        return {"thing": Thing(), "set": {1}}

    result = await invoke(as_tool(returns_thing))
    assert result.success
    assert json.loads(result.content) == {"thing": "a thing", "set": "{1}"}


async def test_sync_function_returning_a_coroutine_is_awaited() -> None:
    async def inner() -> str:
        return "awaited"

    def outer() -> Any:
        return inner()

    assert await invoke(as_tool(outer)) == ToolResult("awaited", True)


# --- arguments ------------------------------------------------------------------------------


class Recorder:
    """A tool function that records every call it gets."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def make(self) -> FunctionTool:
        def scale(
            value: float,
            times: int,
            labels: list[str] | None = None,
            color: Color = Color.RED,
            mode: Literal["up", "down"] = "up",
            size: Size | None = None,
        ) -> str:
            """Scale a value."""
            self.calls.append(
                {
                    "value": value,
                    "times": times,
                    "labels": labels,
                    "color": color,
                    "mode": mode,
                    "size": size,
                }
            )
            return "ok"

        return as_tool(scale)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"times": 2}, "missing required argument(s) value"),
        ({}, "missing required argument(s) value, times"),
        ({"value": 1, "times": 2, "bogus": 1, "zzz": 2}, "unexpected argument(s) bogus, zzz"),
        ({"value": "1.5", "times": 2}, "argument 'value' should be a number"),
        ({"value": 1, "times": 2.5}, "argument 'times' should be an integer, got 2.5"),
        ({"value": 1, "times": True}, "argument 'times' should be an integer, got true"),
        ({"value": True, "times": 1}, "argument 'value' should be a number"),
        ({"value": 1, "times": None}, "argument 'times' should be an integer, got null"),
        ({"value": 1, "times": 1, "labels": "a"}, "argument 'labels'"),
        ({"value": 1, "times": 1, "labels": ["a", 2]}, "argument 'labels'"),
        ({"value": 1, "times": 1, "color": "blue"}, "argument 'color' should be one of \"red\""),
        ({"value": 1, "times": 1, "mode": "sideways"}, "argument 'mode' should be one of"),
        ({"value": 1, "times": 1, "size": 3}, "argument 'size' should be one of 1, 2 or null"),
    ],
)
async def test_bad_arguments_fail_without_calling_the_function(
    arguments: dict[str, Any], expected: str
) -> None:
    recorder = Recorder()
    result = await invoke(recorder.make(), **arguments)
    assert result.success is False
    assert result.content.startswith("Invalid arguments for scale: ")
    assert expected in result.content
    assert recorder.calls == []


async def test_good_arguments_reach_the_function_converted() -> None:
    recorder = Recorder()
    scale = recorder.make()
    assert await invoke(scale, value=2, times=3) == ToolResult("ok", True)
    assert await invoke(
        scale, value=0.5, times=1, labels=["a", "b"], color="green", mode="down", size=2
    ) == ToolResult("ok", True)
    # Optional parameters accept an explicit null, as the schema says.
    assert await invoke(scale, value=1, times=1, labels=None, size=None) == ToolResult("ok", True)
    assert recorder.calls == [
        {"value": 2, "times": 3, "labels": None, "color": Color.RED, "mode": "up", "size": None},
        {
            "value": 0.5,
            "times": 1,
            "labels": ["a", "b"],
            "color": Color.GREEN,
            "mode": "down",
            "size": Size.LARGE,
        },
        {"value": 1, "times": 1, "labels": None, "color": Color.RED, "mode": "up", "size": None},
    ]
    assert recorder.calls[1]["color"] is Color.GREEN  # the member, not the raw string
    assert recorder.calls[1]["size"] is Size.LARGE


async def test_kwargs_function_accepts_extra_arguments() -> None:
    seen: dict[str, Any] = {}

    def flexible(a: int, **extra: Any) -> None:
        seen.update(a=a, **extra)

    assert await invoke(as_tool(flexible), a=1, b="x") == ToolResult("", True)
    assert seen == {"a": 1, "b": "x"}
    missing = await invoke(as_tool(flexible), b="x")
    assert missing.success is False and "a" in missing.content


async def test_tool_gets_a_mutable_copy_of_the_arguments() -> None:
    def mutate(items: list[str]) -> int:
        items.append("added by tool")
        return len(items)

    the_call = ToolCall("c", "mutate", {"items": ["one"]})
    result = await asyncio.wait_for(as_tool(mutate).invoke(the_call), 10)
    assert result == ToolResult("2", True)
    assert the_call.arguments_dict() == {"items": ["one"]}
