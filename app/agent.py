"""The agent runtime: run a request, save each message as it completes, resume what stopped.

One request is a loop of model steps. Each step streams (``REASONING_DELTA``/``TEXT_DELTA``/
``TOOL_CALL`` events), then its assistant message is committed; tool calls run (each at most
once, ever) and each result is committed as it arrives; then the model is called again, until a
step ends the turn.

How each way of stopping leaves the history (what :mod:`app.resume` later reads):

* a request fails before any output: retried per :class:`RetryPolicy`; after the last try the
  history ends with the user message (``CALL_MODEL``) and the error propagates;
* the stream breaks after output started: the partial text (and what the model had thought:
  ``AssistantMessage.reasoning``) is saved ``INTERRUPTED``, ``MODEL_STOPPED`` is emitted and
  the error propagates (``RETRY_RESPONSE``, which keeps that partial in the history);
* the host cancels while the model streams: nothing of the step is saved;
* the host cancels while tools run: they are cancelled and each unanswered call is answered
  with a failed result saying so (``CALL_MODEL``); results that already arrived are kept; a
  sync tool, whose thread cannot be stopped, answers with what it really did (completed within
  a short grace, or may still complete: see :mod:`app.tools`);
* the process dies while tools run: nothing can be written; the calls stay unanswered
  (``RECOVER_TOOLS``) and are never run again by themselves.

The one exception is a call the host *proves* never started (e.g. it was still waiting for the
person's approval when the process died): ``stream_resume(not_started=...)`` runs those —
through approval again — instead of answering them as "may or may not have run". That is not a
re-run: they never ran.

The pieces: :mod:`app.plan` decides what a request writes before its first model call (pure);
:mod:`app.step` runs one model step (streaming, retry, stop normalisation); :mod:`app.tool_round`
runs a step's calls; :class:`~app.run_state.RunState` owns the request's saved history. This
module holds :class:`Agent`, the loop over steps (tool rounds, pauses, goal turns) and the
in-process busy registry.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Collection,
    Iterable,
    Sequence,
)
from dataclasses import dataclass, field
from typing import Any, Final

from .errors import BranchError, SessionBusyError, ToolRoundLimitError
from .events import AgentEvent, ModelStoppedEvent, RunCompletedEvent, RunStartedEvent
from .hooks import RunContext, call_error_hooks, call_hooks
from .messages import AssistantMessage, InternalMessage, Message, StopReason, UserMessage
from .model import Model, ModelRequest
from .parts import Content
from .plan import plan_request
from .resume import ResumeBlocked, ResumePoint, classify_tail, tail_is_sufficient
from .retry import RetryPolicy
from .run_state import RunState
from .step import NOT_STARTED_TOOL_TEXT, ModelStep
from .storage.base import InMemorySessionStore, SessionStore, StoredMessage
from .tool_round import CANCELLED_TOOL_TEXT, DENIED_TOOL_TEXT, ToolApprover, ToolRound
from .tools import FunctionTool, as_tool

__all__ = [
    "CANCELLED_TOOL_TEXT",
    "DENIED_TOOL_TEXT",
    "GOAL_COMPLETE_MARKER",
    "NOT_STARTED_TOOL_TEXT",
    "Agent",
    "AgentRunConfig",
    "ToolApprover",
    "find_store",
    "read_resume_status",
]

log = logging.getLogger(__name__)

GOAL_COMPLETE_MARKER: Final = "GOAL COMPLETE"


class BusySessions:
    """Sessions with a request in flight in this process, by ``(store lock key, session id)``.

    The in-process half of "one request per conversation at a time". The cross-process half
    is an extension's optional ``claim_session(session_id)`` (the SQLite extension's uses
    :mod:`app.locks`): it returns the function that ends the claim, or raises
    :class:`SessionBusyError` when another process holds the conversation.
    """

    def __init__(self) -> None:
        self._keys: set[tuple[str, str]] = set()

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def enter(self, key: tuple[str, str], extensions: Iterable[Any]) -> Callable[[], None]:
        """Mark ``key`` busy and take the extensions' claims; returns the function that
        releases them all. Raises :class:`SessionBusyError`, leaving nothing taken."""
        if key in self._keys:
            raise SessionBusyError(key[1])
        self._keys.add(key)
        taken = contextlib.ExitStack()
        taken.callback(self._keys.discard, key)  # last: the claims go first
        try:
            for extension in extensions:
                claim = getattr(extension, "claim_session", None)
                if claim is not None:
                    taken.callback(claim(key[1]))
        except BaseException:
            taken.close()
            raise
        return taken.close


#: The busy sessions of this process.
BUSY_SESSIONS = BusySessions()


@dataclass(frozen=True, slots=True)
class AgentRunConfig:
    """Settings of one session's requests. A session that does not exist is created on use."""

    session_id: str
    retry: RetryPolicy = field(default_factory=RetryPolicy, kw_only=True)
    max_tool_rounds: int = field(default=25, kw_only=True)
    max_pause_turns: int = field(default=3, kw_only=True)
    system_prompt: str | None = field(default=None, kw_only=True)
    max_output_tokens: int | None = field(default=None, kw_only=True)
    max_goal_turns: int = field(default=10, kw_only=True)

    def __post_init__(self) -> None:
        if not self.session_id:
            raise ValueError("AgentRunConfig needs a non-empty session_id")
        if self.max_tool_rounds < 1 or self.max_pause_turns < 0 or self.max_goal_turns < 0:
            raise ValueError("AgentRunConfig limits must be positive")


def find_store(extensions: Iterable[Any]) -> SessionStore | None:
    """The session store provided by an extension (one with a ``storage`` attribute)."""
    for extension in extensions:
        storage = getattr(extension, "storage", None)
        if storage is not None:
            if not isinstance(storage, SessionStore):
                raise TypeError(f"{type(extension).__name__}.storage is not a session store")
            return storage
    return None


async def read_resume_status(store: SessionStore, session_id: str) -> ResumePoint | ResumeBlocked:
    """Classify a session from its tail only: cost does not grow with the history's length."""
    n = 8
    while True:
        tail = await store.tail(session_id, n)
        if tail_is_sufficient(tail, complete=len(tail) < n):
            return classify_tail(tail)
        n *= 4  # ends with more tool results than read so far: reach back to their owner


@dataclass(frozen=True, slots=True)
class _Start:
    """A request's starting branch (oldest first) and which message it is a new version of."""

    records: list[StoredMessage]
    version_of: int | None


def _goal_met(message: AssistantMessage) -> bool:
    return GOAL_COMPLETE_MARKER in message.content.upper()


class Agent:
    """One session's agent. Build it with :meth:`create`."""

    def __init__(
        self,
        model: Model,
        config: AgentRunConfig,
        *,
        tools: Sequence[Callable[..., Any] | FunctionTool] = (),
        extensions: Sequence[Any] = (),
        store: SessionStore,
        approve_tool: ToolApprover | None = None,
    ) -> None:
        self.model = model
        self.config = config
        self.extensions = tuple(extensions)
        self.store = store
        self.approve_tool = approve_tool
        self._tools: dict[str, FunctionTool] = {}
        for item in tools:
            converted = as_tool(item)
            if converted.name in self._tools:
                raise ValueError(f"two tools are named {converted.name!r}")
            self._tools[converted.name] = converted

    @classmethod
    async def create(
        cls,
        model: Model,
        config: AgentRunConfig | None = None,
        *,
        tools: Sequence[Callable[..., Any] | FunctionTool] = (),
        extensions: Sequence[Any] = (),
        approve_tool: ToolApprover | None = None,
    ) -> Agent:
        """An agent over the store an extension provides (in memory if none does).

        Opening the store here surfaces a damaged or too-new database before any request.
        Nothing is written until the first request.
        """
        config = config or AgentRunConfig(uuid.uuid4().hex)
        store = find_store(extensions) or InMemorySessionStore()
        opener = getattr(store, "open", None)
        if opener is not None:
            await opener()
        return cls(
            model,
            config,
            tools=tools,
            extensions=extensions,
            store=store,
            approve_tool=approve_tool,
        )

    def __repr__(self) -> str:
        return (
            f"Agent(model={getattr(self.model, 'name', '?')!r}, "
            f"session={self.config.session_id!r}, tools={sorted(self._tools)!r})"
        )

    @property
    def session_id(self) -> str:
        return self.config.session_id

    @property
    def tools(self) -> tuple[FunctionTool, ...]:
        return tuple(self._tools.values())

    # --- reading ------------------------------------------------------------------------------

    async def history(self) -> list[Message]:
        return await self.store.load(self.session_id)

    async def resume_status(self) -> ResumePoint | ResumeBlocked:
        """What :meth:`resume` would do, or why it would refuse. Writes nothing."""
        return await read_resume_status(self.store, self.session_id)

    async def resume_point(self) -> ResumePoint | None:
        """Where the last request can be picked up, or ``None`` if there is nothing to resume.

        Reads only the end of the history, writes nothing and calls no model.
        """
        outcome = await self.resume_status()
        return outcome if isinstance(outcome, ResumePoint) else None

    # --- running ------------------------------------------------------------------------------

    async def run(self, text: str, *, goal: str | None = None) -> AssistantMessage:
        """Send ``text`` and return the final answer (see the module docstring for failures)."""
        return await _final_reply(self.stream(text, goal=goal))

    async def resume(
        self, *, model: Model | None = None, not_started: Collection[str] = ()
    ) -> AssistantMessage:
        """:meth:`run` without a new user message: continue the interrupted request."""
        return await _final_reply(self.stream_resume(model=model, not_started=not_started))

    def stream(self, text: str | Content, *, goal: str | None = None) -> AsyncIterator[AgentEvent]:
        """Send ``text`` (or parts: :mod:`app.parts`) and yield the request's events."""
        if not isinstance(text, str | tuple):
            raise TypeError(f"message text must be a string, got {type(text).__name__}")
        return self._request(UserMessage(text), goal=goal, model=self.model)

    def stream_resume(
        self, *, model: Model | None = None, not_started: Collection[str] = ()
    ) -> AsyncIterator[AgentEvent]:
        """Resume the interrupted request, yielding the same events as :meth:`stream`.

        ``model`` may differ from the one that was interrupted (e.g. another provider).
        Goal mode of the interrupted request is not re-enabled.

        ``not_started``: ids of unanswered calls the host knows never started (they were
        awaiting approval when the process stopped). In ``RECOVER_TOOLS`` those are run now,
        through approval again, instead of being answered as "may or may not have run"; every
        other unanswered call gets the recovered text as usual.
        """
        return self._request(
            None, goal=None, model=model or self.model, not_started=frozenset(not_started)
        )

    def stream_edit(
        self, seq: int, text: str | Content, *, goal: str | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Send ``text`` as a new version of the user message ``seq``: a new branch from the
        point before that message, which becomes current. Nothing is deleted: the old
        version and everything after it stay in the conversation's tree."""
        if not isinstance(text, str | tuple):
            raise TypeError(f"message text must be a string, got {type(text).__name__}")
        return self._request(UserMessage(text), goal=goal, model=self.model, version_of=seq)

    def stream_regenerate(
        self, seq: int, *, model: Model | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Answer again the person's message that message ``seq`` answers (``seq`` may be that
        user message or any message of its answer): a new branch after the user message,
        which becomes current; the old answer stays as another version. ``model`` may differ
        ("regenerate with another model")."""
        return self._request(None, goal=None, model=model or self.model, regenerate=seq)

    async def _request(
        self,
        user: UserMessage | None,
        *,
        goal: str | None,
        model: Model,
        not_started: frozenset[str] = frozenset(),
        version_of: int | None = None,
        regenerate: int | None = None,
    ) -> AsyncIterator[AgentEvent]:
        release = BUSY_SESSIONS.enter((self.store.lock_key, self.session_id), self.extensions)
        ctx = RunContext(
            session_id=self.session_id,
            request_id=uuid.uuid4().hex,
            input_message=user,
            resume_kind=None,
            goal=goal,
        )
        completed = False
        try:
            start = await self._start(version_of=version_of, regenerate=regenerate)
            ctx.new_version_of = start.version_of
            history = [r.message for r in start.records]
            after = start.records[-1].seq if start.records else None
            state = RunState(self.store, ctx, history, after=after)
            plan = plan_request(state.messages, user, not_started)
            ctx.resume_kind = plan.resume_kind  # before_run already knows what resume will do
            await call_hooks(self.extensions, "before_run", ctx)
            if plan.blocked is not None:
                raise plan.blocked.error()
            yield RunStartedEvent(self.session_id, ctx.request_id, ctx.resume_kind)
            for event in await state.save(plan.to_save):
                yield event
            if user is not None:
                await call_hooks(self.extensions, "on_message", ctx)
            if plan.run_now:  # calls that provably never started: run them now (approval again)
                async with contextlib.aclosing(self._tool_round(state).run(plan.run_now)) as run:
                    async for event in run:
                        yield event
            reply: AssistantMessage | None = None
            async with contextlib.aclosing(self._steps(state, model, goal)) as steps:
                async for event in steps:
                    if isinstance(event, RunCompletedEvent):
                        reply = event.reply
                        break
                    yield event
            assert reply is not None
            await call_hooks(self.extensions, "after_run", ctx, reply)
            completed = True
            yield RunCompletedEvent(reply)
        except (asyncio.CancelledError, GeneratorExit) as err:
            if completed:  # the consumer left after RUN_COMPLETED: the request did finish
                raise
            await call_error_hooks(
                self.extensions,
                ctx,
                err if isinstance(err, asyncio.CancelledError) else asyncio.CancelledError(),
            )
            raise
        except BaseException as err:
            await call_error_hooks(self.extensions, ctx, err)
            raise
        finally:
            release()

    async def _start(self, *, version_of: int | None, regenerate: int | None) -> _Start:
        """Where the request's branch starts: after the current leaf, or (a new version)
        after the point before an edited message or after a regenerated answer's question."""
        store, session = self.store, self.session_id
        if version_of is None and regenerate is None:
            return _Start(await store.load_records(session), None)
        seq = version_of if version_of is not None else regenerate
        assert seq is not None
        try:
            records = await store.load_branch(session, seq)
        except LookupError as err:
            raise BranchError(f"{err} Reload it and try again.") from err
        if version_of is not None:
            if not isinstance(records[-1].message, UserMessage):
                raise BranchError(
                    f"Message {seq} was not written by the person, so it cannot be edited; "
                    "regenerate the answer instead."
                )
            return _Start(records[:-1], seq)
        for index in range(len(records) - 1, -1, -1):
            if isinstance(records[index].message, UserMessage):
                first = records[index + 1].seq if index + 1 < len(records) else None
                return _Start(records[: index + 1], first)
        raise BranchError(
            f"Message {seq} answers no message of the person, so there is nothing to answer again."
        )

    def _tool_round(self, state: RunState) -> ToolRound:
        return ToolRound(state, self._tools, self.approve_tool)

    def _system_prompt(self, goal: str | None) -> str | None:
        system_prompt = self.config.system_prompt
        if not goal:
            return system_prompt
        return (f"{system_prompt}\n\n" if system_prompt else "") + (
            f"Goal of this request: {goal}\nKeep working until the goal is fully met. "
            f"When it is, end your reply with a line that says {GOAL_COMPLETE_MARKER}."
        )

    async def _steps(
        self, state: RunState, model: Model, goal: str | None
    ) -> AsyncGenerator[AgentEvent, None]:
        """Model steps and tool rounds until the turn ends; the last event is RUN_COMPLETED."""
        config = self.config
        specs = tuple(t.spec for t in self._tools.values())
        system_prompt = self._system_prompt(goal)
        tool_rounds = pause_turns = goal_turns = 0
        while True:
            request = ModelRequest(
                messages=tuple(state.messages),
                tools=specs,
                system_prompt=system_prompt,
                max_output_tokens=config.max_output_tokens,
            )
            step = ModelStep(state, model, request, config.retry)
            async with contextlib.aclosing(step.run()) as events:
                async for event in events:
                    yield event
            message = step.message
            assert message is not None
            stop = message.stop_reason
            if stop is StopReason.TOOL_USE:
                async with contextlib.aclosing(
                    self._tool_round(state).run(message.tool_calls)
                ) as run:
                    async for event in run:
                        yield event
                tool_rounds += 1
                if tool_rounds >= config.max_tool_rounds:
                    raise ToolRoundLimitError(tool_rounds)
                continue
            if stop is StopReason.END_TURN:
                if goal and not _goal_met(message) and goal_turns < config.max_goal_turns:
                    goal_turns += 1
                    for event in await state.save(
                        [
                            InternalMessage(
                                f"The goal is not reported as met yet: {goal}\n"
                                "Continue working toward it. When it is fully met, end your "
                                f"reply with a line that says {GOAL_COMPLETE_MARKER}."
                            )
                        ]
                    ):
                        yield event
                    continue
                yield RunCompletedEvent(message)
                return
            assert stop is not None
            yield ModelStoppedEvent(stop, message)
            if stop is StopReason.PAUSED and pause_turns < config.max_pause_turns:
                pause_turns += 1
                continue
            yield RunCompletedEvent(message)
            return


async def _final_reply(events: AsyncIterator[AgentEvent]) -> AssistantMessage:
    reply: AssistantMessage | None = None
    async for event in events:
        if isinstance(event, RunCompletedEvent):
            reply = event.reply
    if reply is None:  # pragma: no cover - the runtime always ends with RUN_COMPLETED or raises
        raise RuntimeError("the request ended without a reply")
    return reply
