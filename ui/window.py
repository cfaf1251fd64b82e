"""The main window: sidebar | (model picker, Resume bar, transcript or welcome, composer).

It makes the widgets, lays them out and wires them: requests go to the
:class:`ConversationController`; the menus are built from :mod:`ui.actions`; the workspace
folder, export and provider/model flows live in :mod:`ui.flows`; the conversation list and
search call :class:`AppServices` directly. Long work is awaited in helper tasks the controller
tracks; nothing here blocks the event loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QUrl
from PySide6.QtGui import QCloseEvent, QDesktopServices, QIcon, QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QMainWindow,
    QStackedWidget,
    QWidget,
)

from app import SessionInfo
from app.services import AppServices, FilePart, ImagePart, SettingsSaveError, progress_detail

from .actions import THEME_ACTIONS, build_menus
from .appearance import Appearance
from .approval import ApprovalCard
from .attach_flow import AttachmentFlow
from .commands import EDIT_OPERATIONS, WindowCommands, edit_focused, show_about, show_shortcuts
from .composer import Composer
from .context_meter import ContextMeter
from .controller import ConversationController
from .conversation_flow import SetupFlow
from .flows import STOP_FIRST, ExportFlow, ExportFormat, ModelFlow, WorkspaceFlow
from .header import HeaderBar
from .resume_bar import ResumeBar
from .search_pages import SearchPages
from .sidebar import Sidebar
from .transcript import TranscriptModel, TranscriptView
from .upkeep import IdleUpkeep
from .versions_flow import EditStrip, VersionFlow
from .welcome import EmptyConversationHint, WelcomePanel
from .window_layout import lay_out, set_tab_order
from .window_place import WindowPlace, window_title

__all__ = ["MainWindow"]

log = logging.getLogger(__name__)


RESOURCES = Path(__file__).resolve().parent.parent / "resources"


class MainWindow(QMainWindow):
    def __init__(
        self,
        services: AppServices,
        parent: QWidget | None = None,
        *,
        log_dir: Path | None = None,
    ) -> None:
        super().__init__(parent)
        self.services = services
        # The saved theme, before any widget is made or shown (no light flash on a dark start).
        self.appearance = Appearance.of()
        self.appearance.apply(services.settings.theme)
        self.setObjectName("mainWindow")
        self.setWindowTitle("Continuum")
        icon = RESOURCES / "icons" / "continuum.svg"
        if icon.exists():
            self.setWindowIcon(QIcon(str(icon)))
        else:  # an install without resources/ is a packaging bug: say so in the log
            log.warning("window icon missing: %s", icon)
        self.resize(1100, 760)
        self.log_dir = log_dir if log_dir is not None else services.data_dir / "logs"

        self.transcript_model = TranscriptModel(self)
        self.controller = ConversationController(services, self.transcript_model, self)
        self.sidebar = Sidebar()
        self.search_pages = SearchPages(
            self.sidebar,
            lambda query, limit, after: services.search_page(query, limit=limit, after=after),
            self.controller.spawn,
        )
        # Merging the search index while nothing happens (app.services.upkeep).
        self.upkeep = IdleUpkeep(services.tidy_search_index, self.controller.spawn, self)
        self.transcript = TranscriptView()
        self.transcript.setModel(self.transcript_model)
        self.empty_hint = EmptyConversationHint(self.transcript)  # "Ask anything" while empty
        self.resume_bar = ResumeBar()
        self.approval_card = ApprovalCard()
        self.composer = Composer()
        self.edit_strip = EditStrip()  # over the composer while a sent message is edited
        self.context_meter = ContextMeter()  # how full the context is, over the composer
        self.context_meter.follow(services, self.controller)
        self.welcome = WelcomePanel()
        self.header = HeaderBar()
        self.model_picker = self.header.model_picker
        self.provider_label = self.header.provider_label
        self.workspace_button = self.header.workspace_button

        self.stack = QStackedWidget()
        self.stack.addWidget(self.transcript)
        self.stack.addWidget(self.welcome)
        self.splitter = lay_out(self)

        status = self.statusBar()
        self.workspace = WorkspaceFlow(
            self, services, self.controller, self.workspace_button, status, self.refresh_sessions
        )
        self.approval_card.set_workspace(lambda: self.workspace.path)
        self.exports = ExportFlow(self, services, self.controller, status, self.sidebar.title_of)
        self.models = ModelFlow(
            self,
            services,
            self.controller,
            status,
            picker=self.model_picker,
            provider_label=self.provider_label,
            resume_bar=self.resume_bar,
            stack=self.stack,
            transcript=self.transcript,
            welcome=self.welcome,
            focus_composer=self.composer.edit.setFocus,
        )
        self.versions = VersionFlow(self)  # Edit, Regenerate, the version arrows
        self.attachments = AttachmentFlow(self)  # checked before sending; drops; the viewer
        self.setup_flow = SetupFlow(  # the conversation panel; the header's model follows it
            self, services, self.controller, self.header, status, self.refresh_sessions
        )
        self.place = WindowPlace(self, services.data_dir)
        self._search_peek = False  # the sidebar is shown for a search only (focus_search)
        self.open_url: Callable[[QUrl], bool] = QDesktopServices.openUrl  # tests record it
        self.commands = WindowCommands(self)
        self._build_menus()
        self._connect()
        self.place.restore()
        set_tab_order(self)
        self._closing = False
        self._closed: asyncio.Future[None] | None = None
        self._shutdown_task: asyncio.Future[None] | None = None
        self.composer.edit.setFocus()

    # --- construction ----------------------------------------------------------------------

    def _build_menus(self) -> None:
        c = self.controller
        actions = build_menus(
            self,
            {
                "newAction": self.new_conversation,
                "exportMarkdownAction": lambda: self.exports.ask(ExportFormat.MARKDOWN),
                "exportJsonAction": lambda: self.exports.ask(ExportFormat.JSON),
                "importAction": self.commands.import_conversations,
                "settingsAction": self.models.open_settings,
                "quitAction": self.close,
                "findAction": self.focus_search,
                **{name: functools.partial(edit_focused, name) for name in EDIT_OPERATIONS},
                "stopAction": c.stop,
                "resumeAction": self.commands.resume,
                "dismissAction": self.commands.dismiss,
                "editLastAction": lambda: self.versions.edit_last(),
                "regenerateAction": lambda: self.versions.regenerate_last(),
                "sidebarAction": lambda: self.show_sidebar(self.sidebar_action.isChecked()),
                "zoomInAction": lambda: self.place.zoom(+1),
                "zoomOutAction": lambda: self.place.zoom(-1),
                "zoomResetAction": lambda: self.place.zoom(0),
                "shortcutsAction": lambda: show_shortcuts(self),
                "openDataAction": lambda: self.commands.open_folder(self.services.data_dir),
                "openLogAction": lambda: self.commands.open_folder(self.log_dir),
                "aboutAction": lambda: show_about(self, self.services.data_dir, self.log_dir),
                "renameAction": self._rename_current,
                "pinAction": self._pin_current,
                "deleteAction": self._delete_current,
                "workspaceAction": self.workspace.choose,
                "noWorkspaceAction": lambda: c.spawn(self.workspace.set(None)),
                "conversationSetupAction": lambda: self.setup_flow.open_panel(),
                **{
                    name: functools.partial(self.choose_theme, choice)
                    for choice, name in THEME_ACTIONS.items()
                },
            },
        )
        self.new_action = actions["newAction"]
        self.settings_action = actions["settingsAction"]
        self.quit_action = actions["quitAction"]
        self.find_action = actions["findAction"]
        self.workspace_action = actions["workspaceAction"]
        self.no_workspace_action = actions["noWorkspaceAction"]
        self.stop_action = actions["stopAction"]
        self.stop_action.setEnabled(False)  # Esc stops only while an answer runs
        self.resume_action = actions["resumeAction"]
        self.dismiss_action = actions["dismissAction"]
        self.sidebar_action = actions["sidebarAction"]
        self.sidebar_action.setChecked(True)
        self.theme_actions = {choice: actions[name] for choice, name in THEME_ACTIONS.items()}
        self.theme_actions[self.appearance.choice].setChecked(True)

    def _connect(self) -> None:
        c = self.controller
        c.busyChanged.connect(self._busy_changed)
        c.resumeInfoChanged.connect(self.resume_bar.show_info)
        c.noticeChanged.connect(self.resume_bar.show_notice)
        c.approvalRequested.connect(self.approval_card.ask)
        c.sessionChanged.connect(self._session_changed)
        c.sessionsChanged.connect(lambda: c.spawn(self.refresh_sessions()))
        c.statusMessage.connect(lambda text: self.statusBar().showMessage(text, 8000))
        self.services.notify = c.statusMessage.emit
        self.services.tool_progress = lambda report: c.model.set_tool_progress(
            report.call_id, progress_detail(report)
        )
        self.workspace_button.clicked.connect(self.workspace.choose)
        self.stack.currentChanged.connect(self._page_changed)
        self.model_picker.currentTextChanged.connect(
            lambda name: self.empty_hint.set_model(
                name, self.services.settings.provider_kind == "simulator"
            )
        )
        self.header.sidebar_button.clicked.connect(
            lambda: self.show_sidebar(not self.sidebar.isVisible())
        )
        self.composer.sendRequested.connect(self._send)
        self.composer.stopRequested.connect(c.stop)
        self.resume_bar.resumeRequested.connect(self._resume)
        self.resume_bar.resumeWithModelRequested.connect(self._resume_with)
        self.resume_bar.dismissRequested.connect(lambda: c.spawn(c.dismiss()))
        self.sidebar.sessionActivated.connect(lambda sid: c.spawn(self._open_chosen(sid)))
        self.transcript.nearTop.connect(lambda: c.spawn(c.load_earlier()))  # older messages
        self.sidebar.newRequested.connect(self.new_conversation)
        self.sidebar.renameRequested.connect(lambda sid, title: c.spawn(self._rename(sid, title)))
        self.sidebar.pinRequested.connect(lambda sid, pinned: c.spawn(self._pin(sid, pinned)))
        self.sidebar.deleteRequested.connect(lambda sid: c.spawn(self._delete(sid)))
        self.sidebar.searchChanged.connect(lambda q: c.spawn(self.search(q)))
        self.sidebar.searchDismissed.connect(self.composer.edit.setFocus)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._focus_moved)
        self.model_picker.activated.connect(
            lambda _i: c.spawn(self.models.pick(self.model_picker.currentText()))
        )
        self.welcome.offlineRequested.connect(lambda: c.spawn(self.models.use_simulator()))
        self.welcome.settingsRequested.connect(self.models.open_settings)
        self.welcome.localServerChosen.connect(lambda s: c.spawn(self.models.use_local_server(s)))
        self.transcript.delegate.codeCopied.connect(
            lambda _code: self.statusBar().showMessage("Code copied", 3000)
        )

    # --- startup ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Load settings, conversations and the most recent one (with its Resume bar)."""
        if self.services.settings_problem:
            self.statusBar().showMessage(self.services.settings_problem, 15000)
        if self.services.settings.configured:
            await self.models.apply_settings()
        else:
            self.models.show_welcome()
        sessions = await self.refresh_sessions()
        if sessions:
            await self.controller.open_session(sessions[0].id)
        await self.workspace.refresh()
        self.upkeep.set_busy(self.controller.busy)

    async def run(self) -> None:
        """Start, then wait until the window has closed and cleaned up."""
        self._closed = asyncio.get_running_loop().create_future()
        try:
            await self.start()
        except Exception:
            if not self._closing:
                raise
            # Closed while it was still loading: the store closed under the start; not an error.
            log.info("window closed while starting", exc_info=True)
        await self._closed

    # --- appearance ------------------------------------------------------------------------

    def choose_theme(self, choice: str) -> None:
        """View → Theme: use ``choice`` now and keep it for the next start."""
        self.appearance.apply(choice)
        self.theme_actions[self.appearance.choice].setChecked(True)
        settings = self.services.settings
        if settings.theme == self.appearance.choice:
            return
        try:
            self.services.save_settings(dataclasses.replace(settings, theme=self.appearance.choice))
        except SettingsSaveError as err:  # a full disk: the theme applies, not remembered
            self.statusBar().showMessage(str(err), 15000)

    # --- conversations ---------------------------------------------------------------------

    async def refresh_sessions(self) -> list[SessionInfo]:
        sessions = await self.services.list_sessions()
        badges = await self.services.resumable_sessions()
        self.sidebar.set_sessions(sessions, badges)
        self.sidebar.set_current(self.controller.session_id)
        self._retitle()
        return sessions

    def _retitle(self) -> None:
        """The window title names the open conversation ("Continuum" for a new one)."""
        sid = self.controller.session_id
        self.setWindowTitle(window_title(self.sidebar.title_of(sid) if sid else ""))

    async def search(self, query: str) -> None:
        """Show the first page of what ``query`` finds (see :mod:`ui.search_pages`)."""
        await self.search_pages.search(query)

    def new_conversation(self) -> None:
        if self.controller.busy:
            self.statusBar().showMessage(STOP_FIRST, 5000)
            return
        self.controller.spawn(self.controller.open_session(None))
        self.composer.edit.setFocus()

    async def _open_chosen(self, session_id: str) -> None:
        """Open what the sidebar chose; refused (an answer is running) or overtaken by a later
        choice, the sidebar's highlight goes back to what is open."""
        await self.controller.open_session(session_id)
        self.sidebar.set_current(self.controller.session_id)

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

    async def _pin(self, session_id: str, pinned: bool) -> None:
        await self.services.pin_session(session_id, pinned)
        await self.refresh_sessions()

    def _pin_current(self) -> None:
        if self.controller.session_id:
            self.sidebar.toggle_pin(self.controller.session_id)

    def _rename_current(self) -> None:
        if self.controller.session_id:
            self.sidebar.rename(self.controller.session_id)

    def _delete_current(self) -> None:
        if self.controller.session_id:
            self.sidebar.delete(self.controller.session_id)

    def focus_search(self) -> None:
        """Edit → Find (Ctrl+F): the sidebar's search field, the sidebar shown first when it is
        hidden or folded by a narrow window (typing went into a field nobody could see). One
        a narrow window folded is shown for the search only: it folds again once the focus
        moves on in the window (Esc in the empty field gives it to the composer)."""
        if not self.sidebar.isVisible():
            self._search_peek = self.place.folded
            self.show_sidebar(True)
        self.sidebar.search.setFocus()
        self.sidebar.search.selectAll()

    def _focus_moved(self, _old: QWidget | None, new: QWidget | None) -> None:
        if not self._search_peek or new is None or new.window() is not self:
            return  # (a menu or a dialog is not the person moving on)
        if new is not self.sidebar and not self.sidebar.isAncestorOf(new):
            self._search_peek = False
            self.place.fit_width(self.width())

    def _page_changed(self, _index: int) -> None:
        """Before anything is set up (the welcome panel) there is nothing to type to and no
        model to pick: the composer and the header's model and folder controls go."""
        ready = self.stack.currentWidget() is not self.welcome
        self.composer.setVisible(ready)
        self.context_meter.set_allowed(ready)
        self.header.set_ready(ready)

    def _session_changed(self, session_id: str | None) -> None:
        self.sidebar.set_current(session_id)
        self._retitle()
        self.transcript.follow()
        self.controller.spawn(self.workspace.refresh())

    # --- the flows' entry points that tests and main use ------------------------------------

    async def set_workspace(self, path: str | None) -> None:
        await self.workspace.set(path)

    async def refresh_workspace(self) -> None:
        await self.workspace.refresh()

    async def export(self, kind: ExportFormat, path: Path) -> None:
        await self.exports.export(kind, path)

    # --- requests --------------------------------------------------------------------------

    def _send(self, text: str) -> None:
        if self.stack.currentWidget() is self.welcome:
            self.statusBar().showMessage("Choose a model first (or Try it offline).", 5000)
            return
        self.attachments.send(text, self._deliver)  # attachments checked first

    def _deliver(self, text: str, parts: Sequence[ImagePart | FilePart]) -> None:
        if self.versions.send(text, parts):  # an edit: sent as a new version of the message
            return
        if self.controller.send(text, parts):
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
        self.upkeep.set_busy(busy)
        self.composer.set_busy(busy)
        self.stop_action.setEnabled(busy)
        self.model_picker.setEnabled(not busy)
        if busy:
            self.resume_bar.show_info(None)

    # --- Qt events -------------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self.transcript.delegate.forget()  # light/dark: colours are baked into rows
            self.transcript.doItemsLayout()
        super().changeEvent(event)

    def show_sidebar(self, shown: bool) -> None:
        """View → Sidebar and the ☰ button: the person's choice, kept for the next start."""
        self.place.show_sidebar(shown)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.place.fit_width(event.size().width())

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._closing:
            event.accept()
            return
        # Cancel the answer (its stop reason is recorded) and close the store, then close.
        event.ignore()
        self._closing = True
        self.place.save()
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
