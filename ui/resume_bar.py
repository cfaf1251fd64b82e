"""The Resume bar: a non-modal strip above the transcript saying why a request stopped.

It says what happened and what Resume will do (the message), the same at more length (its
tooltip), and offers Resume (or Continue), Resume with another model, and Dismiss. Where
resuming cannot help (a refusal, a full context window) it explains the next step and offers no
Resume button. What it says and offers is decided by :mod:`ui.resume_text`; this widget only
renders it, in the transcript's visual language: painted as a rounded card in the draft's
colours (``draft_bg``, ``draft_border``; the ⚠ in ``warning``, text in ``text`` of
:mod:`ui.theme`), spaced on ``SPACE``. No style sheet: a style sheet fixes the widget's palette,
so a theme change would never reach it; painted from its palette, it follows every change.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QRectF, Qt, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QBoxLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.services import ResumeInfo

from .plain import plain_tooltip
from .resume_text import DISMISS_TOOLTIP, ResumeBarText, ResumeLabel, notice_text, resume_bar_text
from .theme import SPACE, Tokens, tokens_for

__all__ = ["ACCESSIBLE_NAMES", "ResumeBar", "bar_colours"]

#: What a screen reader calls each part of the bar (object name → phrase).
ACCESSIBLE_NAMES = {
    "resumeBar": "Interrupted request",
    "resumeButton": "Resume the interrupted answer",
    "resumeWithModelButton": "Resume with another model",
    "dismissResumeButton": "Dismiss",
}
#: The Resume button's spoken name per label (Continue carries on, it does not redo).
_SPOKEN = {
    ResumeLabel.RESUME: ACCESSIBLE_NAMES["resumeButton"],
    ResumeLabel.CONTINUE: "Continue the answer where it stopped",
}
RADIUS = SPACE[1]
#: Narrower than this (px), the buttons go under the words: beside them, the words would be
#: squeezed into a tall thin column (a 480 px window).
NARROW = 640


def bar_colours(tokens: Tokens) -> tuple[QColor, QColor, QColor, QColor]:
    """The bar's fill, outline, text and ⚠ colours on ``tokens`` (the draft card's)."""
    return (
        tokens.color("draft_bg"),
        tokens.color("draft_border"),
        tokens.color("text"),
        tokens.color("warning"),
    )


class ResumeBar(QFrame):
    resumeRequested = Signal()
    resumeWithModelRequested = Signal(str)
    dismissRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resumeBar")
        self.setAccessibleName(ACCESSIBLE_NAMES["resumeBar"])
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.icon = QLabel("⚠")
        self.icon.setObjectName("resumeIcon")
        self.icon.setAccessibleName("Warning")
        bold = self.icon.font()
        bold.setBold(True)
        self.icon.setFont(bold)
        self.icon.setAlignment(Qt.AlignmentFlag.AlignTop)
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
        self.resume_button.setAccessibleName(ACCESSIBLE_NAMES["resumeButton"])
        self.resume_button.setDefault(True)
        self.other_button = QToolButton()
        self.other_button.setObjectName("resumeWithModelButton")
        self.other_button.setAccessibleName(ACCESSIBLE_NAMES["resumeWithModelButton"])
        self.other_button.setText("Other model…")
        self.other_button.setToolTip("Resume with another model")
        self.other_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.other_menu = QMenu(self.other_button)
        self.other_button.setMenu(self.other_menu)
        self.dismiss_button = QPushButton("Dismiss")
        self.dismiss_button.setObjectName("dismissResumeButton")
        self.dismiss_button.setAccessibleName(ACCESSIBLE_NAMES["dismissResumeButton"])
        self.dismiss_button.setToolTip(DISMISS_TOOLTIP)

        text = QVBoxLayout()
        text.setSpacing(SPACE[0])
        text.addWidget(self.message)
        text.addWidget(self.tools)
        buttons = QHBoxLayout()
        buttons.setSpacing(SPACE[1])
        buttons.addWidget(self.resume_button)
        buttons.addWidget(self.other_button)
        buttons.addWidget(self.dismiss_button)
        # Wide: the words, then the buttons on the same line; narrow: the buttons under them.
        self._column = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        self._column.setSpacing(SPACE[2])
        self._column.addLayout(text, 1)
        self._column.addLayout(buttons)
        self._buttons = buttons
        layout = QHBoxLayout(self)
        layout.setContentsMargins(SPACE[2], SPACE[1], SPACE[2], SPACE[1])
        layout.setSpacing(SPACE[2])
        layout.addWidget(self.icon)
        layout.addLayout(self._column, 1)

        self.resume_button.clicked.connect(self.resumeRequested)
        self.dismiss_button.clicked.connect(self.dismissRequested)
        self.other_menu.triggered.connect(self._other_model_chosen)
        self.info: ResumeInfo | None = None
        self.restyle()
        self.hide()

    # --- looks -----------------------------------------------------------------------------

    def tokens(self) -> Tokens:
        """The theme the bar is drawn in (its palette's, inherited from the window)."""
        return tokens_for(self.palette())

    def restyle(self) -> None:
        """The words' colours on the current theme (again after each theme change); the card
        itself is painted from the palette on each paint."""
        _, _, text, warning = bar_colours(self.tokens())
        for label, colour in ((self.message, text), (self.tools, text), (self.icon, warning)):
            palette = QPalette(label.palette())
            if palette.color(QPalette.ColorRole.WindowText) != colour:
                palette.setColor(QPalette.ColorRole.WindowText, colour)
                label.setPalette(palette)
        self.update()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.restyle()
        super().changeEvent(event)

    @property
    def stacked(self) -> bool:
        """Whether the buttons are under the words (a narrow bar), not beside them."""
        return self._column.direction() is QBoxLayout.Direction.TopToBottom

    def resizeEvent(self, event: QResizeEvent) -> None:
        narrow = event.size().width() < NARROW
        if narrow is not self.stacked:
            self._column.setDirection(
                QBoxLayout.Direction.TopToBottom if narrow else QBoxLayout.Direction.LeftToRight
            )
            self._column.setAlignment(
                self._buttons,
                Qt.AlignmentFlag.AlignRight if narrow else Qt.AlignmentFlag.AlignVCenter,
            )
        super().resizeEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        fill, border, _, _ = bar_colours(self.tokens())
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(border, 1))
        painter.setBrush(fill)
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), RADIUS, RADIUS)
        painter.end()

    # --- contents --------------------------------------------------------------------------

    def _other_model_chosen(self, action: QAction) -> None:
        self.resumeWithModelRequested.emit(action.data())

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
        self._render(resume_bar_text(info))

    def show_notice(self, text: str) -> None:
        """A message with nothing to resume (e.g. a failure before anything was saved)."""
        self.info = None
        self._render(notice_text(text))

    def _render(self, text: ResumeBarText) -> None:
        """Show what :mod:`ui.resume_text` decided (the words and buttons are decided there)."""
        self.message.setText(text.message)
        self.message.setToolTip(plain_tooltip(text.tooltip))
        self.setAccessibleDescription(text.message)
        if text.resume is not None:
            self.resume_button.setText(text.resume.value)
            self.resume_button.setAccessibleName(_SPOKEN[text.resume])
            self.resume_button.setToolTip(plain_tooltip(text.resume_tooltip))
        self.resume_button.setVisible(text.resume is not None)
        self.other_button.setVisible(text.other_model)
        self.dismiss_button.setVisible(text.dismiss)
        tools = text.tools_html
        self.tools.setText(tools)
        self.tools.setVisible(bool(tools))
        self.restyle()  # the theme may have changed while it was hidden
        self.show()
