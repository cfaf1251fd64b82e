"""``ApprovalCard``: "may this tool run?" — shown right under the transcript, above the composer.

It shows the pending call in the transcript's visual language (a rounded card on the theme's
tokens, re-applied on every palette change): "Allow **edit_file** to run?", one human line of
what it will do (from :mod:`ui.approval_view`), and a :class:`DiffView` — a coloured unified diff
with the file's real old/new line numbers for ``edit_file``, the path inside the workspace and
the content (or, for an overwrite, the diff against the current file) for ``write_file``, the
arguments as ``key: value`` rows for other tools. The card is as tall as its content; a long
diff scrolls inside (the card stays within 40% of the window). :meth:`ApprovalCard.set_workspace`
tells it the open conversation's folder (to find an edit's lines and whether a write
overwrites).
Three buttons (Allow once, the primary one / Allow for this conversation / Deny) flow into
more rows when the card is narrow.

Each request is an ``asyncio.Future`` the controller awaits; the buttons resolve it. Several
requests (one step's concurrent calls) are asked one after the other. A future cancelled
elsewhere (Stop) simply leaves the queue.

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
import html
import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import (
    QFont,
    QKeySequence,
    QPainter,
    QPaintEvent,
    QPen,
    QResizeEvent,
    QShortcut,
    QShowEvent,
)
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app import ToolCall
from app.services import ApprovalDecision

from .approval_view import CallView, RowKind, button_rows, plan_call, probe
from .diff_view import DiffView
from .theme import LIGHT, SPACE, TYPE_SCALE, Tokens, tokens_for

__all__ = ["ApprovalCard", "describe_call"]

log = logging.getLogger(__name__)

# How long a new question ignores mouse presses and chords (a double-click is ≤ ~400 ms).
ARM_MS = 500
ALLOW_ONCE_KEYS = "Ctrl+Shift+A"
DENY_KEYS = "Ctrl+Shift+D"
#: The card's tallest, as a share of the window (a longer diff scrolls inside it).
CARD_SHARE = 0.4
#: The diff is never shorter than this when it has to scroll.
DIFF_MIN = 96
_PRESSES = frozenset(
    {
        QEvent.Type.MouseButtonPress,
        QEvent.Type.MouseButtonDblClick,
        QEvent.Type.MouseButtonRelease,
        QEvent.Type.KeyPress,
        QEvent.Type.KeyRelease,
    }
)


def _target(call: ToolCall, root: Path | None) -> CallView:
    args = call.arguments_dict()
    path = args.get("path")
    try:
        target = probe(root, path) if isinstance(path, str) and root is not None else None
    except Exception:  # a bug: still ask, without the file's details
        log.exception("approval card: looking at %r failed", path)
        target = None
    return plan_call(call.name, args, target)


def describe_call(call: ToolCall, root: Path | None = None) -> str:
    """The card's words for a call as plain text (a unified diff for edits)."""
    view = _target(call, root)
    lines = [view.summary]
    for row in view.rows:
        if row.kind is RowKind.FILE:
            lines += [f"--- a/{row.text}", f"+++ b/{row.text}"]
        elif row.kind is RowKind.ARG:
            lines.append(f"{row.label}: {row.text}")
        elif row.kind in (RowKind.HUNK, RowKind.NOTE):
            lines.append(row.text or "@@")
        else:
            lines.append({RowKind.ADD: "+", RowKind.DELETE: "-"}.get(row.kind, " ") + row.text)
    return "\n".join(lines)


class ApprovalCard(QFrame):
    """Asks the person about one pending tool call at a time (see the module docstring)."""

    def __init__(
        self,
        parent: QWidget | None = None,
        workspace: Path | str | Callable[[], Path | str | None] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("approvalCard")
        self.setAccessibleName("Tool approval")
        self._workspace: Path | str | Callable[[], Path | str | None] | None = workspace
        self.tokens: Tokens = LIGHT  # the theme it is painted in (from its palette)
        self._styled = False
        self._restyling = False
        self.title = QLabel()
        self.title.setObjectName("approvalTitle")
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.summary = QLabel()
        self.summary.setObjectName("approvalSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.details = DiffView()
        self.details.setObjectName("approvalDetails")
        self.details.reflowed.connect(self._fit)
        self.view: CallView | None = None
        self.allow_once_button = self._button(
            f"Allow once ({ALLOW_ONCE_KEYS})",
            "approveOnceButton",
            "Allow once",
            f"Run this call once. Shortcut: {ALLOW_ONCE_KEYS}",
        )
        self.allow_conversation_button = self._button(
            "Allow for this conversation",
            "approveConversationButton",
            "Allow for this conversation",
            "Run this tool without asking again in this conversation (click only)",
        )
        self.deny_button = self._button(
            f"Deny ({DENY_KEYS})", "denyButton", "Deny", f"Do not run it. Shortcut: {DENY_KEYS}"
        )
        self.allow_once_shortcut = self._shortcut(ALLOW_ONCE_KEYS, ApprovalDecision.ALLOW_ONCE)
        self.deny_shortcut = self._shortcut(DENY_KEYS, ApprovalDecision.DENY)
        self._arm_timer = QTimer(self)
        self._arm_timer.setSingleShot(True)
        self._arm_timer.setInterval(ARM_MS)
        self._arm_timer.timeout.connect(lambda: self._set_armed(True))
        self._armed = False
        self._head: tuple[ToolCall, asyncio.Future[ApprovalDecision]] | None = None
        self._host: QWidget | None = None
        self._button_layout = QVBoxLayout()
        self._button_layout.setSpacing(SPACE[1])
        self._arrangement: list[list[int]] = []
        layout = self._outer = QVBoxLayout(self)
        layout.setContentsMargins(SPACE[2], SPACE[2], SPACE[2], SPACE[2])
        layout.setSpacing(SPACE[1])
        layout.addWidget(self.title)
        layout.addWidget(self.summary)
        layout.addWidget(self.details)
        layout.addLayout(self._button_layout)
        self._arrange()
        self.allow_once_button.clicked.connect(lambda: self._answer(ApprovalDecision.ALLOW_ONCE))
        self.allow_conversation_button.clicked.connect(
            lambda: self._answer(ApprovalDecision.ALLOW_CONVERSATION)
        )
        self.deny_button.clicked.connect(lambda: self._answer(ApprovalDecision.DENY))
        self._queue: list[tuple[ToolCall, asyncio.Future[ApprovalDecision]]] = []
        self._restyle()
        self.hide()

    def _button(self, text: str, name: str, accessible: str, tip: str) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.setAccessibleName(accessible)
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

    def set_workspace(self, root: Path | str | Callable[[], Path | str | None] | None) -> None:
        """The open conversation's workspace folder, or a function giving it (asked at each
        new question); ``None``: none, or unknown (the card then says less)."""
        self._workspace = root

    def workspace(self) -> Path | None:
        """The workspace folder the next question is looked up in."""
        root = self._workspace() if callable(self._workspace) else self._workspace
        return Path(root) if root else None

    @property
    def buttons(self) -> tuple[QPushButton, QPushButton, QPushButton]:
        return (self.allow_once_button, self.allow_conversation_button, self.deny_button)

    @property
    def armed(self) -> bool:
        """Whether mouse presses and chords count yet (``ARM_MS`` after each new question)."""
        return self._armed

    def _set_armed(self, armed: bool) -> None:
        self._armed = armed and bool(self._queue)
        for shortcut in (self.allow_once_shortcut, self.deny_shortcut):
            shortcut.setEnabled(self._armed)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._host:  # the window: the diff's bound follows its height
            if event.type() == QEvent.Type.Resize:
                self._fit()
            return False
        # Swallowing the press means the button never goes down, so its release cannot click.
        return not self._armed and event.type() in _PRESSES

    # --- looks -------------------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (
            QEvent.Type.PaletteChange,
            QEvent.Type.ApplicationPaletteChange,
            QEvent.Type.FontChange,
        ):
            self._restyle(force=event.type() == QEvent.Type.FontChange)

    def _restyle(self, force: bool = False) -> None:
        """The theme's tokens on the card, its diff and its buttons (again on a palette change:
        a style sheet resolves its colours once, so each is rebuilt). The card itself is painted
        (no style sheet on it), so it keeps following the window's palette."""
        t = tokens_for(self.palette())
        if self._restyling or (t is self.tokens and self._styled and not force):
            return
        self._restyling, self.tokens, self._styled = True, t, True
        try:
            shape = f"border-radius: 6px; padding: {SPACE[0] + 1}px {SPACE[2]}px;"
            plain = (
                f"QPushButton {{ background: {t.surface}; color: {{color}};"
                f" border: 1px solid {t.border}; {shape} }}"
                f" QPushButton:hover {{ background: {t.code_header}; }}"
            )
            self.allow_conversation_button.setStyleSheet(plain.replace("{color}", t.text))
            self.deny_button.setStyleSheet(plain.replace("{color}", t.danger))
            self.allow_once_button.setStyleSheet(
                f"QPushButton {{ background: {t.accent}; color: {t.on_accent};"
                f" border: 1px solid {t.accent}; font-weight: 600; {shape} }}"
                f" QPushButton:hover {{ background: {t.color('accent').darker(115).name()}; }}"
            )
            self.details.setStyleSheet(
                f"QPlainTextEdit {{ background: {t.code_bg}; color: {t.code_text};"
                f" border: 1px solid {t.border}; border-radius: 4px;"
                f" selection-background-color: {t.selection_bg};"
                f" selection-color: {t.selection_text}; }}"
            )
            base = self.font()
            title = QFont(base)
            title.setPointSizeF(base.pointSizeF() * TYPE_SCALE["h3"])
            self.title.setFont(title)
            self.details.set_fonts(base)
            self._show_title()
            self._show_view()
            self.update()
        finally:
            self._restyling = False

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(self.tokens.color("border"), 1))
        painter.setBrush(self.tokens.color("tool_bg"))
        radius = float(SPACE[1])
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), radius, radius)
        painter.end()

    def _show_view(self) -> None:
        if self.view is not None:
            self.details.show_rows(self.view.rows, self.tokens)
            self._fit()

    def _fit(self) -> None:
        """As tall as the rows; the whole card at most ``CARD_SHARE`` of the window (a longer
        diff scrolls inside)."""
        host = self.window()
        height = host.height() if host is not self else 800
        chrome = self.sizeHint().height() - self.details.height()
        bound = max(DIFF_MIN, int(height * CARD_SHARE) - max(chrome, 0))
        self.details.setFixedHeight(min(self.details.content_height(), bound))

    def _arrange(self) -> None:
        """The buttons in one row (Deny at the far end), or flowed into more when narrow."""
        margins = self._outer.contentsMargins()
        inner = self.width() - margins.left() - margins.right()
        widths = [b.sizeHint().width() for b in self.buttons]
        rows = button_rows(widths, inner, SPACE[1])
        if rows == self._arrangement:
            return
        self._arrangement = rows
        while (item := self._button_layout.takeAt(0)) is not None:
            old = item.layout()
            if old is not None:
                while old.takeAt(0) is not None:
                    pass
                old.deleteLater()
        for row in rows:
            line = QHBoxLayout()
            line.setSpacing(SPACE[1])
            for index in row:
                if len(rows) == 1 and index == 2:
                    line.addStretch(1)
                line.addWidget(self.buttons[index])
            if len(rows) > 1:
                line.addStretch(1)
            self._button_layout.addLayout(line)

    def minimumSizeHint(self) -> QSize:
        # The buttons flow into more rows, so the card is never wider than its widest button.
        margins = self._outer.contentsMargins()
        widest = max(b.sizeHint().width() for b in self.buttons)
        hint = super().minimumSizeHint()
        return QSize(widest + margins.left() + margins.right(), hint.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._arrange()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        host = self.window()
        if host is not self and host is not self._host:
            if self._host is not None:
                self._host.removeEventFilter(self)
            self._host = host
            host.installEventFilter(self)
        self._arrange()
        self._fit()

    # --- the queue ---------------------------------------------------------------------------

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

    def _show_title(self) -> None:
        if not self._queue:
            return
        name = html.escape(self._queue[0][0].name)
        waiting = len(self._queue) - 1
        muted = self.tokens.muted
        more = f" <span style='color:{muted}'>· {waiting} more waiting</span>" if waiting else ""
        self.title.setText(f"Allow <b>{name}</b> to run?{more}")

    def _show_head(self) -> None:
        if not self._queue:
            self._head = None
            self._arm_timer.stop()
            self._set_armed(False)
            self.hide()
            return
        call = self._queue[0][0]
        self._show_title()
        if self._head is not self._queue[0]:  # a new question: unarmed for a moment
            self._head = self._queue[0]
            self.view = _target(call, self.workspace())
            self.summary.setText(self.view.summary)
            self.setAccessibleDescription(self.view.summary)
            self.details.setAccessibleName(
                "Arguments" if call.name not in ("edit_file", "write_file") else "Changes"
            )
            self.details.setVisible(bool(self.view.rows))
            self._show_view()
            # A button held down since the previous question must not click this one when the
            # mouse is released: a button that is not down ignores the release.
            for button in self.buttons:
                button.setDown(False)
            self._set_armed(False)
            self._arm_timer.start()
        self.show()  # never setFocus: the person may be typing in the composer
