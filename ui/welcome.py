"""The empty states: the first-launch panel, and the hint an empty conversation shows.

:class:`WelcomePanel` says what can answer right now on this machine: local model servers found
on their default loopback ports, an OpenAI-compatible or Anthropic endpoint with a key
(Settings), and "Try it offline", which starts the built-in provider simulator (labelled as
such: its answers are not a real model's). While it is the page nothing is set up: the window
puts the composer and the model picker away (``MainWindow._page_changed``).

:class:`EmptyConversationHint` lies over an empty transcript and says what to do and which
model answers (:func:`empty_hint_text`); it goes when the first row arrives.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QObject, QRect, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.services import LocalServer

from .plain import plain_tooltip
from .theme import SPACE, TYPE_SCALE, tokens_for

__all__ = ["EmptyConversationHint", "WelcomePanel", "empty_hint_text"]

#: The keys an empty conversation reminds of.
KEYS_LINE = "Enter sends · Shift+Enter starts a new line · Esc stops the answer"
#: The hint's column of words at most this wide (px), like the transcript's reading column.
HINT_WIDTH = 560


def empty_hint_text(model: str, simulator: bool = False) -> tuple[str, str]:
    """What an empty conversation says: a headline, and a line naming the model in use."""
    model = model.strip()
    if not model:
        return "Choose a model", "Pick one in the Model box above, then ask anything."
    if simulator:
        return "Ask anything", (
            f"Answers come from the offline simulator ({model}): it echoes your message "
            "slowly, so you can try Stop and Resume. It is not a real model."
        )
    return "Ask anything", (
        f"Answers from {model} are saved as they arrive: a stopped or broken answer "
        "can be resumed where it stopped."
    )


def _scaled(font: QFont, step: str, *, bold: bool = False) -> QFont:
    """``font`` at the type scale's ``step``."""
    font = QFont(font)
    if font.pointSizeF() > 0:
        font.setPointSizeF(font.pointSizeF() * TYPE_SCALE[step])
    else:
        font.setPixelSize(round(font.pixelSize() * TYPE_SCALE[step]))
    font.setBold(bold)
    return font


class WelcomePanel(QWidget):
    localServerChosen = Signal(object)  # LocalServer
    settingsRequested = Signal()
    offlineRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcomePanel")
        self.setAccessibleName("Welcome")
        title = QLabel("<h2>Welcome to Continuum</h2>")
        title.setAccessibleName("Welcome to Continuum")
        intro = QLabel(
            "Chats that survive interruptions: every message is saved as it "
            "completes, and a stopped or broken answer can be resumed where it "
            "stopped. Choose what should answer you:"
        )
        intro.setWordWrap(True)
        self.local_box = QVBoxLayout()
        self.local_status = QLabel("Looking for model servers on this computer…")
        self.local_status.setObjectName("welcomeLocalStatus")
        self.local_status.setWordWrap(True)
        self.local_box.addWidget(self.local_status)
        self.remote_button = QPushButton("Use an OpenAI-compatible or Anthropic API…")
        self.remote_button.setObjectName("welcomeRemoteButton")
        self.remote_button.setAccessibleName("Use an OpenAI-compatible or Anthropic API")
        self.offline_button = QPushButton("Try it offline (built-in simulator)")
        self.offline_button.setObjectName("welcomeOfflineButton")
        self.offline_button.setAccessibleName("Try it offline with the built-in simulator")
        self.offline_note = offline_note = QLabel(
            "The simulator runs inside Continuum and echoes your messages "
            "back slowly, so you can try Stop and Resume without a model. "
            "It is not a real model."
        )
        offline_note.setWordWrap(True)
        offline_note.setObjectName("welcomeOfflineNote")

        column = QVBoxLayout()
        column.setSpacing(SPACE[1])
        column.addWidget(title)
        column.addWidget(intro)
        column.addSpacing(SPACE[1])
        column.addWidget(self._section("On this computer"))
        column.addLayout(self.local_box)
        column.addSpacing(SPACE[1])
        column.addWidget(self._section("A provider with an API key"))
        column.addWidget(self.remote_button)
        column.addSpacing(SPACE[1])
        column.addWidget(self._section("No model at hand"))
        column.addWidget(self.offline_button)
        column.addWidget(offline_note)
        column.addStretch(1)
        frame = QFrame()
        frame.setLayout(column)
        frame.setMaximumWidth(HINT_WIDTH)
        outer = QHBoxLayout(self)
        outer.setContentsMargins(SPACE[3], SPACE[3], SPACE[3], SPACE[3])
        outer.addStretch(1)
        outer.addWidget(frame, 100)  # all the width a narrow window has, at most HINT_WIDTH
        outer.addStretch(1)
        self.remote_button.clicked.connect(self.settingsRequested)
        self.offline_button.clicked.connect(self.offlineRequested)
        self._server_buttons: list[QPushButton] = []
        self._paint_tokens()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._paint_tokens()
        super().changeEvent(event)

    def _paint_tokens(self) -> None:
        self.offline_note.setStyleSheet(f"color: {tokens_for(self.palette()).muted};")

    @staticmethod
    def _section(text: str) -> QLabel:
        label = QLabel(f"<b>{text}</b>")
        label.setTextFormat(Qt.TextFormat.RichText)
        return label

    def set_local_servers(self, servers: Sequence[LocalServer]) -> None:
        for button in self._server_buttons:
            button.deleteLater()
        self._server_buttons = []
        if not servers:
            self.local_status.setText(
                "No Ollama, LM Studio or llama.cpp server is running on "
                "this computer (checked their usual ports)."
            )
            return
        self.local_status.setText("Found:")
        for server in servers:
            models = ", ".join(server.models[:3]) or "no models listed"
            button = QPushButton(f"Use {server.name} — {models}")
            button.setToolTip(plain_tooltip(server.base_url))
            button.clicked.connect(lambda _=False, s=server: self.localServerChosen.emit(s))
            self.local_box.addWidget(button)
            self._server_buttons.append(button)


class EmptyConversationHint(QWidget):
    """Lies over ``view``'s viewport while its model has no rows: what to do, and the model in
    use (:meth:`set_model`). Clicks and wheel go through to the view."""

    def __init__(self, view: QAbstractItemView) -> None:
        viewport = view.viewport()
        super().__init__(viewport)
        self.setObjectName("emptyConversationHint")
        self.setAccessibleName("Empty conversation")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.title = QLabel()
        self.title.setObjectName("emptyHintTitle")
        self.line = QLabel()
        self.line.setObjectName("emptyHintLine")
        self.keys = QLabel(KEYS_LINE)
        self.keys.setObjectName("emptyHintKeys")
        for label in (self.title, self.line, self.keys):
            label.setTextFormat(Qt.TextFormat.PlainText)  # the model's name is not markup
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            label.setWordWrap(True)
        self._size_fonts()
        self._column = column = QVBoxLayout(self)
        column.setSpacing(SPACE[1])
        column.addStretch(1)
        for label in (self.title, self.line, self.keys):
            column.addWidget(label)
        column.addStretch(2)  # a little above the middle, where the eye lands
        self._view = view
        self._viewport = viewport
        model = view.model()
        assert model is not None, "set the view's model before its hint"
        for signal in (model.rowsInserted, model.rowsRemoved, model.modelReset):
            signal.connect(self._follow_rows)
        viewport.installEventFilter(self)
        self.set_model("")
        self._paint_tokens()
        self._fit(viewport.rect())
        self._follow_rows()

    def set_model(self, model: str, simulator: bool = False) -> None:
        """Name ``model`` (``simulator``: the built-in one) as what answers."""
        title, line = empty_hint_text(model, simulator)
        self.title.setText(title)
        self.line.setText(line)
        self.setAccessibleDescription(f"{title}. {line}")

    def _follow_rows(self, *_args: object) -> None:
        model = self._view.model()
        self.setVisible(model is not None and model.rowCount() == 0)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        viewport = self._viewport
        if watched is viewport and event.type() == QEvent.Type.Resize:
            self._fit(viewport.rect())
        return super().eventFilter(watched, event)

    def _fit(self, rect: QRect) -> None:
        """Cover ``rect`` (the viewport), the words in a centred column of readable width."""
        self.setGeometry(rect)
        side = max(SPACE[4], (rect.width() - HINT_WIDTH) // 2)
        self._column.setContentsMargins(side, SPACE[4], side, SPACE[4])

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._paint_tokens()
        elif event.type() == QEvent.Type.FontChange:  # View → Zoom scales the transcript's font
            self._size_fonts()
        super().changeEvent(event)

    def _size_fonts(self) -> None:
        self.title.setFont(_scaled(self.font(), "h2", bold=True))
        self.keys.setFont(_scaled(self.font(), "small"))

    def _paint_tokens(self) -> None:
        # Palettes, not style sheets: a style-sheeted label stops following the view's font.
        tokens = tokens_for(self.palette())
        for label, colour in ((self.title, tokens.text), (self.line, tokens.muted)):
            palette = label.palette()
            palette.setColor(QPalette.ColorRole.WindowText, QColor(colour))
            label.setPalette(palette)
        self.keys.setPalette(self.line.palette())
