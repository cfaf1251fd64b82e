"""Attachments in one window: checking them before sending, drops anywhere, opening an image.

A message with attachments is checked first (:meth:`AppServices.attachment_problem`: an image
for a model known not to read images): a refusal is said under the composer's chips and
nothing is saved, sent or cleared, so the draft keeps its text and attachments. A drop of
files or an image anywhere on the window goes to the composer's tray; a click on a sent
thumbnail opens the image at full size.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QDialog

from app.services import FilePart, ImagePart

from .attachments import DropTarget
from .transcript.attachments import open_attachment

if TYPE_CHECKING:
    from .window import MainWindow

__all__ = ["AttachmentFlow"]

log = logging.getLogger(__name__)

#: What sending does once the attachments are accepted: ``deliver(text, parts)``.
_Deliver = Callable[[str, Sequence[ImagePart | FilePart]], None]


class AttachmentFlow(QObject):
    """The window's attachments (see the module docstring)."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.drop_target = DropTarget(window, window.composer.tray.add_mime)
        self.viewer: QDialog | None = None  # the image opened last (tests look at it)
        window.transcript.delegate.attachmentActivated.connect(self.open)

    def send(self, text: str, deliver: _Deliver) -> None:
        """Send ``text`` with the composer's attachments through ``deliver(text, parts)``,
        once the conversation's model is known to take them."""
        parts = tuple(self.window.composer.attachments())
        if not parts:
            deliver(text, ())
            return
        self.window.controller.spawn(self._checked(text, parts, deliver))

    async def _checked(
        self, text: str, parts: tuple[ImagePart | FilePart, ...], deliver: _Deliver
    ) -> None:
        controller = self.window.controller
        problem = await self.window.services.attachment_problem(controller.session_id, parts)
        if problem:
            self.window.composer.tray.show_problem(problem)
            return
        deliver(text, parts)

    def open(self, part: ImagePart | FilePart) -> None:
        self.viewer = open_attachment(part, self.window)
