"""A tool result's images: which a model is sent (table), their exact wire forms for OpenAI-
compatible servers and Anthropic, the JSON round trip, and every store keeping them (real
SQLite files: stored once by digest, in the message's transaction)."""

from __future__ import annotations

import base64
import dataclasses
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app import Agent, AgentRunConfig, JSONLExtension, SQLiteSessionExtension
from app.export import attachment_digests, export_markdown
from app.messages import (
    AssistantMessage,
    MessageFormatError,
    ToolCall,
    ToolMessage,
    UserMessage,
    message_from_dict,
    message_from_json,
    message_to_dict,
    message_to_json,
)
from app.parts import ImagePart, attachment_from_bytes
from app.providers.convert import anthropic_messages, has_images, openai_messages
from app.providers.tool_images import SentToolImages, sends_tool_images, tool_images
from app.providers.vision import check_images
from app.storage import InMemorySessionStore, SQLiteSessionStore
from app.storage.decode import decode
from app.testing import ScriptedModel, text_step, tool_step
from app.tools.functions import ToolResult, as_tool

from .images import gif, png


def _image(width: int = 4, name: str = "shot image 1") -> ImagePart:
    part = attachment_from_bytes(png(width, 3), name)
    assert isinstance(part, ImagePart)
    return part


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


RED = _image()
WIDE = _image(6, "shot image 2")
TEXT = "Took a screenshot.\n[image 1: image/png, 4×3, 73 bytes]"
RESULT = ToolMessage("call_1", "shot", TEXT, images=(RED,))
TWO = ToolMessage("call_2", "shot", "two\n[image 1: …]\n[image 2: …]", images=(RED, WIDE))
CALL = AssistantMessage("", (ToolCall("call_1", "shot", {}),))
BARE = dataclasses.replace(RED, data=None)  # as loaded when the bytes are missing


# --- the decision: what is sent, and what the text says ----------------------------------------


@pytest.mark.parametrize(("reads", "sent"), [(True, True), (False, False), (None, False)])
def test_only_a_model_known_to_read_images_gets_tool_images(reads: bool | None, sent: bool) -> None:
    assert sends_tool_images(reads) is sent


@pytest.mark.parametrize(
    ("message", "reads", "later", "expected"),
    [
        # No images: the text as it is, whatever the model.
        (ToolMessage("c", "t", "plain"), None, False, SentToolImages("plain")),
        (ToolMessage("c", "t", "plain"), True, True, SentToolImages("plain")),
        # A model that reads images: they go with the text (Anthropic: inside the result).
        (RESULT, True, False, SentToolImages(TEXT, (RED,), (1,))),
        # ... OpenAI-compatible: the tool turn says where they are.
        (
            RESULT,
            True,
            True,
            SentToolImages(
                TEXT + "\n[The image 1 of this result: in the next user message.]", (RED,), (1,)
            ),
        ),
        # Known not to read images, or not known: kept out, and the text says why.
        (
            RESULT,
            False,
            False,
            SentToolImages(
                TEXT + "\n[Image 1 of this result was not sent to you: the model 'm' does "
                "not read images.]"
            ),
        ),
        (
            TWO,
            None,
            True,
            SentToolImages(
                TWO.content + "\n[Images 1 and 2 of this result were not sent to you: the "
                "model 'm' is not known to read images.]"
            ),
        ),
        # Bytes missing from the database: that one is left out (never an error), said so.
        (
            dataclasses.replace(TWO, images=(BARE, WIDE)),
            True,
            True,
            SentToolImages(
                TWO.content + "\n[Image 1 of this result was not sent to you: its bytes are "
                "missing from this conversation's database.]\n[The image 2 of this result: in "
                "the next user message.]",
                (WIDE,),
                (2,),
            ),
        ),
    ],
)
def test_what_a_tool_result_sends(
    message: ToolMessage, reads: bool | None, later: bool, expected: SentToolImages
) -> None:
    assert tool_images(message, reads, model="m", later=later) == expected


def test_tool_images_never_make_a_request_refused() -> None:
    history = [UserMessage("look"), CALL, RESULT]
    assert not has_images(history)  # only the person's images count
    check_images(history, "gpt-3.5-turbo", "OpenAI-compatible server")  # known not to: no error


# --- wire forms ----------------------------------------------------------------------------------


def test_openai_sends_tool_images_in_a_user_turn_after_the_rounds_last_result() -> None:
    second = ToolMessage("call_b", "echo", "no images")
    history = [
        UserMessage("look"),
        AssistantMessage("", (ToolCall("call_1", "shot", {}), ToolCall("call_b", "echo", {}))),
        RESULT,
        second,
        AssistantMessage("A red square."),
    ]
    sent = openai_messages(history, None, reads_images=True, model="gpt-4o")
    assert sent[2:] == [
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": TEXT + "\n[The image 1 of this result: in the next user message.]",
        },
        {"role": "tool", "tool_call_id": "call_b", "content": "no images"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "The image 1 of the result of tool call call_1 (shot):"},
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64," + _b64(png(4, 3))},
                },
            ],
        },
        {"role": "assistant", "content": "A red square."},
    ]


def test_openai_sends_the_image_turn_at_the_end_and_marks_a_failed_result() -> None:
    failed = dataclasses.replace(TWO, success=False)
    sent = openai_messages([CALL, failed], None, reads_images=True, model="gpt-4o")
    assert sent[1]["content"].startswith("The tool failed with this error:\ntwo\n")
    assert sent[2] == {
        "role": "user",
        "content": [
            {
                "type": "text",
                "text": "The images 1 and 2 of the result of tool call call_2 (shot):",
            },
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + _b64(png(4, 3))}},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + _b64(png(6, 3))}},
        ],
    }


@pytest.mark.parametrize("reads", [False, None])
def test_openai_without_vision_sends_text_only(reads: bool | None) -> None:
    sent = openai_messages([CALL, RESULT], None, reads_images=reads, model="llama3")
    assert [m["role"] for m in sent] == ["assistant", "tool"]
    assert "not sent to you: the model 'llama3'" in sent[1]["content"]
    assert "base64" not in json.dumps(sent)


def test_anthropic_puts_tool_images_inside_the_tool_result() -> None:
    sent = anthropic_messages([UserMessage("look"), CALL, RESULT], reads_images=True, model="c")
    assert sent[2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "call_1",
                "content": [
                    {"type": "text", "text": TEXT},
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": "image/png",
                            "data": _b64(png(4, 3)),
                        },
                    },
                ],
            }
        ],
    }
    # No text (Anthropic refuses an empty text block): the images alone; a failure is marked.
    quiet = ToolMessage("call_1", "shot", "", success=False, images=(RED,))
    block = anthropic_messages([CALL, quiet], reads_images=True)[1]["content"][0]
    assert block["is_error"] is True
    assert [b["type"] for b in block["content"]] == ["image"]


@pytest.mark.parametrize("reads", [False, None])
def test_anthropic_without_vision_sends_the_text_saying_why(reads: bool | None) -> None:
    sent = anthropic_messages([CALL, RESULT], reads_images=reads, model="claude-2.1")
    assert sent[1]["content"][0]["content"] == tool_images(RESULT, reads, model="claude-2.1").text
    assert isinstance(sent[1]["content"][0]["content"], str)


# --- the JSON form -------------------------------------------------------------------------------


def test_json_round_trip_keeps_images_by_digest() -> None:
    data = message_to_dict(RESULT)
    assert data["images"] == [
        {
            "type": "image",
            "media_type": "image/png",
            "digest": RED.digest,
            "name": "shot image 1",
            "width": 4,
            "height": 3,
            "size": len(png(4, 3)),
        }
    ]
    back = message_from_json(message_to_json(RESULT))
    assert back == RESULT and decode(message_to_json(RESULT)) == RESULT
    assert isinstance(back, ToolMessage) and back.images[0].data is None  # bytes: not in JSON
    # Equality is by digest, as for a person's images: bytes at hand or not, the same result.
    assert dataclasses.replace(RESULT, images=(BARE,)) == RESULT
    assert dataclasses.replace(RESULT, images=(WIDE,)) != RESULT
    # A result without images keeps its old form, and rows written before images still load.
    assert "images" not in message_to_dict(ToolMessage("c", "t", "x"))
    old = '{"v":1,"type":"tool","tool_call_id":"c","name":"t","content":"x","success":true}'
    assert decode(old) == message_from_json(old) == ToolMessage("c", "t", "x")


@pytest.mark.parametrize(
    "images", ["nope", [{"type": "text", "text": "x"}], [{"type": "image", "digest": 3}]]
)
def test_unreadable_tool_images_are_a_format_error(images: Any) -> None:
    data = {**message_to_dict(ToolMessage("c", "t", "x")), "images": images}
    with pytest.raises(MessageFormatError):
        message_from_dict(data)
    with pytest.raises(MessageFormatError):
        ToolMessage("c", "t", "x", images=("not an image",))  # type: ignore[arg-type]


# --- stores --------------------------------------------------------------------------------------


def _rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        return list(conn.execute(sql))


async def test_sqlite_stores_tool_images_once_with_the_message(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    store = SQLiteSessionStore(path)
    await store.append("s", "r", UserMessage(_image_content()))
    await store.append("s", "r", CALL)
    await store.append("s", "r", RESULT)  # the person's image again: not stored twice
    await store.append_many("s", "r", [CALL, TWO])
    await store.close()
    assert sorted(_rows(path, "SELECT digest, size FROM attachments")) == sorted(
        [(RED.digest, len(png(4, 3))), (WIDE.digest, len(png(6, 3)))]
    )
    again = SQLiteSessionStore(path)
    for loaded in (await again.load("s"), await again.tail("s", 5)):
        results = [m for m in loaded if isinstance(m, ToolMessage)]
        assert results == [RESULT, TWO]
        assert [i.data for m in results for i in m.images] == [png(4, 3), png(4, 3), png(6, 3)]
    records = await again.tail_records("s", 5)
    assert [i.data for r in records if isinstance(r.message, ToolMessage) for i in r.message.images]
    await again.close()


def _image_content() -> tuple[ImagePart, ...]:
    return (dataclasses.replace(RED, name="mine.png"),)


async def test_a_tool_image_without_bytes_is_refused_and_nothing_saved(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    store = SQLiteSessionStore(path)
    await store.append("s", "r", CALL)
    forged = dataclasses.replace(RED, data=png(9, 9))
    for images in ((BARE,), (forged,)):
        with pytest.raises(ValueError, match="shot image 1"):
            await store.append("s", "r", dataclasses.replace(RESULT, images=images))
    assert await store.load("s") == [CALL]
    await store.close()
    assert _rows(path, "SELECT COUNT(*) FROM attachments") == [(0,)]


async def test_memory_store_and_export_keep_tool_images(tmp_path: Path) -> None:
    memory = InMemorySessionStore()
    await memory.append("s", "r", CALL)
    await memory.append("s", "r", RESULT)
    loaded = await memory.load("s")
    assert loaded == [CALL, RESULT]
    assert isinstance(loaded[1], ToolMessage) and loaded[1].images[0].data == png(4, 3)
    records = await memory.load_records("s")
    assert attachment_digests(records) == [RED.digest]
    markdown = export_markdown(None, records)
    assert "[image 1: image/png, 4×3, 73 bytes]" in markdown
    assert "*[The tool's image: in the JSON export]*" in markdown


async def test_an_agent_saves_a_tools_images_to_sqlite_and_jsonl(tmp_path: Path) -> None:
    """A function tool's images (as an MCP tool gives them) through the real runtime."""

    async def shot() -> ToolResult:
        """Take a screenshot."""
        return ToolResult("Took it.\n[image 1: image/gif, 7×5, 14 bytes]", images=(_gif(),))

    tool = as_tool(shot)
    model = ScriptedModel([tool_step(ToolCall("t1", "shot", {})), text_step("A GIF.")])
    db, lines = tmp_path / "c.sqlite", tmp_path / "turns.jsonl"
    storage = SQLiteSessionExtension(db)
    agent = await Agent.create(
        model, config=AgentRunConfig("s"), tools=[tool], extensions=[storage, JSONLExtension(lines)]
    )
    await agent.run("take one")
    await storage.storage.close()
    # The model's second request had the result with its image (bytes at hand).
    result = model.requests[1].messages[-1]
    assert isinstance(result, ToolMessage) and result.images == (_gif(),)
    assert result.images[0].data == gif(7, 5)
    again = SQLiteSessionStore(db)
    saved = [m for m in await again.load("s") if isinstance(m, ToolMessage)]
    assert saved[0].images[0].data == gif(7, 5)
    await again.close()
    record = json.loads(lines.read_text().splitlines()[-1])
    tool_line = next(m for m in record["messages"] if m["type"] == "tool")
    assert tool_line["images"][0]["digest"] == _gif().digest


def _gif() -> ImagePart:
    part = attachment_from_bytes(gif(7, 5), "shot image 1")
    assert isinstance(part, ImagePart)
    return part
