"""The model protocol: what a provider (or a test double) implements, and how a step is folded.

A model step is a stream of :class:`TextDelta` pieces and :class:`ToolCallComplete` calls that
ends with one :class:`StepEnd`. Raising before the first event is a failed request (the runtime
may retry it); raising after it is a cut stream (the step ends ``INTERRUPTED``).

:class:`StepBuilder` folds those events; the runtime uses it to decide what to save, and
tests and providers use it to check event order.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

from .messages import AssistantMessage, Message, StopReason, ToolCall, Usage, parse_stop_reason

__all__ = [
    "Model",
    "ModelEvent",
    "ModelRequest",
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


ModelEvent: TypeAlias = TextDelta | ToolCallComplete | StepEnd


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
    """

    __slots__ = ("_parts", "end", "events", "tool_calls")

    def __init__(self) -> None:
        self._parts: list[str] = []
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
            self._parts.append(event.text)
        elif isinstance(event, ToolCallComplete):
            if any(c.id == event.call.id for c in self.tool_calls):
                raise ValueError(f"model sent tool call id {event.call.id!r} twice in one step")
            self.tool_calls.append(event.call)
        elif isinstance(event, StepEnd):
            self.end = event
        else:
            raise TypeError(f"not a model event: {event!r:.80}")
        self.events += 1

    def to_message(
        self, *, stop_reason: StopReason | str | None, model: str | None
    ) -> AssistantMessage:
        """The assistant message for this step with ``stop_reason``.

        Tool calls are kept only when the step really asks for tools; a step cut short
        (interrupted, output limit, refusal, ...) saves its text and its calls never run.
        """
        keep_calls = stop_reason in (None, StopReason.TOOL_USE, StopReason.END_TURN)
        return AssistantMessage(
            content=self.text,
            tool_calls=tuple(self.tool_calls) if keep_calls else (),
            stop_reason=stop_reason,
            model=model,
            usage=self.end.usage if self.end is not None else None,
        )
