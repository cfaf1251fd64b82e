"""Edit, Regenerate and the version arrows in the real window against the simulator: the old
version is kept and reachable, the arrows say where you are, reopening returns to the branch
you chose, and Esc gives the composer back what it held."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QStyleOptionViewItem

from app.simulator import Reply
from tests.ui.helpers import close_window, open_window, until, window_on_simulator
from ui.transcript.branching import version_label
from ui.transcript.model import ItemKind, TranscriptItem
from ui.versions_flow import last_of


def rows(window: Any) -> list[tuple[str, str]]:
    return [
        (item.kind.value, item.text)
        for item in window.transcript_model.items()
        if item.kind in (ItemKind.USER, ItemKind.ASSISTANT)
    ]


def row_of(window: Any, kind: ItemKind, text: str) -> int:
    for row, item in enumerate(window.transcript_model.items()):
        if item.kind is kind and item.text == text:
            return row
    raise AssertionError(f"no {kind.value} row {text!r} in {rows(window)}")


def _option(window: Any, row: int) -> QStyleOptionViewItem:
    view = window.transcript
    index = view.model().index(row, 0)
    view.scrollTo(index)
    option = QStyleOptionViewItem()
    option.font, option.palette = view.font(), view.palette()
    option.rect = view.visualRect(index)
    return option


def buttons(window: Any, row: int) -> dict[str, Any]:
    view = window.transcript
    item = view.model().item(row)
    geometry = view.delegate.geometry(item, _option(window, row))
    found = view.delegate.actions.buttons(item, geometry, view.font())
    return {action.name or words: rect for action, rect, _icon, words in found}


def click(window: Any, row: int, name: str) -> None:
    """Press the row's button ``name`` where it is drawn: the anchor hit there is followed
    (as the delegate does on a click; the real mouse path is tested in test_row_layout, and
    synthetic mouse moves would spin Qt's loop inside this coroutine)."""
    view = window.transcript
    item = view.model().item(row)
    point = buttons(window, row)[name].center().toPoint()
    hit = view.delegate.anchor_at(item, _option(window, row), point)
    assert hit == (f"continuum-action:{name}", -1), hit
    view.delegate.activate(item, view.model().index(row, 0), hit[0])


async def answered(window: Any, text: str) -> None:
    await until(
        lambda: not window.controller.busy and ("assistant", text) in rows(window),
        15,
        f"the answer {text!r}",
    )


async def send(window: Any, text: str) -> None:
    window.composer.edit.setPlainText(text)
    window.composer.send_button.click()


def item_at(window: Any, row: int) -> TranscriptItem:
    item = window.transcript_model.item(row)
    assert isinstance(item, TranscriptItem)
    return item


def test_edit_makes_a_new_version_and_the_arrows_switch_back(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (sim, window):
            sim.enqueue(Reply(text="Paris."))
            await send(window, "Capital of France?")
            await answered(window, "Paris.")
            user = row_of(window, ItemKind.USER, "Capital of France?")
            assert "edit" in buttons(window, user)  # saved: it can get a new version
            window.composer.edit.setPlainText("half-typed draft")
            click(window, user, "edit")
            assert window.edit_strip.isVisible()
            assert window.composer.edit.toPlainText() == "Capital of France?"
            sim.enqueue(Reply(text="Rome."))
            window.composer.edit.setPlainText("Capital of Italy?")
            QTest.keyClick(window.composer.edit, Qt.Key.Key_Return)
            await answered(window, "Rome.")
            await until(lambda: not window.edit_strip.isVisible(), 5, "the strip to go")
            assert rows(window) == [("user", "Capital of Italy?"), ("assistant", "Rome.")]
            # The draft the person had before editing is back in the composer.
            assert window.composer.edit.toPlainText() == "half-typed draft"
            # The model saw only the new branch.
            sent = sim.requests[-1].json()["messages"]
            assert [m["content"] for m in sent if m["role"] != "system"] == ["Capital of Italy?"]
            user = row_of(window, ItemKind.USER, "Capital of Italy?")
            await until(lambda: version_label(item_at(window, user)) == "2 / 2", 5, "arrows")
            assert {"previous", "next", "2 / 2"} <= set(buttons(window, user))
            click(window, user, "previous")
            await until(
                lambda: rows(window) == [("user", "Capital of France?"), ("assistant", "Paris.")],
                5,
                "the first version",
            )
            user = row_of(window, ItemKind.USER, "Capital of France?")
            assert version_label(item_at(window, user)) == "1 / 2"

    run(scenario(), timeout=60)


def test_regenerate_keeps_the_old_answer_and_reopening_returns_to_the_chosen_one(
    run: Any, tmp_path: Path
) -> None:
    data = tmp_path / "data"

    async def scenario() -> None:
        async with window_on_simulator(data) as (sim, window):
            sim.enqueue(Reply(text="First take."))
            await send(window, "Tell me a joke")
            await answered(window, "First take.")
            sim.enqueue(Reply(text="Second take."))
            click(window, row_of(window, ItemKind.ASSISTANT, "First take."), "regenerate")
            await answered(window, "Second take.")
            assert rows(window) == [("user", "Tell me a joke"), ("assistant", "Second take.")]
            answer = row_of(window, ItemKind.ASSISTANT, "Second take.")
            await until(lambda: version_label(item_at(window, answer)) == "2 / 2", 5, "arrows")
            click(window, answer, "previous")
            await until(lambda: ("assistant", "First take.") in rows(window), 5, "take one")
            session = window.controller.session_id
            base_url = sim.openai_base_url
            await close_window(window)
            again = await open_window(data, base_url)
            try:
                await again.controller.open_session(session)
                assert rows(again) == [("user", "Tell me a joke"), ("assistant", "First take.")]
                answer = row_of(again, ItemKind.ASSISTANT, "First take.")
                assert version_label(item_at(again, answer)) == "1 / 2"
            finally:
                await close_window(again)

    run(scenario(), timeout=60)


def test_escape_cancels_an_edit_and_restores_the_composer(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (sim, window):
            sim.enqueue(Reply(text="Hi!"))
            await send(window, "Hello")
            await answered(window, "Hi!")
            window.composer.edit.setPlainText("my draft")
            window.versions.edit_last()  # Conversation → Edit last message
            assert window.composer.edit.toPlainText() == "Hello"
            QTest.keyClick(window.composer.edit, Qt.Key.Key_Escape)
            assert not window.edit_strip.isVisible()
            assert window.composer.edit.toPlainText() == "my draft"
            assert rows(window) == [("user", "Hello"), ("assistant", "Hi!")]
            # Nothing was sent or saved.
            assert len(await window.services.client.store.tree(window.controller.session_id)) == 2
            assert last_of(window.transcript_model.items(), ItemKind.USER) is not None

    run(scenario(), timeout=60)


def test_switching_to_an_interrupted_version_offers_its_resume(run: Any, tmp_path: Path) -> None:
    from app import ToolCall
    from app.messages import AssistantMessage, UserMessage

    data = tmp_path / "data"

    async def scenario() -> None:
        async with window_on_simulator(data) as (sim, window):
            store = window.services.client.store
            # The first version stopped while its tool ran; the second one finished.
            call = ToolCall("c1", "lookup", {"q": "x"})
            await store.append("s", "r1", UserMessage("Look x up"))
            await store.append("s", "r1", AssistantMessage(tool_calls=(call,)))
            await store.append("s", "r2", UserMessage("Look y up"), parent=None)
            await store.append("s", "r2", AssistantMessage("Found y."))
            await window.controller.open_session("s")
            assert not window.resume_bar.isVisible()
            user = row_of(window, ItemKind.USER, "Look y up")
            assert version_label(item_at(window, user)) == "2 / 2"
            click(window, user, "previous")
            await until(window.resume_bar.isVisible, 10, "the Resume bar")
            assert window.controller.resume_info.point.kind.value == "recover_tools"
            assert "lookup" in window.resume_bar.tools.text()
            sim.enqueue(Reply(text="It may not have run; here is x."))
            window.resume_bar.resume_button.click()
            await answered(window, "It may not have run; here is x.")
            assert [m.content for m in await store.load("s")][0] == "Look x up"
            # The other version is untouched.
            assert [r.message.content for r in await store.load_branch("s", 4)] == [
                "Look y up",
                "Found y.",
            ]

    run(scenario(), timeout=60)


def test_alt_arrows_on_the_current_row_switch_versions(run: Any, tmp_path: Path) -> None:
    from app.messages import AssistantMessage, UserMessage

    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (_sim, window):
            store = window.services.client.store
            await store.append("s", "r", UserMessage("one"))
            await store.append("s", "r", AssistantMessage("first"))
            await store.append("s", "r", UserMessage("two"), parent=None)
            await store.append("s", "r", AssistantMessage("second"))
            await window.controller.open_session("s")
            view = window.transcript
            view.setFocus()
            view.setCurrentIndex(view.model().index(row_of(window, ItemKind.USER, "two"), 0))
            QTest.keyClick(view, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)  # at the end
            QTest.keyClick(view, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
            await until(lambda: ("user", "one") in rows(window), 5, "the first version")
            assert rows(window) == [("user", "one"), ("assistant", "first")]
            assert await store.leaf("s") == 2

    run(scenario(), timeout=60)
