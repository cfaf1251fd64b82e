"""Settings, on three pages: Providers (provider, server address, model, the API key — OS
keyring only — and the saved providers, :mod:`ui.settings_profiles`), Conversations (the
system prompt, naming conversations with the model) and MCP servers (:mod:`ui.settings_mcp_box`).

The key never goes to the settings file or the database. Where this machine has no keyring the
dialog says so and names the environment variable Continuum reads instead.

Each provider choice (:data:`PROVIDER_CHOICES`) has its own default address: switching offers
it, or what the person had typed for that choice (:func:`switch_url`), never the simulator's
loopback port. Where no key is used (the simulator) the key fields are disabled and say why.

"Test connection" tests the fields as they are (not yet saved) in the background on the app's
event loop (:func:`app.services.test_connection`) and shows what worked as plain ✓/✗/– lines.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.services import (
    DEFAULT_KEY_ENV,
    ConnectionReport,
    McpServerConfig,
    NoKeyringError,
    ProviderProfile,
    Settings,
    auto_title_on,
    keyring_available,
    set_api_key,
    test_connection,
    with_profiles,
)

from .settings_choices import (
    CHOICES,
    DEFAULT_URLS,
    KEY_PLACEHOLDERS,
    MODEL_HINTS,
    PROVIDER_CHOICES,
    ProviderChoice,
    choice_for,
    key_note,
    key_placeholder,
    switch_model,
    switch_url,
)
from .settings_mcp_box import McpBox, McpStatusSource
from .settings_profiles import ProfilesBox, ProfileServices, store_profile_keys
from .theme import SPACE, tokens_for

__all__ = ["DEFAULT_URLS", "SettingsDialog"]

log = logging.getLogger(__name__)


def _fit_placeholders(edit: QLineEdit, texts: list[str]) -> None:
    """``edit`` never narrower than its longest placeholder (plus the frame and text margins)."""
    widest = max(edit.fontMetrics().horizontalAdvance(text) for text in texts)
    edit.setMinimumWidth(widest + 2 * SPACE[3])


def _named(widget: QWidget, object_name: str, accessible_name: str) -> None:
    """Give ``widget`` its object name (tests, styles) and the phrase screen readers say."""
    widget.setObjectName(object_name)
    widget.setAccessibleName(accessible_name)


def _form() -> QFormLayout:
    """A form whose fields grow with the dialog (labels right-aligned, as in the app)."""
    form = QFormLayout()
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    form.setHorizontalSpacing(SPACE[2])
    form.setVerticalSpacing(SPACE[1])
    return form


class SettingsDialog(QDialog):
    #: "Test connection" finished: the :class:`ConnectionReport` now shown (``None`` if the
    #: test itself failed unexpectedly; the dialog then says so).
    connectionTested = Signal(object)

    def __init__(
        self,
        settings: Settings,
        parent: QWidget | None = None,
        models: list[str] | None = None,
        services: ProfileServices | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.setWindowTitle("Settings")
        self.setAccessibleName("Settings")
        self._settings = settings
        self.provider = QComboBox()
        _named(self.provider, "settingsProvider", "Provider")
        for choice in PROVIDER_CHOICES:
            self.provider.addItem(choice.label, choice.key)
        self._choice = choice_for(settings.provider_kind, settings.base_url)
        self._urls: dict[str, str] = {}
        if self._choice != "simulator":
            shown = settings.base_url or CHOICES[self._choice].default_url
            self._urls[self._choice] = shown
        self.base_url = QLineEdit(self._urls.get(self._choice, ""))
        _named(self.base_url, "settingsBaseUrl", "Server address")
        _fit_placeholders(self.base_url, [c.url_hint for c in PROVIDER_CHOICES])
        self.model = QComboBox()
        _named(self.model, "settingsModel", "Model")
        self.model.setEditable(True)
        self._saved_choice, self._listed = self._choice, list(models or [])
        self._models = {self._choice: settings.model}  # the model's name typed per entry
        self._show_model(settings.model)
        model_edit = self.model.lineEdit()
        assert model_edit is not None  # an editable combo box has its line edit
        _fit_placeholders(model_edit, list(MODEL_HINTS.values()))
        self.system_prompt = QPlainTextEdit(settings.system_prompt)
        _named(self.system_prompt, "settingsSystemPrompt", "System prompt")
        self.system_prompt.setPlaceholderText(
            "Optional: instructions sent before every conversation"
        )
        self.system_prompt.setTabChangesFocus(True)
        self.system_prompt.setMaximumHeight(120)
        self.api_key = QLineEdit()
        _named(self.api_key, "settingsApiKey", "API key")
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        _fit_placeholders(self.api_key, KEY_PLACEHOLDERS)
        self.key_env = QLineEdit(settings.api_key_env or DEFAULT_KEY_ENV)
        _named(self.key_env, "settingsKeyEnv", "API key environment variable")
        self.key_env.setPlaceholderText(DEFAULT_KEY_ENV)
        _fit_placeholders(self.key_env, [DEFAULT_KEY_ENV])
        self.key_env.editingFinished.connect(self._update_key_note)
        self.key_note = QLabel()
        self.key_note.setObjectName("settingsKeyNote")
        self.key_note.setWordWrap(True)
        self.key_note.setTextFormat(Qt.TextFormat.PlainText)  # shows the typed variable name
        self.test_button = QPushButton("Test connection")
        _named(self.test_button, "testConnectionButton", "Test connection")
        self.test_button.setToolTip(
            "Send a few tiny requests with the settings above (not saved yet) and say what worked"
        )
        self.test_button.clicked.connect(self._test_connection)
        self.test_result = QLabel()
        _named(self.test_result, "testConnectionResult", "Connection test result")
        self.test_result.setWordWrap(True)
        self.test_result.setTextFormat(Qt.TextFormat.PlainText)  # quotes the URL and the server
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.test_result.hide()
        #: The running connection test, if any (the dialog stops it when it closes).
        self.connection_test: asyncio.Task[None] | None = None
        self.error = QLabel()
        _named(self.error, "settingsError", "Settings problem")
        self.error.setWordWrap(True)
        self.error.setTextFormat(Qt.TextFormat.PlainText)  # may quote what the person typed
        self.error.hide()

        self.mcp_box = McpBox(
            settings.mcp_servers,
            self._fail,
            self.error.hide,
            status=services if isinstance(services, McpStatusSource) else None,
        )
        box = self.mcp_box
        self.mcp_list, self.mcp_name, self.mcp_command = box.list, box.name, box.command
        self.mcp_add, self.mcp_remove = box.add_button, box.remove_button
        self.profiles_box = ProfilesBox(settings.profiles, settings.default_profile, services)
        self.profiles_box.defaultChosen.connect(self._show_profile)
        self.auto_title = QCheckBox("Name conversations with the model")
        _named(self.auto_title, "autoTitleCheck", "Name conversations with the model")
        self.auto_title.setToolTip(
            "After a conversation's first answer, send its first question and answer to the "
            "model once more to get a short title (a title you set yourself is never replaced)"
        )
        self.auto_title.setChecked(auto_title_on(settings))

        form = _form()
        form.addRow("&Provider", self.provider)
        form.addRow("Server &address", self.base_url)
        form.addRow("&Model", self.model)
        form.addRow("API &key", self.api_key)
        form.addRow("Key &variable", self.key_env)
        form.addRow("", self.key_note)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        for button in buttons.buttons():  # text buttons, like every other button in the app
            button.setIcon(QIcon())
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        # Three pages, so the dialog fits a laptop screen: the providers, what conversations
        # get by default, and the MCP servers.
        provider_page = QWidget()
        page = QVBoxLayout(provider_page)
        page.setSpacing(SPACE[2])
        page.addLayout(form)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addStretch(1)
        page.addLayout(test_row)
        page.addWidget(self.test_result)
        page.addWidget(self.profiles_box)
        page.addStretch(1)
        conversations_page = QWidget()
        conversations = _form()
        conversations_page.setLayout(conversations)
        conversations.addRow("&System prompt", self.system_prompt)
        conversations.addRow("", self.auto_title)
        mcp_page = QWidget()
        QVBoxLayout(mcp_page).addWidget(self.mcp_box)
        self.pages = QTabWidget()
        self.pages.setObjectName("settingsPages")
        self.pages.addTab(provider_page, "&Providers")
        self.pages.addTab(conversations_page, "&Conversations")
        self.pages.addTab(mcp_page, "&MCP servers")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACE[4], SPACE[4], SPACE[4], SPACE[3])
        layout.setSpacing(SPACE[2])
        layout.addWidget(self.pages)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

        self.provider.setCurrentIndex(self.provider.findData(self._choice))
        self.provider.currentIndexChanged.connect(self._provider_changed)
        self._update_key_note()
        self._paint_tokens()

    @property
    def choice(self) -> ProviderChoice:
        """The Provider entry now chosen."""
        return CHOICES[self._choice]

    def mcp_servers(self) -> tuple[McpServerConfig, ...]:
        return self.mcp_box.servers()

    def _provider_changed(self) -> None:
        arriving = str(self.provider.currentData())
        self._urls, shown = switch_url(self._urls, self._choice, self.base_url.text(), arriving)
        self._models, name = switch_model(
            self._models, self._choice, self.model.currentText(), arriving
        )
        self._choice = arriving
        self.base_url.setText(shown)
        self._show_model(name)
        self._update_key_note()

    def _show_model(self, name: str) -> None:
        """Show ``name``; the list offers the window's models only for the saved provider."""
        self.model.clear()
        if self._choice == self._saved_choice:
            self.model.addItems(self._listed)
        self.model.setCurrentText(name)
        if edit := self.model.lineEdit():
            edit.setPlaceholderText(MODEL_HINTS[self._choice])

    def _update_key_note(self) -> None:
        choice = self.choice
        keyring = keyring_available()
        uses_key = choice.key_use != "none"
        self.base_url.setEnabled(choice.kind != "simulator")
        self.base_url.setPlaceholderText(choice.url_hint)
        self.api_key.setEnabled(uses_key and keyring)
        self.api_key.setPlaceholderText(key_placeholder(choice.key_use, keyring))
        self.key_env.setEnabled(uses_key)
        env = self.key_env.text().strip() or DEFAULT_KEY_ENV
        self.key_note.setText(key_note(choice.key_use, keyring, env))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._paint_tokens()
        super().changeEvent(event)

    def _paint_tokens(self) -> None:
        """The note and the problem line in the theme's muted and danger colours."""
        tokens = tokens_for(self.palette())
        self.key_note.setStyleSheet(f"color: {tokens.muted};")
        self.error.setStyleSheet(f"color: {tokens.danger};")

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
        choice = self.choice
        if choice.kind == "simulator":  # its address is the running simulator's, set on start
            same = self._settings.provider_kind == "simulator"
            base_url = self._settings.base_url if same else ""
        else:
            base_url = self.base_url.text().strip()
        box = self.profiles_box
        listed = with_profiles(self._settings, tuple(box.profiles), box.default)
        auto = self.auto_title.isChecked()
        return dataclasses.replace(
            listed,
            auto_title=self._settings.auto_title if auto == auto_title_on(self._settings) else auto,
            provider_kind=choice.kind,
            base_url=base_url,
            model=self.model.currentText().strip(),
            system_prompt=self.system_prompt.toPlainText(),
            api_key_env=self.key_env.text().strip() or None,
            mcp_servers=self.mcp_servers(),
        )

    def accept(self) -> None:
        settings = self.result_settings()
        if settings.provider_kind != "simulator" and not settings.base_url:
            self._fail(f"Enter the server address ({self.choice.url_hint.lower()}).")
            self.base_url.setFocus()
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
        try:
            store_profile_keys(self.profiles_box, settings)
            self.mcp_box.save_secrets()
        except NoKeyringError as err:
            self._fail(str(err))
            return
        super().accept()

    def _show_profile(self, profile: ProviderProfile) -> None:
        """Show ``profile`` (now the default) in the Provider fields."""
        self._choice = choice_for(profile.kind, profile.base_url)
        self.provider.blockSignals(True)
        self.provider.setCurrentIndex(self.provider.findData(self._choice))
        self.provider.blockSignals(False)
        self.base_url.setText(profile.base_url)
        self._models[self._choice] = profile.model
        self._show_model(profile.model)
        self.key_env.setText(profile.api_key_env or DEFAULT_KEY_ENV)
        self._update_key_note()

    def _fail(self, text: str) -> None:
        self.error.setText(text)
        self.error.show()
