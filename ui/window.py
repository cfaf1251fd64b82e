"""The main window: sidebar | (model picker, Resume bar, transcript or welcome, composer).

It wires widgets to the :class:`ConversationController` and to :class:`AppServices` for the
things that are not requests (listing, search, settings, export). Long work is awaited in
helper tasks the controller tracks; nothing here blocks the event loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QAction, QCloseEvent, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.discovery import LocalServer
from app.services import AppServices
from app.settings import Settings

from .approval import ApprovalCard
from .composer import Composer
from .controller import ConversationController
from .plain import plain_tooltip
from .resume_bar import ResumeBar
from .settings_dialog import SettingsDialog
from .sidebar import Sidebar
from .transcript import TranscriptModel, TranscriptView
from .welcome import WelcomePanel

__all__ = ["MainWindow"]

log = logging.getLogger(__name__)

RESOURCES = Path(__file__).resolve().parent.parent / "resources"


class MainWindow(QMainWindow):
    def __init__(self, services: AppServices, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.services = services
        self.setObjectName("mainWindow")
        self.setWindowTitle("Continuum")
        icon = RESOURCES / "icons" / "continuum.svg"
        if icon.exists():
            self.setWindowIcon(QIcon(str(icon)))
        else:  # an install without resources/ is a packaging bug: say so in the log
            log.warning("window icon missing: %s", icon)
        self.resize(1100, 760)

        self.transcript_model = TranscriptModel(self)
        self.controller = ConversationController(services, self.transcript_model, self)
        self.sidebar = Sidebar()
        self.transcript = TranscriptView()
        self.transcript.setModel(self.transcript_model)
        self.resume_bar = ResumeBar()
        self.approval_card = ApprovalCard()
        self.composer = Composer()
        self.welcome = WelcomePanel()
        self.model_picker = QComboBox()
        self.model_picker.setObjectName("modelPicker")
        self.model_picker.setAccessibleName("modelPicker")
        self.model_picker.setToolTip("The model that answers new messages")
        self.model_picker.setMinimumContentsLength(18)
        self.model_picker.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.provider_label = QLabel()
        self.provider_label.setObjectName("providerLabel")
        self.provider_label.setTextFormat(Qt.TextFormat.PlainText)  # holds the base URL
        self.workspace_button = QPushButton("No workspace folder")
        self.workspace_button.setObjectName("workspaceButton")
        self.workspace_button.setAccessibleName("workspaceButton")
        self.workspace_button.setFlat(True)
        self.workspace_button.setToolTip(
            "The folder this conversation's file tools may read and write (click to choose)")

        self.stack = QStackedWidget()
        self.stack.addWidget(self.transcript)
        self.stack.addWidget(self.welcome)
        top = QHBoxLayout()
        top.setContentsMargins(8, 6, 8, 0)
        top.addWidget(self.provider_label, 1)
        top.addWidget(self.workspace_button)
        top.addWidget(QLabel("Model:"))
        top.addWidget(self.model_picker)
        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(4)
        column.addLayout(top)
        bar_row = QHBoxLayout()
        bar_row.setContentsMargins(8, 0, 8, 0)
        bar_row.addWidget(self.resume_bar)
        column.addLayout(bar_row)
        column.addWidget(self.stack, 1)
        card_row = QHBoxLayout()
        card_row.setContentsMargins(8, 0, 8, 0)
        card_row.addWidget(self.approval_card)
        column.addLayout(card_row)
        column.addWidget(self.composer)
        splitter = QSplitter()
        splitter.addWidget(self.sidebar)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([260, 840])
        self.setCentralWidget(splitter)
        self._build_menus()
        self._connect()
        self._closing = False
        self._closed: asyncio.Future[None] | None = None
        self._workspace_path: str | None = None
        self.composer.edit.setFocus()

    # --- construction ----------------------------------------------------------------------

    def _action(self, menu: Any, text: str, slot: Any, shortcut: Any = None,
                name: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if name:
            action.setObjectName(name)
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self.new_action = self._action(file_menu, "&New conversation", self.new_conversation,
                                       QKeySequence.StandardKey.New, "newAction")
        file_menu.addSeparator()
        self._action(file_menu, "Export as &Markdown…", lambda: self.export_dialog("md"),
                     name="exportMarkdownAction")
        self._action(file_menu, "Export as &JSON…", lambda: self.export_dialog("json"),
                     name="exportJsonAction")
        file_menu.addSeparator()
        self.settings_action = self._action(file_menu, "&Settings…", self.open_settings,
                                            "Ctrl+,", "settingsAction")
        file_menu.addSeparator()
        self.quit_action = self._action(file_menu, "&Quit", self.close, None, "quitAction")
        # Qt's Quit binding is empty on the Windows key scheme (also offscreen): keep Ctrl+Q.
        self.quit_action.setShortcuts(
            QKeySequence.keyBindings(QKeySequence.StandardKey.Quit) or [QKeySequence("Ctrl+Q")])
        edit_menu = bar.addMenu("&Edit")
        self.find_action = self._action(edit_menu, "&Search conversations", self.focus_search,
                                        QKeySequence.StandardKey.Find, "findAction")
        conversation = bar.addMenu("&Conversation")
        self._action(conversation, "&Stop answer", self.controller.stop, None, "stopAction")
        self._action(conversation, "&Rename…", self._rename_current, "F2", "renameAction")
        self._action(conversation, "&Delete…", self._delete_current, None, "deleteAction")
        conversation.addSeparator()
        self.workspace_action = self._action(
            conversation, "&Workspace folder…", self.choose_workspace, None, "workspaceAction")
        self.no_workspace_action = self._action(
            conversation, "&No workspace folder",
            lambda: self.controller.spawn(self.set_workspace(None)), None, "noWorkspaceAction")

    def _connect(self) -> None:
        c = self.controller
        c.busyChanged.connect(self._busy_changed)
        c.resumeInfoChanged.connect(self._show_resume)
        c.noticeChanged.connect(self.resume_bar.show_notice)
        c.approvalRequested.connect(self.approval_card.ask)
        c.sessionChanged.connect(self._session_changed)
        c.sessionsChanged.connect(lambda: c.spawn(self.refresh_sessions()))
        c.statusMessage.connect(lambda text: self.statusBar().showMessage(text, 8000))
        self.services.notify = c.statusMessage.emit
        self.workspace_button.clicked.connect(self.choose_workspace)
        self.composer.sendRequested.connect(self._send)
        self.composer.stopRequested.connect(c.stop)
        self.resume_bar.resumeRequested.connect(self._resume)
        self.resume_bar.resumeWithModelRequested.connect(self._resume_with)
        self.resume_bar.dismissRequested.connect(lambda: c.spawn(c.dismiss()))
        self.sidebar.sessionActivated.connect(lambda sid: c.spawn(c.open_session(sid)))
        self.sidebar.newRequested.connect(self.new_conversation)
        self.sidebar.renameRequested.connect(
            lambda sid, title: c.spawn(self._rename(sid, title)))
        self.sidebar.deleteRequested.connect(lambda sid: c.spawn(self._delete(sid)))
        self.sidebar.searchChanged.connect(lambda q: c.spawn(self.search(q)))
        self.model_picker.activated.connect(
            lambda _i: c.spawn(self._pick_model(self.model_picker.currentText())))
        self.welcome.offlineRequested.connect(lambda: c.spawn(self.use_simulator()))
        self.welcome.settingsRequested.connect(self.open_settings)
        self.welcome.localServerChosen.connect(lambda s: c.spawn(self.use_local_server(s)))
        self.transcript.delegate.codeCopied.connect(
            lambda _code: self.statusBar().showMessage("Code copied", 3000))

    # --- startup ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Load settings, conversations and the most recent one (with its Resume bar)."""
        if self.services.settings_problem:
            self.statusBar().showMessage(self.services.settings_problem, 15000)
        if self.services.settings.configured:
            await self.apply_settings()
        else:
            self.show_welcome()
        sessions = await self.refresh_sessions()
        if sessions:
            await self.controller.open_session(sessions[0].id)
        await self.refresh_workspace()

    async def run(self) -> None:
        """Start, then wait until the window has closed and cleaned up."""
        self._closed = asyncio.get_running_loop().create_future()
        await self.start()
        await self._closed

    def show_welcome(self) -> None:
        self.stack.setCurrentWidget(self.welcome)
        self.controller.spawn(self._discover())

    async def _discover(self) -> None:
        servers = await self.services.discover_local_servers()
        self.welcome.set_local_servers(servers)

    async def apply_settings(self) -> None:
        model = await self.services.configure_model()
        settings = self.services.settings
        kind = {"openai": "OpenAI-compatible", "anthropic": "Anthropic",
                "simulator": "Offline simulator — not a real model"}.get(
                    settings.provider_kind or "", "No provider")
        where = "" if settings.provider_kind == "simulator" else f" · {settings.base_url}"
        self.provider_label.setText(f"{kind}{where}")
        self.stack.setCurrentWidget(self.transcript)
        self.controller.spawn(self._report_mcp())
        if model is not None:
            await self.refresh_models()

    async def _report_mcp(self) -> None:
        """Say in the status bar which configured MCP servers did not start."""
        problems = await self.services.mcp_ready()
        if problems:
            self.statusBar().showMessage(" ".join(problems), 20000)

    async def refresh_models(self) -> None:
        settings = self.services.settings
        try:
            models = await self.services.list_models()
        except Exception as err:  # listing is a convenience: keep the chosen model usable
            log.info("model listing failed: %s", type(err).__name__)
            self.statusBar().showMessage(f"Could not list models: {err}", 8000)
            models = []
        names = list(dict.fromkeys([*([settings.model] if settings.model else []), *models,
                                    *settings.recent_models]))
        self.model_picker.clear()
        self.model_picker.addItems(names)
        self.model_picker.setCurrentText(settings.model)
        self.resume_bar.set_models(names, settings.model)

    async def _pick_model(self, name: str) -> None:
        await self.controller.set_model(name)
        self.resume_bar.set_models(
            [self.model_picker.itemText(i) for i in range(self.model_picker.count())], name)

    async def use_simulator(self) -> None:
        await self.services.start_simulator()
        await self.apply_settings()
        self.statusBar().showMessage(
            "Using the offline simulator: answers echo your message; it is not a real model.",
            10000)
        self.composer.edit.setFocus()

    async def use_local_server(self, server: LocalServer) -> None:
        self.services.save_settings(dataclasses.replace(
            self.services.settings, provider_kind="openai", base_url=server.base_url,
            model=server.models[0] if server.models else ""))
        await self.apply_settings()

    # --- conversations ---------------------------------------------------------------------

    async def refresh_sessions(self) -> list[Any]:
        sessions = await self.services.list_sessions()
        badges = await self.services.resumable_sessions()
        self.sidebar.set_sessions(sessions, badges)
        self.sidebar.set_current(self.controller.session_id)
        return sessions

    async def search(self, query: str) -> None:
        if not query:
            self.sidebar.show_all()
            return
        hits = await self.services.search(query)
        self.sidebar.set_search_results([(h.session_id, h.snippet) for h in hits])

    def new_conversation(self) -> None:
        if self.controller.busy:
            self.statusBar().showMessage("Stop the running answer first (Esc).", 5000)
            return
        self.controller.spawn(self.controller.open_session(None))
        self.composer.edit.setFocus()

    async def _rename(self, session_id: str, title: str) -> None:
        await self.services.rename_session(session_id, title)
        await self.refresh_sessions()

    async def _delete(self, session_id: str) -> None:
        if session_id == self.controller.session_id:
            if self.controller.busy:
                self.statusBar().showMessage("Stop the running answer before deleting.", 5000)
                return
            await self.controller.open_session(None)
        await self.services.delete_session(session_id)
        await self.refresh_sessions()

    def _rename_current(self) -> None:
        if self.controller.session_id:
            self.sidebar.rename(self.controller.session_id)

    def _delete_current(self) -> None:
        if self.controller.session_id:
            self.sidebar.delete(self.controller.session_id)

    def focus_search(self) -> None:
        self.sidebar.search.setFocus()
        self.sidebar.search.selectAll()

    def _session_changed(self, session_id: str | None) -> None:
        self.sidebar.set_current(session_id)
        self.transcript.follow()
        self.controller.spawn(self.refresh_workspace())

    # --- workspace folder ------------------------------------------------------------------

    def choose_workspace(self) -> None:
        """Ask for this conversation's workspace folder (its file tools work only there)."""
        if self.controller.busy:
            self.statusBar().showMessage("Stop the running answer first (Esc).", 5000)
            return
        start = self._workspace_path or str(Path.home())
        path = QFileDialog.getExistingDirectory(self, "Workspace folder for this conversation",
                                                start)
        if path:
            self.controller.spawn(self.set_workspace(str(Path(path).resolve())))

    async def set_workspace(self, path: str | None) -> None:
        """Give the open conversation ``path`` as its workspace (``None``: no file tools)."""
        c = self.controller
        if c.busy:
            self.statusBar().showMessage("Stop the running answer first (Esc).", 5000)
            return
        if c.read_only:
            self.statusBar().showMessage("This conversation is busy in another window.", 5000)
            return
        session_id = c.session_id
        if session_id is None:  # a new conversation: create it now to remember the folder
            info = await self.services.new_session()
            await c.open_session(info.id)
            c.name_on_first_send = info.id  # created empty: named after its first message
            session_id = info.id
            await self.refresh_sessions()
        await self.services.set_workspace(session_id, path)
        await self.refresh_workspace()
        self.statusBar().showMessage(
            f"File tools in this conversation now work in {path}." if path
            else "This conversation has no file tools now.", 8000)

    async def refresh_workspace(self) -> None:
        session_id = self.controller.session_id
        path = await self.services.workspace(session_id)
        if session_id != self.controller.session_id:
            return
        self._workspace_path = path
        if path is None:
            self.workspace_button.setText("No workspace folder")
            self.workspace_button.setToolTip(
                "This conversation has no file tools. Click to choose a folder they may use.")
        else:
            name = Path(path).name or path
            missing = not await asyncio.to_thread(os.path.isdir, path)
            self.workspace_button.setText(f"Folder: {name}" + (" (missing)" if missing else ""))
            self.workspace_button.setToolTip(plain_tooltip(path))

    # --- requests --------------------------------------------------------------------------

    def _send(self, text: str) -> None:
        if self.stack.currentWidget() is self.welcome:
            self.statusBar().showMessage("Choose a model first (or Try it offline).", 5000)
            return
        if self.controller.send(text):
            self.composer.clear_text()
            self.transcript.follow()

    def _resume(self) -> None:
        if self.controller.resume():
            self.transcript.follow()

    def _resume_with(self, model_name: str) -> None:
        self.model_picker.setCurrentText(model_name)
        if self.controller.resume_with_model(model_name):
            self.transcript.follow()

    def _busy_changed(self, busy: bool) -> None:
        self.composer.set_busy(busy)
        self.model_picker.setEnabled(not busy)
        if busy:
            self.resume_bar.show_info(None)

    def _show_resume(self, info: Any) -> None:
        self.resume_bar.show_info(info)

    # --- settings & export -----------------------------------------------------------------

    def open_settings(self) -> None:
        models = [self.model_picker.itemText(i) for i in range(self.model_picker.count())]
        dialog = SettingsDialog(self.services.settings, self, models)
        dialog.setModal(True)
        dialog.accepted.connect(lambda: self._settings_chosen(dialog.result_settings()))
        dialog.open()
        self._settings_dialog = dialog  # keep it alive while open

    def _settings_chosen(self, settings: Settings) -> None:
        from app.errors import SettingsSaveError

        try:
            self.services.save_settings(settings)
        except SettingsSaveError as err:  # a full disk: say so, keep the settings in use
            self.statusBar().showMessage(str(err), 15000)
            return
        self.controller.spawn(self.apply_settings())

    def export_dialog(self, kind: str) -> None:
        if not self.controller.session_id:
            self.statusBar().showMessage("Open a conversation to export it.", 5000)
            return
        suffix = "Markdown (*.md)" if kind == "md" else "JSON (*.json)"
        title = self.sidebar.title_of(self.controller.session_id) or "conversation"
        safe = "".join(ch if ch.isalnum() or ch in " -_" else "_" for ch in title)[:60]
        path, _ = QFileDialog.getSaveFileName(self, "Export conversation",
                                              f"{safe}.{kind}", suffix)
        if path:
            self.controller.spawn(self.export(kind, Path(path)))

    async def export(self, kind: str, path: Path) -> None:
        session_id = self.controller.session_id
        if session_id is None:
            return
        if kind == "md":
            text = await self.services.export_markdown(session_id)
        else:
            text = await self.services.export_json(session_id)
        await asyncio.to_thread(path.write_text, text, encoding="utf-8")
        self.statusBar().showMessage(f"Exported to {path}", 8000)

    # --- Qt events -------------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self.transcript.delegate.forget()  # light/dark: colours are baked into rows
            self.transcript.doItemsLayout()
        super().changeEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._closing:
            event.accept()
            return
        # Cancel the answer (its stop reason is recorded) and close the store, then close.
        event.ignore()
        self._closing = True
        self.sidebar.cancel_pending_search()
        self.hide()
        self._shutdown_task = asyncio.ensure_future(self._shutdown())

    async def _shutdown(self) -> None:
        try:
            await self.controller.shutdown()
            if self.controller.session_id:
                self.services.release_session(self.controller.session_id)
            await asyncio.wait_for(self.services.close(), 10)
        except Exception as err:  # closing must finish even when the disk misbehaves
            log.warning("error while closing: %s", type(err).__name__)
        finally:
            self.close()
            if self._closed is not None and not self._closed.done():
                self._closed.set_result(None)

    def activate(self) -> None:
        """Bring the window forward (a second launch asks for this)."""
        self.setWindowState(self.windowState() & ~Qt.WindowState.WindowMinimized)
        self.show()
        self.raise_()
        self.activateWindow()
