"""The context meter over the composer: how full the open conversation's context is.

"12.3k / 128k" with a thin bar when the model's window is known, "12.3k tokens" without one
when it is not; from 80 % the bar and words turn to the warning colour and a one-line hint
says what to do. The tooltip explains where each number comes from. The words and arithmetic
are :func:`ui.token_text.context_reading`'s; the numbers come from
:meth:`AppServices.context_used` (the newest answer's reported usage) and
:meth:`AppServices.context_limit` (asked of a local server in the background, cached).
Nothing is shown before an answer has reported its tokens.

:meth:`ContextMeter.follow` keeps it up to date: when a conversation opens, after each
request and when another version (branch) is shown. Colours are the theme's tokens through
palettes (no style sheet), so a theme change reaches it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QRectF, QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QWidget

from app.services import ContextLimit

from .plain import plain_tooltip
from .sidebar_rows import small_font
from .theme import SPACE, tokens_for
from .token_text import ContextReading, context_reading

if TYPE_CHECKING:
    from app.services import AppServices

    from .controller import ConversationController

__all__ = ["ContextBar", "ContextMeter"]

BAR_WIDTH = 72
BAR_HEIGHT = 6


class ContextBar(QWidget):
    """A thin rounded bar: the share of the context used (capped at full)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.fraction = 0.0
        self.warning = False
        self.setFixedSize(BAR_WIDTH, BAR_HEIGHT)

    def set_share(self, fraction: float, warning: bool) -> None:
        self.fraction, self.warning = max(0.0, min(fraction, 1.0)), warning
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(BAR_WIDTH, BAR_HEIGHT)

    def paintEvent(self, event: QPaintEvent) -> None:
        tokens = tokens_for(self.palette())
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        rect = QRectF(self.rect())
        radius = rect.height() / 2
        painter.setBrush(tokens.color("border"))
        painter.drawRoundedRect(rect, radius, radius)
        if self.fraction > 0:
            width = max(rect.width() * self.fraction, 2 * radius)
            filled = QRectF(rect.left(), rect.top(), width, rect.height())
            painter.setBrush(tokens.color("warning" if self.warning else "accent"))
            painter.drawRoundedRect(filled, radius, radius)
        painter.end()


class ContextMeter(QWidget):
    """The hint (when nearly full), the bar (when the limit is known) and the numbers."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contextMeter")
        self.hint = QLabel()
        self.hint.setObjectName("contextMeterHint")
        self.hint.setTextFormat(Qt.TextFormat.PlainText)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.hint.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.bar = ContextBar()
        self.bar.setObjectName("contextMeterBar")
        self.text = QLabel()
        self.text.setObjectName("contextMeterText")
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(SPACE[1], 0, SPACE[1], 0)
        layout.setSpacing(SPACE[1])
        layout.addWidget(self.hint, 1)
        layout.addWidget(self.bar, 0, Qt.AlignmentFlag.AlignVCenter)
        layout.addWidget(self.text, 0)
        self.reading: ContextReading | None = None
        self._allowed = True  # False on the welcome panel (no composer, no conversation)
        self._services: AppServices | None = None
        self._controller: ConversationController | None = None
        self._apply_look()
        self.hide()

    # --- what it shows ----------------------------------------------------------------------

    def set_allowed(self, allowed: bool) -> None:
        """Whether the meter may show at all (the window puts it away with the composer)."""
        self._allowed = allowed
        self.setVisible(allowed and self.reading is not None)

    def show_reading(self, reading: ContextReading | None) -> None:
        """Show ``reading`` (``None``: nothing to show, the meter goes away)."""
        self.reading = reading
        if reading is None:
            self.hide()
            return
        self.text.setText(reading.text)
        self.bar.setVisible(reading.fraction is not None)
        self.bar.set_share(reading.fraction or 0.0, reading.warning)
        self.hint.setText(reading.hint)
        self.hint.setVisible(bool(reading.hint))
        tooltip = plain_tooltip(reading.tooltip)
        for widget in (self, self.text, self.bar, self.hint):
            widget.setToolTip(tooltip)
        self.setAccessibleName(f"Context: {reading.text}")
        self.setAccessibleDescription(reading.tooltip)
        self._apply_look()
        self.setVisible(self._allowed)

    def _apply_look(self) -> None:
        tokens = tokens_for(self.palette())
        warning = self.reading is not None and self.reading.warning
        looks = ((self.text, "warning" if warning else "muted"), (self.hint, "warning"))
        for label, token in looks:
            palette = label.palette()
            palette.setColor(QPalette.ColorRole.WindowText, tokens.color(token))
            label.setPalette(palette)
            label.setFont(small_font(self.font(), bold=warning and label is self.hint))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.FontChange):
            self._apply_look()

    # --- keeping up to date --------------------------------------------------------------------

    def follow(self, services: AppServices, controller: ConversationController) -> None:
        """Refresh when a conversation opens, after each request and when another version is
        shown (in helper tasks)."""
        self._services, self._controller = services, controller
        controller.sessionChanged.connect(lambda _sid: controller.spawn(self.refresh()))
        controller.runFinished.connect(lambda: controller.spawn(self.refresh()))
        # Another version chosen: its newest answer is what the context holds now.
        controller.branchShown.connect(lambda: controller.spawn(self.refresh()))

    async def refresh(self) -> None:
        """Read the open conversation's numbers; ask for the model's limit if not known yet
        (the meter shows the tokens at once, and the share once the limit arrives)."""
        services, controller = self._services, self._controller
        if services is None or controller is None:
            return
        session_id = controller.session_id
        used = await services.context_used(session_id) if session_id else None
        if controller.session_id != session_id:
            return  # another conversation opened meanwhile: its own refresh shows it
        if used is None:
            self.show_reading(None)
            return
        where = await services.context_where(session_id)
        known = services.context_limits.cached(*where) if where else None
        if controller.session_id != session_id:
            return
        self.show_reading(_reading(used, known))
        if where is None or (known is not None and known.settled):
            return
        limit = await services.context_limit(session_id)
        if controller.session_id == session_id and limit is not None:
            self.show_reading(_reading(used, limit))


def _reading(used: int, limit: ContextLimit | None) -> ContextReading | None:
    if limit is None:
        return context_reading(used, None)
    return context_reading(used, limit.tokens, limit.source)
