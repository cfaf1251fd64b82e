"""The conversation panel and the header's model, in the real window against the simulator:
a conversation's own system prompt, model and temperature reach the provider; the header shows
the model each conversation uses (its provider in the tooltip) and follows a switch; Reset
empties the fields; a wrong number is refused with words. The panel's reading of its fields
and the words are table-tested."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QAbstractButton, QLineEdit

from app.services import Parameters, Settings, Setup
from tests.ui.helpers import until, window_on_simulator
from ui.conversation_flow import model_tooltip
from ui.conversation_panel import ConversationPanel, panel_setup
from ui.parameter_fields import applies, parameter_texts, parse_parameters

# (what, typed texts, effort, parameters or None, words of the problem)
PARSE: list[tuple[str, dict[str, str], str | None, Parameters | None, str]] = [
    ("all empty: the defaults", {}, None, Parameters(), ""),
    ("numbers", {"temperature": "0.7", "top_p": "0,9", "max_output_tokens": "512"}, "high",
     Parameters(0.7, 0.9, 512, "high"), ""),
    ("spaces around", {"temperature": " 1 "}, None, Parameters(temperature=1.0), ""),
    ("temperature above 2", {"temperature": "2.5"}, None, None, "Temperature"),
    ("temperature not a number", {"temperature": "warm"}, None, None, "Temperature"),
    ("top-p above 1", {"top_p": "1.1"}, None, None, "Top-p"),
    ("tokens not whole", {"max_output_tokens": "10.5"}, None, None, "Max output tokens"),
    ("tokens zero", {"max_output_tokens": "0"}, None, None, "Max output tokens"),
    ("budget too small", {"thinking_budget": "512"}, None, None, "Thinking budget"),
    ("budget", {"thinking_budget": "2048"}, None, Parameters(thinking_budget=2048), ""),
    ("an unknown effort is the default", {}, "max", Parameters(), ""),
    ("infinity", {"temperature": "inf"}, None, None, "Temperature"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("what", "texts", "effort", "expected", "problem"), PARSE, ids=[p[0] for p in PARSE]
)
def test_parse_parameters(
    what: str,
    texts: dict[str, str],
    effort: str | None,
    expected: Parameters | None,
    problem: str,
) -> None:
    params, words = parse_parameters(texts, effort)
    assert params == expected
    if expected is None:
        assert words is not None and problem in words
    else:
        assert words is None
        assert parse_parameters(parameter_texts(params), params.reasoning_effort) == (params, None)


@pytest.mark.parametrize(
    ("prompt", "profile", "model", "expected"),
    [
        ("", None, "", Setup()),
        ("  ", "", "  ", Setup()),
        ("Be brief.", "p1", " gpt-4o ", Setup("Be brief.", "p1", "gpt-4o")),
    ],
)
def test_panel_setup(prompt: str, profile: str | None, model: str, expected: Setup) -> None:
    base = Setup(extra={"future": 1})
    got = panel_setup(base, prompt, profile, model, Parameters())
    assert got == expected and got.extra == {"future": 1}


def test_which_fields_each_provider_uses() -> None:
    assert "thinking_budget" in applies("anthropic") and "reasoning_effort" not in applies(
        "anthropic"
    )
    assert "reasoning_effort" in applies("openai") and "thinking_budget" not in applies("openai")


def test_model_tooltip_words() -> None:
    assert "sim-echo on Work proxy (this conversation's choice)" in model_tooltip(
        "sim-echo", "Work proxy", True
    )
    assert "the default for new conversations" in model_tooltip("m", None, False)


def test_a_wrong_number_is_refused_and_reset_empties_every_field(qtbot: Any) -> None:
    settings = Settings(provider_kind="openai", base_url="http://127.0.0.1:9/v1", model="m")
    setup = Setup("Pirate.", None, "other", Parameters(temperature=0.2))
    panel = ConversationPanel(setup, settings)
    qtbot.addWidget(panel)
    panel.show()
    assert panel.system_prompt.toPlainText() == "Pirate."
    assert panel.parameters.edits["temperature"].text() == "0.2"
    panel.parameters.edits["temperature"].setText("3")
    panel.accept()
    assert panel.isVisible() and panel.error.isVisible() and "Temperature" in panel.error.text()
    panel.reset_button.click()
    assert not panel.error.isVisible()
    assert panel.result_setup() == Setup()
    # Every control has a human name; the parameters show their default as a placeholder.
    for widget in [*panel.findChildren(QAbstractButton), *panel.findChildren(QLineEdit)]:
        if widget.parent() is panel.model or isinstance(widget.parent(), QLineEdit):
            continue  # the model box's own edit; a field's clear button
        text = widget.text() if isinstance(widget, QAbstractButton) else ""
        assert widget.accessibleName() or text.replace("&", ""), widget.objectName()
    assert panel.parameters.edits["temperature"].placeholderText().startswith("Provider default")


def test_the_panel_sets_the_conversations_model_prompt_and_temperature(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path) as (sim, window):
            await until(lambda: window.model_picker.count() > 0, what="models listed")
            assert window.model_picker.currentText() == "sim-echo"
            # Conversation → Conversation settings… on a new conversation.
            action = window.findChild(type(window.settings_action), "conversationSetupAction")
            assert action is not None and action.shortcut().toString() == "Ctrl+Shift+,"
            action.trigger()
            await until(lambda: window.setup_flow.panel is not None, what="the panel")
            panel = window.setup_flow.panel
            assert panel is not None
            await until(panel.isVisible, what="the panel shown")
            await until(lambda: panel.model.count() > 0, what="the provider's models listed")
            assert panel.model.findText("sim-claude") >= 0
            edit = panel.model.lineEdit()
            assert edit is not None and edit.placeholderText() == "Default: sim-echo"
            panel.system_prompt.setPlainText("Answer as a pirate.")
            panel.model.setCurrentText("sim-claude")
            panel.parameters.edits["temperature"].setText("1.3")
            panel.accept()
            await until(lambda: window.controller.session_id is not None, what="created")
            await until(
                lambda: window.model_picker.currentText() == "sim-claude", what="header follows"
            )
            assert "this conversation's choice" in window.model_picker.toolTip()
            first = window.controller.session_id

            window.controller.send("hello there")
            await until(lambda: not window.controller.busy, within=20, what="answered")
            body = sim.model_requests()[-1].json()
            assert body["model"] == "sim-claude" and body["temperature"] == 1.3
            assert body["messages"][0] == {"role": "system", "content": "Answer as a pirate."}

            # A new conversation follows the defaults, in the header and in its request.
            window.new_conversation()
            await until(lambda: window.model_picker.currentText() == "sim-echo", what="default")
            assert "the default for new conversations" in window.model_picker.toolTip()
            window.controller.send("and you?")
            await until(lambda: not window.controller.busy, within=20, what="answered")
            body = sim.model_requests()[-1].json()
            assert body["model"] == "sim-echo" and "temperature" not in body

            # Back to the first one: its own model again.
            await window.controller.open_session(first)
            await until(lambda: window.model_picker.currentText() == "sim-claude", what="back")
            assert window.services.settings.model == "sim-echo"  # the default unchanged

    run(scenario())


def test_picking_a_model_in_the_header_is_for_the_open_conversation(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path) as (sim, window):
            await until(lambda: window.model_picker.count() > 1, what="models listed")
            window.controller.send("first")
            await until(lambda: not window.controller.busy, within=20, what="answered")
            session = window.controller.session_id
            index = window.model_picker.findText("sim-claude")
            window.model_picker.setCurrentIndex(index)
            window.model_picker.activated.emit(index)
            await until(
                lambda: window.services.settings.recent_models[:1] == ("sim-claude",),
                what="picked",
            )
            setup = await window.services.conversation_setup(session)
            assert setup.model == "sim-claude"
            assert window.services.settings.model == "sim-echo"
            window.controller.send("second")
            await until(lambda: not window.controller.busy, within=20, what="answered")
            assert sim.model_requests()[-1].json()["model"] == "sim-claude"

    run(scenario())
