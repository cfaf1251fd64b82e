"""MCP servers through the app's services: a real data folder, the real simulator and real MCP
servers over stdio (``tests/fixtures/mcp_servers/raw_server.py``, a hand-written JSON-RPC
server, and ``tests/fixtures/mcp_server.py``, one built with the ``mcp`` package)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import keyring
import pytest

from app import EventType, FunctionTool, ToolCall, ToolMessage, __version__
from app.services import AppServices, McpServerConfig
from app.services.approval import ApprovalDecision
from app.services.mcp import McpServers, ServerState
from app.services.mcp_server import McpServer, restart_delay
from app.simulator import Reply, SimToolCall
from app.tools.mcp_results import MAX_RESULT_CHARS
from tests.memory_keyring import MemoryKeyring

RAW = Path(__file__).resolve().parents[2] / "fixtures" / "mcp_servers" / "raw_server.py"


def raw(state: Path, name: str = "raw", *extra: str, **fields: object) -> McpServerConfig:
    return dataclasses.replace(
        McpServerConfig(name, sys.executable, (str(RAW), str(state), *extra)),
        side_effects=False,  # no approval asked: these tests are about what comes back
        **fields,  # type: ignore[arg-type]
    )


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[AppServices]:
    svc = AppServices(tmp_path / "data")
    await svc.open()
    await svc.start_simulator(tokens_per_second=0)
    await svc.configure_model()
    yield svc
    await svc.close()


async def use_servers(services: AppServices, *servers: McpServerConfig) -> list[str]:
    services.save_settings(dataclasses.replace(services.settings, mcp_servers=servers))
    services.start_mcp_servers()
    return await services.mcp_ready()


async def ask(services: AppServices, session_id: str, text: str, *replies: Reply) -> None:
    assert services._simulator is not None
    services._simulator.enqueue(*replies)
    events = [e async for e in services.stream(session_id, text)]
    assert events[-1].type is EventType.RUN_COMPLETED, events[-1]


def request_sizes(services: AppServices) -> list[int]:
    assert services._simulator is not None
    return [len(r.body) for r in services._simulator.model_requests()]


def database_size(services: AppServices) -> int:
    return sum(
        p.stat().st_size
        for p in services.data_dir.iterdir()
        if ".sqlite" in p.name or ".db" in p.name
    )


async def test_a_5_mb_result_is_cut_and_the_conversation_stays_usable(
    services: AppServices, tmp_path: Path
) -> None:
    assert await use_servers(services, raw(tmp_path / "state")) == []
    session = await services.new_session("big")
    before = database_size(services)
    five_mb = 5_000_000
    await ask(
        services,
        session.id,
        "Read the big file",
        Reply(text="Reading.", tool_calls=(SimToolCall("raw__big", {"chars": five_mb}, id="b1"),)),
        Reply(text="It is long."),
    )
    result = next(m for m in await services.history(session.id) if isinstance(m, ToolMessage))
    assert result.success
    assert len(result.content) < MAX_RESULT_CHARS + 1_000
    assert result.content.startswith("x" * 63 + "\n")
    assert "5,000,000 characters (5.0 MB)" in result.content
    assert "call the tool again for a smaller part" in result.content
    # What the provider got after the tool, and with a later question, stays small.
    await ask(services, session.id, "And now?", Reply(text="Fine."))
    sizes = request_sizes(services)
    assert max(sizes) < 150_000, sizes
    # The database grew by the capped result, not by megabytes.
    assert database_size(services) - before < 1_000_000


async def test_a_result_under_the_cap_is_whole(services: AppServices, tmp_path: Path) -> None:
    small = raw(tmp_path / "state", max_result_chars=5_000)
    assert await use_servers(services, small) == []
    session = await services.new_session("small")
    await ask(
        services,
        session.id,
        "Two reads",
        Reply(
            tool_calls=(
                SimToolCall("raw__big", {"chars": 5_000}, id="b1"),
                SimToolCall("raw__big", {"chars": 5_001}, id="b2"),
            )
        ),
        Reply(text="Done."),
    )
    whole, cut = sorted(
        (m for m in await services.history(session.id) if isinstance(m, ToolMessage)),
        key=lambda m: m.tool_call_id,  # the calls ran side by side: b1 then b2
    )
    assert len(whole.content) == 5_000 and "Continuum cut" not in whole.content
    assert "Continuum cut this result" in cut.content and "5,001 characters" in cut.content
    assert cut.content.startswith(whole.content[:4_992])


async def test_a_50_mb_answer_is_refused_quickly_and_the_server_goes_on(
    services: AppServices, tmp_path: Path
) -> None:
    # Before the bounded transport, reading this took 37 s (the mcp client re-split its whole
    # buffer on each chunk): longer than the 30 s deadline, so it failed as "stopped responding".
    assert await use_servers(services, raw(tmp_path / "state")) == []
    session = await services.new_session("huge")
    await ask(
        services,
        session.id,
        "Read the huge file, then echo",
        Reply(tool_calls=(SimToolCall("raw__big", {"chars": 50_000_000}, id="h1"),)),
        Reply(tool_calls=(SimToolCall("raw__echo", {"text": "still here"}, id="e1"),)),
        Reply(text="Done."),
    )
    huge, echo = [m for m in await services.history(session.id) if isinstance(m, ToolMessage)]
    assert not huge.success
    assert "The MCP server 'raw' could not run 'big'" in huge.content
    assert "its answer was 50.8 MB, more than the 8.0 MB" in huge.content
    assert "stopped responding" not in huge.content
    assert echo.success and echo.content == "echo: still here"
    assert max(request_sizes(services)) < 20_000


async def test_servers_whose_names_look_alike_keep_all_their_tools(
    services: AppServices, tmp_path: Path
) -> None:
    names = [
        "my files",
        "my.files",
        "company-internal-knowledge-base-staging",
        "company-internal-knowledge-base-production",
        "файлы",
    ]
    configs = [raw(tmp_path / f"state{i}", name) for i, name in enumerate(names)]
    assert await use_servers(services, *configs) == []
    echoes = sorted(t.name for t in services.mcp_tools if t.name.endswith("__echo"))
    assert len(echoes) == len(names), echoes  # none dropped
    assert {
        "company-internal-knowl_2__echo",
        "company-internal-knowled__echo",
        "my_files__echo",
        "my_files_2__echo",
    } < set(echoes)
    (other,) = [e for e in echoes if e.startswith("mcp_")]  # "файлы": a digest, not ____
    assert "___" not in other
    per_server = {
        source.config.name: next(t.name for t in source.tools if t.name.endswith("__echo"))
        for source in services.mcp_sources
    }
    session = await services.new_session("alike")
    calls = tuple(
        SimToolCall(per_server[name], {"text": name}, id=f"e{i}") for i, name in enumerate(names)
    )
    await ask(services, session.id, "Echo on each", Reply(tool_calls=calls), Reply(text="Done."))
    results = [m for m in await services.history(session.id) if isinstance(m, ToolMessage)]
    assert sorted(m.content for m in results) == sorted(f"echo: {name}" for name in names)
    for i in range(len(names)):  # each call went to its own server
        assert (tmp_path / f"state{i}" / "calls.log").read_text().split() == ["echo"]


async def test_tools_that_only_run_as_tasks_are_not_offered_and_that_is_said(
    services: AppServices, tmp_path: Path
) -> None:
    problems = await use_servers(services, raw(tmp_path / "state", "raw", "--task-tools"))
    assert problems == [
        "The MCP server 'raw' has 1 tool(s) that only run as tasks, which Continuum cannot run "
        "yet, so the model is not offered them: needs_task."
    ]
    names = {t.name for t in services.mcp_tools}
    assert "raw__needs_task" not in names
    assert {"raw__echo", "raw__maybe_task", "raw__big"} <= names  # "optional" runs without one
    session = await services.new_session("tasks")
    await ask(
        services,
        session.id,
        "Maybe a task",
        Reply(tool_calls=(SimToolCall("raw__maybe_task", {}, id="t1"),)),
        Reply(text="Done."),
    )
    assert services._simulator is not None
    offered = {
        tool["function"]["name"] for tool in services._simulator.model_requests()[0].json()["tools"]
    }
    assert "raw__needs_task" not in offered and "raw__maybe_task" in offered
    (ran,) = [m for m in await services.history(session.id) if isinstance(m, ToolMessage)]
    assert ran.success and ran.content == "ran without a task"


@pytest.mark.parametrize(
    ("failures", "delay"), [(0, 0.0), (1, 0.0), (2, 1.0), (3, 2.0), (5, 8.0), (8, 60.0), (30, 60.0)]
)
def test_restart_back_off(failures: int, delay: float) -> None:
    assert restart_delay(failures) == delay


def server_named(services: AppServices, name: str) -> McpServer:
    return next(s for s in services._mcp.servers if s.config.name == name)


async def exited(server: McpServer) -> None:
    """Wait until the watcher has seen the process end."""
    assert server._watching is not None
    await asyncio.wait_for(asyncio.shield(server._watching), 10)


async def test_a_crashed_server_is_restarted_by_the_next_call(
    services: AppServices, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    assert await use_servers(services, raw(state)) == []
    session = await services.new_session("crash")
    await ask(
        services,
        session.id,
        "Crash, then echo",
        Reply(tool_calls=(SimToolCall("raw__crash", {}, id="c1"),)),
        Reply(tool_calls=(SimToolCall("raw__echo", {"text": "back"}, id="e1"),)),
        Reply(text="Done."),
    )
    crash, echo = [m for m in await services.history(session.id) if isinstance(m, ToolMessage)]
    assert not crash.success and "stopped responding" in crash.content
    assert "crashing on purpose" in crash.content  # its last output, in the result
    assert echo.success and echo.content == "echo: back"
    assert (state / "starts").read_text().split() == ["started", "started"]
    (status,) = services.mcp_statuses()
    assert status.state is ServerState.RUNNING and status.restarts == 1 and status.tools == 6


async def test_while_it_may_not_restart_its_tools_are_not_offered_and_restart_brings_them(
    services: AppServices, tmp_path: Path
) -> None:
    services._mcp = McpServers(delay=lambda failures: 3600.0)
    state = tmp_path / "state"
    assert await use_servers(services, raw(state)) == []
    notices: list[str] = []
    services.notify = notices.append
    session = await services.new_session("down")
    await ask(
        services,
        session.id,
        "Crash",
        Reply(tool_calls=(SimToolCall("raw__crash", {}, id="c1"),)),
        Reply(tool_calls=(SimToolCall("raw__echo", {"text": "x"}, id="e1"),)),
        Reply(text="Done."),
    )
    server = server_named(services, "raw")
    await exited(server)
    _, echo = [m for m in await services.history(session.id) if isinstance(m, ToolMessage)]
    assert not echo.success
    assert "The MCP server 'raw' exited" in echo.content
    assert "try to restart it in 3600 s" in echo.content
    (status,) = services.mcp_statuses()
    assert status.state is ServerState.EXITED and status.tools == 0
    assert "crashing on purpose" in status.last_output
    assert services.mcp_problems == [status.problem]

    await ask(services, session.id, "Anything?", Reply(text="No tools."))
    assert services._simulator is not None
    offered = services._simulator.model_requests()[-1].json().get("tools") or []
    assert not [t for t in offered if t["function"]["name"].startswith("raw__")]
    assert notices[-1] == (
        "This answer is without the tools of some MCP servers (not running: 'raw' "
        "(see Settings → MCP servers))."
    )
    assert (state / "starts").read_text().split() == ["started"]  # no restart: back-off

    task = services.restart_mcp_server("raw")
    assert task is not None
    await task
    assert services.mcp_statuses()[0].state is ServerState.RUNNING
    await ask(services, session.id, "And now?", Reply(text="Tools again."))
    offered = services._simulator.model_requests()[-1].json().get("tools") or []
    assert "raw__echo" in {t["function"]["name"] for t in offered}
    assert (state / "starts").read_text().split() == ["started", "started"]


async def test_a_request_uses_the_servers_ready_and_names_those_still_starting(
    services: AppServices, tmp_path: Path
) -> None:
    fast = raw(tmp_path / "fast", "fast")
    slow = raw(tmp_path / "slow", "slow", "--start-delay", "60")
    services.save_settings(dataclasses.replace(services.settings, mcp_servers=(fast, slow)))
    services.start_mcp_servers()
    await server_named(services, "fast").started()
    notices: list[str] = []
    services.notify = notices.append
    session = await services.new_session("hello")
    await ask(services, session.id, "hello", Reply(text="Hello."))  # no wait for 'slow'
    assert server_named(services, "slow").state is ServerState.STARTING
    assert notices == [
        "This answer is without the tools of some MCP servers (still starting: 'slow')."
    ]
    assert services._simulator is not None
    offered = {
        t["function"]["name"] for t in services._simulator.model_requests()[-1].json()["tools"]
    }
    assert "fast__echo" in offered and not [n for n in offered if n.startswith("slow__")]
    assert [s.state for s in services.mcp_statuses()] == [
        ServerState.RUNNING,
        ServerState.STARTING,
    ]


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


async def env_of(services: AppServices, tool: str, name: str) -> str:
    found = next(t for t in services.mcp_tools if t.name == tool)
    result = await found.invoke(ToolCall("v", tool, {"name": name}))
    assert result.success, result.content
    return result.content


async def test_a_server_gets_its_variables_its_secrets_from_the_keyring_and_the_locale(
    services: AppServices,
    tmp_path: Path,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    monkeypatch.setenv("CONTINUUM_TEST_OTHER_SECRET", "not for servers")
    memory_keyring.set_password("Continuum", "mcp:gh:GITHUB_TOKEN", "ghp_from_keyring")
    gh = dataclasses.replace(
        raw(tmp_path / "gh", "gh"), env={"PLAIN": "plain value"}, secret_env=("GITHUB_TOKEN",)
    )
    lost = dataclasses.replace(raw(tmp_path / "lost", "lost"), secret_env=("API_KEY",))
    caplog.set_level(logging.DEBUG)
    problems = await use_servers(services, gh, lost)
    assert problems == [
        "The MCP server 'lost' started without API_KEY: not in the keyring. Enter it again in "
        "Settings → MCP servers (or set it in Continuum's environment)."
    ]
    assert await env_of(services, "gh__env", "PLAIN") == "plain value"
    assert await env_of(services, "gh__env", "GITHUB_TOKEN") == "ghp_from_keyring"
    assert await env_of(services, "gh__env", "HTTPS_PROXY") == "http://proxy.example:3128"
    assert await env_of(services, "gh__env", "LC_ALL") == "de_DE.UTF-8"
    assert await env_of(services, "gh__env", "CONTINUUM_TEST_OTHER_SECRET") == "<unset>"
    assert await env_of(services, "lost__env", "API_KEY") == "<unset>"
    saved = (services.data_dir / "settings.json").read_text(encoding="utf-8")
    assert "GITHUB_TOKEN" in saved and "ghp_from_keyring" not in saved
    assert "ghp_from_keyring" not in caplog.text
    assert "ghp_from_keyring" not in repr(services._mcp.servers)


async def test_cancelling_the_wait_for_the_servers_leaves_them_starting() -> None:
    """The task ``start`` returns only waits: cancelling it (a request given up) neither stops
    the servers starting nor leaves a start half done."""
    servers = McpServers()
    waiting = servers.start((McpServerConfig("never-started", "/nonexistent/mcp-server"),))
    waiting.cancel()
    await asyncio.wait([waiting])
    assert waiting.cancelled()
    (server,) = servers.servers
    await server.started()
    assert server.state is ServerState.FAILED
    assert servers.problems and "'never-started' could not be started" in servers.problems[0]
    await servers.close()
    assert servers.servers == []


async def test_closing_cancelled_while_a_server_stops_propagates_the_cancel() -> None:
    """``close`` waits for each server to stop; the caller's own cancel still ends it."""
    servers = McpServers()
    stopping = asyncio.Event()
    release = asyncio.Event()

    class SlowToStop(McpServer):
        async def aclose(self) -> None:
            stopping.set()
            await release.wait()  # a server that takes its time to exit

    servers.servers = [SlowToStop(McpServerConfig("slow", "true"), "slow")]
    closing = asyncio.ensure_future(servers.close())
    await stopping.wait()
    closing.cancel()
    await asyncio.wait([closing])
    assert closing.cancelled()
    release.set()


async def test_what_servers_offer_is_used(services: AppServices, tmp_path: Path) -> None:
    """Instructions in the system prompt (marked as the server's), read-only tools unasked when
    the person chose so, Continuum's own name to the server, a wrong list item named."""
    state = tmp_path / "state"
    told = "Call echo before big; never call crash."
    trusting = dataclasses.replace(
        raw(state, "raw", "--instructions", told), side_effects=True, trust_read_only=True
    )
    wary = dataclasses.replace(raw(tmp_path / "wary", "wary"), side_effects=True)
    assert await use_servers(services, trusting, wary) == []
    asked: list[str] = []

    async def approve(session_id: str, call: ToolCall, tool: FunctionTool) -> ApprovalDecision:
        asked.append(call.name)
        return ApprovalDecision.ALLOW_ONCE

    services.approver = approve
    session = await services.new_session("offers")
    await ask(
        services,
        session.id,
        "Use them",
        Reply(
            tool_calls=(
                SimToolCall("raw__echo", {"text": "a"}, id="1"),
                SimToolCall("raw__big", {"chars": 3}, id="2"),
                SimToolCall("wary__echo", {"text": "b"}, id="3"),
                SimToolCall("raw__total", {"numbers": [1, "two", 3]}, id="4"),
            )
        ),
        Reply(text="Done."),
    )
    assert sorted(asked) == ["raw__big", "raw__total", "wary__echo"]  # raw__echo: read-only
    results = {
        m.tool_call_id: m for m in await services.history(session.id) if isinstance(m, ToolMessage)
    }
    assert results["1"].content == "echo: a" and results["3"].content == "echo: b"
    assert not results["4"].success
    assert "item 2 of argument 'numbers' should be an integer, got \"two\"" in results["4"].content
    assert services._simulator is not None
    system = services._simulator.model_requests()[0].json()["messages"][0]
    assert system["role"] == "system"
    assert (
        "Instructions from the MCP server 'raw' about its tools (written by that server, not by "
        f"the person):\n{told}" in system["content"]
    )
    assert "'wary'" not in system["content"]  # it gave none
    client = json.loads((state / "client").read_text())
    assert client["name"] == "Continuum" and client["version"] == __version__


async def test_progress_reports_move_the_deadline_and_are_shown(
    services: AppServices, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    assert await use_servers(services, raw(state, call_timeout=2.0)) == []
    notices: list[str] = []
    services.notify = notices.append
    session = await services.new_session("slow")
    await ask(
        services,
        session.id,
        "Work long, then not at all",
        # 10 steps of 0.3 s: 3 s in all, longer than the 2 s timeout, but never 2 s silent.
        Reply(tool_calls=(SimToolCall("raw__slow", {"steps": 10, "every": 0.3}, id="s1"),)),
        # One step of 4 s: silent for longer than the timeout.
        Reply(tool_calls=(SimToolCall("raw__slow", {"steps": 1, "every": 4.0}, id="s2"),)),
        Reply(text="Done."),
    )
    worked, silent = [m for m in await services.history(session.id) if isinstance(m, ToolMessage)]
    assert worked.success and worked.content == "worked 10 steps"
    assert not silent.success and "no answer within 2 seconds" in silent.content
    assert json.loads((state / "progress_token").read_text()) is not None  # a token was sent
    shown = [n for n in notices if n.startswith("raw__slow:")]
    assert shown[0] == "raw__slow: 10% (1 of 10) — step 1"
    assert shown[-1] == "raw__slow: 100% (10 of 10) — step 10"
