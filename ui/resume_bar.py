"""The Resume bar: a non-modal strip above the transcript saying why a request stopped.

It says what happened in words (the stop record the app wrote), what resuming will do (the
resume point's description, as a tooltip), and offers Resume, Resume with another model, and
Dismiss. Where resuming cannot help (a refusal, a full context window) it explains the next step
and offers no Resume button.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app import ToolCall
from app.resume import ResumeKind
from app.services import ResumeInfo

from .plain import plain_tooltip

__all__ = ["ResumeBar"]

_GENERIC = {
    ResumeKind.CALL_MODEL: "The last request did not get its answer.",
    ResumeKind.RECOVER_TOOLS: "The app stopped while tools were running.",
    ResumeKind.RETRY_RESPONSE: "The last answer was cut off before it finished.",
    ResumeKind.CONTINUE_RESPONSE: "The last answer stopped at the model's output limit.",
}
_NEXT_STEP = {
    "refused": "The model refused this request, and sending it again would be refused again. "
               "Rephrase your request in a new message instead.",
    "context_full": "This conversation no longer fits in the model's context window, so "
                    "resending it would fail again. Start a new conversation (Ctrl+N), perhaps "
                    "with a summary of this one, or choose a model with a larger context.",
}


def _argument_summary(arguments: object) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in dict(arguments).items())  # type: ignore[call-overload]
    return text if len(text) <= 80 else text[:77] + "…"


class ResumeBar(QFrame):
    resumeRequested = Signal()
    resumeWithModelRequested = Signal(str)
    dismissRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resumeBar")
        self.setAccessibleName("resumeBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        # Amber, translucent: readable on light and dark palettes alike.
        self.setStyleSheet("QFrame#resumeBar { background: rgba(255, 152, 0, 38); "
                           "border: 1px solid rgba(230, 120, 0, 170); border-radius: 6px; }")
        self.message = QLabel()
        self.message.setObjectName("resumeMessage")
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tools = QLabel()
        self.tools.setObjectName("resumeTools")
        self.tools.setWordWrap(True)
        self.tools.setTextFormat(Qt.TextFormat.RichText)
        self.resume_button = QPushButton("Resume")
        self.resume_button.setObjectName("resumeButton")
        self.resume_button.setAccessibleName("resumeButton")
        self.resume_button.setDefault(True)
        self.other_button = QToolButton()
        self.other_button.setObjectName("resumeWithModelButton")
        self.other_button.setAccessibleName("Resume with another model")
        self.other_button.setText("Other model…")
        self.other_button.setToolTip("Resume with another model")
        self.other_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.other_menu = QMenu(self.other_button)
        self.other_button.setMenu(self.other_menu)
        self.dismiss_button = QPushButton("Dismiss")
        self.dismiss_button.setObjectName("dismissResumeButton")
        self.dismiss_button.setAccessibleName("dismissResumeButton")

        text = QVBoxLayout()
        text.setSpacing(2)
        text.addWidget(self.message)
        text.addWidget(self.tools)
        buttons = QHBoxLayout()
        buttons.addWidget(self.resume_button)
        buttons.addWidget(self.other_button)
        buttons.addWidget(self.dismiss_button)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.addLayout(text, 1)
        layout.addLayout(buttons)

        self.resume_button.clicked.connect(self.resumeRequested)
        self.dismiss_button.clicked.connect(self.dismissRequested)
        self.other_menu.triggered.connect(
            lambda action: self.resumeWithModelRequested.emit(action.data()))
        self.info: ResumeInfo | None = None
        self.hide()

    def set_models(self, models: Sequence[str], current: str) -> None:
        self.other_menu.clear()
        for name in models:
            if name != current:
                action = self.other_menu.addAction(name)
                action.setData(name)
        self.other_button.setEnabled(bool(self.other_menu.actions()))

    def show_info(self, info: ResumeInfo | None) -> None:
        """Show the bar for ``info`` (``None`` hides it)."""
        self.info = info
        if info is None:
            self.hide()
            return
        point = info.point
        stop_kind = str(info.stop.kind) if info.stop else ""
        # A refusal or a full context window fails the same way when resent, even where the
        # history itself could be resumed (a context error before any output leaves CALL_MODEL).
        hopeless = info.blocked_reason in _NEXT_STEP or stop_kind in _NEXT_STEP
        if point is not None and not hopeless:
            words = info.stop.message if info.stop else _GENERIC[point.kind]
            self.message.setText(words)
            self.message.setToolTip(plain_tooltip(point.description))
            self.resume_button.setToolTip(plain_tooltip(point.description))
            self.resume_button.setText(
                "Continue" if point.kind is ResumeKind.CONTINUE_RESPONSE else "Resume")
            self.resume_button.show()
            self.other_button.show()
            if point.kind is ResumeKind.RECOVER_TOOLS and point.unanswered_tool_calls:
                def listed(calls: Sequence[ToolCall]) -> str:
                    return "".join(
                        f"<li><b>{html.escape(call.name)}</b>"
                        f"({html.escape(_argument_summary(call.arguments))})</li>"
                        for call in calls)

                parts = []
                if info.awaiting_approval:
                    parts.append(
                        "These tools did NOT run — they were waiting for your approval and "
                        "never started; Resume asks you again:"
                        f"<ul style='margin:0'>{listed(info.awaiting_approval)}</ul>")
                if info.may_have_run:
                    parts.append(
                        "These tools may or may not have run — resuming will not run them "
                        "again; check their effects yourself:"
                        f"<ul style='margin:0'>{listed(info.may_have_run)}</ul>")
                self.tools.setText("".join(parts))
                self.tools.show()
            else:
                self.tools.clear()
                self.tools.hide()
        else:
            reason = info.blocked_reason if info.blocked_reason in _NEXT_STEP else stop_kind
            parts = [info.stop.message] if info.stop else []
            parts.append(_NEXT_STEP.get(reason) or info.blocked_text or "")
            self.message.setText(" ".join(p for p in parts if p))
            self.message.setToolTip(
                plain_tooltip(point.description if point else (info.blocked_text or "")))
            self.resume_button.hide()
            # Another model (a larger context window, say) may still succeed.
            self.other_button.setVisible(point is not None and reason == "context_full")
            self.tools.hide()
        self.show()

    def show_notice(self, text: str) -> None:
        """A message with nothing to resume (e.g. a failure before anything was saved)."""
        self.info = None
        self.message.setText(text)
        self.message.setToolTip("")
        self.resume_button.hide()
        self.other_button.hide()
        self.tools.hide()
        self.show()
