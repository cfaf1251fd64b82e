"""A tool's image end to end: a real stdio MCP server (written here, with the ``mcp`` package)
returns a screenshot, the app's services run the request against the provider simulator on
127.0.0.1, and the simulator's record of what it received shows the image in each protocol's
wire form — or, for a model not known to read images, not at all, with the text saying why.
Resuming after the model call that followed the tool failed rebuilds the same request from
the database (image included) and never runs the tool again."""

from __future__ import annotations

import base64
import dataclasses
import json
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from app import EventType, ProviderAuthError, ResumeKind, ToolMessage
from app.model import Model
from app.parts import ImagesNotReadError
from app.providers.anthropic import AnthropicModel
from app.providers.openai import OpenAICompatibleModel
from app.services import AppServices, McpServerConfig
from app.simulator import Reply, SimToolCall, Simulator

from .images import png

SERVER = textwrap.dedent(
    '''
    """A screenshot tool: text and one PNG (read from the state folder); each call logged."""
    import sys
    from pathlib import Path

    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.utilities.types import Image

    STATE = Path(sys.argv[1])
    server = MCPServer("shots")


    @server.tool()
    def shot():
        """Take a screenshot."""
        with open(STATE / "calls.log", "a", encoding="utf-8") as log:
            log.write("shot\\n")
        return ["Took a screenshot.", Image(data=(STATE / "shot.png").read_bytes(), format="png")]


    server.run("stdio")
    '''
)

SHOT = png(64, 48)
ASK = "Take a screenshot"


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[AppServices]:
    state = tmp_path / "state"
    state.mkdir()
    (state / "shot.png").write_bytes(SHOT)
    script = tmp_path / "shots_server.py"
    script.write_text(SERVER, encoding="utf-8")
    svc = AppServices(tmp_path / "data")
    await svc.open()
    await svc.start_simulator(tokens_per_second=0)
    await svc.configure_model()
    config = dataclasses.replace(
        McpServerConfig("shots", sys.executable, (str(script), str(state))),
        side_effects=False,  # no approval asked: these tests are about what the model gets
    )
    svc.save_settings(dataclasses.replace(svc.settings, mcp_servers=(config,)))
    svc.start_mcp_servers()
    assert await svc.mcp_ready() == []
    yield svc
    await svc.close()


def _sim(services: AppServices) -> Simulator:
    assert services._simulator is not None
    return services._simulator


def _use(services: AppServices, protocol: str, model: str) -> Model:
    sim = _sim(services)
    if protocol == "anthropic":
        services.client.model = AnthropicModel(sim.base_url, model)
    else:
        services.client.model = OpenAICompatibleModel(sim.openai_base_url, model)
    return services.client.model


async def _ask(services: AppServices, session_id: str, *replies: Reply | str) -> str:
    _sim(services).enqueue(*replies)
    events = [e async for e in services.stream(session_id, ASK)]
    assert events[-1].type is EventType.RUN_COMPLETED, events[-1]
    return str(events[-1].reply.content)  # type: ignore[attr-defined]


def _last_body(services: AppServices) -> dict[str, Any]:
    body: dict[str, Any] = _sim(services).model_requests()[-1].json()
    return body


SHOT_CALL = Reply(tool_calls=(SimToolCall("shots__shot", {}, id="call_1"),))
URL = "data:image/png;base64," + base64.b64encode(SHOT).decode()
LINE = f"Took a screenshot.\n[image 1: image/png, 64×48, {len(SHOT)} bytes]"


def _calls(tmp_path: Path) -> list[str]:
    return (tmp_path / "state" / "calls.log").read_text(encoding="utf-8").splitlines()


async def test_openai_gets_the_image_in_a_user_turn_after_the_tool_turn(
    services: AppServices, tmp_path: Path
) -> None:
    _use(services, "openai", "gpt-4o")
    session = await services.new_session()
    reply = await _ask(services, session.id, SHOT_CALL, Reply())
    # The simulator decoded the image it got (the echo names it): the bytes crossed the wire.
    assert reply == "(1 image: 64×48 PNG) The image 1 of the result of tool call call_1 " + (
        "(shots__shot):"
    )
    messages = _last_body(services)["messages"]
    assert messages[-2:] == [
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": LINE + "\n[The image 1 of this result: in the next user message.]",
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "The image 1 of the result of tool call call_1 (shots__shot):",
                },
                {"type": "image_url", "image_url": {"url": URL}},
            ],
        },
    ]
    saved = [m for m in await services.history(session.id) if isinstance(m, ToolMessage)]
    assert saved[0].content == LINE and saved[0].images[0].data == SHOT
    assert _calls(tmp_path) == ["shot"]


async def test_anthropic_gets_the_image_inside_the_tool_result(
    services: AppServices, tmp_path: Path
) -> None:
    _use(services, "anthropic", "claude-sonnet-4-5")
    session = await services.new_session()
    reply = await _ask(services, session.id, SHOT_CALL, Reply())
    assert reply == f"(1 image: 64×48 PNG) {ASK}"
    last = _last_body(services)["messages"][-1]
    assert last == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "call_1",
                "content": [
                    {"type": "text", "text": LINE},
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": "image/png",
                            "data": base64.b64encode(SHOT).decode(),
                        },
                    },
                ],
            }
        ],
    }
    assert _calls(tmp_path) == ["shot"]


@pytest.mark.parametrize(
    ("protocol", "model", "why"),
    [
        ("openai", "gpt-3.5-turbo", "does not read images"),
        ("openai", "sim-echo", "is not known to read images"),
        ("anthropic", "claude-2.1", "does not read images"),
        ("anthropic", "sim-claude", "is not known to read images"),
    ],
)
async def test_a_model_not_known_to_read_images_gets_the_text_saying_why(
    services: AppServices, protocol: str, model: str, why: str
) -> None:
    _use(services, protocol, model)
    session = await services.new_session()
    reply = await _ask(services, session.id, SHOT_CALL, Reply())
    assert reply == ASK  # the simulator saw no image
    body = json.dumps(_last_body(services))
    assert "base64" not in body and "image_url" not in body
    note = f"[Image 1 of this result was not sent to you: the model {model!r} {why}.]"
    tool_text = (
        _last_body(services)["messages"][-1]["content"][0]["content"]
        if protocol == "anthropic"
        else _last_body(services)["messages"][-1]["content"]
    )
    assert tool_text == f"{LINE}\n{note}"
    # The image is still saved (a later model that reads images gets it).
    saved = [m for m in await services.history(session.id) if isinstance(m, ToolMessage)]
    assert saved[0].images[0].data == SHOT


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
async def test_resume_rebuilds_the_same_request_from_the_database_and_runs_no_tool_again(
    services: AppServices, tmp_path: Path, protocol: str
) -> None:
    vision = "gpt-4o" if protocol == "openai" else "claude-sonnet-4-5"
    _use(services, protocol, vision)
    session = await services.new_session()
    # The tool runs, then the model call after it fails (401: not retried).
    _sim(services).enqueue(SHOT_CALL, "status=401")
    with pytest.raises(ProviderAuthError):
        _ = [e async for e in services.stream(session.id, ASK)]
    failed = _last_body(services)["messages"]
    assert base64.b64encode(SHOT).decode() in json.dumps(failed)  # the image was in it
    await services.close()

    # A new start on the same data folder: the history (and the image's bytes) from SQLite.
    again = AppServices(tmp_path / "data")
    await again.open()
    try:
        await again.start_simulator(tokens_per_second=0)
        _use(again, protocol, vision)
        point = await again.client.resume_point(session.id)
        assert point is not None and point.kind is ResumeKind.CALL_MODEL
        _sim(again).enqueue(Reply(text="A screenshot."))
        events = [e async for e in again.stream_resume(session.id)]
        assert events[-1].type is EventType.RUN_COMPLETED, events[-1]
        assert _last_body(again)["messages"] == failed
    finally:
        await again.close()
    assert _calls(tmp_path) == ["shot"]  # the tool ran once


async def test_a_server_refusing_a_tools_image_is_explained_and_another_model_goes_on(
    services: AppServices, tmp_path: Path
) -> None:
    # "llava" reads images by the names' table, but this server says it cannot ("text").
    _use(services, "openai", "llava-text")
    session = await services.new_session()
    _sim(services).enqueue(SHOT_CALL)
    with pytest.raises(ImagesNotReadError, match="refused the images a tool returned") as err:
        _ = [e async for e in services.stream(session.id, ASK)]
    assert "Choose another model" in str(err.value) and "remove" not in str(err.value)
    # Resumed with a model not known to read images: the text alone, and the tool not rerun.
    other = OpenAICompatibleModel(_sim(services).openai_base_url, "sim-echo")
    _sim(services).enqueue(Reply(text="Done."))
    events = [e async for e in services.stream_resume(session.id, model=other)]
    assert events[-1].type is EventType.RUN_COMPLETED, events[-1]
    assert "image_url" not in json.dumps(_last_body(services))
    assert _calls(tmp_path) == ["shot"]
