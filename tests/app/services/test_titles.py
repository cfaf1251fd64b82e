"""Titles made by the model (app/services/titles.py): the rules as tables, and the real path
through AppServices, a real data folder and the simulator — the title request is never saved
into the history nor journaled, a title the person set is never replaced, failures only log."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app import AssistantMessage, UserMessage
from app.errors import SettingsFormatError
from app.services import AppServices
from app.services.titles import (
    auto_title_on,
    clean_title,
    first_words_title,
    wants_title,
)
from app.settings import Settings, load_settings, save_settings, settings_from_data
from app.simulator import Fault, Reply
from app.storage.base import SessionInfo
from tests.ui.helpers import until


@pytest.mark.parametrize(
    ("reply", "title"),
    [
        ("Penguin Facts for Kids", "Penguin Facts for Kids"),
        ('"Penguin Facts for Kids."', "Penguin Facts for Kids"),
        ("Title: Penguins of the South", "Penguins of the South"),
        ("**Title:** Penguins", "Penguins"),
        ("# Planning a Trip to Lisbon", "Planning a Trip to Lisbon"),
        ("“Budget review”", "Budget review"),
        ("one two three four five six seven eight", "one two three four five six"),
        ("\n\n  Sorting lists in Python  \nMore words here", "Sorting lists in Python"),
        ("<think>The user asks about cats.</think>Cat Care Basics", "Cat Care Basics"),
        ("<think>never closed", None),
        ("", None),
        ('""', None),
        ("...", None),
        ("x" * 80, "x" * 60),
    ],
)
def test_clean_title(reply: str, title: str | None) -> None:
    assert clean_title(reply) == title


def _info(title: str | None) -> SessionInfo:
    return SessionInfo("s", title, 0.0, 0.0, 2)


ASKED = "How do penguins   stay warm?"
QA = [UserMessage(ASKED), AssistantMessage("Feathers and fat.")]


@pytest.mark.parametrize(
    ("info", "messages", "wanted"),
    [
        (_info(first_words_title(ASKED)), QA, (ASKED, "Feathers and fat.")),
        (_info(None), QA, (ASKED, "Feathers and fat.")),
        (_info("My penguin notes"), QA, None),  # the person's title (F2) stays
        (_info(first_words_title(ASKED)), [UserMessage(ASKED)], None),  # no answer yet
        (_info(first_words_title(ASKED)), [UserMessage(ASKED), AssistantMessage("")], None),
        (None, QA, None),
        (_info(None), [], None),
    ],
)
def test_wants_title(
    info: SessionInfo | None, messages: list[UserMessage | AssistantMessage], wanted: object
) -> None:
    assert wants_title(info, messages) == wanted


@pytest.mark.parametrize(
    ("settings", "on"),
    [
        (Settings(provider_kind="openai", base_url="http://x/v1", model="llama3"), True),
        (Settings(provider_kind="anthropic", base_url="https://a", model="claude-x"), True),
        (Settings(provider_kind="simulator"), False),  # its echo would name it after the question
        (Settings(provider_kind="openai", base_url="http://x/v1", model="sim-echo"), False),
        (Settings(provider_kind="simulator", auto_title=True), True),  # explicitly on
        (Settings(provider_kind="openai", base_url="http://x", model="m", auto_title=False), False),
    ],
)
def test_auto_title_on(settings: Settings, on: bool) -> None:
    assert auto_title_on(settings) is on


@pytest.mark.parametrize(
    ("kind", "model", "on"),
    [
        ("openai", "llama3", True),  # the conversation's own provider and model count
        ("simulator", "llama3", False),
        ("openai", "sim-claude", False),
        (None, "sim-echo", False),
    ],
)
def test_auto_title_follows_the_conversations_model(kind: str | None, model: str, on: bool) -> None:
    default = Settings(provider_kind="openai", base_url="http://x/v1", model="llama3")
    assert auto_title_on(default, kind, model) is on
    assert auto_title_on(dataclasses.replace(default, auto_title=True), kind, model) is True


@pytest.mark.parametrize("value", [True, False, None])
def test_auto_title_setting_round_trips(tmp_path: Path, value: bool | None) -> None:
    save_settings(tmp_path, Settings(auto_title=value))
    assert load_settings(tmp_path).settings.auto_title is value
    assert json.loads((tmp_path / "settings.json").read_text())["auto_title"] is value


def test_a_wrong_auto_title_is_refused() -> None:
    with pytest.raises(SettingsFormatError, match="auto_title"):
        settings_from_data({"auto_title": "yes"})


# --- the real path ---------------------------------------------------------------------------


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[AppServices]:
    svc = AppServices(tmp_path / "data")
    await svc.open()
    await svc.start_simulator(tokens_per_second=0)
    await svc.configure_model()
    # Explicitly on: with the simulator titles are off by default.
    svc.save_settings(dataclasses.replace(svc.settings, auto_title=True))
    yield svc
    await svc.close()


async def _first_answer(services: AppServices, question: str) -> str:
    info = await services.new_session(first_words_title(question))
    async for _event in services.stream(info.id, question):
        pass
    return info.id


async def test_the_title_request_is_never_saved_nor_journaled(services: AppServices) -> None:
    sim = services._simulator
    services._simulator.enqueue(Reply(text="Penguins keep warm with feathers."))
    sid = await _first_answer(services, "How do penguins stay warm?")
    history = await services.history(sid)
    records = await services.storage.storage.tree(sid)
    before = len(sim.model_requests())
    sim.enqueue(Reply(text='"Penguin Warmth Explained."'))
    assert await services.title_after_answer(sid) is True
    info = await services.storage.storage.get_session(sid)
    assert info is not None and info.title == "Penguin Warmth Explained"
    # One request went to the model, quoting the conversation; nothing of it was kept.
    (asked,) = sim.model_requests()[before:]
    sent = asked.json()["messages"]
    assert "How do penguins stay warm?" in sent[-1]["content"]
    assert "Penguins keep warm with feathers." in sent[-1]["content"]
    assert await services.history(sid) == history
    assert await services.storage.storage.tree(sid) == records
    assert info.message_count == len(records)
    # Nothing for Resume: no running marker, no stop record, no resume point.
    assert await services.journal.stop_record(sid) is None
    assert await services.client.resume_point(sid) is None
    assert not (await services.resume_info(sid)).draft
    # Titled once: the next answer asks nothing more.
    sim.enqueue(Reply(text="More."))
    async for _event in services.stream(sid, "And emperor penguins?"):
        pass
    count = len(sim.model_requests())
    assert await services.title_after_answer(sid) is False
    assert len(sim.model_requests()) == count


async def test_a_title_the_person_set_is_never_replaced(services: AppServices) -> None:
    sim = services._simulator
    sid = await _first_answer(services, "Plan my week")
    await services.rename_session(sid, "Week plan (mine)")
    count = len(sim.model_requests())
    assert await services.title_after_answer(sid) is False
    assert len(sim.model_requests()) == count  # not even asked
    info = await services.storage.storage.get_session(sid)
    assert info is not None and info.title == "Week plan (mine)"


async def test_a_rename_while_the_model_answers_wins(services: AppServices) -> None:
    sim = services._simulator
    sid = await _first_answer(services, "Plan my week")
    count = len(sim.model_requests())
    sim.enqueue(Reply(text="Weekly Planning Session", tokens_per_second=5))
    task = asyncio.ensure_future(services.title_after_answer(sid))
    await until(lambda: len(sim.model_requests()) > count, what="the title request")
    await services.rename_session(sid, "Mine")  # F2 while the title streams
    assert await task is False
    info = await services.storage.storage.get_session(sid)
    assert info is not None and info.title == "Mine"


async def test_a_failed_title_request_is_logged_and_ignored(
    services: AppServices, caplog: pytest.LogCaptureFixture
) -> None:
    sim = services._simulator
    sid = await _first_answer(services, "Plan my week")
    sim.enqueue(Reply(fault=Fault.http_status(500)))
    with caplog.at_level(logging.WARNING, logger="app.services.titles"):
        assert await services.title_after_answer(sid) is False
    assert any("no title for the conversation" in r.getMessage() for r in caplog.records)
    info = await services.storage.storage.get_session(sid)
    assert info is not None and info.title == "Plan my week"  # the first words stay
    assert await services.journal.stop_record(sid) is None


async def test_off_for_the_simulator_unless_asked_for(services: AppServices) -> None:
    services.save_settings(dataclasses.replace(services.settings, auto_title=None))
    sim = services._simulator
    sid = await _first_answer(services, "Plan my week")
    count = len(sim.model_requests())
    assert await services.title_after_answer(sid) is False
    assert len(sim.model_requests()) == count


async def test_the_title_is_asked_of_the_conversations_own_model(services: AppServices) -> None:
    sim = services._simulator
    sid = await _first_answer(services, "Plan my week")
    await services.use_model(sid, "planner-7b")  # this conversation's model, not the default
    sim.enqueue(Reply(text="Weekly Planning"))
    assert await services.title_after_answer(sid) is True
    assert sim.model_requests()[-1].json()["model"] == "planner-7b"
    info = await services.storage.storage.get_session(sid)
    assert info is not None and info.title == "Weekly Planning"
