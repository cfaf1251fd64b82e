"""Interop with llama.cpp-family servers: what a tool-call turn looks like, and validation 500s.

1. An assistant turn that carries tool calls and no text is sent with ``"content": ""``.
   ``null`` is refused by llama-cpp-python 0.3.3+ (``content: NotRequired[str]``, HTTP 500) and
   by older Ollama ("invalid message content type: <nil>"); leaving the key out is refused by
   llama-cpp-python before 0.3.3 (``content: Optional[str]``, required) and older Ollama alike.
   A string is accepted by all of them and by OpenAI, vLLM and llama.cpp's server (see
   :data:`ACCEPTS`). A turn with text sends its text unchanged.
2. An HTTP 5xx whose body is a request-validation error (llama-cpp-python wraps FastAPI's
   ``RequestValidationError`` as a 500 ``internal_server_error``) is a bug in the request, not
   a server hiccup: it is not retried, and the message says the server rejected the request's
   format, names the field, and says this is worth reporting.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from app import (
    Agent,
    AgentRunConfig,
    AssistantMessage,
    ResumeKind,
    RetryPolicy,
    SQLiteSessionExtension,
    ToolMessage,
    UserMessage,
)
from app.errors import ProviderBadRequestError, ProviderError, ProviderServerError
from app.messages import Reasoning, StopReason, ToolCall
from app.providers import OpenAICompatibleModel, openai_messages
from app.providers.errors import error_from_response
from app.simulator import Reply, SimToolCall, Simulator

from .conftest import BOUND
from .test_quirks_errors import RecordedServer, saved

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=1.0)
CALL = ToolCall("call_0", "read_note", {"path": "todo.txt"})
WIRE_CALL = {
    "id": "call_0",
    "type": "function",
    "function": {"name": "read_note", "arguments": '{"path":"todo.txt"}'},
}
MISSING = object()


# --- what each server accepts for an assistant turn with tool calls ----------------------
# Each rule restates the server's request schema for the assistant message's ``content``
# (MISSING: the key is absent). Sources: OpenAI's API reference (string, array or null,
# optional with tool_calls); llama.cpp server common/chat.cpp (string, array or null; absent
# only with tool_calls); llama-cpp-python llama_types.ChatCompletionRequestAssistantMessage
# (``Optional[str]`` required before 0.3.3, ``NotRequired[str]`` since); vLLM (OpenAI's
# ``ChatCompletionAssistantMessageParam``: optional, nullable); Ollama openai.go (a string or
# an array; older releases refuse anything else, ``<nil>`` included).


def _string_or_list(content: object) -> bool:
    return isinstance(content, str | list)


ACCEPTS: dict[str, Callable[[object], bool]] = {
    "OpenAI": lambda c: c is MISSING or c is None or _string_or_list(c),
    "llama.cpp server": lambda c: c is MISSING or c is None or _string_or_list(c),
    "llama-cpp-python < 0.3.3": lambda c: c is None or isinstance(c, str),
    "llama-cpp-python >= 0.3.3": lambda c: c is MISSING or isinstance(c, str),
    "vLLM": lambda c: c is MISSING or c is None or _string_or_list(c),
    "Ollama (older releases)": _string_or_list,
}


def test_null_and_a_missing_key_are_each_refused_somewhere() -> None:
    """Why the empty string: neither of the other two spellings is accepted everywhere."""
    assert not all(rule(None) for rule in ACCEPTS.values())
    assert not all(rule(MISSING) for rule in ACCEPTS.values())
    assert all(rule("") for rule in ACCEPTS.values())


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (AssistantMessage("", (CALL,)),
         [{"role": "assistant", "content": "", "tool_calls": [WIRE_CALL]}]),
        (AssistantMessage("Let me read it.", (CALL,)),
         [{"role": "assistant", "content": "Let me read it.", "tool_calls": [WIRE_CALL]}]),
        (AssistantMessage("\n", (CALL,)),  # text is kept as the model wrote it
         [{"role": "assistant", "content": "\n", "tool_calls": [WIRE_CALL]}]),
        (AssistantMessage("", (CALL,), reasoning=(Reasoning("hmm"),)),  # reasoning never sent
         [{"role": "assistant", "content": "", "tool_calls": [WIRE_CALL]}]),
        (AssistantMessage("Done."), [{"role": "assistant", "content": "Done."}]),
        (AssistantMessage("", stop_reason=StopReason.INTERRUPTED), []),  # says nothing
        (AssistantMessage("", reasoning=(Reasoning("hmm"),)), []),
    ],
)  # fmt: skip
def test_openai_assistant_turns(message: AssistantMessage, expected: list[Any]) -> None:
    out = openai_messages([message], None)
    assert out == expected
    for turn in out:
        content = turn.get("content", MISSING)
        refused_by = [name for name, rule in ACCEPTS.items() if not rule(content)]
        assert refused_by == [], f"{content!r} is refused by {refused_by}"


# --- the request body as the server receives it -------------------------------------------


@pytest.fixture
async def sim_agent(
    tmp_path: Path,
) -> AsyncIterator[Callable[[], Any]]:
    """``make()``: a simulator and an Agent on a real SQLite file talking to it."""
    sims: list[Simulator] = []
    closers: list[Any] = []

    async def make() -> tuple[Simulator, Agent, Path]:
        sim = Simulator()
        async with asyncio.timeout(BOUND):
            await sim.start()
        sims.append(sim)
        model = OpenAICompatibleModel(sim.openai_base_url, "sim-echo", "sk-test-1234567",
                                      timeout=5)  # fmt: skip
        db = tmp_path / "continuum.sqlite"
        extension = SQLiteSessionExtension(db)
        closers.extend([model.aclose, extension.storage.close])

        def read_note(path: str) -> str:
            """Read a note."""
            return "buy milk"

        agent = await Agent.create(model, config=AgentRunConfig("s1", retry=FAST),
                                   tools=[read_note], extensions=[extension])  # fmt: skip
        return sim, agent, db

    yield make
    async with asyncio.timeout(BOUND):
        for close in closers:
            await close()
        for sim in sims:
            await sim.stop()


@pytest.mark.parametrize("text", ["", "Let me read it."])
async def test_tool_call_turn_is_sent_back_with_string_content(
    text: str, sim_agent: Callable[[], Any]
) -> None:
    sim, agent, db = await sim_agent()
    sim.enqueue(Reply(text=text, tool_calls=(SimToolCall("read_note", {"path": "todo.txt"},
                                                         id="call_0"),)),
                Reply(text="The note says: buy milk."))  # fmt: skip
    async with asyncio.timeout(BOUND):
        reply = await agent.run("what does my note say?")
    assert reply.content == "The note says: buy milk."
    first, second = sim.model_requests()
    sent = [m for m in second.json()["messages"] if m["role"] == "assistant"]
    assert sent == [{"role": "assistant", "content": text, "tool_calls": [WIRE_CALL]}]
    history = await saved(db)
    assert [type(m) for m in history] == [UserMessage, AssistantMessage, ToolMessage,
                                          AssistantMessage]  # fmt: skip
    step = history[1]
    assert isinstance(step, AssistantMessage) and step.content == text


# --- a validation 500 from recorded bytes, through Agent + SQLite ------------------------


@pytest.fixture
async def server() -> AsyncIterator[RecordedServer]:
    item = RecordedServer()
    await item.start()
    yield item
    async with asyncio.timeout(BOUND):
        await item.stop()


async def test_llama_cpp_python_validation_500_is_not_retried(
    server: RecordedServer, tmp_path: Path
) -> None:
    server.serve("llama-cpp-python-0.3-500-validation-content-null")
    db = tmp_path / "continuum.sqlite"
    extension = SQLiteSessionExtension(db)
    model = OpenAICompatibleModel(f"{server.url}/v1", "m", "sk-test-1234567", timeout=5)
    try:
        agent = await Agent.create(model, config=AgentRunConfig("s1", retry=FAST),
                                   extensions=[extension])  # fmt: skip
        async with asyncio.timeout(BOUND):
            with pytest.raises(ProviderError) as caught:
                await agent.run("what does my note say?")
        history = await saved(db)
        point = await agent.resume_point()
    finally:
        async with asyncio.timeout(BOUND):
            await model.aclose()
            await extension.storage.close()
    err = caught.value
    assert isinstance(err, ProviderBadRequestError) and not err.retryable
    assert err.status_code == 500
    text = str(err)
    assert "rejected the request's format" in text
    assert "messages[1].content" in text and "Input should be a valid string" in text
    assert "worth reporting" in text
    assert "try again shortly" not in text and "provider's side" not in text
    assert "sk-test" not in text
    assert len(server.requests) == 1  # not retried
    assert [type(m) for m in history] == [UserMessage]
    assert point is not None and point.kind is ResumeKind.CALL_MODEL


# --- the decision, by table ---------------------------------------------------------------

_UNION_ERRORS = (
    "[{'type': 'literal_error', 'loc': ('body', 'messages', 2, "
    "'ChatCompletionRequestSystemMessage', 'role'), 'msg': \"Input should be 'system'\", "
    "'input': 'assistant', 'ctx': {'expected': \"'system'\"}}, {'type': 'string_type', "
    "'loc': ('body', 'messages', 2, 'ChatCompletionRequestAssistantMessage', 'content'), "
    "'msg': 'Input should be a valid string', 'input': None}, {'type': 'missing', 'loc': "
    "('body', 'messages', 2, 'ChatCompletionRequestToolMessage', 'tool_call_id'), "
    "'msg': 'Field required', 'input': {'role': 'assistant', 'content': None}}]"
)


@pytest.mark.parametrize(
    ("status", "body", "field"),
    [
        # llama-cpp-python with FastAPI < 0.124: str() of the error list.
        (500, json.dumps({"error": {"message": _UNION_ERRORS, "type": "internal_server_error",
                                    "param": None, "code": None}}),
         "messages[2].content: Input should be a valid string"),
        # FastAPI's own shape (a handler that answers 500 with it).
        (500, '{"detail": [{"loc": ["body", "messages", 1, "content"], '
              '"msg": "Input should be a valid string", "type": "string_type"}]}',
         "messages[1].content: Input should be a valid string"),
        # pydantic's text, as a plain body.
        (500, "1 validation error for ChatRequest\nmessages.1.content\n  Input should be a "
              "valid string [type=string_type, input_value=None, input_type=NoneType]",
         "messages[1].content: Input should be a valid string"),
        # a validation error with no location still is one.
        (503, '{"error": {"message": "2 validation errors for Request"}}', None),
    ],
)  # fmt: skip
def test_validation_5xx_is_a_request_bug(status: int, body: str, field: str | None) -> None:
    err = error_from_response(status, {}, body, provider="P", model="m", url="u")
    assert type(err) is ProviderBadRequestError and not err.retryable
    assert err.status_code == status
    text = str(err)
    assert "rejected the request's format" in text and "worth reporting" in text
    if field is not None:
        assert field in text
    assert "try again" not in text.lower()


@pytest.mark.parametrize(
    "body",
    [
        '{"error": {"message": "CUDA out of memory", "type": "internal_server_error"}}',
        "Internal Server Error",
        '{"detail": "Internal Server Error"}',
        '{"error": {"message": "the validation of the slot failed, please retry"}}',
        # FastAPI's ResponseValidationError: the server's own answer failed, not the request.
        json.dumps(
            {
                "error": {
                    "message": "1 validation error:\n  {'type': 'missing', 'loc': "
                    "('response', 'choices', 0, 'message', 'refusal'), 'msg': 'Field "
                    "required', 'input': {}}",
                    "type": "internal_server_error",
                }
            }
        ),
    ],
)
def test_other_5xx_are_still_retried(body: str) -> None:
    err = error_from_response(500, {}, body, provider="P", model="m", url="u")
    assert type(err) is ProviderServerError and err.retryable


def test_validation_4xx_names_the_field() -> None:
    body = ('{"detail": [{"loc": ["body", "stream_options"], "msg": "Extra inputs are not '
            'permitted", "type": "extra_forbidden"}]}')  # fmt: skip
    err = error_from_response(422, {}, body, provider="P", model="m", url="u")
    assert type(err) is ProviderBadRequestError and not err.retryable
    assert "stream_options: Extra inputs are not permitted" in str(err)


def test_validation_body_wins_over_x_should_retry() -> None:
    """The same body would fail the same way, whatever the header says."""
    body = '{"detail": [{"loc": ["body", "messages"], "msg": "Field required"}]}'
    err = error_from_response(500, {"x-should-retry": "true"}, body, provider="P", model="m",
                              url="u")  # fmt: skip
    assert type(err) is ProviderBadRequestError and not err.retryable
    assert "field messages: Field required" in str(err)
