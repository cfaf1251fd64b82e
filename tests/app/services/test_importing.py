"""File → Import through the services, on real SQLite files: Continuum's export round-trips
exactly into a fresh database, ChatGPT's fixture becomes conversations with their versions, and
a bad file or conversation imports nothing half-way."""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from app.messages import AssistantMessage, Reasoning, ToolCall, ToolMessage, UserMessage
from app.services import AppServices, ImportFormatError

FIXTURE = Path(__file__).parents[2] / "fixtures" / "chatgpt" / "conversations.json"


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[AppServices]:
    svc = AppServices(tmp_path / "first")
    await svc.open()
    yield svc
    await svc.close()


@pytest.fixture
async def fresh(tmp_path: Path) -> AsyncIterator[AppServices]:
    svc = AppServices(tmp_path / "fresh")
    await svc.open()
    yield svc
    await svc.close()


async def branched(services: AppServices) -> str:
    """A conversation with an edit, a regeneration, a tool round and reasoning, left on the
    first branch (not the newest) so the leaf is not simply the last message."""
    store = services.storage.storage
    info = await store.create_session(None, "Trip ✈ plans")
    sid = info.id
    q1 = await store.append(sid, "r1", UserMessage("Plan a day in Kyoto"))
    call = ToolCall("call_1", "search", {"q": "Kyoto temples"})
    await store.append_many(
        sid,
        "r1",
        [
            AssistantMessage(
                "", (call,), model="sim", reasoning=(Reasoning("think", signature="s"),)
            ),
            ToolMessage("call_1", "search", "Kinkaku-ji, Fushimi Inari"),
            AssistantMessage("Morning: Fushimi Inari.", model="sim"),
        ],
    )
    await store.append(sid, "r2", UserMessage("Plan a day in Osaka"), parent=None)  # an edit
    await store.append(sid, "r2", AssistantMessage("Dotonbori at night.", model="sim"))
    await store.append(sid, "r3", AssistantMessage("Osaka castle first.", model="b"), parent=5)
    await store.select_branch(sid, q1)
    return sid


def without_time(document: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k != "exported_at"}


async def test_continuum_export_round_trips_exactly_into_a_fresh_database(
    services: AppServices, fresh: AppServices, tmp_path: Path
) -> None:
    sid = await branched(services)
    exported = await services.export_json(sid)
    document = json.loads(exported)
    assert document["v"] == 2 and document["leaf"] == 4
    assert [(m["seq"], m["parent_seq"]) for m in document["messages"]] == [
        (1, None),
        (2, 1),
        (3, 2),
        (4, 3),
        (5, None),
        (6, 5),
        (7, 5),
    ]
    path = tmp_path / "trip.json"
    path.write_text(exported, encoding="utf-8")

    report = await fresh.import_file(path)
    assert report.kind == "Continuum export (version 2)" and report.skipped == ()
    assert [(s.session_id, s.title, s.messages) for s in report.imported] == [
        (sid, "Trip ✈ plans", 7)
    ]
    again = json.loads(await fresh.export_json(sid))
    assert without_time(again) == without_time(document)  # same tree, texts, leaf, order, times
    store = fresh.storage.storage
    assert [m.content for m in await store.load(sid)][-1] == "Morning: Fushimi Inari."
    assert await store.versions(sid) == [(1, 5), (6, 7)]
    assert (await store.select_branch(sid, 5)) == 7  # the newest under the edit, as before
    assert await fresh.search("Dotonbori")
    assert await store.integrity_check() == ["ok"]

    # The id is taken now: a second import is a second conversation, with a new id.
    second = await fresh.import_file(path)
    assert second.imported[0].session_id != sid
    assert len(await fresh.list_sessions()) == 2


async def test_version_1_export_imports_as_one_branch(fresh: AppServices, tmp_path: Path) -> None:
    document = {
        "format": "continuum-conversation",
        "v": 1,
        "exported_at": 5.0,
        "session": {"id": "0123abcd", "title": "Bread", "created_at": 1.0, "updated_at": 3.0},
        "messages": [
            {
                "seq": 1,
                "created_at": 2.0,
                "request_id": "x",
                "message": {"v": 1, "type": "user", "content": "sourdough?"},
            },
            {
                "seq": 2,
                "created_at": 3.0,
                "request_id": "x",
                "message": {
                    "v": 1,
                    "type": "assistant",
                    "content": "Yes.",
                    "tool_calls": [],
                    "stop_reason": "end_turn",
                    "model": "m",
                },
            },
        ],
    }
    path = tmp_path / "bread.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    report = await fresh.import_file(path)
    assert (
        report.summary == "Imported 1 conversation from bread.json (Continuum export (version 1))."
    )
    store = fresh.storage.storage
    records = await store.load_records("0123abcd")
    assert [(r.seq, r.parent_seq, r.created_at) for r in records] == [(1, None, 2.0), (2, 1, 3.0)]
    assert await store.leaf("0123abcd") == 2
    info = await store.get_session("0123abcd")
    assert info is not None and (info.title, info.created_at, info.updated_at) == (
        "Bread",
        1.0,
        3.0,
    )


async def test_chatgpt_fixture_imports_every_conversation_with_its_versions(
    fresh: AppServices,
) -> None:
    report = await fresh.import_file(FIXTURE)
    assert report.summary == "Imported 4 conversations from conversations.json (ChatGPT export)."
    assert "1 × hidden message" in report.details and "1 × custom instructions" in report.details
    sessions = {s.title: s for s in await fresh.list_sessions()}
    assert set(sessions) == {
        "Sourdough starter schedule",
        "Plot a sine wave",
        "Übersetzung ins Japanische 🇯🇵",
        None,
    }
    sid = sessions["Sourdough starter schedule"].id
    assert sid == "6f1c2a9e-3b47-4d2e-9a61-0c5b8e7d1f10"
    store = fresh.storage.storage
    branch = await store.load(sid)
    assert [type(m) for m in branch] == [UserMessage, AssistantMessage] * 2
    assert branch[2].content.startswith("And if I use whole-grain rye flour")
    assert branch[3].content.endswith("🍎")
    assert await store.versions(sid) == [(3, 5), (6, 7)]
    assert sessions["Sourdough starter schedule"].message_count == 7
    assert sessions["Sourdough starter schedule"].updated_at == 1717430581.907
    assert {h.session_id for h in await fresh.search("stirrable")} == {sid}  # an older version
    markdown = await fresh.export_markdown(sid)
    assert "ripe apples" in markdown and "stirrable" not in markdown
    assert "the conversation has 2 more versions of messages" in markdown


async def test_a_bad_conversation_is_skipped_whole_and_the_rest_imported(
    fresh: AppServices, tmp_path: Path
) -> None:
    conversations = json.loads(FIXTURE.read_text(encoding="utf-8"))
    looped = conversations[1]  # Sourdough: its first answer now follows its last
    looped["mapping"]["aaa24b1e-u1"]["parent"] = "c07f5a11-a2c"
    orphan = conversations[2]  # Plot a sine wave: a node whose parent is not there
    orphan["mapping"]["aaa6a7b8-u2"]["parent"] = "deleted-node"
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(conversations), encoding="utf-8")
    report = await fresh.import_file(path)
    assert len(report.imported) == 2
    assert [(p.name, p.reason) for p in report.skipped] == [
        (
            "Sourdough starter schedule",
            "the messages loop: aaa24b1e-u1 is among its own ancestors (a cycle)",
        ),
        (
            "Plot a sine wave",
            "message aaa6a7b8-u2 follows deleted-node, which is not in the conversation",
        ),
    ]
    assert report.summary.endswith("2 conversations could not be imported.")
    assert "• Plot a sine wave: message aaa6a7b8-u2 follows deleted-node" in report.details
    titles = {s.title for s in await fresh.list_sessions()}
    assert titles == {"Übersetzung ins Japanische 🇯🇵", None}


async def test_a_conversation_the_store_refuses_leaves_nothing_behind(fresh: AppServices) -> None:
    store = fresh.storage.storage
    rows = [(None, "r", UserMessage("q"), 1.0), (5, "r", AssistantMessage("a"), 2.0)]
    with pytest.raises(ValueError, match="message 2's parent 5 is not an earlier message"):
        await store.import_tree("x1", "T", (1.0, 2.0), rows, 2)
    await store.create_session("taken")
    with pytest.raises(ValueError, match="exists already"):
        await store.import_tree("taken", "T", (1.0, 2.0), rows[:1], 1)
    assert [s.id for s in await fresh.list_sessions()] == ["taken"]
    assert await store.tree("taken") == []


@pytest.mark.parametrize(
    ("write", "words"),
    [
        (lambda p: p.write_bytes(b"not json at all"), "The file is not JSON (line 1, column 1"),
        (lambda p: p.write_text('{"chats": []}'), "neither a Continuum export nor ChatGPT's"),
        (
            lambda p: os.truncate(p, 200 * 2**20) if p.write_bytes(b"[") else None,
            "is 200 MB; Continuum imports files up to 128 MB",
        ),
        (lambda p: None, "cannot be read: No such file or directory"),
    ],
)
async def test_a_file_that_cannot_be_imported_raises_and_imports_nothing(
    fresh: AppServices, tmp_path: Path, write: Any, words: str
) -> None:
    path = tmp_path / "upload.json"
    write(path)
    with pytest.raises(ImportFormatError) as caught:
        await fresh.import_file(path)
    assert words in str(caught.value)
    assert await fresh.list_sessions() == []


PNG = (
    b"\x89PNG\r\n\x1a\n"
    + (13).to_bytes(4, "big")
    + b"IHDR"
    + (2).to_bytes(4, "big")
    + (3).to_bytes(4, "big")
    + b"\x08\x02\x00\x00\x00"
    + bytes(4)
)


async def test_attachments_go_into_the_export_once_and_come_back_with_the_import(
    services: AppServices, fresh: AppServices, tmp_path: Path
) -> None:
    from app.parts import FilePart, ImagePart, TextPart, attachment_from_bytes

    image = attachment_from_bytes(PNG, "sketch.png")
    code = attachment_from_bytes(b"print('hi')\n", "hello.py")
    assert isinstance(image, ImagePart) and isinstance(code, FilePart)
    store = services.storage.storage
    sid = (await store.create_session(None, "With pictures")).id
    await store.append(sid, "r1", UserMessage((image, code, TextPart("What is this?"))))
    await store.append(sid, "r1", AssistantMessage("A tiny image and a script."))
    await store.append(sid, "r2", UserMessage((image, TextPart("Again?"))), parent=2)
    exported = await services.export_json(sid)
    document = json.loads(exported)
    assert sorted(document["attachments"]) == sorted([image.digest, code.digest])  # once each
    assert document["attachments"][image.digest]["media_type"] == "image/png"
    markdown = await services.export_markdown(sid)
    assert "*[Image: sketch.png (image/png), in the JSON export]*" in markdown
    assert "**File** `hello.py`" in markdown and "print('hi')" in markdown

    path = tmp_path / "pictures.json"
    path.write_text(exported, encoding="utf-8")
    report = await fresh.import_file(path)
    assert report.skipped == () and len(report.imported) == 1
    assert without_time(json.loads(await fresh.export_json(sid))) == without_time(document)
    first = (await fresh.storage.storage.tree(sid))[0].message
    assert isinstance(first, UserMessage) and not isinstance(first.content, str)
    assert first.content[0].data == PNG  # type: ignore[union-attr]  # the bytes, from the file

    # Without its blobs the conversation is refused whole, naming the attachment.
    del document["attachments"]
    path.write_text(json.dumps(document), encoding="utf-8")
    other = AppServices(tmp_path / "third")
    await other.open()
    try:
        report = await other.import_file(path)
        assert report.imported == ()
        assert "sketch.png" in report.skipped[0].reason
        assert await other.list_sessions() == []
    finally:
        await other.close()


async def test_chatgpt_zip_archive_imports_the_persons_image(
    fresh: AppServices, tmp_path: Path
) -> None:
    from app.parts import ImagePart, TextPart

    path = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.write(FIXTURE, "conversations.json")
        archive.writestr("file-Q1w2E3r4T5y6-sketch.png", PNG)
        archive.writestr("chat.html", "<html></html>")
    report = await fresh.import_file(path)
    assert report.summary == "Imported 4 conversations from chatgpt-export.zip (ChatGPT export)."
    assert "image" not in report.details  # the image was found
    sid = "0b7e2d54-91aa-4c3f-b2d8-5e6f7a8b9c01"
    first = (await fresh.storage.storage.load(sid))[0]
    assert isinstance(first, UserMessage) and not isinstance(first.content, str)
    image, words = first.content
    assert isinstance(image, ImagePart) and image.name == "sketch.png" and image.data == PNG
    assert words == TextPart("Can you plot a sine wave like the one in this sketch, from 0 to 2π?")
    exported = json.loads(await fresh.export_json(sid))
    assert list(exported["attachments"]) == [image.digest]


async def test_a_damaged_zip_is_refused(fresh: AppServices, tmp_path: Path) -> None:
    path = tmp_path / "broken.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("conversations.json", "[]" * 1000)
    data = bytearray(path.read_bytes())
    data[40:60] = bytes(20)  # inside the member's compressed bytes and header
    path.write_bytes(bytes(data))
    with pytest.raises(ImportFormatError) as caught:
        await fresh.import_file(path)
    assert str(caught.value).startswith("The archive's conversations.json cannot be read: ")
    assert not str(caught.value).endswith("..")
    assert await fresh.list_sessions() == []


async def test_an_imported_unanswered_tool_call_is_never_taken_as_not_started(
    services: AppServices, fresh: AppServices, tmp_path: Path
) -> None:
    """The journal's tool states are not exported: a call without a result may have run, so
    after an import Resume answers it as interrupted instead of running it."""
    from app import ResumeKind

    store = services.storage.storage
    sid = (await store.create_session(None, "Deploy")).id
    await store.append(sid, "r", UserMessage("Deploy the site"))
    call = ToolCall("call_9", "deploy", {"target": "prod"})
    await store.append(sid, "r", AssistantMessage("", (call,), model="sim"))
    path = tmp_path / "deploy.json"
    path.write_text(await services.export_json(sid), encoding="utf-8")
    await fresh.import_file(path)
    assert await fresh.not_started_calls(sid) == frozenset()
    info = await fresh.resume_info(sid)
    assert info.point is not None and info.point.kind is ResumeKind.RECOVER_TOOLS
    assert [c.id for c in info.point.unanswered_tool_calls] == ["call_9"]
