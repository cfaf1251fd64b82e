"""A collapsed thought that is still streaming draws one label line: its document is not
rebuilt (nor its whole text rescanned) for every new piece, only when the label changes;
expanded, every piece shows."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QApplication

from ui.transcript.render import MessageRender, update_render
from ui.transcript.rows import ItemKind, TranscriptItem


def _render(render: MessageRender, item: TranscriptItem) -> None:
    update_render(render, item, QApplication.font(), QApplication.palette())


def test_a_collapsed_streaming_thought_keeps_its_document(qapp: Any) -> None:
    item = TranscriptItem(ItemKind.ASSISTANT, streaming=True)
    item.reasoning, item.thinking = "First I", True
    render = MessageRender(800.0, False)
    _render(render, item)
    first = render.reasoning
    assert first is not None and "Thinking" in first.toPlainText()
    for more in (" add six", " and seven", " = 13."):
        item.reasoning += more
        _render(render, item)
        assert render.reasoning is first  # the same label: nothing rebuilt
    item.expanded = True
    _render(render, item)
    assert render.reasoning is not first and "= 13." in render.reasoning.toPlainText()
    opened = render.reasoning
    item.reasoning += " Prime."
    _render(render, item)
    assert render.reasoning is not opened and "Prime." in render.reasoning.toPlainText()
