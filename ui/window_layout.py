"""How the main window's widgets are arranged: sidebar | (header, Resume bar, conversation or
welcome, approval card, context meter, composer), and the order Tab walks them in."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QHBoxLayout, QSplitter, QVBoxLayout, QWidget

from .theme import SPACE
from .transcript.layout import COLUMN_MAX
from .window_place import SIDEBAR_WIDTH

if TYPE_CHECKING:
    from .window import MainWindow

__all__ = ["lay_out", "set_tab_order"]


def _in_column(widget: QWidget) -> QHBoxLayout:
    """``widget`` centred, at most the transcript's reading column wide (as in ChatGPT)."""
    widget.setMaximumWidth(COLUMN_MAX + 2 * SPACE[3])
    row = QHBoxLayout()
    row.setContentsMargins(SPACE[1], 0, SPACE[1], 0)
    row.addStretch(0)
    row.addWidget(widget, 1)
    row.addStretch(0)
    return row


def lay_out(window: MainWindow) -> QSplitter:
    """Put the window's widgets in place; returns the splitter (the central widget)."""
    right = QWidget()
    column = QVBoxLayout(right)
    column.setContentsMargins(0, 0, 0, 0)
    column.setSpacing(SPACE[0])
    column.addWidget(window.header)
    column.addLayout(_in_column(window.resume_bar))
    column.addWidget(window.stack, 1)
    column.addLayout(_in_column(window.approval_card))
    column.addLayout(_in_column(window.context_meter))
    column.addLayout(_in_column(window.edit_strip))
    column.addLayout(_in_column(window.composer))
    splitter = QSplitter()
    splitter.addWidget(window.sidebar)
    splitter.addWidget(right)
    splitter.setStretchFactor(1, 1)
    splitter.setSizes([SIDEBAR_WIDTH, 840])
    # The sidebar's own minimum would hold the whole window wide; narrow windows fold it.
    window.sidebar.setMinimumWidth(1)  # not 0: the splitter would use its minimumSizeHint
    window.setCentralWidget(splitter)
    return splitter


def set_tab_order(window: MainWindow) -> None:
    """Tab walks the window left to right, top to bottom, ending at the composer."""
    chain = [
        window.sidebar.new_button,
        window.sidebar.search,
        window.sidebar.list,
        window.header.sidebar_button,
        window.workspace_button,
        window.model_picker,
        window.resume_bar.resume_button,
        window.resume_bar.other_button,
        window.resume_bar.dismiss_button,
        window.transcript,
        window.composer.edit,
        window.composer.send_button,
        window.composer.stop_button,
    ]
    for first, second in zip(chain, chain[1:], strict=False):
        QWidget.setTabOrder(first, second)
