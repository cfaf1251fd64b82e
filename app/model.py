"""The model protocol: what a provider (or a test double) implements, and how a step is folded.

A model step is a stream of :class:`TextDelta` pieces and :class:`ToolCallComplete` calls that
ends with one :class:`StepEnd`; what the model thinks first arrives as :class:`ReasoningDelta`
pieces and/or whole :class:`ReasoningComplete` parts (those carry Anthropic's signature).
Raising before the first event is a failed request (the runtime may retry it); raising after
it is a cut stream (the step ends ``INTERRUPTED``).

:class:`StepBuilder` folds those events; the runtime uses it to decide what to save, and
tests and providers use it to check event order.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeAlias, runtime_checkable

from .messages import (
    AssistantMessage,
    Message,
    Reasoning,
    StopReason,
    ToolCall,
    Usage,
    parse_stop_reason,
)

__all__ = [
    "Model",
    "ModelEvent",
    "ModelRequest",
    "ReasoningComplete",
    "ReasoningDelta",
    "StepEnd",
    "StepBuilder",
    "TextDelta",
    "ToolCallComplete",
    "ToolSpec",
]


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the step's text."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's thinking as it streams (shown, never part of the text)."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningComplete:
    """One whole thinking part with its signature or redacted data (Anthropic sends these at
    each ``thinking`` / ``redacted_thinking`` block's end). It stands for the
    :class:`ReasoningDelta` pieces that preceded it since the last complete part."""

    part: Reasoning


@dataclass(frozen=True, slots=True)
class ToolCallComplete:
    """A tool call whose arguments have arrived whole."""

    call: ToolCall


@dataclass(frozen=True, slots=True)
class StepEnd:
    """The step is over; ``stop_reason`` says why (``None``: inferred from tool calls)."""

    stop_reason: StopReason | str | None = None
    usage: Usage | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "stop_reason", parse_stop_reason(self.stop_reason))


ModelEvent: TypeAlias = TextDelta | ReasoningDelta | ReasoningComplete | ToolCallComplete | StepEnd


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What the model is told about a tool: its name, description and JSON schema."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One call to a model: the whole history (internal messages included) and the tools."""

    messages: Sequence[Message]
    tools: Sequence[ToolSpec] = ()
    system_prompt: str | None = None
    max_output_tokens: int | None = None


@runtime_checkable
class Model(Protocol):
    """A language model that streams one step per request."""

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...


class StepBuilder:
    """Folds one step's events, in order, into what will be saved.

    Mutable on purpose: a step can carry tens of thousands of deltas, and an immutable fold would
    copy the text on every one of them (quadratic). ``feed`` raises ``ValueError`` on an
    impossible order (anything after ``StepEnd``, a tool call id sent twice).

    Reasoning: each :class:`ReasoningComplete` is a part; :class:`ReasoningDelta` text not yet
    completed becomes an unsigned part when text or a tool call follows, or when the step is
    folded. The time from the first reasoning piece to the first text/tool piece (or the step's
    end) is measured with ``clock`` and kept as the first part's ``seconds``.
    """

    __slots__ = (
        "_clock",
        "_parts",
        "_reasoning",
        "_seconds",
        "_span_first",
        "_span_start",
        "_thinking",
        "end",
        "events",
        "tool_calls",
    )

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._parts: list[str] = []
        self._reasoning: list[Reasoning] = []
        self._thinking: list[str] = []  # reasoning deltas not yet completed
        self._seconds: dict[int, float] = {}  # part index -> seconds thought
        self._span_start: float | None = None
        self._span_first = 0
        self.tool_calls: list[ToolCall] = []
        self.end: StepEnd | None = None
        self.events = 0

    @property
    def text(self) -> str:
        return "".join(self._parts)

    @property
    def started(self) -> bool:
        """True once the model produced any event (a failure is then a cut stream)."""
        return self.events > 0

    def feed(self, event: ModelEvent) -> None:
        if self.end is not None:
            raise ValueError(f"model sent {type(event).__name__} after the step had ended")
        if isinstance(event, TextDelta):
            if event.text:
                self._answer_began()
            self._parts.append(event.text)
        elif isinstance(event, ReasoningDelta):
            if event.text:
                self._thought()
                self._thinking.append(event.text)
        elif isinstance(event, ReasoningComplete):
            self._thought()
            self._thinking.clear()  # the whole part stands for its pieces
            part = event.part
            if part.text or part.signed:
                self._reasoning.append(part)
        elif isinstance(event, ToolCallComplete):
            if any(c.id == event.call.id for c in self.tool_calls):
                raise ValueError(f"model sent tool call id {event.call.id!r} twice in one step")
            self._answer_began()
            self.tool_calls.append(event.call)
        elif isinstance(event, StepEnd):
            self._close_span(self._clock())
            self.end = event
        else:
            raise TypeError(f"not a model event: {event!r:.80}")
        self.events += 1

    def _thought(self) -> None:
        if self._span_start is None:
            self._span_start = self._clock()
            self._span_first = len(self._reasoning)

    def _answer_began(self) -> None:
        if self._span_start is not None:  # no clock read per token when nothing was thought
            self._close_span(self._clock())
        if self._thinking:
            self._reasoning.append(Reasoning("".join(self._thinking)))
            self._thinking.clear()

    def _close_span(self, now: float) -> None:
        if self._span_start is not None:
            spent = max(0.0, now - self._span_start)
            self._seconds[self._span_first] = self._seconds.get(self._span_first, 0.0) + spent
            self._span_start = None

    @property
    def reasoning(self) -> tuple[Reasoning, ...]:
        """The reasoning so far: completed parts, then any uncompleted text (unsigned)."""
        parts = list(self._reasoning)
        if self._thinking:
            parts.append(Reasoning("".join(self._thinking)))
        seconds = dict(self._seconds)
        if self._span_start is not None:  # still thinking: count up to now
            spent = max(0.0, self._clock() - self._span_start)
            seconds[self._span_first] = seconds.get(self._span_first, 0.0) + spent
        for index, spent in seconds.items():
            if index < len(parts) and parts[index].seconds is None:
                parts[index] = replace(parts[index], seconds=spent)
        return tuple(parts)

    def to_message(
        self, *, stop_reason: StopReason | str | None, model: str | None
    ) -> AssistantMessage:
        """The assistant message for this step with ``stop_reason``.

        Tool calls are kept only when the step really asks for tools; a step cut short
        (interrupted, output limit, refusal, ...) saves its text and its calls never run.
        Reasoning is always kept.
        """
        keep_calls = stop_reason in (None, StopReason.TOOL_USE, StopReason.END_TURN)
        return AssistantMessage(
            content=self.text,
            tool_calls=tuple(self.tool_calls) if keep_calls else (),
            stop_reason=stop_reason,
            model=model,
            usage=self.end.usage if self.end is not None else None,
            reasoning=self.reasoning,
        )
