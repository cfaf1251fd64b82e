"""Tools: plain Python functions the model may call.

A sync or async function with type hints and a docstring is a tool: its name, its description
(the docstring's first paragraph) and a JSON schema of its parameters (from the hints, with
per-parameter text from a Google-style ``Args:`` section) are derived from it by
:mod:`app.tools.schema`, which also checks the arguments a model sends. ``@tool(...)`` adds
options. What the function returns becomes the result (a :class:`ToolResult` it returns is
the result itself: how a tool gives images); an exception becomes a failed result carrying the
error text. Sync functions run in a worker thread so they never block the
event loop (and the UI on it).

A thread cannot be interrupted: after Stop or a timeout a sync function keeps running. So the
result tells the truth: :meth:`FunctionTool.invoke` waits up to :data:`STOP_GRACE` seconds for
it; if it finished, the result says it completed anyway (with what it returned, or its error);
if not, the result says it was still running and may still complete (and a log line records
when it finally ends). Such a call is answered with that result instead of raising
``CancelledError``: the runtime saves it like any result that arrived before Stop.

The runtime runs each call at most once, ever: resuming never re-runs a call (see
:mod:`app.resume`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import enum
import functools
import inspect
import json
import logging
import re
import threading
import time
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar, overload

from ..errors import ToolArgumentError
from ..messages import ToolCall, ToolOutcome
from ..model import ToolSpec
from ..parts import ImagePart
from .schema import check_arguments, parameters_schema, parse_docstring

__all__ = [
    "MAY_STILL_COMPLETE",
    "STOPPED_STILL_RUNNING_TEXT",
    "STOP_GRACE",
    "FunctionTool",
    "ToolArgumentError",
    "ToolResult",
    "as_tool",
    "tool",
]

F = TypeVar("F", bound=Callable[..., Any])

log = logging.getLogger(__name__)

#: Seconds a stopped (or timed-out) sync tool gets to finish before its result is written:
#: long enough for a file write in progress to land, short enough for Stop to feel prompt.
STOP_GRACE: float = 0.5

#: The phrase every "stopped, but it may still complete" result carries (the transcript shows
#: such a call as "may or may not have run", not as failed).
MAY_STILL_COMPLETE: Final = "may still complete after this message"

STOPPED_STILL_RUNNING_TEXT: Final = (
    "The request was stopped while this tool was running. The tool cannot be interrupted and "
    f"was still running when this was written, so it {MAY_STILL_COMPLETE}: "
    "whatever it changes may or may not have happened. Check the current state before "
    "running it again."
)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What one call produced: content for the model, and whether it succeeded.

    ``outcome`` is set where ``success`` alone would mislead (a sync call that outlived Stop
    and may still complete is ``MAY_HAVE_RUN``); ``None`` means "done" or "failed" by
    ``success``. ``images``: images the tool returned (an MCP server's image content), with
    their bytes; ``content`` names each one.
    """

    content: str
    success: bool = True
    outcome: ToolOutcome | None = None
    images: tuple[ImagePart, ...] = ()


@dataclass(frozen=True, slots=True)
class FunctionTool:
    """A callable exposed to the model."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    function: Callable[..., Any]
    side_effects: bool = False
    timeout: float | None = None
    _signature: inspect.Signature = field(repr=False, compare=False, default=None)  # type: ignore[assignment]
    # Parameters annotated with an Enum: the model sends the value, the function gets the member.
    _enums: Mapping[str, type[enum.Enum]] = field(repr=False, compare=False, default_factory=dict)

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)

    async def invoke(self, call: ToolCall) -> ToolResult:
        """Run the function for ``call``; failures become failed results.

        Cancellation propagates, except while a sync function's thread runs (it cannot be
        stopped): then the result says what really happened (see the module docstring).
        """
        try:
            kwargs = self._bind(call.arguments_dict())
        except ToolArgumentError as err:
            return ToolResult(f"Invalid arguments for {self.name}: {err}", success=False)
        # asyncio.timeout, not wait_for: a TimeoutError the tool raises itself (a socket timeout)
        # is the tool's failure, and only an expired deadline of ours means "took too long".
        deadline = asyncio.timeout(self.timeout)
        thread: asyncio.Future[Any] | None = None
        gate = _StartGate()
        in_thread = False
        try:
            async with deadline:
                if inspect.iscoroutinefunction(self.function):
                    value = await self.function(**kwargs)
                else:
                    context = contextvars.copy_context()  # as asyncio.to_thread does
                    thread = asyncio.get_running_loop().run_in_executor(
                        None,
                        functools.partial(
                            gate.run, functools.partial(context.run, self.function, **kwargs)
                        ),
                    )
                    # Shielded: cancelling cannot stop the thread, and its outcome is still
                    # wanted (see _outlived).
                    in_thread = True
                    value = await asyncio.shield(thread)
                    in_thread = False
                if inspect.isawaitable(value):  # a sync function that returned a coroutine
                    value = await value
        except asyncio.CancelledError:
            if not in_thread or thread is None:
                raise
            _uncancel()  # answered below instead: the caller gets a result, not the error
            return await self._outlived(thread, gate, timed_out=False)
        except TimeoutError as err:
            if in_thread and thread is not None and deadline.expired():
                return await self._outlived(thread, gate, timed_out=True)
            if not deadline.expired():
                return ToolResult(f"{type(err).__name__}: {err}", success=False)
            return ToolResult(
                f"{self.name} did not finish within {self.timeout:g} seconds and was stopped.",
                success=False,
            )
        except Exception as err:  # the tool's own failure is information for the model
            return ToolResult(f"{type(err).__name__}: {err}", success=False)
        if isinstance(value, ToolResult):  # a tool that says more than text (e.g. images)
            return value
        return ToolResult(_to_content(value))

    async def _outlived(
        self, thread: asyncio.Future[Any], gate: _StartGate, *, timed_out: bool
    ) -> ToolResult:
        """The truthful result of a sync call stopped (or timed out) while its thread runs.

        A call still queued for a worker thread (all busy) is called off: it never runs.
        Otherwise waits up to :data:`STOP_GRACE` seconds (a second Stop ends the wait at once);
        reports what the function did if it finished, else that it may still complete.
        """
        if gate.call_off():
            what = (
                f"{self.name} did not start within its {self.timeout:g}-second limit"
                if timed_out
                else "The request was stopped before this tool started"
            )
            return ToolResult(
                f"{what} (it was waiting for a free worker thread), so it did not run.",
                success=False,
                outcome=ToolOutcome.NOT_STARTED,
            )
        why = (
            f"{self.name} did not finish within its {self.timeout:g}-second limit"
            if timed_out
            else "The request was stopped while this tool was running"
        )
        log.info(
            "%s: waiting up to %g s for tool %s, which cannot be interrupted",
            "timed out" if timed_out else "stopped",
            STOP_GRACE,
            self.name,
        )
        try:
            await asyncio.wait({thread}, timeout=STOP_GRACE)
        except asyncio.CancelledError:  # Stop again: answer now
            _uncancel()
        if thread.done() and not thread.cancelled():
            error = thread.exception()
            if error is not None:
                return ToolResult(
                    f"{why}, but it cannot be interrupted and then failed: "
                    f"{type(error).__name__}: {error}",
                    success=False,
                )
            value = thread.result()
            if not inspect.isawaitable(value):
                return ToolResult(
                    f"{why}, but it cannot be interrupted and completed anyway. "
                    f"Its result:\n{_to_content(value)}"
                )
            close = getattr(value, "close", None)  # a coroutine it returned never runs now
            if close is not None:
                close()
            return ToolResult(f"{why}; it had not completed.", success=False)
        stopped_at = time.monotonic()
        name = self.name

        def finished(done: concurrent.futures.Future[Any] | asyncio.Future[Any]) -> None:
            error = None if done.cancelled() else done.exception()
            log.warning(
                "tool %s finished %.1f s after its result said it may still complete (%s)",
                name,
                time.monotonic() - stopped_at,
                "it succeeded" if error is None else f"{type(error).__name__}: {error}",
            )

        thread.add_done_callback(finished)
        if timed_out:
            return ToolResult(
                f"{why}. It cannot be interrupted and was still running when this was written, "
                f"so it {MAY_STILL_COMPLETE}: whatever it changes may or may "
                "not have happened. Check the current state before relying on it or running "
                "it again.",
                success=False,
                outcome=ToolOutcome.MAY_HAVE_RUN,
            )
        return ToolResult(
            STOPPED_STILL_RUNNING_TEXT, success=False, outcome=ToolOutcome.MAY_HAVE_RUN
        )

    def _bind(self, arguments: dict[str, Any]) -> dict[str, Any]:
        check_arguments(
            arguments, self.parameters, self._signature or inspect.signature(self.function)
        )
        for name, enum_type in self._enums.items():
            if arguments.get(name) is not None:
                arguments[name] = enum_type(arguments[name])
        return arguments


class _StartGate:
    """Lets a sync call that is still queued for a worker thread be called off for good.

    The worker runs the function only if the call was not called off first; both sides take
    the lock, so "it never started" is a fact, never a guess.
    """

    __slots__ = ("_lock", "_state")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = "queued"

    def run(self, function: Callable[[], Any]) -> Any:
        with self._lock:
            if self._state == "called_off":
                return None  # nobody waits for this value: the call was answered already
            self._state = "started"
        return function()

    def call_off(self) -> bool:
        """``True`` if the call had not started (and now never will)."""
        with self._lock:
            if self._state == "queued":
                self._state = "called_off"
                return True
            return False


def _uncancel() -> None:
    """Undo the pending cancellation of the current task (its code answers it instead)."""
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()


def _to_content(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def as_tool(
    function: Callable[..., Any] | FunctionTool,
    *,
    name: str | None = None,
    description: str | None = None,
    side_effects: bool = False,
    timeout: float | None = None,
) -> FunctionTool:
    """Turn a function into a :class:`FunctionTool` (a tool passes through unchanged)."""
    if isinstance(function, FunctionTool):
        return function
    existing = getattr(function, "__continuum_tool__", None)
    if isinstance(existing, FunctionTool):
        return existing
    signature = inspect.signature(function)
    hints = typing.get_type_hints(function, include_extras=True)
    summary, arg_docs = parse_docstring(function.__doc__)
    parameters, enums = parameters_schema(function.__name__, signature, hints, arg_docs)
    tool_name = function.__name__ if name is None else name
    if not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", tool_name):
        raise ValueError(
            f"tool name {tool_name!r} must be 1-64 letters, digits, '_' or '-' "
            "(providers require it)"
        )
    return FunctionTool(
        name=tool_name,
        description=description or summary or tool_name.replace("_", " "),
        parameters=parameters,
        function=function,
        side_effects=side_effects,
        timeout=timeout,
        _signature=signature,
        _enums=enums,
    )


@overload
def tool(function: F, /) -> F: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    side_effects: bool = False,
    timeout: float | None = None,
) -> Callable[[F], F]: ...


def tool(
    function: Any = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    side_effects: bool = False,
    timeout: float | None = None,
) -> Any:
    """Mark a function as a tool with options; the function stays callable as before.

    ``side_effects=True`` means the tool changes something outside the conversation; the app
    asks the person before running it. ``timeout`` (seconds) bounds an async tool.
    """

    def decorate(fn: F) -> F:
        fn.__continuum_tool__ = as_tool(  # type: ignore[attr-defined]
            fn, name=name, description=description, side_effects=side_effects, timeout=timeout
        )
        return fn

    if function is not None:
        return decorate(function)
    return decorate
