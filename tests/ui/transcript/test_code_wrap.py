"""A long code line wraps inside its block: nothing of it is ever cut off at the column's edge."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QStyleOptionViewItem

from app import AssistantMessage, UserMessage
from ui.transcript.model import TranscriptModel
from ui.transcript.view import TranscriptView

LONG_LINE = "total = compute(" + ", ".join(f"argument_{n}" for n in range(40)) + ")"


def test_a_long_code_line_wraps_within_the_document_width(qapp: Any) -> None:
    model = TranscriptModel()
    model.load_history([UserMessage("code?"), AssistantMessage(f"```python\n{LONG_LINE}\n```\n")])
    view = TranscriptView()
    view.setModel(model)
    option = QStyleOptionViewItem()
    option.initFrom(view)
    item = model.item(1)
    render = view.delegate.render_for(item, 360.0, option)
    code = next(doc for doc in render.chunks if "argument_39" in doc.toPlainText())
    assert code.idealWidth() <= code.textWidth() + 1  # wrapped, not spilling past the column
    assert code.toPlainText().count("argument_") == 40  # and every part of it is there
    assert render.code_blocks == [LONG_LINE]
