"""Seeing what it costs, in the real window against the simulator (pytest-qt, offscreen): the
tokens under an answer and their hover text, the context meter (unknown limit, a published
limit, the warning from 80 %), and titles made by the model — never shown in the transcript
nor saved, never replacing the person's own title."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QHelpEvent, QPalette
from PySide6.QtWidgets import QApplication, QToolTip

from app import AssistantMessage, UserMessage
from app.simulator import Reply
from tests.ui.helpers import until, window_on_simulator
from ui.context_meter import ContextMeter
from ui.controller import title_from
from ui.theme import DARK, LIGHT, contrast, tokens_for
from ui.token_text import compact_tokens, context_reading
from ui.transcript.model import ItemKind, Roles


def _last_answer(window: Any) -> tuple[int, Any]:
    model = window.transcript_model
    for row in reversed(range(model.rowCount())):
        item = model.index(row, 0).data(Roles.ITEM)
        if item.kind is ItemKind.ASSISTANT:
            return row, item
    raise AssertionError("no answer row")


def _footer_point(window: Any, row: int, item: Any) -> QPoint:
    view = window.transcript
    option = view._option(view.model().index(row, 0))
    delegate = view.delegate
    render = delegate.render_for(item, delegate.width_for(item, option), option)
    docs = render.docs()
    assert render.footer is not None and docs[-1] is render.footer
    geometry = delegate.geometry(item, option)
    origin, (_width, height) = geometry.origins[-1], geometry.sizes[-1]
    return QPoint(int(origin.x() + 8), int(origin.y() + height / 2))


# Tooltips and popups raise windows, which the offscreen platform cannot (harmless).
@pytest.mark.qt_log_ignore("This plugin does not support raise")
def test_an_answer_shows_its_tokens_and_the_meter_its_context(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path) as (sim, window):
            sim.enqueue(Reply(text="Feathers trap warm air close to the skin."))
            assert window.controller.send("How do penguins stay warm?")
            await until(lambda: not window.controller.busy, what="the answer")
            row, item = _last_answer(window)
            await until(lambda: item.usage is not None, what="the saved usage")
            usage = item.usage
            assert usage.input_tokens and usage.output_tokens
            # The quiet count under the answer, and input → output on hover over it.
            view = window.transcript
            window.transcript.delegate.forget()
            point = _footer_point(window, row, item)
            option = view._option(view.model().index(row, 0))
            assert view.delegate.footer_tooltip_at(item, option, point) == (
                f"{usage.input_tokens:,} in · {usage.output_tokens:,} out"
            )
            help_event = QHelpEvent(QEvent.Type.ToolTip, point, view.viewport().mapToGlobal(point))
            QApplication.sendEvent(view.viewport(), help_event)
            assert QToolTip.text() == f"{usage.input_tokens:,} in · {usage.output_tokens:,} out"
            QToolTip.hideText()
            # Over the answer's text (not its footer) no token tooltip.
            body = view.visualRect(view.model().index(row, 0)).topLeft() + QPoint(40, 12)
            assert view.delegate.footer_tooltip_at(item, option, body) == ""
            # The meter: the newest answer's input + output; the simulator has no known window.
            meter = window.context_meter
            used = usage.input_tokens + usage.output_tokens
            await until(lambda: meter.isVisible(), what="the meter")
            assert meter.text.text() == f"{compact_tokens(used)} tokens"
            assert meter.bar.isHidden() and meter.hint.isHidden()
            assert "not known" in meter.toolTip() and f"{used:,} tokens" in meter.toolTip()
            # A new conversation has no answer yet: no meter.
            window.new_conversation()
            await until(lambda: not meter.isVisible(), what="the meter gone")

    run(scenario(), timeout=60)


def test_a_known_window_shows_a_share(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path) as (sim, window):
            services, c = window.services, window.controller
            services.save_settings(dataclasses.replace(services.settings, auto_title=False))
            sim.enqueue(Reply(text="Short answer."))
            assert c.send("Hi")
            await until(lambda: not c.busy, what="the first answer")
            meter = window.context_meter
            await until(lambda: meter.isVisible(), what="the meter")
            assert meter.bar.isHidden()  # sim-echo: no known window
            # The conversation switches to a hosted model with a published window (the
            # simulator answers to any name): its own model counts, not the default's.
            await services.use_model(c.session_id, "gpt-4o")
            assert services.settings.model == "sim-echo"
            sim.enqueue(Reply(text="Another short answer."))
            assert c.send("Again")
            await until(lambda: not c.busy, what="the second answer")
            await until(lambda: meter.bar.isVisible(), what="the share")
            _row, item = _last_answer(window)
            used = item.usage.input_tokens + item.usage.output_tokens
            assert meter.text.text() == f"{compact_tokens(used)} / 128k"
            assert meter.bar.fraction == pytest.approx(used / 128_000)
            assert "128,000 tokens (the published limit of gpt-4o)" in meter.toolTip()
            assert not meter.reading.warning and meter.hint.isHidden()
            chats = [r for r in sim.model_requests() if r.path == "/v1/chat/completions"]
            assert [r.json()["model"] for r in chats] == ["sim-echo", "gpt-4o"]
            # The window was asked of the server (nothing there: the published table).
            assert [r.path for r in sim.requests if r.path.startswith("/api/")]

    run(scenario(), timeout=60)


@pytest.mark.parametrize("theme", [LIGHT, DARK])
def test_the_meter_warns_from_80_percent(qtbot: Any, theme: Any) -> None:
    from ui.appearance import palette_for

    meter = ContextMeter()
    qtbot.addWidget(meter)
    meter.setPalette(palette_for(theme))
    meter.resize(700, 30)
    meter.show_reading(context_reading(60_000, 100_000))
    assert meter.isVisible() and meter.hint.isHidden() and not meter.bar.warning
    normal = meter.text.palette().color(QPalette.ColorRole.WindowText)
    meter.show_reading(context_reading(85_000, 100_000))
    assert meter.hint.isVisible()
    assert meter.hint.text() == (
        "The context is 85 % full: start a new conversation or remove attachments"
    )
    warned = meter.text.palette().color(QPalette.ColorRole.WindowText)
    assert warned != normal and warned == theme.color("warning")
    assert meter.bar.warning and meter.bar.fraction == pytest.approx(0.85)
    assert tokens_for(meter.palette()) is theme
    assert contrast(theme.warning, theme.window) >= 4.5  # the words stay readable
    assert "full" in meter.toolTip()
    # On the welcome panel (no composer) it is put away, and comes back with the composer.
    meter.set_allowed(False)
    assert not meter.isVisible()
    meter.show_reading(context_reading(90_000, 100_000))
    assert not meter.isVisible() and meter.hint.text().startswith("The context is 90 %")
    meter.set_allowed(True)
    assert meter.isVisible()
    meter.show_reading(None)
    assert not meter.isVisible()


def test_the_window_names_a_conversation_as_the_titles_service_expects() -> None:
    from app.services.titles import first_words_title

    for text in ("Plan   my\nweek", "", "x" * 90, "  spaced  "):
        assert title_from(text) == first_words_title(text)


def test_a_title_made_by_the_model_reaches_the_sidebar_and_nothing_else(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path) as (sim, window):
            services, c = window.services, window.controller
            services.save_settings(dataclasses.replace(services.settings, auto_title=True))
            sim.enqueue(Reply(text="Feathers trap warm air."), Reply(text="Penguin Warmth Basics"))
            assert c.send("How do penguins stay warm?")
            await until(lambda: c.session_id and not c.busy, what="the answer")
            sid = c.session_id
            await until(
                lambda: window.sidebar.title_of(sid) == "Penguin Warmth Basics", what="titled"
            )
            assert "Penguin Warmth Basics" in window.windowTitle()
            assert len(sim.model_requests()) == 2  # the answer, then the title
            # Never in the history, never on screen.
            history = await services.history(sid)
            assert [type(m) for m in history] == [UserMessage, AssistantMessage]
            assert [m.content for m in history] == [
                "How do penguins stay warm?",
                "Feathers trap warm air.",
            ]
            assert len(await services.storage.storage.tree(sid)) == 2
            shown = [
                window.transcript_model.index(r, 0).data(Roles.ITEM).text
                for r in range(window.transcript_model.rowCount())
            ]
            assert not any("Penguin Warmth" in text for text in shown)
            assert not (await services.resume_info(sid)).draft

    run(scenario(), timeout=60)


def test_a_title_the_person_set_while_it_answered_stays(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path) as (sim, window):
            services, c = window.services, window.controller
            services.save_settings(dataclasses.replace(services.settings, auto_title=True))
            sim.enqueue(
                Reply(text="one two three four five six seven", tokens_per_second=20),
                Reply(text="Weekly Planning"),
            )
            assert c.send("Plan my week")
            await until(lambda: c.session_id and c.busy, what="streaming")
            sid = c.session_id
            await window._rename(sid, "My week")  # what F2 does once the person typed it
            await until(lambda: not c.busy, what="the answer")
            await until(lambda: not c._helpers, what="after-run work done")
            assert window.sidebar.title_of(sid) == "My week"
            assert len(sim.model_requests()) == 1  # the person's title: not even asked
            info = await services.storage.storage.get_session(sid)
            assert info is not None and info.title == "My week"

    run(scenario(), timeout=60)


def test_the_meter_follows_the_version_shown(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path) as (sim, window):
            c, meter = window.controller, window.context_meter
            sim.enqueue(Reply(text="short"), Reply(tokens=300))
            assert c.send("Tell me")
            await until(lambda: not c.busy and meter.isVisible(), what="the first answer")
            first = meter.text.text()
            _row, item = _last_answer(window)
            first_seq = item.seq
            assert first_seq is not None
            assert c.regenerate(first_seq)  # a second version of the answer, much longer
            await until(lambda: not c.busy and meter.text.text() != first, what="regenerated")
            _row, longer = _last_answer(window)
            used = longer.usage.input_tokens + longer.usage.output_tokens
            assert meter.text.text() == f"{compact_tokens(used)} tokens"
            await c.select_version(first_seq)  # back to the first version
            await until(lambda: meter.text.text() == first, what="the first version's count")

    run(scenario(), timeout=60)
