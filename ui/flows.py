"""The window's flows that are not requests: a dialog (or a click), then service calls, then
what the window shows about it.

* :class:`WorkspaceFlow` — the open conversation's workspace folder (its button, the folder
  dialog, ``AppServices.set_workspace``).
* :class:`ExportFlow` — export the open conversation as Markdown or JSON.
* :class:`ModelFlow` — the provider and the model: settings dialog, welcome choices (offline
  simulator, a local server), the model picker and the provider label.

Each flow is given exactly the widgets and services it touches; the window makes the widgets,
lays them out and connects the signals to these methods.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QLabel,
    QPushButton,
    QStackedWidget,
    QStatusBar,
    QWidget,
)

from app.services import AppServices, LocalServer, Settings, SettingsSaveError

from .controller import ConversationController
from .plain import plain_tooltip
from .resume_bar import ResumeBar
from .settings_dialog import SettingsDialog
from .welcome import WelcomePanel

__all__ = ["ExportFlow", "ExportFormat", "ModelFlow", "WorkspaceFlow", "provider_words"]

log = logging.getLogger(__name__)

STOP_FIRST = "Stop the running answer first (Esc)."


class ExportFormat(enum.StrEnum):
    """An export's format; the value is the file suffix."""

    MARKDOWN = "md"
    JSON = "json"


def provider_words(provider_kind: str | None, base_url: str) -> str:
    """The provider label's text: which kind of provider, and where (not for the simulator)."""
    kind = {
        "openai": "OpenAI-compatible",
        "anthropic": "Anthropic",
        "simulator": "Offline simulator — not a real model",
    }.get(provider_kind or "", "No provider")
    where = "" if provider_kind == "simulator" else f" · {base_url}"
    return f"{kind}{where}"


def export_file_name(title: str, kind: ExportFormat) -> str:
    """A file name offered for exporting a conversation titled ``title``."""
    safe = "".join(ch if ch.isalnum() or ch in " -_" else "_" for ch in title)[:60]
    return f"{safe}.{kind.value}"


class WorkspaceFlow:
    """The open conversation's workspace folder: its file tools work only there."""

    def __init__(
        self,
        parent: QWidget,
        services: AppServices,
        controller: ConversationController,
        button: QPushButton,
        status: QStatusBar,
        refresh_sessions: Callable[[], Awaitable[object]],
    ) -> None:
        self._parent = parent
        self._services = services
        self._controller = controller
        self._button = button
        self._status = status
        self._refresh_sessions = refresh_sessions
        self._path: str | None = None

    @property
    def path(self) -> str | None:
        """The conversation's workspace folder (``None``: none)."""
        return self._path

    def choose(self) -> None:
        """Ask for the folder (the dialog opens where the current one is)."""
        if self._controller.busy:
            self._status.showMessage(STOP_FIRST, 5000)
            return
        start = self._path or str(Path.home())
        path = QFileDialog.getExistingDirectory(
            self._parent, "Workspace folder for this conversation", start
        )
        if path:
            self._controller.spawn(self.set(str(Path(path).resolve())))

    async def set(self, path: str | None) -> None:
        """Give the open conversation ``path`` as its workspace (``None``: no file tools)."""
        c = self._controller
        if c.busy:
            self._status.showMessage(STOP_FIRST, 5000)
            return
        if c.read_only:
            self._status.showMessage("This conversation is busy in another window.", 5000)
            return
        session_id = c.session_id
        if session_id is None:  # a new conversation: create it now to remember the folder
            created = await self._services.new_session()
            await c.open_session(created.id)
            c.name_on_first_send = created.id  # created empty: named after its first message
            session_id = created.id
            await self._refresh_sessions()
        await self._services.set_workspace(session_id, path)
        await self.refresh()
        self._status.showMessage(
            f"File tools in this conversation now work in {path}."
            if path
            else "This conversation has no file tools now.",
            8000,
        )

    async def refresh(self) -> None:
        """Show the open conversation's folder on the button (and whether it is missing)."""
        session_id = self._controller.session_id
        path = await self._services.workspace(session_id)
        if session_id != self._controller.session_id:
            return
        self._path = path
        if path is None:
            self._button.setText("No workspace folder")
            self._button.setToolTip(
                "This conversation has no file tools. Click to choose a folder they may use."
            )
        else:
            name = Path(path).name or path
            missing = not await asyncio.to_thread(os.path.isdir, path)
            self._button.setText(f"Folder: {name}" + (" (missing)" if missing else ""))
            self._button.setToolTip(plain_tooltip(path))


class ExportFlow:
    """Export the open conversation to a file the person chooses."""

    def __init__(
        self,
        parent: QWidget,
        services: AppServices,
        controller: ConversationController,
        status: QStatusBar,
        title_of: Callable[[str], str],
    ) -> None:
        self._parent = parent
        self._services = services
        self._controller = controller
        self._status = status
        self._title_of = title_of

    def ask(self, kind: ExportFormat) -> None:
        """Ask where to save, then export there."""
        session_id = self._controller.session_id
        if not session_id:
            self._status.showMessage("Open a conversation to export it.", 5000)
            return
        suffix = "Markdown (*.md)" if kind is ExportFormat.MARKDOWN else "JSON (*.json)"
        name = export_file_name(self._title_of(session_id) or "conversation", kind)
        path, _ = QFileDialog.getSaveFileName(self._parent, "Export conversation", name, suffix)
        if path:
            self._controller.spawn(self.export(kind, Path(path)))

    async def export(self, kind: ExportFormat, path: Path) -> None:
        kind = ExportFormat(kind)  # also takes the plain value ("md", "json")
        session_id = self._controller.session_id
        if session_id is None:
            return
        if kind is ExportFormat.MARKDOWN:
            text = await self._services.export_markdown(session_id)
        else:
            text = await self._services.export_json(session_id)
        await asyncio.to_thread(path.write_text, text, encoding="utf-8")
        self._status.showMessage(f"Exported to {path}", 8000)


class ModelFlow:
    """The provider and model: settings, the welcome panel's choices, the model picker."""

    def __init__(
        self,
        parent: QWidget,
        services: AppServices,
        controller: ConversationController,
        status: QStatusBar,
        *,
        picker: QComboBox,
        provider_label: QLabel,
        resume_bar: ResumeBar,
        stack: QStackedWidget,
        transcript: QWidget,
        welcome: WelcomePanel,
        focus_composer: Callable[[], None],
    ) -> None:
        self._parent = parent
        self._services = services
        self._controller = controller
        self._status = status
        self._picker = picker
        self._provider_label = provider_label
        self._resume_bar = resume_bar
        self._stack = stack
        self._transcript = transcript
        self._welcome = welcome
        self._focus_composer = focus_composer
        self._settings_dialog: SettingsDialog | None = None

    def models(self) -> list[str]:
        """The names the picker offers."""
        return [self._picker.itemText(i) for i in range(self._picker.count())]

    # --- the provider ----------------------------------------------------------------------

    def show_welcome(self) -> None:
        self._stack.setCurrentWidget(self._welcome)
        self._controller.spawn(self._discover())

    async def _discover(self) -> None:
        servers = await self._services.discover_local_servers()
        self._welcome.set_local_servers(servers)

    async def apply_settings(self) -> None:
        """Build the model from the settings, show the transcript, list the models."""
        model = await self._services.configure_model()
        settings = self._services.settings
        self._provider_label.setText(provider_words(settings.provider_kind, settings.base_url))
        self._stack.setCurrentWidget(self._transcript)
        self._controller.spawn(self._report_mcp())
        if model is not None:
            await self.refresh_models()

    async def _report_mcp(self) -> None:
        """Say in the status bar which configured MCP servers did not start."""
        problems = await self._services.mcp_ready()
        if problems:
            self._status.showMessage(" ".join(problems), 20000)

    async def use_simulator(self) -> None:
        await self._services.start_simulator()
        await self.apply_settings()
        self._status.showMessage(
            "Using the offline simulator: answers echo your message; it is not a real model.", 10000
        )
        self._focus_composer()

    async def use_local_server(self, server: LocalServer) -> None:
        self._services.save_settings(
            dataclasses.replace(
                self._services.settings,
                provider_kind="openai",
                base_url=server.base_url,
                model=server.models[0] if server.models else "",
            )
        )
        await self.apply_settings()

    def open_settings(self) -> None:
        dialog = SettingsDialog(
            self._services.settings, self._parent, self.models(), services=self._services
        )
        dialog.setModal(True)
        dialog.accepted.connect(lambda: self._settings_chosen(dialog.result_settings()))
        dialog.open()
        self._settings_dialog = dialog  # keep it alive while open

    def _settings_chosen(self, settings: Settings) -> None:
        try:
            self._services.save_settings(settings)
        except SettingsSaveError as err:  # a full disk: say so, keep the settings in use
            self._status.showMessage(str(err), 15000)
            return
        self._controller.spawn(self.apply_settings())

    # --- the model -------------------------------------------------------------------------

    async def refresh_models(self) -> None:
        settings = self._services.settings
        try:
            models = await self._services.list_models()
        except Exception as err:  # listing is a convenience: keep the chosen model usable
            log.info("model listing failed: %s", type(err).__name__)
            self._status.showMessage(f"Could not list models: {err}", 8000)
            models = []
        names = list(
            dict.fromkeys(
                [*([settings.model] if settings.model else []), *models, *settings.recent_models]
            )
        )
        self._picker.clear()
        self._picker.addItems(names)
        self._picker.setCurrentText(settings.model)
        self._resume_bar.set_models(names, settings.model)

    async def pick(self, name: str) -> None:
        """The person picked ``name`` in the picker: use it from now on."""
        await self._controller.set_model(name)
        self._resume_bar.set_models(self.models(), name)
