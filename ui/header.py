"""The row above the conversation: the sidebar button, the provider, the workspace folder, the
model picker (the model the open conversation uses; its tooltip names the provider) and the
conversation-settings button next to it — laid out to fit any width.

Texts that can be long (the provider's address, the folder's name) are elided with "…" at the
width they get instead of holding the window wide; below :data:`COMPACT_WIDTH` the "Model:"
caption goes. The widgets are plain attributes: :mod:`ui.flows` sets their texts.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QStyle,
    QStyleOptionButton,
    QToolButton,
    QWidget,
)

from .theme import SPACE

__all__ = ["COMPACT_WIDTH", "ElidedButton", "ElidedLabel", "HeaderBar"]

#: Below this width the header drops its "Model:" caption.
COMPACT_WIDTH = 640


class ElidedLabel(QLabel):
    """A one-line plain-text label that shows "…" instead of widening its window."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def minimumSizeHint(self) -> QSize:
        return QSize(0, super().minimumSizeHint().height())

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        rect = self.contentsRect()
        text = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, rect.width())
        painter.setPen(self.palette().color(self.foregroundRole()))
        align = Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft
        painter.drawText(rect, int(align), text)


class ElidedButton(QPushButton):
    """A flat button whose text is elided to the width it gets (its tooltip holds the rest)."""

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), 90), hint.height())

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        return QSize(min(hint.width(), 260), hint.height())

    def shown_text(self) -> str:
        """The text as painted: elided in the middle only when the button has no room."""
        option = QStyleOptionButton()
        self.initStyleOption(option)
        contents = self.style().subElementRect(
            QStyle.SubElement.SE_PushButtonContents, option, self
        )
        room = contents.width() - SPACE[0]
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideMiddle, room)

    def paintEvent(self, event: QPaintEvent) -> None:
        option = QStyleOptionButton()
        self.initStyleOption(option)
        option.text = self.shown_text()
        painter = QPainter(self)
        self.style().drawControl(QStyle.ControlElement.CE_PushButton, option, painter, self)


class HeaderBar(QWidget):
    """Sidebar button · provider (elided) · workspace folder · Model: [picker]."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("headerBar")
        self.sidebar_button = QToolButton()
        self.sidebar_button.setObjectName("sidebarButton")
        self.sidebar_button.setText("☰")
        self.sidebar_button.setAutoRaise(True)
        self.sidebar_button.setAccessibleName("Show or hide the conversation list")
        self.sidebar_button.setToolTip("Show or hide the conversation list (Ctrl+Shift+S)")
        self.provider_label = ElidedLabel()
        self.provider_label.setObjectName("providerLabel")
        self.provider_label.setAccessibleName("Provider")
        self.workspace_button = ElidedButton("No workspace folder")
        self.workspace_button.setObjectName("workspaceButton")
        self.workspace_button.setAccessibleName("Workspace folder")
        self.workspace_button.setFlat(True)
        self.workspace_button.setToolTip(
            "The folder this conversation's file tools may read and write (click to choose)"
        )
        self.model_caption = QLabel("Model:")
        self.model_picker = QComboBox()
        self.model_picker.setObjectName("modelPicker")
        self.model_picker.setAccessibleName("Model")
        self.model_picker.setToolTip("The model that answers new messages")
        self.model_picker.setMinimumContentsLength(8)
        self.model_picker.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.model_caption.setBuddy(self.model_picker)
        #: Opens the conversation panel (its system prompt, provider, model, parameters).
        self.setup_button = QToolButton()
        self.setup_button.setObjectName("conversationSetupButton")
        self.setup_button.setText("⚙")
        self.setup_button.setAutoRaise(True)
        self.setup_button.setAccessibleName("Conversation settings")
        self.setup_button.setToolTip(
            "This conversation's system prompt, provider, model and parameters (Ctrl+Shift+,)"
        )
        self.ready = True
        row = QHBoxLayout(self)
        row.setContentsMargins(SPACE[1], SPACE[1] - 2, SPACE[1], 0)
        row.setSpacing(SPACE[1])
        row.addWidget(self.sidebar_button)
        row.addWidget(self.provider_label, 1)
        row.addWidget(self.workspace_button)
        row.addWidget(self.model_caption)
        row.addWidget(self.model_picker)
        row.addWidget(self.setup_button)

    def set_ready(self, ready: bool) -> None:
        """Before a provider is set up there is no model to pick and no folder to choose."""
        self.ready = ready
        self.model_picker.setVisible(ready)
        self.setup_button.setVisible(ready)
        self.workspace_button.setVisible(ready)
        self.model_caption.setVisible(ready and self.width() >= COMPACT_WIDTH)

    def minimumSizeHint(self) -> QSize:
        # Never held wide by the caption: it goes below COMPACT_WIDTH anyway.
        hint = super().minimumSizeHint()
        if self.model_caption.isVisible():
            hint.setWidth(hint.width() - self.model_caption.sizeHint().width() - SPACE[1])
        return hint

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.model_caption.setVisible(self.ready and event.size().width() >= COMPACT_WIDTH)
