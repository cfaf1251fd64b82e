"""The first-launch panel: what can answer right now on this machine.

It lists local model servers found on their default loopback ports, offers an OpenAI-compatible
or Anthropic endpoint with a key (Settings), and "Try it offline", which starts the built-in
provider simulator — labelled as such, because its answers are not a real model's.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.services import LocalServer

from .plain import plain_tooltip

__all__ = ["WelcomePanel"]


class WelcomePanel(QWidget):
    localServerChosen = Signal(object)  # LocalServer
    settingsRequested = Signal()
    offlineRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcomePanel")
        title = QLabel("<h2>Welcome to Continuum</h2>")
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
        self.offline_button = QPushButton("Try it offline (built-in simulator)")
        self.offline_button.setObjectName("welcomeOfflineButton")
        offline_note = QLabel(
            "The simulator runs inside Continuum and echoes your messages "
            "back slowly, so you can try Stop and Resume without a model. "
            "It is not a real model."
        )
        offline_note.setWordWrap(True)
        offline_note.setEnabled(False)

        column = QVBoxLayout()
        column.addWidget(title)
        column.addWidget(intro)
        column.addSpacing(8)
        column.addWidget(self._section("On this computer"))
        column.addLayout(self.local_box)
        column.addSpacing(8)
        column.addWidget(self._section("A provider with an API key"))
        column.addWidget(self.remote_button)
        column.addSpacing(8)
        column.addWidget(self._section("No model at hand"))
        column.addWidget(self.offline_button)
        column.addWidget(offline_note)
        column.addStretch(1)
        frame = QFrame()
        frame.setLayout(column)
        frame.setMaximumWidth(560)
        outer = QHBoxLayout(self)
        outer.addStretch(1)
        outer.addWidget(frame, 4)
        outer.addStretch(1)
        self.remote_button.clicked.connect(self.settingsRequested)
        self.offline_button.clicked.connect(self.offlineRequested)
        self._server_buttons: list[QPushButton] = []

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
