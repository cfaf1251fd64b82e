"""Events of a running request (``Agent.stream`` and ``Agent.stream_resume`` yield the same kinds).

Every event has ``.type`` (an :class:`EventType`) and the fields its kind needs. A host renders
``TEXT_DELTA`` (and ``REASONING_DELTA``, apart from the answer) as it arrives, and treats
``MESSAGE_SAVED`` as "this is now durable".
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar, TypeAlias

from .messages import AssistantMessage, Message, StopReason, ToolCall, ToolMessage
from .resume import ResumeKind

__all__ = [
    "AgentEvent",
    "EventType",
    "MessageSavedEvent",
    "ModelStoppedEvent",
    "ReasoningDeltaEvent",
    "RetryEvent",
    "RunCompletedEvent",
    "RunStartedEvent",
    "TextDeltaEvent",
    "ToolCallEvent",
    "ToolResultEvent",
]


class EventType(StrEnum):
    RUN_STARTED = "run_started"
    TEXT_DELTA = "text_delta"
    REASONING_DELTA = "reasoning_delta"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    MESSAGE_SAVED = "message_saved"
    MODEL_STOPPED = "model_stopped"
    RETRY = "retry"
    RUN_COMPLETED = "run_completed"


@dataclass(frozen=True, slots=True)
class RunStartedEvent:
    """The request began; ``resume_kind`` is set when it resumes an interrupted one."""

    type: ClassVar[EventType] = EventType.RUN_STARTED
    session_id: str
    request_id: str
    resume_kind: ResumeKind | None = None


@dataclass(frozen=True, slots=True)
class TextDeltaEvent:
    """A piece of the model's text, as it arrives."""

    type: ClassVar[EventType] = EventType.TEXT_DELTA
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDeltaEvent:
    """A piece of the model's thinking, as it arrives (shown apart from the answer's text)."""

    type: ClassVar[EventType] = EventType.REASONING_DELTA
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallEvent:
    """The model asked for a tool (its arguments are whole)."""

    type: ClassVar[EventType] = EventType.TOOL_CALL
    call: ToolCall


@dataclass(frozen=True, slots=True)
class ToolResultEvent:
    """A tool call was answered (``message.success`` says how)."""

    type: ClassVar[EventType] = EventType.TOOL_RESULT
    call: ToolCall
    message: ToolMessage


@dataclass(frozen=True, slots=True)
class MessageSavedEvent:
    """``message`` is committed to the store as number ``seq`` of the session."""

    type: ClassVar[EventType] = EventType.MESSAGE_SAVED
    message: Message
    seq: int | None


@dataclass(frozen=True, slots=True)
class ModelStoppedEvent:
    """A step stopped abnormally (interrupted, output limit, paused, refusal, context full).

    ``error`` is the failure's text when the stream was cut by an error; ``message`` is the
    saved assistant message (``None`` when nothing of the step was worth saving).
    """

    type: ClassVar[EventType] = EventType.MODEL_STOPPED
    stop_reason: StopReason | str
    message: AssistantMessage | None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class RetryEvent:
    """A request failed before any output and will be retried after ``delay`` seconds."""

    type: ClassVar[EventType] = EventType.RETRY
    attempt: int
    delay: float
    error: str


@dataclass(frozen=True, slots=True)
class RunCompletedEvent:
    """The request ended without an exception; ``reply`` is its final assistant message."""

    type: ClassVar[EventType] = EventType.RUN_COMPLETED
    reply: AssistantMessage


AgentEvent: TypeAlias = (
    RunStartedEvent
    | TextDeltaEvent
    | ReasoningDeltaEvent
    | ToolCallEvent
    | ToolResultEvent
    | MessageSavedEvent
    | ModelStoppedEvent
    | RetryEvent
    | RunCompletedEvent
)
