"""Reading files to import (app.importing, app.importing_chatgpt): pure, no database.

ChatGPT's nodes as a table; the hand-made ``tests/fixtures/chatgpt/conversations.json`` as a
tree (edits and regenerations as versions, a system root, a multimodal part, unicode); what
is refused, and that one broken conversation leaves the others importable."""

from __future__ import annotations

import copy
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from app.export import export_json
from app.importing import (
    ImportedConversation,
    ImportFormatError,
    order_tree,
    parse_import,
)
from app.importing_archive import ArchiveAssets, asset_id, read_archive
from app.importing_chatgpt import IMAGE_NOTE, Piece, node_piece
from app.messages import AssistantMessage, Reasoning, StopReason, UserMessage
from app.storage.base import SessionInfo, StoredMessage

FIXTURE = Path(__file__).parents[1] / "fixtures" / "chatgpt" / "conversations.json"


def node(role: str, content: dict[str, Any], **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"author": {"role": role, "name": extra.pop("name", None)}}
    message.update(content=content, metadata=extra.pop("metadata", {}), **extra)
    return message


def text(*parts: Any) -> dict[str, Any]:
    return {"content_type": "text", "parts": list(parts)}


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (None, "empty node"),
        (node("user", text("Hello")), Piece("user", "Hello")),
        (node("user", text("one", "", "two")), Piece("user", "one\n\ntwo")),
        (node("user", text("")), "empty node"),
        (node("system", text("You are ChatGPT")), "system message"),
        (
            node("user", text("secret"), metadata={"is_visually_hidden_from_conversation": True}),
            "hidden message",
        ),
        (node("user", {"content_type": "user_editable_context"}), "custom instructions"),
        (node("user", text("x"), metadata={"is_user_system_message": True}), "custom instructions"),
        (
            node("assistant", text("Hi"), metadata={"model_slug": "gpt-4o"}),
            Piece("assistant", "Hi", model="gpt-4o"),
        ),
        (node("assistant", text("   ")), "empty node"),
        (
            node("assistant", {"content_type": "code", "language": "python", "text": "print(1)"}),
            Piece("assistant", "```python\nprint(1)\n```"),
        ),
        (
            node(
                "assistant", {"content_type": "code", "language": "unknown", "text": "search('x')"}
            ),
            Piece("assistant", "```\nsearch('x')\n```"),
        ),
        (
            node("tool", {"content_type": "execution_output", "text": "42"}, name="python"),
            Piece("assistant", "**Tool output (python)**\n\n```\n42\n```"),
        ),
        (
            node("tool", text("Found 3 results"), name="browser"),
            Piece("assistant", "**Tool output (browser)**\n\nFound 3 results"),
        ),
        (
            node("tool", {"content_type": "tether_browsing_display", "result": "…"}),
            "tether browsing display",
        ),
        (
            node("assistant", {"content_type": "reasoning_recap", "content": "Thought for 2s"}),
            "reasoning recap",
        ),
        (node("assistant", {"content_type": "model_editable_context"}), "model editable context"),
        (
            node(
                "assistant",
                {"content_type": "thoughts", "thoughts": [{"summary": "Plan", "content": "Do it"}]},
            ),
            Piece("assistant", "", reasoning=("Plan\n\nDo it",)),
        ),
        (node("assistant", {"content_type": "thoughts", "thoughts": []}), "empty node"),
        (
            node(
                "user",
                {
                    "content_type": "multimodal_text",
                    "parts": [
                        {"content_type": "image_asset_pointer", "asset_pointer": "x"},
                        "See?",
                    ],
                },
            ),
            Piece("user", f"{IMAGE_NOTE}\n\nSee?", notes=("image (not in conversations.json)",)),
        ),
        (
            node(
                "user",
                {
                    "content_type": "multimodal_text",
                    "parts": [{"content_type": "audio_transcription", "text": "spoken words"}],
                },
            ),
            Piece("user", "spoken words"),
        ),
        (
            node(
                "assistant",
                {"content_type": "tether_quote", "text": "a\nb", "title": "T", "url": "u"},
            ),
            Piece("assistant", "> a\n> b\n\nT — u"),
        ),
        (
            node("assistant", {"content_type": "system_error", "text": "Timed out"}),
            Piece("assistant", "Timed out"),
        ),
        (node("assistant", {"content_type": "something_new"}), "something_new content"),
        (node("critic", text("x")), "message from critic"),
        (node("assistant", "not an object"), "empty node"),  # type: ignore[arg-type]
    ],
)
def test_what_each_chatgpt_node_becomes(message: Any, expected: Piece | str) -> None:
    assert node_piece(message) == expected


def parsed_fixture() -> dict[str, ImportedConversation]:
    parsed = parse_import(FIXTURE.read_bytes())
    assert parsed.kind == "ChatGPT export" and parsed.problems == ()
    return {c.source_id or "": c for c in parsed.conversations}


def branch(conversation: ImportedConversation) -> list[str]:
    by_key = {m.key: m for m in conversation.messages}
    texts = []
    key = conversation.leaf
    while key is not None:
        texts.append(by_key[key].message.content)  # type: ignore[union-attr]
        key = by_key[key].parent
    return texts[::-1]


def test_an_edit_and_a_regeneration_become_versions_and_current_node_the_leaf() -> None:
    sourdough = parsed_fixture()["6f1c2a9e-3b47-4d2e-9a61-0c5b8e7d1f10"]
    assert sourdough.title == "Sourdough starter schedule"
    keys = [m.key for m in sourdough.messages]
    # Chronological, parents first; the hidden system root is left out, its child is first.
    assert keys == [
        "aaa24b1e-u1",
        "3e8c1d22-a1",
        "aaa3c0f1-u2a",
        "7b2a9e40-a2a",
        "aaa4d9e7-u2b",
        "91c4e8b3-a2b",
        "c07f5a11-a2c",
    ]
    parents = {m.key: m.parent for m in sourdough.messages}
    assert parents["aaa24b1e-u1"] is None
    assert parents["aaa3c0f1-u2a"] == parents["aaa4d9e7-u2b"] == "3e8c1d22-a1"  # the edit
    assert parents["91c4e8b3-a2b"] == parents["c07f5a11-a2c"] == "aaa4d9e7-u2b"  # regenerated
    assert sourdough.leaf == "c07f5a11-a2c"
    assert branch(sourdough)[2].startswith("And if I use whole-grain rye")
    assert branch(sourdough)[3].endswith("ripe apples. 🍎")
    answer = sourdough.messages[1].message
    assert isinstance(answer, AssistantMessage) and answer.model == "gpt-4o"
    assert answer.stop_reason is StopReason.END_TURN
    assert sourdough.messages[0].created_at == 1717430401.204
    assert sourdough.created_at == 1717430400.512 and sourdough.updated_at == 1717430581.907
    assert dict(sourdough.left_out) == {"hidden message": 1}
    rows, leaf = sourdough.numbered()
    assert [r[0] for r in rows] == [None, 1, 2, 3, 2, 5, 5] and leaf == 7


def test_one_answer_in_several_nodes_becomes_one_message_with_its_reasoning() -> None:
    sine = parsed_fixture()["0b7e2d54-91aa-4c3f-b2d8-5e6f7a8b9c01"]
    messages = [m.message for m in sine.messages]
    assert [type(m) for m in messages] == [UserMessage, AssistantMessage] * 2
    assert messages[0].content == (
        f"{IMAGE_NOTE}\n\nCan you plot a sine wave like the one in this sketch, from 0 to 2π?"
    )
    answer = messages[1]
    assert isinstance(answer, AssistantMessage)
    assert answer.reasoning == (
        Reasoning(
            "Planning the plot\n\nUse numpy's linspace over [0, 2π] and matplotlib to draw sin(x)."
        ),
    )
    assert answer.content.startswith("```python\nimport numpy as np\n")
    assert (
        "**Tool output (python)**\n\n```\n<Figure size 640x480 with 1 Axes>\n```" in answer.content
    )
    assert answer.content.endswith("bottoms out at −1 at 3π/2.")
    assert answer.model == "o3"
    assert dict(sine.left_out) == {"image (not in conversations.json)": 1, "reasoning recap": 1}
    assert sine.leaf == sine.messages[-1].key


def test_custom_instructions_unicode_and_an_unanswered_end() -> None:
    conversations = parsed_fixture()
    german = conversations["c3d4e5f6-0718-4a9b-8c7d-6e5f4a3b2c1d"]
    assert german.title == "Übersetzung ins Japanische 🇯🇵"
    assert branch(german) == [
        "Wie sagt man „Guten Morgen“ auf Japanisch?",
        "„Guten Morgen“ heißt おはようございます (ohayō gozaimasu); unter Freunden reicht おはよう.",
        "Und „Danke schön“?",
        "ありがとうございます (arigatō gozaimasu).",
    ]
    assert dict(german.left_out) == {"custom instructions": 1}
    untitled = conversations["9a8b7c6d-5e4f-4321-9876-abcdef012345"]
    # current_node is an empty answer still in progress: the leaf is the question before it.
    assert untitled.title is None and branch(untitled) == ["Draft a two-line haiku about tea?"]


def chatgpt(
    mapping: dict[str, tuple[str | None, Any]], current: str | None, title: str
) -> dict[str, Any]:
    return {
        "title": title,
        "create_time": 1.0,
        "current_node": current,
        "mapping": {
            key: {"id": key, "parent": parent, "message": message, "children": []}
            for key, (parent, message) in mapping.items()
        },
    }


GOOD = chatgpt(
    {
        "r": (None, None),
        "u": ("r", node("user", text("hi"))),
        "a": ("u", node("assistant", text("yo"))),
    },
    "a",
    "Good one",
)


@pytest.mark.parametrize(
    ("broken", "reason"),
    [
        (
            chatgpt(
                {"u": ("a", node("user", text("hi"))), "a": ("u", node("assistant", text("yo")))},
                "a",
                "Loop",
            ),
            "the messages loop: u is among its own ancestors (a cycle)",
        ),
        (
            chatgpt({"u": ("gone", node("user", text("hi")))}, "u", "Orphan"),
            "message u follows gone, which is not in the conversation",
        ),
        ({"title": "No mapping", "mapping": {}}, "its 'mapping' is missing or empty"),
        ({"title": "Bad node", "mapping": {"x": "text"}}, "node x is not an object"),
        (
            chatgpt({"r": (None, node("system", text("sys")))}, "r", "Only system"),
            "it has no messages to import",
        ),
    ],
)
def test_a_broken_conversation_is_named_and_the_others_still_read(
    broken: dict[str, Any], reason: str
) -> None:
    data = json.dumps([GOOD, broken, copy.deepcopy(GOOD)]).encode()
    parsed = parse_import(data)
    assert [c.title for c in parsed.conversations] == ["Good one", "Good one"]
    assert [(p.name, p.reason) for p in parsed.problems] == [(broken["title"], reason)]


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"\xff\xfe{", "not UTF-8"),
        (b'{"format": "continuum-conversation", "v": 1, ', "not JSON (line 1, column"),
        (b"[1, 2]", "neither a Continuum export nor ChatGPT's conversations.json (a list of 2"),
        (b'{"hello": 1}', "(an object with 'hello')"),
        (b'"text"', "(a JSON str)"),
        (b'{"format": "continuum-conversation", "v": 9, "messages": []}', "version 9"),
        (b'{"format": "continuum-conversation", "v": 2}', "no 'messages' list"),
        (b"[" * 100_000, "nested too deeply"),
    ],
)
def test_a_file_that_cannot_be_imported_says_why(data: bytes, words: str) -> None:
    with pytest.raises(ImportFormatError) as caught:
        parse_import(data)
    assert words in str(caught.value)


def test_order_tree_puts_parents_first_then_the_oldest() -> None:
    parents = {"c": "a", "a": None, "b": None, "d": "b", "e": "a"}
    times = {"a": 3, "b": 1, "c": 5, "d": 4, "e": 2}
    assert order_tree(parents, times.__getitem__) == ["b", "a", "e", "d", "c"]


def record(seq: int, parent: int | None, content: str, who: type = UserMessage) -> StoredMessage:
    message = who(content) if who is UserMessage else AssistantMessage(content, model="m")
    return StoredMessage(seq, f"req-{seq}", message, 1000.0 + seq, parent)


def test_continuum_version_2_reads_back_the_tree_and_its_leaf() -> None:
    info = SessionInfo("abc123", "Tree", 999.0, 1004.0, 4)
    tree = [
        record(1, None, "first"),
        record(2, 1, "answer one", AssistantMessage),
        record(3, 1, "answer two", AssistantMessage),
        record(4, 3, "lone \ud800 surrogate"),
    ]
    parsed = parse_import(export_json(info, tree, leaf=2).encode())
    assert parsed.kind == "Continuum export (version 2)"
    (conversation,) = parsed.conversations
    assert [(m.key, m.parent, m.request_id, m.created_at) for m in conversation.messages] == [
        ("1", None, "req-1", 1001.0),
        ("2", "1", "req-2", 1002.0),
        ("3", "1", "req-3", 1003.0),
        ("4", "3", "req-4", 1004.0),
    ]
    assert [m.message for m in conversation.messages] == [r.message for r in tree]
    assert conversation.leaf == "2" and conversation.source_id == "abc123"
    assert (conversation.title, conversation.created_at, conversation.updated_at) == (
        "Tree",
        999.0,
        1004.0,
    )


def test_continuum_version_1_is_one_branch_ending_at_its_last_message() -> None:
    # What Continuum wrote before the tree: no parent_seq, no leaf.
    document = {
        "format": "continuum-conversation",
        "v": 1,
        "exported_at": 1.0,
        "session": {"id": "old", "title": "Old", "created_at": 10.0, "updated_at": 12.0},
        "messages": [
            {
                "seq": 1,
                "created_at": 11.0,
                "request_id": "r",
                "message": {"v": 1, "type": "user", "content": "q"},
            },
            {
                "seq": 2,
                "created_at": 12.0,
                "request_id": "r",
                "message": {
                    "v": 1,
                    "type": "assistant",
                    "content": "a",
                    "tool_calls": [],
                    "stop_reason": "end_turn",
                    "model": "m",
                },
            },
        ],
    }
    (conversation,) = parse_import(json.dumps(document).encode()).conversations
    assert [(m.key, m.parent) for m in conversation.messages] == [("1", None), ("2", "1")]
    assert conversation.leaf == "2"
    assert conversation.messages[1].message == AssistantMessage(
        "a", stop_reason="end_turn", model="m"
    )


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda d: d["messages"][1].update(parent_seq=7), "message 2 follows 7, which is not in"),
        (lambda d: d.update(leaf=9), "leaf 9 is not one of its messages"),
        (lambda d: d["messages"][1].update(seq=1), "Two messages of the export have seq 1"),
        (
            lambda d: d["messages"][0].update(message={"type": "robot"}),
            "Message 1 of the export cannot be read",
        ),
        (lambda d: d["messages"][0].update(seq="1"), "Message 1's seq is not a whole number"),
        (lambda d: d.update(attachments={"00": {"data": "aGk="}}), "do not match its digest"),
    ],
)
def test_a_damaged_continuum_export_is_refused_naming_the_problem(change: Any, words: str) -> None:
    tree = [record(1, None, "q"), record(2, 1, "a", AssistantMessage)]
    document = json.loads(export_json(None, tree))
    change(document)
    with pytest.raises(ImportFormatError, match=words):
        parse_import(json.dumps(document).encode())


PNG = (
    b"\x89PNG\r\n\x1a\n" + (13).to_bytes(4, "big") + b"IHDR" + (2).to_bytes(4, "big") * 2 + bytes(9)
)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("file-service://file-Q1w2E3r4T5y6", "file-Q1w2E3r4T5y6"),
        ("sediment://file_00000000abcd1234", "file_00000000abcd1234"),
        ("file-Q1w2E3r4T5y6-sketch.png", "file-Q1w2E3r4T5y6"),
        ("user-abc/file_00000000abcd1234-photo.jpg", "file_00000000abcd1234"),
        ("conversations.json", None),
        ("chat.html", None),
        ("profile-file-x.png", None),
    ],
)
def test_asset_ids_in_pointers_and_archive_names(name: str, expected: str | None) -> None:
    assert asset_id(name) == expected


def image_message(pointer: str) -> dict[str, Any]:
    part = {"content_type": "image_asset_pointer", "asset_pointer": pointer}
    return node("user", {"content_type": "multimodal_text", "parts": [part, "What is it?"]})


@pytest.mark.parametrize(
    ("found", "text", "notes", "image"),
    [
        (("sketch.png", PNG), "What is it?", (), True),
        (
            "image (not in the export)",
            f"{IMAGE_NOTE}\n\nWhat is it?",
            ("image (not in the export)",),
            False,
        ),
        (
            ("notes.txt", b"plain text"),
            f"{IMAGE_NOTE}\n\nWhat is it?",
            ("image (not readable as an image)",),
            False,
        ),
    ],
)
def test_an_image_found_in_the_archive_becomes_an_image_part(
    found: Any, text: str, notes: tuple[str, ...], image: bool
) -> None:
    asked: list[str] = []

    def assets(pointer: str) -> Any:
        asked.append(pointer)
        return found

    piece = node_piece(image_message("file-service://file-AbC"), assets)
    assert isinstance(piece, Piece) and asked == ["file-service://file-AbC"]
    assert (piece.text, piece.notes) == (text, notes)
    if image:
        (part,) = piece.images
        assert (part.name, part.media_type, part.data, part.width) == (
            "sketch.png",
            "image/png",
            PNG,
            2,
        )
    else:
        assert piece.images == ()


def test_archive_assets_read_by_id_within_a_budget(tmp_path: Path) -> None:
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("conversations.json", "[]")
        archive.writestr("file-AbC-sketch.png", PNG)
        archive.writestr("dalle-generations/file-Xyz-0f1e.webp", b"RIFF....WEBP")
    with zipfile.ZipFile(path) as archive:
        assert read_archive(archive) == b"[]"
        assets = ArchiveAssets(archive, budget=len(PNG) + 4)
        assert assets("file-service://file-AbC") == ("sketch.png", PNG)
        assert assets("file-service://file-Gone") == "image (not in the export)"
        assert assets("file-service://file-Xyz") == "image (over the import's image budget)"


def test_an_archive_without_conversations_json_says_so(tmp_path: Path) -> None:
    path = tmp_path / "photos.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a/b/conversations.json", "[]")  # too deep: not the export's own
        archive.writestr("file-AbC-sketch.png", PNG)
    with (
        zipfile.ZipFile(path) as archive,
        pytest.raises(ImportFormatError, match="no conversations.json"),
    ):
        read_archive(archive)
