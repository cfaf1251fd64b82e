"""Model- and user-supplied text shown by Qt widgets that would guess rich text (issue 11, item 4).

Qt's tooltips, ``QLabel`` and ``QMessageBox`` default to ``Qt.AutoText``: text that *looks* like
HTML is rendered as HTML, so a tool named ``<img src="file:///…">`` made Qt open a local file.
Everything such text reaches goes through this module:

* :func:`plain_tooltip` — tooltips always guess, so text that might be rich is escaped (and kept
  pre-wrapped so its spaces and line breaks survive); text Qt would show as plain anyway is
  returned unchanged.
* :func:`plain_message_box` — a ``QMessageBox`` whose text is shown as plain text.
Labels take ``label.setTextFormat(Qt.TextFormat.PlainText)`` where they are made.
"""

from __future__ import annotations

import html

from PySide6.QtGui import Qt  # QtGui's Qt namespace has mightBeRichText
from PySide6.QtWidgets import QMessageBox, QWidget

__all__ = ["plain_message_box", "plain_tooltip"]


def plain_tooltip(text: str | None) -> str:
    """``text`` as a tooltip that shows it literally (never markup, never an image)."""
    if not text:
        return ""
    if not Qt.mightBeRichText(text):
        return text  # Qt shows it as plain text already: keep it readable in tests and logs
    return f'<p style="white-space:pre-wrap">{html.escape(text, quote=False)}</p>'


def plain_message_box(
    parent: QWidget | None,
    icon: QMessageBox.Icon,
    title: str,
    text: str,
    buttons: QMessageBox.StandardButton = QMessageBox.StandardButton.Ok,
    default: QMessageBox.StandardButton = QMessageBox.StandardButton.NoButton,
) -> QMessageBox:
    """A message box whose ``text`` (may hold titles, paths, errors) is plain text."""
    box = QMessageBox(icon, title, text, buttons, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    if default != QMessageBox.StandardButton.NoButton:
        box.setDefaultButton(default)
    return box
