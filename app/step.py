"""One model step: stream it, retry what failed before any output, decide why it stopped,
commit its message.

The stop reason a provider reports is normalised in one place, :func:`normalise_stop` (pure,
table-tested). What each way of failing leaves saved is described in :mod:`app.agent`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, Final

from .errors import IncompleteStreamError, ProviderContextLengthError
from .events import (
    AgentEvent,
    ModelStoppedEvent,
    ReasoningDeltaEvent,
    RetryEvent,
    TextDeltaEvent,
    ToolCallEvent,
)
from .messages import AssistantMessage, StopReason, ToolMessage, ToolOutcome
from .model import Model, ModelRequest, ReasoningDelta, StepBuilder, TextDelta, ToolCallComplete
from .retry import RetryPolicy, is_retryable, retry_after_of, retry_delay
from .run_state import RunState

__all__ = ["NOT_STARTED_TOOL_TEXT", "ModelStep", "normalise_stop"]

log = logging.getLogger(__name__)

NOT_STARTED_TOOL_TEXT: Final = (
    "The user stopped the request before this tool started, so it did not run."
)


def normalise_stop(reported: StopReason | str | None, *, has_tool_calls: bool) -> StopReason | str:
    """The stop reason a finished step is saved with, from the one the provider reported.

    Calls with "stop" (Ollama says that) or no reason mean tool use; "tool use" (or nothing)
    without a single call means the turn ended: there is nothing to run. Anything else is kept
    as reported (an unknown reason stays its raw string).
    """
    if has_tool_calls and reported in (None, StopReason.TOOL_USE, StopReason.END_TURN):
        return StopReason.TOOL_USE
    if reported is None or reported is StopReason.TOOL_USE:
        return StopReason.END_TURN
    return reported


class ModelStep:
    """One step of ``model`` over ``request``: :meth:`run` yields its events; afterwards
    :attr:`message` is the committed assistant message (its stop reason normalised)."""

    def __init__(
        self, state: RunState, model: Model, request: ModelRequest, retry: RetryPolicy
    ) -> None:
        self.state = state
        self.model = model
        self.request = request
        self.retry = retry
        self.message: AssistantMessage | None = None

    @property
    def _model_name(self) -> str | None:
        return getattr(self.model, "name", None)

    async def run(self) -> AsyncGenerator[AgentEvent, None]:
        """Stream the step (with retries), then commit its message."""
        builder = StepBuilder()
        async with contextlib.aclosing(self._stream(builder)) as events:
            async for event in events:
                yield event
        assert builder.end is not None
        stop = normalise_stop(builder.end.stop_reason, has_tool_calls=bool(builder.tool_calls))
        message = builder.to_message(stop_reason=stop, model=self._model_name)
        try:
            for event in await self.state.save([message]):
                yield event
        except (asyncio.CancelledError, GeneratorExit):
            # Stopped after the step was committed but before its tools started: they
            # provably never ran, so say that (not "may or may not have run").
            if message.tool_calls and self.state.ends_with(message):
                await self._answer_not_started(message)
            raise
        self.message = message

    async def _answer_not_started(self, message: AssistantMessage) -> None:
        try:
            await self.state.save(
                [
                    ToolMessage(
                        c.id,
                        c.name,
                        NOT_STARTED_TOOL_TEXT,
                        success=False,
                        outcome=ToolOutcome.NOT_STARTED,
                    )
                    for c in message.tool_calls
                ]
            )
        except Exception:
            log.exception(
                "could not save the 'not started' answers of a stopped step; "
                "resume will answer them as 'may or may not have run'"
            )

    async def _stream(self, builder: StepBuilder) -> AsyncGenerator[AgentEvent, None]:
        """Stream into ``builder``, retrying failures that precede any output."""
        attempt = 0
        while True:
            attempt += 1
            try:
                async with contextlib.aclosing(self._attempt(builder)) as events:
                    async for event in events:
                        yield event
                return
            except asyncio.CancelledError:
                raise  # Stop while streaming: nothing of this step is saved
            except Exception as err:
                if builder.started:
                    # A cut stream: keep what arrived so resume can redo it knowingly.
                    partial = builder.to_message(
                        stop_reason=StopReason.INTERRUPTED, model=self._model_name
                    )
                    saved: AssistantMessage | None = None
                    if partial.content or partial.reasoning:
                        for saved_event in await self.state.save([partial]):
                            yield saved_event
                        saved = partial
                    yield ModelStoppedEvent(StopReason.INTERRUPTED, saved, error=str(err))
                    raise
                if isinstance(err, ProviderContextLengthError):
                    # The request no longer fits: resending it fails the same way. Saved as a
                    # CONTEXT_FULL step (empty; never sent to a provider), so resume_point()
                    # says context_full instead of offering the same request again.
                    full = AssistantMessage(
                        "", stop_reason=StopReason.CONTEXT_FULL, model=self._model_name
                    )
                    for saved_event in await self.state.save([full]):
                        yield saved_event
                    yield ModelStoppedEvent(StopReason.CONTEXT_FULL, full, error=str(err))
                    raise
                delay = (
                    retry_delay(self.retry, attempt, retry_after_of(err))
                    if is_retryable(err)
                    else None
                )
                if delay is None:
                    raise
                log.info(
                    "model request failed (%s); retry %d in %.2fs",
                    type(err).__name__,
                    attempt,
                    delay,
                )
                yield RetryEvent(attempt, delay, str(err))
                await asyncio.sleep(delay)

    async def _attempt(self, builder: StepBuilder) -> AsyncGenerator[AgentEvent, None]:
        """One try: feed the model's events into ``builder``; it must end with a stop reason."""
        stream: AsyncIterator[Any] | None = None
        try:
            stream = self.model.stream(self.request)
            async for event in stream:
                builder.feed(event)
                if isinstance(event, TextDelta):
                    if event.text:
                        yield TextDeltaEvent(event.text)
                elif isinstance(event, ReasoningDelta):
                    if event.text:
                        yield ReasoningDeltaEvent(event.text)
                elif isinstance(event, ToolCallComplete):
                    yield ToolCallEvent(event.call)
        finally:
            # Release the provider's connection now, not when the GC gets to it.
            close = getattr(stream, "aclose", None) if stream is not None else None
            if close is not None:
                await close()
        if builder.end is None:
            raise IncompleteStreamError(
                "The model's response ended without saying why it stopped; the stream "
                "was probably cut. Resume to try again."
            )
