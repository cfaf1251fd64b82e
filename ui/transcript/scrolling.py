"""Browser-like scrolling for the transcript view: wheel by lines (smoothly), page keys,
and a floating "Jump to latest" button while the view is not following the stream."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEasingCurve, QPersistentModelIndex, Qt, QVariantAnimation
from PySide6.QtGui import QColor, QKeyEvent, QWheelEvent
from PySide6.QtWidgets import QApplication, QGraphicsDropShadowEffect, QToolButton

from ..theme import tokens_for

if TYPE_CHECKING:
    from .view import TranscriptView

__all__ = ["Scroller", "wheel_pixels"]

DURATION_MS = 150


def wheel_pixels(angle: int, lines: int, line_height: int) -> int:
    """Pixels one wheel movement scrolls: `lines` lines per 120 units (positive = down)."""
    return round(-angle / 120 * lines * line_height)


class Scroller:
    """Wheel, keys and the jump button of one transcript view."""

    def __init__(self, view: TranscriptView) -> None:
        self.view = view
        self.animation = QVariantAnimation(view)
        self.animation.setDuration(DURATION_MS)
        self.animation.setEasingCurve(QEasingCurve.Type.OutCubic)
        self.animation.valueChanged.connect(self._step)
        self.target: int | None = None
        self.button = QToolButton(view.viewport())
        self.button.setObjectName("jumpToLatest")
        self.button.setAccessibleName("Jump to latest")
        self.button.setToolTip("Jump to latest")
        self.button.setText("↓")
        self.button.setFixedSize(36, 36)
        self.restyle()
        # A soft shadow lifts it off the text it floats over (a 1 px rim alone got lost in it).
        shadow = QGraphicsDropShadowEffect(self.button)
        shadow.setBlurRadius(12)
        shadow.setOffset(0, 2)
        shadow.setColor(QColor(0, 0, 0, 90))
        self.button.setGraphicsEffect(shadow)
        self.button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # End reaches it from the keys
        self.button.clicked.connect(view.follow)
        self.button.hide()
        self.anchor: tuple[QPersistentModelIndex, int] | None = None

    def remember_anchor(self) -> None:
        """Note the first visible row and its offset from the viewport's top."""
        index = self.view.indexAt(self.view.viewport().rect().topLeft())
        if not index.isValid() or self.animation.state() == QVariantAnimation.State.Running:
            self.anchor = None if not index.isValid() else self.anchor
            return
        self.anchor = (QPersistentModelIndex(index), self.view.visualRect(index).top())

    def restore_anchor(self) -> None:
        """After a relayout, scroll so the remembered row is where it was."""
        if self.anchor is None or self.animation.state() == QVariantAnimation.State.Running:
            return
        persistent, offset = self.anchor
        if not persistent.isValid():
            self.anchor = None
            return
        index = self.view.model().index(persistent.row(), 0)
        shift = self.view.visualRect(index).top() - offset
        if shift:
            bar = self.view.verticalScrollBar()
            bar.setValue(bar.value() + shift)

    def line_height(self) -> int:
        return max(1, self.view.fontMetrics().lineSpacing())

    def stop(self) -> None:
        self.animation.stop()
        self.target = None

    def _step(self, value: object) -> None:
        if isinstance(value, int):
            self.view.verticalScrollBar().setValue(value)
        if self.animation.state() != QVariantAnimation.State.Running:
            self.target = None
            self.remember_anchor()

    def scroll_by(self, pixels: int, animate: bool = True) -> None:
        bar = self.view.verticalScrollBar()
        start = bar.value()
        base = self.target if self.target is not None else start
        target = max(bar.minimum(), min(bar.maximum(), base + pixels))
        if not animate:
            self.stop()
            bar.setValue(target)
            return
        self.animation.stop()
        self.target = target
        self.animation.setStartValue(start)
        self.animation.setEndValue(target)
        self.animation.start()

    def wheel(self, event: QWheelEvent) -> bool:
        """Handle a vertical wheel; Shift or horizontal wheels are left to the base class."""
        if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            return False
        pixel, angle = event.pixelDelta(), event.angleDelta()
        if pixel.y():
            self.scroll_by(-pixel.y(), animate=False)
        elif angle.y():
            lines = QApplication.wheelScrollLines()
            self.scroll_by(wheel_pixels(angle.y(), lines, self.line_height()))
        else:
            return False
        event.accept()
        return True

    def key(self, event: QKeyEvent) -> bool:
        """PgUp/PgDn by a page less one line; (Ctrl+)Home/End to the top/bottom."""
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if mods not in (Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.ControlModifier):
            return False
        page = max(1, self.view.viewport().height() - self.line_height())
        key = event.key()
        if key == Qt.Key.Key_PageDown and mods == Qt.KeyboardModifier.NoModifier:
            self.scroll_by(page, animate=False)
        elif key == Qt.Key.Key_PageUp and mods == Qt.KeyboardModifier.NoModifier:
            self.scroll_by(-page, animate=False)
        elif key == Qt.Key.Key_Home:
            self.stop()
            self.view.verticalScrollBar().setValue(0)
        elif key == Qt.Key.Key_End:
            self.view.follow()
        else:
            return False
        event.accept()
        return True

    def restyle(self) -> None:
        """Round, on the transcript's theme colours (again after each theme change)."""
        t = tokens_for(self.view.palette())
        self.button.setStyleSheet(
            f"QToolButton#jumpToLatest {{ border-radius: 18px; border: 1px solid {t.border};"
            f" background: {t.surface}; color: {t.text}; font-size: 16px; }}"
            f" QToolButton#jumpToLatest:hover {{ background: {t.code_header}; }}"
        )

    def update_button(self) -> None:
        """Show the button only when not following and there is content below."""
        bar = self.view.verticalScrollBar()
        below = bar.value() < bar.maximum() - 8
        show = not self.view.following and below
        if show:
            vp = self.view.viewport()
            b = self.button
            b.move((vp.width() - b.width()) // 2, vp.height() - b.height() - 16)
            b.raise_()
        self.button.setVisible(show)
