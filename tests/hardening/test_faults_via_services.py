"""Every fault the simulator injects, end to end through ``AppServices`` (what the app's
controller drives): the history is left in the documented state, the stop record explains it in
words a person can act on (never a traceback or raw HTML), ``resume_info`` offers the right
resume kind or says why not, and resuming afterwards finishes with a clean journal.

Both wire protocols, over the real simulator and real provider classes with a short read
timeout, and a real database file.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from app import (
    AgentEvent,
    AgentRunConfig,
    AssistantMessage,
    EventType,
    ResumeKind,
    RetryPolicy,
    StopReason,
    UserMessage,
)
from app.errors import (
    IncompleteStreamError,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderContextLengthError,
    ProviderRateLimitError,
    ProviderServerError,
    ProviderStreamError,
    ProviderTimeoutError,
)
from app.model import Model
from app.providers import AnthropicModel, OpenAICompatibleModel
from app.services import AppServices
from app.settings import Settings
from app.simulator import BAD_ARGUMENTS, Fault, Reply, SimToolCall
from app.storage.journal import StopKind

LONG = "one two three four five six seven eight nine ten eleven twelve"
READ_TIMEOUT = 0.5
BOUND = 20.0

#: Words that tell a person what to do next; every failure message must carry one.
ACTIONABLE = re.compile(
    r"try again|resume|check|wait|start a new|shorten|settings|send a new|rephrase", re.IGNORECASE
)
#: What must never reach the person: tracebacks, Python reprs, HTML tags.
UNFIT = re.compile(r"Traceback|File \"|Error\(|<\s*/?\s*[A-Za-z!]")


def model_factory(protocol: str) -> Callable[[Settings], Model]:
    def make(settings: Settings) -> Model:
        if protocol == "openai":
            return OpenAICompatibleModel(settings.base_url, "sim-echo", timeout=READ_TIMEOUT)
        return AnthropicModel(
            settings.base_url.removesuffix("/v1"), "sim-claude", timeout=READ_TIMEOUT
        )

    return make


@pytest.fixture(params=["openai", "anthropic"])
async def services(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AppServices]:
    svc = AppServices(tmp_path / "data", model_factory=model_factory(request.param))
    async with asyncio.timeout(BOUND):
        await svc.open()
        await svc.start_simulator(tokens_per_second=0)
        await svc.configure_model()
    svc.client.defaults = AgentRunConfig(
        "default", retry=RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=1.0)
    )
    log = tmp_path / "side_effects.log"

    def note(tag: str) -> str:
        """Write a note (its side effect: a line in a log)."""
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(tag + "\n")
        return f"noted {tag}"

    svc.client.tools = (note,)
    svc.side_effects = log  # type: ignore[attr-defined]
    yield svc
    async with asyncio.timeout(BOUND):
        await svc.close()


@dataclass(frozen=True)
class Case:
    replies: tuple[Reply | Fault | str, ...]
    error: type[BaseException] | tuple[type[BaseException], ...] | None
    resume: ResumeKind | str  # a point kind, or the blocked reason word
    stop: StopKind | None
    says: tuple[str, ...] = field(default=())  # words the stop message must contain


BAD_CALL = SimToolCall("note", BAD_ARGUMENTS)
STREAM_BROKE = (ProviderConnectionError, ProviderStreamError, IncompleteStreamError)
CASES: dict[str, Case] = {
    "drop before output": Case(
        (Fault.drop_after(0),) * 2,
        ProviderConnectionError,
        ResumeKind.CALL_MODEL,
        StopKind.CONNECTION,
        ("connection",),
    ),
    "drop after 4 chunks": Case(
        (Reply(text=LONG, fault=Fault.drop_after(4)),),
        ProviderConnectionError,
        ResumeKind.RETRY_RESPONSE,
        StopKind.CONNECTION,
        ("connection",),
    ),
    "stall before output": Case(
        (Fault.stall_after(0),) * 2,
        ProviderTimeoutError,
        ResumeKind.CALL_MODEL,
        StopKind.CONNECTION,
        ("stopped responding",),
    ),
    "stall after output": Case(
        (Reply(text=LONG, fault=Fault.stall_after(4)),),
        ProviderTimeoutError,
        ResumeKind.RETRY_RESPONSE,
        StopKind.CONNECTION,
        ("stopped responding",),
    ),
    "429 with a long Retry-After": Case(
        (Fault.http_status(429, retry_after=30),),
        ProviderRateLimitError,
        ResumeKind.CALL_MODEL,
        StopKind.PROVIDER_ERROR,
        ("too many requests", "wait 30"),
    ),
    "500": Case(
        (Fault.http_status(500),) * 2,
        ProviderServerError,
        ResumeKind.CALL_MODEL,
        StopKind.PROVIDER_ERROR,
        ("HTTP 500",),
    ),
    "503": Case(
        (Fault.http_status(503),) * 2,
        ProviderServerError,
        ResumeKind.CALL_MODEL,
        StopKind.PROVIDER_ERROR,
        ("HTTP 503",),
    ),
    "529 overloaded": Case(
        (Fault.http_status(529),) * 2,
        ProviderServerError,
        ResumeKind.CALL_MODEL,
        StopKind.PROVIDER_ERROR,
        ("overloaded",),
    ),
    "HTML error page": Case(
        (Fault.html(502),) * 2,
        ProviderServerError,
        ResumeKind.CALL_MODEL,
        StopKind.PROVIDER_ERROR,
        ("HTML page", "502 Bad Gateway"),
    ),
    "malformed SSE before output": Case(
        (Fault.malformed_after(0),) * 2,
        STREAM_BROKE,
        ResumeKind.CALL_MODEL,
        StopKind.CONNECTION,
        (),
    ),
    "malformed SSE after output": Case(
        (Reply(text=LONG, fault=Fault.malformed_after(4)),),
        STREAM_BROKE,
        ResumeKind.RETRY_RESPONSE,
        StopKind.CONNECTION,
        (),
    ),
    "early EOF before output": Case(
        (Fault.eof_after(0),) * 2, STREAM_BROKE, ResumeKind.CALL_MODEL, StopKind.CONNECTION, ()
    ),
    "early EOF after output": Case(
        (Reply(text=LONG, fault=Fault.eof_after(4)),),
        STREAM_BROKE,
        ResumeKind.RETRY_RESPONSE,
        StopKind.CONNECTION,
        (),
    ),
    "error event after output": Case(
        (Reply(text=LONG, fault=Fault.error_event_after(4)),),
        ProviderServerError,
        ResumeKind.RETRY_RESPONSE,
        StopKind.PROVIDER_ERROR,
        ("overloaded",),
    ),
    "invalid JSON tool arguments, no text": Case(
        (Reply(text="", tool_calls=(BAD_CALL,)),) * 2,
        ProviderStreamError,
        ResumeKind.CALL_MODEL,
        StopKind.CONNECTION,
        ("JSON", "not run"),
    ),
    "invalid JSON tool arguments after text": Case(
        (Reply(text="Writing it now.", tool_calls=(BAD_CALL,)),),
        ProviderStreamError,
        ResumeKind.RETRY_RESPONSE,
        StopKind.CONNECTION,
        ("JSON", "not run"),
    ),
    "unknown finish reason": Case(
        (Reply(text="Hmm.", stop="galaxy_brain"),), None, "unknown_stop", None, ()
    ),
    "context full": Case(  # saved as an empty CONTEXT_FULL step: no Resume of the same request
        (Fault.context_full(),),
        ProviderContextLengthError,
        "context_full",
        StopKind.CONTEXT_FULL,
        ("context window",),
    ),
    "refusal": Case(
        ("refusal;text=I cannot help with that.",), None, "refused", StopKind.REFUSED, ("refused",)
    ),
    "output limit": Case(
        ("length;text=cut here",),
        None,
        ResumeKind.CONTINUE_RESPONSE,
        StopKind.OUTPUT_LIMIT,
        ("output limit",),
    ),
    "401 wrong key": Case(
        (Fault.http_status(401),),
        ProviderAuthError,
        ResumeKind.CALL_MODEL,
        StopKind.PROVIDER_ERROR,
        ("API key",),
    ),
}


async def drain(events: AsyncIterator[AgentEvent]) -> list[AgentEvent]:
    seen: list[AgentEvent] = []
    async with asyncio.timeout(BOUND):
        async for event in events:
            seen.append(event)
    return seen


@pytest.mark.parametrize("name", CASES)
async def test_fault_ends_in_the_documented_state(services: AppServices, name: str) -> None:
    case = CASES[name]
    services._simulator.enqueue(*case.replies)
    session = await services.new_session(name)
    if case.error is None:
        await drain(services.stream(session.id, LONG))
    else:
        with pytest.raises(case.error) as caught:
            await drain(services.stream(session.id, LONG))
        assert not UNFIT.search(str(caught.value)), str(caught.value)

    # The history: the question is always kept; a cut answer is kept as INTERRUPTED.
    history = await services.history(session.id)
    assert history[0] == UserMessage(LONG)
    if case.resume is ResumeKind.CALL_MODEL:
        assert history == [UserMessage(LONG)]
    elif case.resume == "context_full" and case.error is not None:
        assert len(history) == 2 and isinstance(history[1], AssistantMessage)
        assert history[1].stop_reason is StopReason.CONTEXT_FULL and not history[1].content
    elif case.resume is ResumeKind.RETRY_RESPONSE:
        assert len(history) == 2 and isinstance(history[1], AssistantMessage)
        assert history[1].stop_reason is StopReason.INTERRUPTED and not history[1].tool_calls
        assert history[1].content and (
            LONG.startswith(history[1].content) or history[1].content == "Writing it now."
        )
    assert not services.side_effects.exists()  # type: ignore[attr-defined]  # no tool ran

    info = await services.resume_info(session.id)
    if isinstance(case.resume, ResumeKind):
        assert info.point is not None and info.point.kind is case.resume, info
    else:
        assert info.point is None and info.blocked_reason == case.resume
        assert info.blocked_text and ACTIONABLE.search(info.blocked_text), info.blocked_text
    if case.stop is None:
        assert info.stop is None
    else:
        assert info.stop is not None and info.stop.kind is case.stop, info.stop
        message = info.stop.message
        assert not UNFIT.search(message), message
        assert ACTIONABLE.search(message) or case.stop in (
            StopKind.REFUSED,
            StopKind.OUTPUT_LIMIT,
        ), message
        for words in case.says:
            assert words.lower() in message.lower(), message
    assert (await services.journal.running_markers()) == []

    if info.point is not None:  # and resuming afterwards (the simulator answers) finishes
        events = await drain(services.stream_resume(session.id))
        assert events[-1].type is EventType.RUN_COMPLETED
        after = await services.resume_info(session.id)
        assert after.point is None and after.blocked_reason == "completed"
        assert after.stop is None and after.draft is None
        assert not services.side_effects.exists()  # type: ignore[attr-defined]


async def test_429_with_a_short_retry_after_is_waited_for_and_retried(
    services: AppServices,
) -> None:
    services._simulator.enqueue(Fault.http_status(429, retry_after=0.2))
    session = await services.new_session()
    loop = asyncio.get_running_loop()
    started = loop.time()
    events = await drain(services.stream(session.id, "hello"))
    retries = [e for e in events if e.type is EventType.RETRY]
    assert len(retries) == 1 and retries[0].delay == pytest.approx(0.2)  # type: ignore[attr-defined]
    assert loop.time() - started >= 0.2
    assert events[-1].type is EventType.RUN_COMPLETED
    assert events[-1].reply.content == "hello"  # type: ignore[attr-defined]
    info = await services.resume_info(session.id)
    assert info.stop is None and info.blocked_reason == "completed"
    assert len(services._simulator.model_requests()) == 2


async def test_fault_after_a_tool_ran_keeps_the_result_and_never_reruns_it(
    services: AppServices,
) -> None:
    """A drop in the step after a tool: the tool's result stays, resume does not run it again."""
    services._simulator.enqueue(
        Reply(text="Noting.", tool_calls=(SimToolCall("note", {"tag": "x"}, id="call_x"),)),
        Reply(text=LONG, fault=Fault.drop_after(5)),  # after some text in both protocols
    )
    session = await services.new_session()
    with pytest.raises(ProviderConnectionError):
        await drain(services.stream(session.id, "note x"))
    info = await services.resume_info(session.id)
    assert info.point is not None and info.point.kind is ResumeKind.RETRY_RESPONSE
    await drain(services.stream_resume(session.id))
    assert services.side_effects.read_text() == "x\n"  # type: ignore[attr-defined]
