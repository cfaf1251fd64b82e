"""Model/user text never becomes rich text in tooltips, labels or message boxes (issue 11, item 4).

Each test puts ``<img src="file:///…/big.png">`` (a real 400×400 picture) and ``<b>`` markup into
a tool name, a conversation title or a note, lets Qt show the real tooltip (a ``QHelpEvent`` as
the mouse would send), and checks the tooltip shows the literal text and did not load the image:
a rich-text tooltip that loaded it is over 400 pixels tall.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QColor, QHelpEvent, QImage, Qt, QTextDocument
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox, QToolTip, QWidget

import ui.sidebar as sidebar_module
from app import InternalMessage, ToolCall, UserMessage
from app.messages import AssistantMessage
from app.resume import classify_tail
from app.services import ResumeInfo
from app.simulator import Reply
from tests.ui.helpers import until, window_on_simulator
from ui.plain import plain_message_box, plain_tooltip
from ui.resume_bar import ResumeBar
from ui.transcript.model import TranscriptModel
from ui.transcript.view import TranscriptView

# Showing a tooltip raises its window, which the offscreen platform cannot do (harmless).
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support raise")


@pytest.fixture
def image_markup(tmp_path: Path) -> str:
    picture = tmp_path / "big.png"
    image = QImage(400, 400, QImage.Format.Format_RGB32)
    image.fill(QColor("red"))
    assert image.save(str(picture))
    return f'<img src="{picture.as_uri()}"> <b>bold</b>'


def shown_tooltip(widget: QWidget, at: QPoint | None = None) -> QLabel:
    """Ask ``widget`` for its tooltip the way a hovering mouse does; return Qt's tip label."""
    QToolTip.hideText()
    pos = at if at is not None else widget.rect().center()
    QApplication.sendEvent(widget, QHelpEvent(QEvent.Type.ToolTip, pos, widget.mapToGlobal(pos)))
    assert QToolTip.isVisible(), "no tooltip was shown"
    tips = [w for w in QApplication.topLevelWidgets() if w.inherits("QTipLabel") and w.isVisible()]
    assert len(tips) == 1
    return tips[0]  # type: ignore[return-value]


def literal(text: str) -> str:
    """What a label with Qt's automatic text format shows for ``text``."""
    doc = QTextDocument()
    if Qt.mightBeRichText(text):
        doc.setHtml(text)
    else:
        doc.setPlainText(text)
    return doc.toPlainText()


def assert_shows_literally(tip: QLabel, markup: str) -> None:
    assert markup in literal(tip.text()), tip.text()
    assert tip.sizeHint().height() < 200, "the tooltip loaded the image"


def test_plain_tooltip_table() -> None:
    cases = {
        "": "",
        "just words": "just words",
        "x <y": "x <y",  # Qt shows this as plain text already: unchanged
        "a & b": "a & b",
        "line one\nline two": "line one\nline two",
    }
    for text, expected in cases.items():
        assert plain_tooltip(text) == expected
    for text in (
        "<b>x</b>",
        '<img src="file:///etc/passwd">',
        "&lt;i&gt;",
        "a  <i>b</i>\n  c",
        "a < b & c > d",
    ):
        assert literal(plain_tooltip(text)) == text


def test_tool_name_markup_in_the_resume_bar_tooltips(qtbot: Any, image_markup: str) -> None:
    call = ToolCall("c1", image_markup, {"path": "<b>x</b>"})
    point = classify_tail([UserMessage("go"), AssistantMessage("", (call,))])
    bar = ResumeBar()
    qtbot.addWidget(bar)
    bar.show_info(ResumeInfo(point, None, None, None, None))  # type: ignore[arg-type]
    bar.resize(900, 200)
    bar.show()
    assert image_markup in point.description  # type: ignore[union-attr]
    # The bar's words no longer quote the core's description (issue 16): its tooltips hold no
    # tool name, and what they hold is shown as plain text.
    for widget in (bar.message, bar.resume_button):
        tip = shown_tooltip(widget)
        assert tip is None or "<img" not in literal(tip.text())
    assert bar.message.textFormat() == Qt.TextFormat.PlainText
    # The rich tool list escapes the names: no image there either.
    assert image_markup in literal(bar.tools.text())
    assert bar.tools.sizeHint().height() < 200


def test_note_markup_in_the_transcript_tooltip(qtbot: Any, image_markup: str) -> None:
    model = TranscriptModel()
    view = TranscriptView()
    view.setModel(model)
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    model.load_history([UserMessage("hi"), InternalMessage(image_markup)])
    rect = view.visualRect(model.index(1, 0))
    assert rect.isValid()
    assert_shows_literally(shown_tooltip(view.viewport(), rect.center()), image_markup)


def test_conversation_title_markup_in_the_sidebar(
    run: Any, tmp_path: Path, image_markup: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (sim, window):
            sim.enqueue(Reply(text="Hello."))
            window.composer.edit.setPlainText("Hi")
            window.composer.send_button.click()
            await until(
                lambda: not window.controller.busy and len(window.sidebar.session_ids()) == 1,
                10,
                "the conversation",
            )
            sid = window.controller.session_id
            # The person renames it (the model could have named it too).
            monkeypatch.setattr(sidebar_module, "ask_title", lambda _p, _c: image_markup)
            window.sidebar.rename(sid)
            await until(lambda: window.sidebar.title_of(sid) == image_markup, 10, "the new title")
            lst = window.sidebar.list
            rect = lst.visualRect(window.sidebar.index_of(sid))
            assert_shows_literally(shown_tooltip(lst.viewport(), rect.center()), image_markup)
            # Deleting asks with the title in the question: shown as plain text.
            seen: list[tuple[Qt.TextFormat, str]] = []

            def answer(box: QMessageBox) -> int:
                seen.append((box.textFormat(), box.text()))
                return QMessageBox.StandardButton.No

            monkeypatch.setattr(QMessageBox, "exec", answer)
            assert window.sidebar.delete(sid) is False
            assert seen and seen[0][0] == Qt.TextFormat.PlainText
            assert image_markup in seen[0][1]

    run(scenario(), timeout=45)


def test_plain_message_box(qtbot: Any, image_markup: str) -> None:
    box = plain_message_box(None, QMessageBox.Icon.Critical, "Title", f"Path: {image_markup}")
    qtbot.addWidget(box)
    assert box.textFormat() == Qt.TextFormat.PlainText
    assert box.text() == f"Path: {image_markup}"


def test_settings_labels_show_typed_text_as_plain_text(qtbot: Any) -> None:
    """The key note quotes the variable name the person typed; the error label may quote what
    they typed too: both are plain text, never guessed as rich text."""
    from app.services import Settings
    from ui.settings_dialog import SettingsDialog

    dialog = SettingsDialog(Settings(provider_kind="openai", base_url="https://api.x/v1"))
    qtbot.addWidget(dialog)
    dialog.key_env.setText('<img src="file:///etc/hostname"><b>KEY</b>')
    dialog.key_env.editingFinished.emit()
    assert dialog.key_note.textFormat() is Qt.TextFormat.PlainText
    assert dialog.error.textFormat() is Qt.TextFormat.PlainText
