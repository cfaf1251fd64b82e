"""How each core event changes the transcript's rows (what the controller does per event)."""

from __future__ import annotations

from collections.abc import Callable

from app import (
    AgentEvent,
    MessageSavedEvent,
    ModelStoppedEvent,
    ReasoningDeltaEvent,
    ResumeKind,
    RetryEvent,
    RunCompletedEvent,
    RunStartedEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
)

from .transcript.model import TranscriptModel

__all__ = ["apply_event"]


def apply_event(model: TranscriptModel, event: AgentEvent, status: Callable[[str], None]) -> None:
    """Show ``event`` in ``model``; ``status`` says a passing fact (a retry) in words."""
    if isinstance(event, TextDeltaEvent):
        model.append_delta(event.text)
    elif isinstance(event, ReasoningDeltaEvent):
        model.append_reasoning(event.text)  # shown collapsed: "Thinking…"
    elif isinstance(event, ToolCallEvent):
        model.tool_called(event.call)
    elif isinstance(event, ToolResultEvent):
        model.tool_result(event.message)
    elif isinstance(event, MessageSavedEvent):
        model.message_saved(event.message, event.seq)
    elif isinstance(event, ModelStoppedEvent):
        model.finish_streaming(stop_reason=event.stop_reason)
    elif isinstance(event, RetryEvent):
        # Tenths: a 0.2 s Retry-After must not read "trying again in 0 s".
        delay = f"{event.delay:.1f}".removesuffix(".0")
        status(f"{event.error} — trying again in {delay} s (attempt {event.attempt})")
    elif isinstance(event, RunStartedEvent):
        if event.resume_kind is ResumeKind.CONTINUE_RESPONSE:
            model.continue_joined()
    elif isinstance(event, RunCompletedEvent):
        # The interrupted text was kept on screen until the request it belonged to was
        # answered; the answer has now replaced it (the stored draft is cleared likewise).
        model.remove_drafts()
