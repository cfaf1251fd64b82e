"""A tool's images on its card: thumbnails drawn from the images' bytes (loaded back from a real
SQLite file when the conversation opens), and live from the tool's result; pure rows too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QImage, QTextDocument
from PySide6.QtWidgets import QStyleOptionViewItem

from app import AssistantMessage, ToolCall, ToolMessage, UserMessage
from app.parts import ImagePart, attachment_from_bytes
from tests.app.attachments.images import png
from tests.ui.helpers import close_window, make_services, open_window, until
from ui.transcript.model import ItemKind
from ui.transcript.rows import Rows, rows_from_history

OFFLINE = "http://127.0.0.1:9/v1"


def _shot() -> ImagePart:
    part = attachment_from_bytes(png(64, 48), "shots__shot image 1")
    assert isinstance(part, ImagePart)
    return part


CALL = AssistantMessage("", (ToolCall("c1", "shots__shot", {}),))
RESULT = ToolMessage("c1", "shots__shot", "Took it.\n[image 1: image/png]", images=(_shot(),))


def test_a_tool_cards_images_come_from_its_result() -> None:
    rows = rows_from_history([UserMessage("Shoot"), CALL, RESULT])
    [card] = [item for item in rows.items if item.kind is ItemKind.TOOL]
    assert card.attachments == RESULT.images
    live = Rows()
    live.append(live.rows_for(CALL))
    change = live.tool_result(RESULT)
    assert [item.attachments for item in change.changed] == [RESULT.images]


def test_the_card_draws_the_thumbnail_after_reopening(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        services = await make_services(tmp_path, OFFLINE)
        session = await services.new_session("A screenshot")
        store = services.storage.storage
        for message in (UserMessage("Shoot"), CALL, RESULT):
            await store.append(session.id, "r1", message)
        await services.close()

        window = await open_window(tmp_path, OFFLINE)
        try:
            model = window.transcript_model
            await until(lambda: model.rowCount() == 2, what="the saved conversation")
            [card] = [i for i in model.items() if i.kind is ItemKind.TOOL]
            assert card.attachments[0].data == png(64, 48)  # its bytes came back from SQLite
            option = QStyleOptionViewItem()
            window.transcript.initViewItemOption(option)
            render = window.transcript.delegate.render_for(card, 600.0, option)
            assert render.attachments is not None
            thumb = render.attachments.resource(
                QTextDocument.ResourceType.ImageResource,
                QUrl(f"continuum-thumb:{card.attachments[0].digest}"),
            )
            assert isinstance(thumb, QImage) and not thumb.isNull()
            # The card's line ("▸ Tool shots__shot · done") first, its images under it.
            docs = render.docs()
            assert docs.index(render.attachments) > docs.index(render.chunks[0])
        finally:
            await close_window(window)

    run(scenario())
