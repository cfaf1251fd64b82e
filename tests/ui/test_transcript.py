"""The transcript model (qtmodeltester), safe Markdown, and streaming cost."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QStyleOptionViewItem

from app import (
    AssistantMessage,
    InternalMessage,
    StopReason,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from app.resume import CONTINUE_TEXT
from ui.transcript.blocks import stable_boundary
from ui.transcript.delegate import TranscriptDelegate
from ui.transcript.markdown import render_markdown
from ui.transcript.model import ItemKind, ToolState, TranscriptModel
from ui.transcript.render import _InertDocument
from ui.transcript.view import TranscriptView

HISTORY = [
    UserMessage("hi"),
    AssistantMessage("Let me check", (ToolCall("c1", "read_file", {"path": "a"}),)),
    ToolMessage("c1", "read_file", "data"),
    AssistantMessage("Part one", stop_reason=StopReason.MAX_OUTPUT),
    InternalMessage(CONTINUE_TEXT),
    AssistantMessage("part two"),
]


def test_model_passes_qtmodeltester_through_history_and_streaming(
    qapp: Any, qtmodeltester: Any
) -> None:
    model = TranscriptModel()
    # One check connects the tester; it then verifies every later change as it happens.
    qtmodeltester.check(model, force_py=True)
    model.load_history(HISTORY)
    assert [i.kind for i in model.items()] == [
        ItemKind.USER,
        ItemKind.ASSISTANT,
        ItemKind.TOOL,
        ItemKind.ASSISTANT,
        ItemKind.NOTE,
        ItemKind.ASSISTANT,
    ]
    assert model.item(2).state is ToolState.DONE
    assert model.item(3).stop_reason == "max_output"
    assert model.item(5).joined  # the continuation is drawn joined to the part before it
    assert model.item(4).text == "Continued after the output limit"
    model.add_user("again")
    model.append_delta("stream")
    model.flush()
    model.tool_called(ToolCall("c2", "list_directory", {}))
    model.tool_result(ToolMessage("c2", "list_directory", "a b"))
    model.message_saved(AssistantMessage("streamed"))
    assert model.item(7).text == "streamed" and not model.item(7).streaming
    assert model.item(8).state is ToolState.DONE
    model.clear()
    assert model.rowCount() == 0


def test_deltas_are_coalesced_into_few_row_changes(qtbot: Any) -> None:
    model = TranscriptModel()
    changes: list[int] = []
    inserts: list[int] = []
    model.dataChanged.connect(lambda top, _bottom, _roles=(): changes.append(top.row()))
    model.rowsInserted.connect(lambda _p, first, _last: inserts.append(first))
    model.modelReset.connect(lambda: changes.append(-1))
    for number in range(5000):
        model.append_delta(f"t{number} ")
    qtbot.waitUntil(lambda: bool(changes), timeout=2000)
    assert inserts == [0]  # one row inserted, never a reset
    assert -1 not in changes
    assert len(changes) <= 3  # thousands of tokens, a handful of updates
    assert model.item(0).text.startswith("t0 t1 ")
    assert model.item(0).text.endswith("t4999 ")


def test_streaming_render_cost_does_not_grow_with_length(qapp: Any) -> None:
    model = TranscriptModel()
    view = TranscriptView()
    view.setModel(model)
    view.resize(600, 400)
    delegate: TranscriptDelegate = view.delegate
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = view.viewport().rect()
    model.append_delta("start")
    model.flush()
    item = model.streaming_item
    assert item is not None
    costs = []
    for number in range(300):
        model.append_delta(f"Paragraph {number} with **bold** text and `code`.\n\n")
        model.flush()
        render = delegate.render_for(item, 560, option)
        costs.append(render.last_rendered_chars)
    # Each frame parses only the unfinished tail plus the newest paragraph, not the whole text.
    assert len(item.text) > 10_000
    assert max(costs[-50:]) < 200
    assert len(render.chunks) > 100


def test_markdown_is_inert() -> None:
    text = (
        "<script>alert(1)</script>\n\n"
        "![tracker](http://evil.example/pixel.png)\n\n"
        "[click](javascript:alert(1)) [file](file:///etc/passwd) [ok](https://example.org)\n\n"
        '<img src="http://evil.example/x.png" onerror="alert(1)">\n\n'
        '<a href="javascript:alert(2)">raw</a>\n'
    )
    html = render_markdown(text).html
    lowered = html.lower()
    assert "<script" not in lowered
    assert "<img" not in lowered
    assert "javascript:" not in lowered.replace("[click](javascript:alert(1))", "") or (
        'href="javascript' not in lowered
    )
    assert 'href="javascript' not in lowered
    assert 'href="file' not in lowered
    assert '<a href="https://example.org">ok</a>' in html
    assert "&lt;script&gt;" in html


def test_rich_text_document_never_loads_resources(qapp: Any) -> None:
    requested: list[str] = []

    class Spy(_InertDocument):
        def loadResource(self, type: int, name: Any) -> Any:
            requested.append(str(name))
            return super().loadResource(type, name)

    doc = Spy()
    doc.setHtml(render_markdown("![x](http://evil.example/a.png) <img src=http://e/x.png>").html)
    doc.setTextWidth(400)
    doc.size()
    assert requested == []
    assert isinstance(doc, QTextDocument)


def test_links_open_only_when_http(qapp: Any, monkeypatch: Any) -> None:
    from PySide6.QtGui import QDesktopServices

    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toString()))
    model = TranscriptModel()
    view = TranscriptView()
    view.setModel(model)
    view.resize(600, 400)
    model.load_history([AssistantMessage("[site](https://example.org) and [bad](ftp://x/y)")])
    anchors = view.anchors(0)
    assert anchors == ["https://example.org"]
    assert opened == []  # nothing opens by itself
    view.activate_anchor(0, "https://example.org")
    view.activate_anchor(0, "javascript:alert(1)")
    assert opened == ["https://example.org"]


def test_stable_boundary_respects_code_fences() -> None:
    text = "para\n\n```\ncode\n\nmore code\n"
    assert text[: stable_boundary(text)] == "para\n\n"
    closed = text + "```\n"
    assert stable_boundary(closed) == len(closed)


def test_huge_message_is_cut_for_display_not_for_storage(qapp: Any) -> None:
    model = TranscriptModel()
    view = TranscriptView()
    view.setModel(model)
    view.resize(600, 400)
    huge = "x" * 10_000_000
    model.add_user(huge)
    assert model.item(0).text == huge  # the row keeps everything; only drawing is cut
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = view.viewport().rect()
    render = view.delegate.render_for(model.item(0), 560, option)
    assert render.last_rendered_chars <= 100_000


def test_a_tool_that_may_still_complete_is_shown_as_unknown_not_failed(qapp: Any) -> None:
    """A sync tool that outlived Stop or its timeout may still have done its work: the card
    must say "may or may not have run" (UNKNOWN), never plain "failed"."""
    from app.tools import STOPPED_STILL_RUNNING_TEXT

    model = TranscriptModel()
    call = ToolCall("c1", "write_file", {"path": "a"})
    model.load_history(
        [
            UserMessage("save it"),
            AssistantMessage("", (call,)),
            ToolMessage("c1", "write_file", STOPPED_STILL_RUNNING_TEXT, success=False),
        ]
    )
    assert model.items()[-1].kind is ItemKind.TOOL
    assert model.items()[-1].state is ToolState.UNKNOWN
    # The timed-out wording (it names the tool and its limit) is recognised the same way.
    model.tool_called(ToolCall("c2", "slow", {}))
    model.tool_result(
        ToolMessage(
            "c2",
            "slow",
            "slow did not finish within its 1-second limit. It cannot be interrupted "
            "and was still running when this was written, so it may still complete after this "
            "message: whatever it changes may or may not have happened.",
            success=False,
        )
    )
    assert model.items()[-1].state is ToolState.UNKNOWN
    # An ordinary failure stays a failure.
    model.tool_called(ToolCall("c3", "boom", {}))
    model.tool_result(ToolMessage("c3", "boom", "ValueError: no", success=False))
    assert model.items()[-1].state is ToolState.FAILED
