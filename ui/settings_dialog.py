"""Settings: provider, base URL, model, system prompt, the API key (OS keyring only), and the
MCP servers Continuum starts (a name and a command line each).

The key never goes to the settings file or the database. Where this machine has no keyring the
dialog says so and names the environment variable Continuum reads instead.

"Test connection" tests the fields as they are (not yet saved) in the background on the app's
event loop (:func:`app.services.test_connection`) and shows what worked as plain ✓/✗/– lines.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import shlex

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.services import (
    DEFAULT_KEY_ENV,
    ConnectionReport,
    McpServerConfig,
    NoKeyringError,
    Settings,
    keyring_available,
    set_api_key,
    test_connection,
)

__all__ = ["DEFAULT_URLS", "SettingsDialog"]

log = logging.getLogger(__name__)

DEFAULT_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "simulator": "",
}
_KINDS = [
    ("OpenAI-compatible (OpenAI, Ollama, LM Studio, vLLM, OpenRouter…)", "openai"),
    ("Anthropic", "anthropic"),
    ("Offline simulator (no real model)", "simulator"),
]


class SettingsDialog(QDialog):
    #: "Test connection" finished: the :class:`ConnectionReport` now shown (``None`` if the
    #: test itself failed unexpectedly; the dialog then says so).
    connectionTested = Signal(object)

    def __init__(
        self, settings: Settings, parent: QWidget | None = None, models: list[str] | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.setWindowTitle("Settings")
        self.setMinimumWidth(520)
        self._settings = settings
        self.provider = QComboBox()
        self.provider.setObjectName("settingsProvider")
        for label, kind in _KINDS:
            self.provider.addItem(label, kind)
        self.base_url = QLineEdit(settings.base_url)
        self.base_url.setObjectName("settingsBaseUrl")
        self.model = QComboBox()
        self.model.setObjectName("settingsModel")
        self.model.setEditable(True)
        for name in models or []:
            self.model.addItem(name)
        self.model.setCurrentText(settings.model)
        self.system_prompt = QPlainTextEdit(settings.system_prompt)
        self.system_prompt.setObjectName("settingsSystemPrompt")
        self.system_prompt.setMaximumHeight(120)
        self.api_key = QLineEdit()
        self.api_key.setObjectName("settingsApiKey")
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText("Leave empty to keep the stored key")
        self.key_env = QLineEdit(settings.api_key_env or DEFAULT_KEY_ENV)
        self.key_env.setObjectName("settingsKeyEnv")
        self.key_note = QLabel()
        self.key_note.setObjectName("settingsKeyNote")
        self.key_note.setWordWrap(True)
        self.key_note.setTextFormat(Qt.TextFormat.PlainText)  # shows the typed variable name
        self.test_button = QPushButton("Test connection")
        self.test_button.setObjectName("testConnectionButton")
        self.test_button.setAccessibleName("Test connection")
        self.test_button.setToolTip(
            "Send a few tiny requests with the settings above (not saved yet) and say what worked"
        )
        self.test_button.clicked.connect(self._test_connection)
        self.test_result = QLabel()
        self.test_result.setObjectName("testConnectionResult")
        self.test_result.setAccessibleName("Connection test result")
        self.test_result.setWordWrap(True)
        self.test_result.setTextFormat(Qt.TextFormat.PlainText)  # quotes the URL and the server
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.test_result.hide()
        #: The running connection test, if any (the dialog stops it when it closes).
        self.connection_test: asyncio.Task[None] | None = None
        self.error = QLabel()
        self.error.setObjectName("settingsError")
        self.error.setWordWrap(True)
        self.error.setTextFormat(Qt.TextFormat.PlainText)  # may quote what the person typed
        self.error.setStyleSheet("color: #c62828;")
        self.error.hide()

        self.mcp_list = QListWidget()
        self.mcp_list.setObjectName("mcpList")
        self.mcp_list.setMaximumHeight(90)
        self.mcp_name = QLineEdit()
        self.mcp_name.setObjectName("mcpName")
        self.mcp_name.setPlaceholderText("Name, e.g. files")
        self.mcp_command = QLineEdit()
        self.mcp_command.setObjectName("mcpCommand")
        self.mcp_command.setPlaceholderText("Command line, e.g. npx -y some-mcp-server /path")
        self.mcp_add = QPushButton("Add")
        self.mcp_add.setObjectName("mcpAdd")
        self.mcp_remove = QPushButton("Remove")
        self.mcp_remove.setObjectName("mcpRemove")
        for server in settings.mcp_servers:
            self._add_server_item(server)
        self.mcp_add.clicked.connect(self._add_server)
        self.mcp_remove.clicked.connect(self._remove_server)
        mcp_box = QGroupBox("MCP servers (their tools ask before each run)")
        mcp_layout = QVBoxLayout(mcp_box)
        mcp_layout.addWidget(self.mcp_list)
        add_row = QHBoxLayout()
        add_row.addWidget(self.mcp_name, 1)
        add_row.addWidget(self.mcp_command, 3)
        add_row.addWidget(self.mcp_add)
        add_row.addWidget(self.mcp_remove)
        mcp_layout.addLayout(add_row)

        form = QFormLayout()
        form.addRow("Provider", self.provider)
        form.addRow("Base URL", self.base_url)
        form.addRow("Model", self.model)
        form.addRow("System prompt", self.system_prompt)
        form.addRow("API key", self.api_key)
        form.addRow("Key variable", self.key_env)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.key_note)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addStretch(1)
        layout.addLayout(test_row)
        layout.addWidget(self.test_result)
        layout.addWidget(mcp_box)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

        index = self.provider.findData(settings.provider_kind or "openai")
        self.provider.setCurrentIndex(max(index, 0))
        self.provider.currentIndexChanged.connect(self._provider_changed)
        self._update_key_note()

    # --- MCP servers -----------------------------------------------------------------------

    def _add_server_item(self, server: McpServerConfig) -> None:
        line = shlex.join([server.command, *server.args])
        item = QListWidgetItem(f"{server.name} — {line}")
        item.setData(Qt.ItemDataRole.UserRole, server)
        self.mcp_list.addItem(item)

    def mcp_servers(self) -> tuple[McpServerConfig, ...]:
        role = Qt.ItemDataRole.UserRole
        return tuple(self.mcp_list.item(i).data(role) for i in range(self.mcp_list.count()))

    def _add_server(self) -> None:
        name = self.mcp_name.text().strip()
        try:
            words = shlex.split(self.mcp_command.text())
        except ValueError as err:
            self._fail(f"The command line cannot be read ({err}); check its quotes.")
            return
        if not name or not words:
            self._fail("Enter a name and the command line that starts the MCP server.")
            return
        if any(server.name == name for server in self.mcp_servers()):
            self._fail(f"There is already an MCP server named {name!r}.")
            return
        self._add_server_item(McpServerConfig(name, words[0], tuple(words[1:])))
        self.mcp_name.clear()
        self.mcp_command.clear()
        self.error.hide()

    def _remove_server(self) -> None:
        row = self.mcp_list.currentRow()
        if row >= 0:
            self.mcp_list.takeItem(row)

    def _provider_changed(self) -> None:
        kind = self.provider.currentData()
        if not self.base_url.text().strip() or self.base_url.text() in DEFAULT_URLS.values():
            self.base_url.setText(DEFAULT_URLS.get(kind, ""))
        self._update_key_note()

    def _update_key_note(self) -> None:
        kind = self.provider.currentData()
        simulator = kind == "simulator"
        self.base_url.setEnabled(not simulator)
        self.api_key.setEnabled(not simulator and keyring_available())
        env = self.key_env.text().strip() or DEFAULT_KEY_ENV
        if simulator:
            self.key_note.setText(
                "The simulator runs inside Continuum on this computer and "
                "needs no key. Its answers are not from a real model."
            )
        elif keyring_available():
            self.key_note.setText(
                "The API key is stored in your system keyring, never in "
                f"Continuum's files. The variable {env}, when set, wins."
            )
        else:
            self.key_note.setText(
                "This system has no keyring, so Continuum cannot store an API key safely. "
                f"Set the environment variable {env} to your key before starting Continuum."
            )

    # --- Test connection ---------------------------------------------------------------------

    def _test_connection(self) -> None:
        """Test the fields as they are now (the typed key, else the stored one), in the
        background on the app's event loop; the result replaces the progress line."""
        if self.connection_test is not None and not self.connection_test.done():
            return
        settings = self.result_settings()
        key = self.api_key.text() or None
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no event loop runs the dialog (never in the app)
            self._show_test_result("The connection cannot be tested here.")
            return
        where = f" to {settings.base_url}" if settings.base_url else ""
        self._show_test_result(f"Testing the connection{where}…")
        self.test_button.setEnabled(False)
        task = asyncio.ensure_future(self._run_test(settings, key))
        self.connection_test = task
        # Deleted with its window (no done() then): stop the test, which then touches nothing.
        self.destroyed.connect(lambda *_: task.cancel())

    async def _run_test(self, settings: Settings, key: str | None) -> None:
        """Run the test and show its report; cancelled (the dialog closed), it shows nothing."""
        report: ConnectionReport | None = None
        try:
            report = await test_connection(settings, key)
        except asyncio.CancelledError:
            raise
        except Exception:  # never a traceback in the dialog
            log.exception("the connection test failed")
            self._show_test_result(
                "The connection test failed unexpectedly; the details are in the log."
            )
        else:
            self._show_test_result(report.text())
        self.test_button.setEnabled(True)
        self.connectionTested.emit(report)

    def _show_test_result(self, text: str) -> None:
        self.test_result.setText(text)
        self.test_result.show()

    def done(self, result: int) -> None:
        """Closing (Save or Cancel) stops a running connection test."""
        if self.connection_test is not None and not self.connection_test.done():
            self.connection_test.cancel()
            self.test_button.setEnabled(True)
            self.test_result.hide()
        super().done(result)

    def result_settings(self) -> Settings:
        kind = self.provider.currentData()
        return dataclasses.replace(
            self._settings,
            provider_kind=kind,
            base_url=self.base_url.text().strip(),
            model=self.model.currentText().strip(),
            system_prompt=self.system_prompt.toPlainText(),
            api_key_env=self.key_env.text().strip() or None,
            mcp_servers=self.mcp_servers(),
        )

    def accept(self) -> None:
        settings = self.result_settings()
        if settings.provider_kind != "simulator" and not settings.base_url:
            self._fail("Enter the provider's base URL (for OpenAI: https://api.openai.com/v1).")
            return
        key = self.api_key.text()
        if key:
            try:
                set_api_key(
                    settings.key_service(), key, env_var=settings.api_key_env or DEFAULT_KEY_ENV
                )
            except NoKeyringError as err:
                self._fail(str(err))
                return
            finally:
                self.api_key.clear()  # do not keep the secret in a widget longer than needed
        super().accept()

    def _fail(self, text: str) -> None:
        self.error.setText(text)
        self.error.show()
