"""The open conversation's setup in the window: the conversation panel (Conversation →
Conversation settings…, or the header's button next to the model) and the header showing the
model the conversation uses, with its provider's name in the tooltip.

The header follows the open conversation: :meth:`SetupFlow.refresh` runs when the
conversation changes, when its setup is saved, and whenever the model list is refilled (the
list is the default provider's; the conversation's own model is shown, added if missing).
Saving the panel on a new, empty conversation creates it first (named after its first message,
as a chosen workspace folder does).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QStatusBar, QWidget

from app.services import AppServices, Setup

from .conversation_panel import ConversationPanel
from .header import HeaderBar

if TYPE_CHECKING:
    from .controller import ConversationController

__all__ = ["SetupFlow", "model_tooltip"]

log = logging.getLogger(__name__)


def model_tooltip(model: str, profile: str | None, own: bool) -> str:
    """The model picker's tooltip: the model in use, its provider, whose choice it is. Pure."""
    where = f" on {profile}" if profile else ""
    whose = "this conversation's choice" if own else "the default for new conversations"
    return (
        f"The model that answers this conversation: {model or 'none chosen'}{where} "
        f"({whose}). Conversation settings: Ctrl+Shift+,"
    )


class SetupFlow:
    """Opens the conversation panel and keeps the header's model in step with the conversation."""

    def __init__(
        self,
        parent: QWidget,
        services: AppServices,
        controller: ConversationController,
        header: HeaderBar,
        status: QStatusBar,
        refresh_sessions: Callable[[], Awaitable[object]],
    ) -> None:
        self._parent = parent
        self._services = services
        self._controller = controller
        self._header = header
        self._status = status
        self._refresh_sessions = refresh_sessions
        self.panel: ConversationPanel | None = None
        self._showing = False
        header.setup_button.clicked.connect(self.open_panel)
        controller.sessionChanged.connect(lambda _sid: self.schedule_refresh())
        picker_model = header.model_picker.model()
        picker_model.rowsInserted.connect(lambda *_: self.schedule_refresh())
        picker_model.modelReset.connect(self.schedule_refresh)
        self._timer = QTimer(parent)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(lambda: controller.spawn(self.refresh()))

    def schedule_refresh(self) -> None:
        if not self._showing:
            self._timer.start()

    async def refresh(self) -> None:
        """Show the model the open conversation uses (and its provider in the tooltip)."""
        session_id = self._controller.session_id
        try:
            setup = await self._services.conversation_setup(session_id)
            resolved = await self._services.resolved_setup(session_id)
        except Exception:  # the header is a view: keep the window usable, say it in the log
            log.exception("could not read the conversation's setup")
            return
        if session_id != self._controller.session_id:
            return  # another conversation was opened meanwhile
        picker = self._header.model_picker
        self._showing = True
        try:
            if resolved.model and picker.findText(resolved.model) < 0:
                picker.addItem(resolved.model)
            picker.setCurrentText(resolved.model)
        finally:
            self._showing = False
        own = setup.model is not None or setup.profile is not None
        name = resolved.profile.name if resolved.profile else None
        picker.setToolTip(model_tooltip(resolved.model, name, own))

    # --- the panel ---------------------------------------------------------------------------

    def open_panel(self) -> None:
        self._controller.spawn(self._open())

    async def _open(self) -> None:
        c = self._controller
        if c.read_only:
            self._status.showMessage("This conversation is busy in another window.", 5000)
            return
        setup = await self._services.conversation_setup(c.session_id)
        panel = ConversationPanel(
            setup, self._services.settings, self._parent, list_models=self._services.profile_models
        )
        panel.setModal(True)
        panel.accepted.connect(lambda: self._chosen(panel))
        panel.open()
        self.panel = panel  # kept alive while open

    def _chosen(self, panel: ConversationPanel) -> None:
        setup = panel.result_setup()
        if setup is not None:
            self._controller.spawn(self.save(setup))

    async def save(self, setup: Setup) -> None:
        """Store ``setup`` for the open conversation (created now if it is new and empty)."""
        c = self._controller
        session_id = c.session_id
        if session_id is None:
            created = await self._services.new_session()
            await c.open_session(created.id)
            c.name_on_first_send = created.id  # created empty: named after its first message
            session_id = created.id
            await self._refresh_sessions()
        await self._services.set_conversation_setup(session_id, setup)
        await self.refresh()
        resolved = await self._services.resolved_setup(session_id)
        where = f" on {resolved.profile.name}" if resolved.profile else ""
        self._status.showMessage(
            f"This conversation now uses {resolved.model or 'the default model'}{where}.", 8000
        )
