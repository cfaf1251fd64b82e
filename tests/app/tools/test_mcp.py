"""MCP tools against a real MCP server over stdio (``tests/fixtures/mcp_server.py``).

The server is a child process; it writes its pid and a log of side-effecting calls into a state
folder, so the tests can check that it is gone after closing and how often a tool really ran.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from app import (
    Agent,
    AgentRunConfig,
    ResumeKind,
    SQLiteSessionExtension,
    ToolCall,
    ToolMessage,
)
from app.resume import RECOVERED_TOOL_TEXT
from app.testing import ScriptedModel, text_step, tool_step
from app.tools.mcp import (
    McpServerConfig,
    McpServerError,
    McpToolSource,
    mcp_tool_name,
)

SERVER = Path(__file__).resolve().parents[2] / "fixtures" / "mcp_server.py"
ROOT = Path(__file__).resolve().parents[3]


def config(state: Path, *, name: str = "fixture", call_timeout: float = 10.0) -> McpServerConfig:
    return McpServerConfig(
        name, sys.executable, (str(SERVER), str(state)), call_timeout=call_timeout
    )


def calls(state: Path) -> list[str]:
    log = state / "calls.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def gone(pid: int) -> bool:
    """True once the process has exited and been reaped (no zombie left)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def tool_named(source: McpToolSource, name: str):  # type: ignore[no-untyped-def]
    return next(t for t in source.tools if t.name == name)


async def invoke(source: McpToolSource, name: str, **arguments: object):  # type: ignore[no-untyped-def]
    return await tool_named(source, name).invoke(ToolCall("c1", name, dict(arguments)))


def test_names_fit_providers() -> None:
    assert mcp_tool_name("files", "read") == "files__read"
    assert mcp_tool_name("my server", "get.weather") == "my_server__get_weather"
    long = mcp_tool_name("s", "x" * 100)
    assert len(long) == 64
    assert mcp_tool_name("s", "x" * 100, {long}) != long
    assert len(mcp_tool_name("s", "x" * 100, {long})) == 64
    with pytest.raises(ValueError):
        McpServerConfig("", "cmd")


async def test_lists_tools_and_calls_them(tmp_path: Path) -> None:
    async with McpToolSource(config(tmp_path)) as source:
        names = {t.name for t in source.tools}
        assert {"fixture__echo", "fixture__add", "fixture__dotted_name"} <= names
        echo = tool_named(source, "fixture__echo")
        assert echo.side_effects is True
        assert echo.parameters["required"] == ["text"]
        assert "Say the text back" in echo.description
        assert (await invoke(source, "fixture__echo", text="hi")).content == "echo: hi"
        assert (await invoke(source, "fixture__add", a=2, b=3)).content == "5"
        assert (await invoke(source, "fixture__dotted_name")).content == "dotted ok"
        picture = await invoke(source, "fixture__picture")
        # The fixture's "PNG" is a bare signature: a damaged image stays a line saying why.
        assert picture.success and not picture.images
        assert picture.content == (
            "a red dot\n[image (image/png, 12 bytes) not used: its size in pixels cannot be "
            "read from it, so it is probably damaged]"
        )
        bad = await invoke(source, "fixture__add", a="two", b=3)
        assert not bad.success and "Invalid arguments" in bad.content


async def test_error_result_is_failed_with_server_text(tmp_path: Path) -> None:
    async with McpToolSource(config(tmp_path)) as source:
        result = await invoke(source, "fixture__fail", message="disk is full")
        assert not result.success
        assert "disk is full" in result.content
        assert (await invoke(source, "fixture__echo", text="still fine")).success


async def test_crash_mid_call_fails_clearly_and_later_calls_too(tmp_path: Path) -> None:
    async with McpToolSource(config(tmp_path)) as source:
        pid = int((tmp_path / "pid").read_text())
        started = time.monotonic()
        result = await invoke(source, "fixture__crash")
        assert time.monotonic() - started < 5
        assert not result.success
        assert "The MCP server 'fixture' stopped responding while running 'crash'" in result.content
        assert "check its command in Settings" in result.content.replace("Check", "check")
        later = await invoke(source, "fixture__echo", text="again")
        assert not later.success and "'fixture' is not running" in later.content
        assert not source.alive
    assert gone(pid)


async def test_hang_times_out_in_bounded_time(tmp_path: Path) -> None:
    async with McpToolSource(config(tmp_path, call_timeout=0.5)) as source:
        started = time.monotonic()
        result = await invoke(source, "fixture__hang")
        assert time.monotonic() - started < 3
        assert not result.success
        assert (
            "stopped responding while running 'hang' (no answer within 0.5 seconds)"
            in result.content
        )
        # The server itself still answers other calls.
        assert (await invoke(source, "fixture__echo", text="x")).content == "echo: x"


async def test_cancelled_call_leaves_the_server_usable(tmp_path: Path) -> None:
    async with McpToolSource(config(tmp_path)) as source:
        task = asyncio.ensure_future(invoke(source, "fixture__hang"))
        while calls(tmp_path) != ["hang"]:  # noqa: ASYNC110 - the server writes a file
            await asyncio.sleep(0.02)
        task.cancel()  # the person pressed Stop while the tool ran
        with pytest.raises(asyncio.CancelledError):
            await task
        assert source.alive
        assert (await invoke(source, "fixture__echo", text="next")).content == "echo: next"


async def test_aclose_leaves_no_child_process(tmp_path: Path) -> None:
    source = McpToolSource(config(tmp_path, call_timeout=0.2))
    await source.start()
    pid = int((tmp_path / "pid").read_text())
    assert not gone(pid)
    await invoke(source, "fixture__hang")  # a call left running on the server
    started = time.monotonic()
    await source.aclose()
    assert time.monotonic() - started < 12
    assert gone(pid)
    await source.aclose()  # repeatable
    after = await invoke(source, "fixture__echo", text="x")
    assert not after.success and "not running" in after.content


async def test_bad_command_is_a_clear_error(tmp_path: Path) -> None:
    source = McpToolSource(
        McpServerConfig("broken", sys.executable, ("-c", "import sys; sys.exit(3)"))
    )
    with pytest.raises(
        McpServerError, match="'broken' could not be started.*check its command in Settings"
    ):
        await source.start()
    missing = McpToolSource(McpServerConfig("missing", str(tmp_path / "no-such-program")))
    with pytest.raises(McpServerError, match="'missing' could not be started"):
        await missing.start()


async def test_call_through_agent_on_sqlite(tmp_path: Path) -> None:
    storage = SQLiteSessionExtension(str(tmp_path / "chat.sqlite"))
    async with McpToolSource(config(tmp_path)) as source:
        model = ScriptedModel(
            [
                tool_step(ToolCall("call_1", "fixture__record", {"note": "hello"})),
                text_step("Recorded."),
            ]
        )
        agent = await Agent.create(
            model, AgentRunConfig("mcp"), tools=list(source.tools), extensions=[storage]
        )
        assert (await agent.run("Record hello")).content == "Recorded."
        history = await agent.history()
        assert ToolMessage("call_1", "fixture__record", "recorded hello") in history
        assert calls(tmp_path) == ["record hello"]
    await storage.storage.close()


CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from app import Agent, AgentRunConfig, SQLiteSessionExtension, ToolCall
    from app.tools.mcp import McpServerConfig, McpToolSource
    from app.testing import ScriptedModel, tool_step

    async def main(db, server, state):
        source = McpToolSource(McpServerConfig("fixture", sys.executable, (server, state)))
        await source.start()
        model = ScriptedModel([tool_step(
            ToolCall("call_m", "fixture__record_and_wait", {"note": "once"}))])
        agent = await Agent.create(model, AgentRunConfig("mcp-crash"), tools=source.tools,
                                   extensions=[SQLiteSessionExtension(db)])
        await agent.run("Record once")

    asyncio.run(main(*sys.argv[1:4]))
    """
)


async def test_kill9_during_mcp_call_recovers_without_calling_again(tmp_path: Path) -> None:
    db = str(tmp_path / "crash.sqlite")
    state = tmp_path / "server"
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, db, str(SERVER), str(state)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    server_pid = None
    try:
        deadline = time.monotonic() + 30
        while calls(state) != ["record_and_wait once"]:  # the MCP call is running on the server
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the MCP call never started"
            await asyncio.sleep(0.05)
        server_pid = int((state / "pid").read_text())
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()
        if server_pid is not None:  # it ran in its own session, so it outlived the agent
            try:
                os.kill(server_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert proc.returncode == -signal.SIGKILL

    storage = SQLiteSessionExtension(db)
    async with McpToolSource(config(state)) as source:
        model = ScriptedModel([text_step("It may or may not have been recorded; checking first.")])
        agent = await Agent.create(
            model, AgentRunConfig("mcp-crash"), tools=list(source.tools), extensions=[storage]
        )
        point = await agent.resume_point()
        assert point is not None and point.kind is ResumeKind.RECOVER_TOOLS
        assert [c.id for c in point.unanswered_tool_calls] == ["call_m"]
        reply = await agent.resume()
        assert reply.content.startswith("It may or may not")
        history = await agent.history()
        assert (
            ToolMessage("call_m", "fixture__record_and_wait", RECOVERED_TOOL_TEXT, success=False)
            in history
        )
    assert calls(state) == ["record_and_wait once"]  # resume never called the MCP tool again
    await storage.storage.close()
