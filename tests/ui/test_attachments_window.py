"""Attachments through the real window against the simulator: the paper clip, a pasted image,
a dropped file; the sent bubble shows thumbnails (also after reopening), a click opens the
image, a model known not to read images refuses before anything is saved or sent and the
draft keeps everything, and editing a message keeps its images."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QColor, QDragEnterEvent, QDropEvent, QImage, QTextDocument
from PySide6.QtWidgets import QApplication

from app.services import FilePart, ImagePart
from app.simulator import Reply
from tests.app.attachments.images import png
from tests.ui.helpers import close_window, open_window, until, window_on_simulator
from tests.ui.test_versions import _option, answered, click, row_of, rows
from ui.transcript.attachments import ATTACHMENT_SCHEME
from ui.transcript.model import ItemKind


def _files(tmp_path: Path) -> tuple[Path, Path]:
    image = tmp_path / "cat.png"
    image.write_bytes(png(64, 48))
    notes = tmp_path / "notes.txt"
    notes.write_text("The cat sleeps all day.\n", encoding="utf-8")
    return image, notes


def _drag(mime: QMimeData) -> tuple[Any, ...]:
    return (
        QPoint(200, 200),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )


def _user_parts(request: Any) -> list[dict[str, Any]]:
    """The content parts of the last user message a request carried."""
    users = [m for m in request.json()["messages"] if m["role"] == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def _user_item(window: Any, text: str) -> Any:
    return window.transcript_model.item(row_of(window, ItemKind.USER, text))


def test_the_paper_clip_attaches_sends_shows_and_reopens(run: Any, tmp_path: Path) -> None:
    image, notes = _files(tmp_path)
    data = tmp_path / "data"

    async def scenario() -> None:
        async with window_on_simulator(data) as (sim, window):
            composer = window.composer
            composer.choose_files = lambda: [str(image), str(notes), str(tmp_path / "gone.png")]
            composer.attach_button.click()
            assert [type(p) for p in composer.attachments()] == [ImagePart, FilePart]
            assert composer.tray.isVisible()
            assert "gone.png" in composer.tray.problem.text()  # a missing file says so
            sim.enqueue(Reply(text="A sleepy cat."))
            composer.edit.setPlainText("What is in these?")
            composer.send_button.click()
            await answered(window, "A sleepy cat.")
            assert composer.attachments() == [] and not composer.tray.isVisible()
            parts = _user_parts(sim.requests[-1])
            kinds = [p["type"] for p in parts]
            assert "image_url" in kinds, parts
            assert parts[kinds.index("image_url")]["image_url"]["url"].startswith(
                "data:image/png;base64,"
            )
            assert any("The cat sleeps all day." in p.get("text", "") for p in parts), parts
            item = _user_item(window, "What is in these?")
            assert [p.name for p in item.attachments] == ["cat.png", "notes.txt"]
            # The bubble draws the thumbnail from a resource of its attachments document.
            row = row_of(window, ItemKind.USER, item.text)
            render = window.transcript.delegate.render_for(item, 600.0, _option(window, row))
            assert render.attachments is not None
            thumb = render.attachments.resource(
                QTextDocument.ResourceType.ImageResource,
                QUrl(f"continuum-thumb:{item.attachments[0].digest}"),
            )
            assert isinstance(thumb, QImage) and not thumb.isNull()
            assert "notes.txt" in render.attachments.toPlainText()

        window = await open_window(data, None)
        try:
            await until(lambda: rows(window), 10, "the conversation to reopen")
            item = _user_item(window, "What is in these?")
            assert [p.name for p in item.attachments] == ["cat.png", "notes.txt"]
            assert item.attachments[0].data == png(64, 48)  # its bytes came back from SQLite
            # A click on the thumbnail opens the image at full size.
            index = window.transcript_model.index(row_of(window, ItemKind.USER, item.text), 0)
            window.transcript.delegate.activate(item, index, f"{ATTACHMENT_SCHEME}:0")
            viewer = window.attachments.viewer
            assert viewer is not None and viewer.isVisible()
            assert viewer.image_label.pixmap().width() == 64
            viewer.close()
        finally:
            await close_window(window)

    run(scenario(), timeout=60)


def test_a_pasted_image_and_a_dropped_file_become_chips(run: Any, tmp_path: Path) -> None:
    _image, notes = _files(tmp_path)

    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (_sim, window):
            composer = window.composer
            composer.edit.setPlainText("typed")
            picture = QImage(30, 20, QImage.Format.Format_RGB32)
            picture.fill(QColor("teal"))
            pasted = QMimeData()
            pasted.setImageData(picture)
            assert composer.edit.canInsertFromMimeData(pasted)
            composer.edit.insertFromMimeData(pasted)
            assert composer.edit.toPlainText() == "typed"  # an image is attached, not pasted
            [first] = composer.attachments()
            assert isinstance(first, ImagePart) and (first.width, first.height) == (30, 20)
            dropped = QMimeData()
            dropped.setUrls([QUrl.fromLocalFile(str(notes))])
            # As a real drag does: the window takes the drag in, then the drop.
            text_only = QMimeData()
            text_only.setText("just words")
            enter = QDragEnterEvent(*_drag(text_only))
            QApplication.sendEvent(window, enter)
            assert not enter.isAccepted()  # plain text is not an attachment
            enter = QDragEnterEvent(*_drag(dropped))
            QApplication.sendEvent(window, enter)
            assert enter.isAccepted()
            event = QDropEvent(
                QPointF(200, 200),
                Qt.DropAction.CopyAction,
                dropped,
                Qt.MouseButton.LeftButton,
                Qt.KeyboardModifier.NoModifier,
            )
            QApplication.sendEvent(window, event)
            assert event.isAccepted()
            assert [p.name for p in composer.attachments()][1:] == ["notes.txt"]
            # Removing a chip takes it out of what is sent.
            composer.tray.chips[0].removeRequested.emit(composer.tray.chips[0])
            assert [p.name for p in composer.attachments()] == ["notes.txt"]

    run(scenario(), timeout=60)


def test_a_model_that_cannot_read_images_refuses_before_anything_is_sent(
    run: Any, tmp_path: Path
) -> None:
    image, _notes = _files(tmp_path)

    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (sim, window):
            await window.services.use_model(None, "gpt-3.5-turbo")
            composer = window.composer
            composer.choose_files = lambda: [str(image)]
            composer.attach_button.click()
            composer.edit.setPlainText("Describe it")
            before = len(sim.requests)
            composer.send_button.click()
            await until(lambda: composer.tray.problem.isVisible(), 10, "the refusal")
            assert "cannot read images" in composer.tray.problem.text()
            # Nothing was saved, sent or cleared: the draft keeps its text and the image.
            assert len(sim.requests) == before
            assert rows(window) == []
            assert composer.edit.toPlainText() == "Describe it"
            assert [p.name for p in composer.attachments()] == ["cat.png"]
            assert await window.services.list_sessions() == []

    run(scenario(), timeout=60)


def test_editing_a_message_keeps_its_image_and_cancel_restores_the_draft(
    run: Any, tmp_path: Path
) -> None:
    image, notes = _files(tmp_path)

    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (sim, window):
            composer = window.composer
            composer.choose_files = lambda: [str(image)]
            composer.attach_button.click()
            sim.enqueue(Reply(text="A cat."))
            composer.edit.setPlainText("What is this?")
            composer.send_button.click()
            await answered(window, "A cat.")
            # A half-written draft with its own attachment, then Edit on the sent message.
            composer.choose_files = lambda: [str(notes)]
            composer.attach_button.click()
            composer.edit.setPlainText("draft")
            click(window, row_of(window, ItemKind.USER, "What is this?"), "edit")
            assert [p.name for p in composer.attachments()] == ["cat.png"]
            window.versions.cancel()
            assert composer.edit.toPlainText() == "draft"
            assert [p.name for p in composer.attachments()] == ["notes.txt"]
            # Edit again and send: the new version carries the image.
            click(window, row_of(window, ItemKind.USER, "What is this?"), "edit")
            composer.edit.setPlainText("What animal is this?")
            sim.enqueue(Reply(text="Still a cat."))
            composer.send_button.click()
            await answered(window, "Still a cat.")
            assert any(p["type"] == "image_url" for p in _user_parts(sim.requests[-1]))
            item = _user_item(window, "What animal is this?")
            assert [p.name for p in item.attachments] == ["cat.png"]
            assert [p.name for p in composer.attachments()] == ["notes.txt"]  # draft's back

    run(scenario(), timeout=60)


def test_a_message_of_only_an_image_is_sent_and_named_after_it(run: Any, tmp_path: Path) -> None:
    image, _notes = _files(tmp_path)

    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (sim, window):
            composer = window.composer
            composer.choose_files = lambda: [str(image)]
            composer.attach_button.click()
            sim.enqueue(Reply(text="A cat."))
            composer.send_button.click()  # no text: the image alone is the message
            await answered(window, "A cat.")
            [info] = await window.services.list_sessions()
            assert info.title == "cat.png"
            assert [p["type"] for p in _user_parts(sim.requests[-1])] == ["image_url"]

    run(scenario(), timeout=60)
