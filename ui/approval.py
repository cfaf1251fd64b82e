"""``ApprovalCard``: "may this tool run?" — shown right under the transcript, above the composer.

It shows the pending call (the tool, its arguments; a unified diff for ``edit_file``, the path
and a content preview for ``write_file``) and three buttons: Allow once / Allow for this
conversation / Deny. Each request is an ``asyncio.Future`` the controller awaits; the buttons
resolve it. Several requests (one step's concurrent calls) are asked one after the other. A
future cancelled elsewhere (Stop) simply leaves the queue.
"""

from __future__ import annotations

import asyncio
import difflib
import json
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app import ToolCall
from app.workspace import ApprovalDecision

__all__ = ["ApprovalCard", "describe_call"]

PREVIEW_CHARS = 4000


def describe_call(call: ToolCall) -> str:
    """The call's arguments for a person: a diff for edits, the content for writes."""
    args: dict[str, Any] = dict(call.arguments_dict())
    if call.name == "edit_file" and {"old_text", "new_text"} <= args.keys():
        path = str(args.get("path", ""))
        diff = difflib.unified_diff(
            str(args["old_text"]).splitlines(keepends=True),
            str(args["new_text"]).splitlines(keepends=True),
            fromfile=f"a/{path}", tofile=f"b/{path}",
        )
        text = "".join(line if line.endswith("\n") else line + "\n" for line in diff)
        return text[:PREVIEW_CHARS]
    if call.name == "write_file" and "content" in args:
        content = str(args["content"])
        more = len(content) - PREVIEW_CHARS
        tail = f"\n… ({more} more characters)" if more > 0 else ""
        return f"path: {args.get('path', '')}\n--- content ---\n{content[:PREVIEW_CHARS]}{tail}"
    return json.dumps(args, indent=2, ensure_ascii=False)[:PREVIEW_CHARS]


class ApprovalCard(QFrame):
    """Asks the person about one pending tool call at a time (see the module docstring)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("approvalCard")
        self.setAccessibleName("Tool approval")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet("QFrame#approvalCard { background: rgba(142, 36, 170, 28); "
                           "border: 1px solid rgba(142, 36, 170, 150); border-radius: 6px; }")
        self.title = QLabel()
        self.title.setObjectName("approvalTitle")
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.details = QPlainTextEdit()
        self.details.setObjectName("approvalDetails")
        self.details.setReadOnly(True)
        self.details.setMaximumHeight(180)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.TypeWriter)
        self.details.setFont(mono)
        self.allow_once_button = QPushButton("Allow once")
        self.allow_once_button.setObjectName("approveOnceButton")
        self.allow_once_button.setAccessibleName("approveOnceButton")
        self.allow_conversation_button = QPushButton("Allow for this conversation")
        self.allow_conversation_button.setObjectName("approveConversationButton")
        self.allow_conversation_button.setAccessibleName("approveConversationButton")
        self.deny_button = QPushButton("Deny")
        self.deny_button.setObjectName("denyButton")
        self.deny_button.setAccessibleName("denyButton")
        buttons = QHBoxLayout()
        buttons.addWidget(self.allow_once_button)
        buttons.addWidget(self.allow_conversation_button)
        buttons.addStretch(1)
        buttons.addWidget(self.deny_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.addWidget(self.title)
        layout.addWidget(self.details)
        layout.addLayout(buttons)
        self.allow_once_button.clicked.connect(
            lambda: self._answer(ApprovalDecision.ALLOW_ONCE))
        self.allow_conversation_button.clicked.connect(
            lambda: self._answer(ApprovalDecision.ALLOW_CONVERSATION))
        self.deny_button.clicked.connect(lambda: self._answer(ApprovalDecision.DENY))
        self._queue: list[tuple[ToolCall, asyncio.Future[ApprovalDecision]]] = []
        self.hide()

    @property
    def current_call(self) -> ToolCall | None:
        return self._queue[0][0] if self._queue else None

    def ask(self, call: ToolCall, future: asyncio.Future[ApprovalDecision]) -> None:
        """Queue a question; ``future`` gets the answer (cancel it to withdraw the question)."""
        self._queue.append((call, future))
        future.add_done_callback(lambda _f: self._withdraw(future))
        self._show_head()

    def _withdraw(self, future: asyncio.Future[ApprovalDecision]) -> None:
        self._queue = [(c, f) for c, f in self._queue if f is not future]
        self._show_head()

    def _answer(self, decision: ApprovalDecision) -> None:
        if not self._queue:
            return
        _call, future = self._queue[0]
        if not future.done():
            future.set_result(decision)  # the done callback moves on to the next question

    def _show_head(self) -> None:
        if not self._queue:
            self.hide()
            return
        call = self._queue[0][0]
        waiting = len(self._queue) - 1
        more = f" ({waiting} more waiting)" if waiting else ""
        self.title.setText(f"Allow the tool “{call.name}” to run?{more}")
        self.details.setPlainText(describe_call(call))
        self.show()
        self.allow_once_button.setFocus()
