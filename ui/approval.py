"""``ApprovalCard``: "may this tool run?" — shown right under the transcript, above the composer.

It shows the pending call (the tool, its arguments; a unified diff for ``edit_file``, the path
and a content preview for ``write_file``) and three buttons: Allow once / Allow for this
conversation / Deny. Each request is an ``asyncio.Future`` the controller awaits; the buttons
resolve it. Several requests (one step's concurrent calls) are asked one after the other. A
future cancelled elsewhere (Stop) simply leaves the queue.

Typing never answers (issue 11, item 1). The card appears while the person may be typing in the
composer, so it never takes keyboard focus: its buttons have ``Qt.NoFocus`` and are never default
or auto-default, and nothing calls ``setFocus`` — space and Enter keep going to the composer. An
answer needs a click or a deliberate chord shown on the button (Ctrl+Shift+A allows once,
Ctrl+Shift+D denies; "for this conversation" is click-only, it grants the most). The chords
ignore auto-repeat, so a key held down since before the card appeared never counts. Each new
question is *unarmed* for ``ARM_MS``: mouse presses on the buttons (the second half of a
double-click begun on what was there before, a click meant for a control the card pushed aside,
a double-click on the previous question's button) and the chords are ignored until then.
Programmatic ``click()`` (tests, a screen reader's press action) is always deliberate.
"""

from __future__ import annotations

import asyncio
import difflib
import json
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QFont, QKeySequence, QShortcut
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
from app.services import ApprovalDecision

__all__ = ["ApprovalCard", "describe_call"]

PREVIEW_CHARS = 4000
# How long a new question ignores mouse presses and chords (a double-click is ≤ ~400 ms).
ARM_MS = 500
ALLOW_ONCE_KEYS = "Ctrl+Shift+A"
DENY_KEYS = "Ctrl+Shift+D"
_PRESSES = frozenset(
    {
        QEvent.Type.MouseButtonPress,
        QEvent.Type.MouseButtonDblClick,
        QEvent.Type.MouseButtonRelease,
        QEvent.Type.KeyPress,
        QEvent.Type.KeyRelease,
    }
)


def describe_call(call: ToolCall) -> str:
    """The call's arguments for a person: a diff for edits, the content for writes."""
    args: dict[str, Any] = dict(call.arguments_dict())
    if call.name == "edit_file" and {"old_text", "new_text"} <= args.keys():
        path = str(args.get("path", ""))
        diff = difflib.unified_diff(
            str(args["old_text"]).splitlines(keepends=True),
            str(args["new_text"]).splitlines(keepends=True),
            fromfile=f"a/{path}",
            tofile=f"b/{path}",
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
        self.setStyleSheet(
            "QFrame#approvalCard { background: rgba(142, 36, 170, 28); "
            "border: 1px solid rgba(142, 36, 170, 150); border-radius: 6px; }"
        )
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
        self.allow_once_button = self._button(
            f"Allow once ({ALLOW_ONCE_KEYS})",
            "approveOnceButton",
            f"Run this call once. Shortcut: {ALLOW_ONCE_KEYS}",
        )
        self.allow_conversation_button = self._button(
            "Allow for this conversation",
            "approveConversationButton",
            "Run this tool without asking again in this conversation (click only)",
        )
        self.deny_button = self._button(
            f"Deny ({DENY_KEYS})", "denyButton", f"Do not run it. Shortcut: {DENY_KEYS}"
        )
        self.allow_once_shortcut = self._shortcut(ALLOW_ONCE_KEYS, ApprovalDecision.ALLOW_ONCE)
        self.deny_shortcut = self._shortcut(DENY_KEYS, ApprovalDecision.DENY)
        self._arm_timer = QTimer(self)
        self._arm_timer.setSingleShot(True)
        self._arm_timer.setInterval(ARM_MS)
        self._arm_timer.timeout.connect(lambda: self._set_armed(True))
        self._armed = False
        self._head: tuple[ToolCall, asyncio.Future[ApprovalDecision]] | None = None
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
        self.allow_once_button.clicked.connect(lambda: self._answer(ApprovalDecision.ALLOW_ONCE))
        self.allow_conversation_button.clicked.connect(
            lambda: self._answer(ApprovalDecision.ALLOW_CONVERSATION)
        )
        self.deny_button.clicked.connect(lambda: self._answer(ApprovalDecision.DENY))
        self._queue: list[tuple[ToolCall, asyncio.Future[ApprovalDecision]]] = []
        self.hide()

    def _button(self, text: str, name: str, tip: str) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.setAccessibleName(name)
        button.setToolTip(tip)
        # Never a key target: space/Enter typed for the composer must not press it.
        button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        button.setAutoDefault(False)
        button.setDefault(False)
        button.installEventFilter(self)
        return button

    def _shortcut(self, keys: str, decision: ApprovalDecision) -> QShortcut:
        shortcut = QShortcut(QKeySequence(keys), self)
        shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        shortcut.setAutoRepeat(False)  # a key held since before the card appeared is ignored
        shortcut.setEnabled(False)
        shortcut.activated.connect(lambda: self._answer(decision) if self._armed else None)
        return shortcut

    @property
    def armed(self) -> bool:
        """Whether mouse presses and chords count yet (``ARM_MS`` after each new question)."""
        return self._armed

    def _set_armed(self, armed: bool) -> None:
        self._armed = armed and bool(self._queue)
        for shortcut in (self.allow_once_shortcut, self.deny_shortcut):
            shortcut.setEnabled(self._armed)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # Swallowing the press means the button never goes down, so its release cannot click.
        return not self._armed and event.type() in _PRESSES

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
            self._head = None
            self._arm_timer.stop()
            self._set_armed(False)
            self.hide()
            return
        call = self._queue[0][0]
        waiting = len(self._queue) - 1
        more = f" ({waiting} more waiting)" if waiting else ""
        self.title.setText(f"Allow the tool “{call.name}” to run?{more}")
        if self._head is not self._queue[0]:  # a new question: unarmed for a moment
            self._head = self._queue[0]
            self.details.setPlainText(describe_call(call))
            # A button held down since the previous question must not click this one when the
            # mouse is released: a button that is not down ignores the release.
            for button in (
                self.allow_once_button,
                self.allow_conversation_button,
                self.deny_button,
            ):
                button.setDown(False)
            self._set_armed(False)
            self._arm_timer.start()
        self.show()  # never setFocus: the person may be typing in the composer
