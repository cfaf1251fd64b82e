"""Attachments in SQLite: stored once by digest in the message's transaction, loaded back with
their bytes, searched by text and names (never base64 or JSON), and never left dangling."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.errors import StorageCorruptError
from app.messages import AssistantMessage, UserMessage
from app.parts import AttachmentError, FilePart, ImagePart, attachment_from_bytes, with_text
from app.storage import SQLiteSessionStore

from .images import png


def _image(width: int = 4, name: str = "cat.png") -> ImagePart:
    part = attachment_from_bytes(png(width, 3), name)
    assert isinstance(part, ImagePart)
    return part


def _rows(path: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return list(conn.execute(sql))


async def test_an_image_round_trips_with_its_bytes(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    store = SQLiteSessionStore(path)
    image = _image()
    await store.append("s", "r", UserMessage(with_text("What is this?", [image])))
    await store.append("s", "r", AssistantMessage("A red square."))
    await store.close()

    again = SQLiteSessionStore(path)
    for load in (again.load("s"), again.tail("s", 5)):
        first = (await load)[0]
        assert isinstance(first, UserMessage) and isinstance(first.content, tuple)
        loaded = first.content[0]
        assert isinstance(loaded, ImagePart) and loaded.data == png(4, 3)
    tree = await again.tree("s")
    assert isinstance(tree[0].message.content[0], ImagePart)  # type: ignore[union-attr]
    assert tree[0].message.content[0].data == png(4, 3)  # type: ignore[union-attr]
    await again.close()
    assert _rows(path, "SELECT digest, media_type, size FROM attachments") == [
        (image.digest, "image/png", len(png(4, 3)))
    ]


async def test_the_same_bytes_are_stored_once(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    store = SQLiteSessionStore(path)
    await store.append("a", "r", UserMessage(with_text("one", [_image(name="x.png")])))
    await store.append_many("b", "r", [UserMessage(with_text("two", [_image(name="y.png")]))])
    await store.append("a", "r", UserMessage(with_text("other", [_image(width=5)])))
    await store.close()
    assert _rows(path, "SELECT COUNT(*) FROM attachments") == [(2,)]


async def test_a_part_whose_bytes_are_missing_is_refused_and_nothing_saved(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "c.sqlite")
    ghost = ImagePart("image/png", "0" * 64, "ghost.png")  # no bytes, not stored
    with pytest.raises(AttachmentError, match="ghost.png"):
        await store.append("s", "r", UserMessage(with_text("hi", [ghost])))
    forged = ImagePart("image/png", "0" * 64, "forged.png", data=png())
    with pytest.raises(AttachmentError, match="do not match"):
        await store.append_many("s", "r", [UserMessage(with_text("hi", [forged]))])
    assert await store.load("s") == []
    # A part without bytes whose digest is stored already is fine (e.g. an edited message).
    image = _image()
    await store.append("s", "r", UserMessage(with_text("first", [image])))
    bare = ImagePart(image.media_type, image.digest, image.name, 4, 3, image.size)
    await store.append("s", "r", UserMessage(with_text("again", [bare])))
    loaded = (await store.load("s"))[1]
    assert isinstance(loaded, UserMessage) and isinstance(loaded.content, tuple)
    assert loaded.content[0].data == png(4, 3)  # type: ignore[union-attr]
    await store.close()


async def test_search_finds_text_and_names_not_json_or_base64(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "c.sqlite")
    file = attachment_from_bytes(b"zebra crossing budget", "quarterly.csv")
    assert isinstance(file, FilePart)
    await store.append(
        "s",
        "r",
        UserMessage(with_text("Compare the holiday photos", [_image(name="beach.png"), file])),
    )
    assert [h.seq for h in await store.search("holiday")] == [1]
    assert [h.seq for h in await store.search("beach")] == [1]
    assert [h.seq for h in await store.search("quarterly")] == [1]
    for noise in (
        "media_type",
        "digest",
        "image",
        "iVBOR",
        "zebra",
    ):  # JSON keys, base64, a file's body
        assert await store.search(noise) == [], noise
    await store.close()


async def test_a_message_of_parts_that_cannot_be_read_is_a_clear_storage_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.sqlite"
    store = SQLiteSessionStore(path)
    await store.append("s", "r", UserMessage("hi"))
    await store.close()
    with sqlite3.connect(path) as conn:
        conn.execute(
            """UPDATE messages SET data = '{"v":1,"type":"user","content":[{"type":"video"}]}'"""
        )
    again = SQLiteSessionStore(path)
    with pytest.raises(StorageCorruptError, match="cannot be read"):
        await again.load("s")
    await again.close()
