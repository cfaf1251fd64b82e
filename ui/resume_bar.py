"""The Resume bar: a non-modal strip above the transcript saying why a request stopped.

It says what happened in words (the stop record the app wrote), what resuming will do (the
resume point's description, as a tooltip), and offers Resume, Resume with another model, and
Dismiss. Where resuming cannot help (a refusal, a full context window) it explains the next step
and offers no Resume button. What it says and offers is decided by :mod:`ui.resume_text`; this
widget only renders it.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
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

from app.services import ResumeInfo

from .plain import plain_tooltip
from .resume_text import ResumeBarText, notice_text, resume_bar_text

__all__ = ["ResumeBar"]


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
        self.setStyleSheet(
            "QFrame#resumeBar { background: rgba(255, 152, 0, 38); "
            "border: 1px solid rgba(230, 120, 0, 170); border-radius: 6px; }"
        )
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
        self.other_menu.triggered.connect(self._other_model_chosen)
        self.info: ResumeInfo | None = None
        self.hide()

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
        if text.resume is not None:
            self.resume_button.setText(text.resume.value)
            self.resume_button.setToolTip(plain_tooltip(text.resume_tooltip))
        self.resume_button.setVisible(text.resume is not None)
        self.other_button.setVisible(text.other_model)
        self.dismiss_button.setVisible(text.dismiss)
        tools = text.tools_html
        self.tools.setText(tools)
        self.tools.setVisible(bool(tools))
        self.show()
