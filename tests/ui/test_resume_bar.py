"""The Resume bar (issue 16): it shows exactly what ui.resume_text decides for every state of its
table, in the theme's colours with spoken names; Dismiss sticks across reopening; and while a
resumed answer streams, the interrupted draft is its dimmed, collapsed previous attempt.

The window tests drive the real window on the real simulator and a real data folder: Stop
mid-answer, click the bar's real buttons, reopen by restarting the window on the same folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QStyleOptionViewItem, QVBoxLayout, QWidget

from app.services import ResumeInfo
from app.simulator import Reply
from tests.ui.helpers import close_window, open_window, until
from tests.ui.test_resume_text import CASES
from ui.plain import plain_tooltip
from ui.resume_bar import ACCESSIBLE_NAMES, ResumeBar, bar_colours
from ui.resume_text import DISMISS_TOOLTIP, ResumeBarText, ResumeLabel
from ui.theme import DARK, LIGHT, palette_for, tokens_for
from ui.transcript.delegate import TranscriptDelegate
from ui.transcript.rows import (
    COLLAPSED_CHARS,
    PREVIOUS_ATTEMPT,
    ItemKind,
    Rows,
    TranscriptItem,
    collapsed,
)

# --- the widget --------------------------------------------------------------------------------


@pytest.mark.parametrize(("info", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_bar_renders_each_state(qtbot: Any, info: ResumeInfo, expected: ResumeBarText) -> None:
    bar = ResumeBar()
    qtbot.addWidget(bar)
    bar.set_models(["m1", "m2"], "m1")
    bar.show_notice("an earlier notice")  # whatever was shown before is replaced
    bar.show_info(info)
    assert not bar.isHidden() and bar.info is info
    assert bar.message.text() == expected.message
    assert bar.message.toolTip() == plain_tooltip(expected.tooltip)
    assert bar.accessibleDescription() == expected.message
    assert bar.resume_button.isHidden() is (expected.resume is None)
    if expected.resume is not None:
        assert bar.resume_button.text() == expected.resume.value
        assert bar.resume_button.toolTip() == plain_tooltip(expected.resume_tooltip)
        spoken = bar.resume_button.accessibleName()
        assert spoken.split()[0] == expected.resume.value  # says what the button says
    assert bar.other_button.isHidden() is not expected.other_model
    assert not bar.dismiss_button.isHidden()
    assert bar.dismiss_button.toolTip() == DISMISS_TOOLTIP
    assert bar.tools.isHidden() is (not expected.tools_html)
    if expected.tools_html:
        assert bar.tools.text() == expected.tools_html
    bar.show_notice("Locked elsewhere.")
    assert bar.message.text() == "Locked elsewhere." and bar.info is None
    assert bar.resume_button.isHidden() and bar.other_button.isHidden() and bar.tools.isHidden()
    bar.show_info(None)
    assert bar.isHidden()


def test_spoken_names_are_phrases(qtbot: Any) -> None:
    bar = ResumeBar()
    qtbot.addWidget(bar)
    assert ACCESSIBLE_NAMES == {
        "resumeBar": "Interrupted request",
        "resumeButton": "Resume the interrupted answer",
        "resumeWithModelButton": "Resume with another model",
        "dismissResumeButton": "Dismiss",
    }
    for name, spoken in ACCESSIBLE_NAMES.items():
        widget = bar if name == "resumeBar" else bar.findChild(QWidget, name)
        assert widget is not None and widget.accessibleName() == spoken, name
    continuing = next(c[1] for c in CASES if resume_label(c[2]) is ResumeLabel.CONTINUE)
    bar.show_info(continuing)
    assert bar.resume_button.accessibleName() == "Continue the answer where it stopped"


def resume_label(text: ResumeBarText) -> ResumeLabel | None:
    return text.resume


def _painted(bar: ResumeBar) -> tuple[str, str]:
    """The colours the bar really paints: inside its card, and on its outline."""
    image = bar.grab().toImage()
    inside = image.pixelColor(image.width() // 2, image.height() - 4).name()
    edge = image.pixelColor(image.width() // 2, 0).name()
    return inside, edge


def _colours_shown(bar: ResumeBar, tokens: Any) -> None:
    fill, border, text, warning = bar_colours(tokens)
    assert _painted(bar) == (fill.name(), border.name())
    assert bar.message.palette().color(QPalette.ColorRole.WindowText) == text
    assert bar.icon.palette().color(QPalette.ColorRole.WindowText) == warning
    assert not bar.styleSheet()  # a style sheet would stop theme changes reaching it


def test_the_bar_wears_the_theme_and_follows_a_change(qtbot: Any) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    window.setPalette(palette_for(LIGHT))
    window.resize(600, 120)
    bar = ResumeBar(window)
    bar.resize(600, 80)
    bar.show_notice("You stopped this answer.")
    _colours_shown(bar, LIGHT)
    window.setPalette(palette_for(DARK))
    _colours_shown(bar, DARK)
    window.setPalette(palette_for(LIGHT))
    _colours_shown(bar, LIGHT)
    # Made without a parent, then put in a layout: it takes its surroundings' theme.
    loose = ResumeBar()
    dark = QWidget()
    qtbot.addWidget(dark)
    dark.setPalette(palette_for(DARK))
    QVBoxLayout(dark).addWidget(loose)
    loose.resize(600, 80)
    loose.show_notice("x")
    _colours_shown(loose, DARK)


@pytest.mark.parametrize(
    ("width", "stacked"), [(460, True), (639, True), (640, False), (900, False)]
)
def test_a_narrow_bar_puts_its_buttons_under_the_words(
    qtbot: Any, width: int, stacked: bool
) -> None:
    holder = QWidget()
    qtbot.addWidget(holder)
    bar = ResumeBar()
    QVBoxLayout(holder).addWidget(bar)
    holder.layout().setContentsMargins(0, 0, 0, 0)
    bar.show_info(CASES[0][1])
    holder.resize(width, 300)
    holder.show()
    qtbot.waitUntil(lambda: bar.width() == width)
    holder.layout().activate()
    bar.layout().activate()
    assert bar.stacked is stacked
    words = bar.message.geometry()
    button = bar.dismiss_button.geometry()
    if stacked:  # under the words, at the right
        assert button.top() >= words.bottom()
        assert button.right() > width - 40
    else:  # beside them
        assert button.left() > words.right() and button.top() < words.bottom()
    # The words get most of the width either way (not a thin column).
    assert words.width() > width * (0.8 if stacked else 0.4)


# --- the previous attempt (pure rows) ----------------------------------------------------------

LONG = "\n".join(f"Line {n} of the interrupted answer." for n in range(1, 8))


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Once upon a time", "Once upon a time"),
        ("a\n\nb\n\nc", "a\nb\nc"),  # blank lines are not lines of text: nothing was cut
        (LONG, "\n".join(LONG.splitlines()[:3]) + " …"),
        ("x" * 500, "x" * COLLAPSED_CHARS + " …"),  # no word end near: cut at the limit
        ("word " * 100, ("word " * 48).rstrip() + " …"),  # cut after a whole word
        ("  padded  ", "padded"),
    ],
)
def test_collapsed(text: str, shown: str) -> None:
    assert collapsed(text) == shown


def _rows(*items: TranscriptItem) -> Rows:
    rows = Rows()
    rows.append(items)
    return rows


def test_a_resumed_answer_makes_the_draft_its_previous_attempt() -> None:
    draft = TranscriptItem(ItemKind.DRAFT, LONG, detail="You stopped this answer.")
    rows = _rows(TranscriptItem(ItemKind.USER, "Tell me"), draft)
    version = draft.version
    change = rows.start_streaming()
    assert change.changed == [draft] and change.insert == [rows.streaming]
    assert draft.superseded and draft.text == collapsed(LONG) and draft.version > version
    assert "replaces it" in draft.detail
    assert draft.accessible_text().startswith(PREVIOUS_ATTEMPT)
    # The answer finishes: the previous attempt goes (the controller's RunCompleted path).
    rows.append(change.insert)
    assert rows.remove_drafts().remove == [draft]


def test_notes_of_the_resumed_request_do_not_hide_the_draft() -> None:
    draft = TranscriptItem(ItemKind.DRAFT, "cut")
    rows = _rows(draft, TranscriptItem(ItemKind.NOTE, "Asked the model to redo"))
    assert rows.start_streaming().changed == [draft] and draft.superseded


def test_a_new_message_is_not_a_resumed_answer() -> None:
    draft = TranscriptItem(ItemKind.DRAFT, "cut")
    rows = _rows(draft)
    rows.append(rows.add_user("Something else").insert)
    change = rows.start_streaming()
    assert not change.changed and not draft.superseded and draft.text == "cut"


def test_a_newer_interrupted_attempt_replaces_the_previous_one() -> None:
    draft = TranscriptItem(ItemKind.DRAFT, "first try")
    rows = _rows(draft)
    change = rows.start_streaming()
    rows.append(change.insert)
    rows.grow("second try")
    live = rows.streaming
    change = rows.finish_streaming(unsaved=True)
    assert change.remove == [draft]
    assert live is not None and live.kind is ItemKind.DRAFT and not live.superseded


def test_the_previous_attempt_is_dimmed() -> None:
    plain = TranscriptItem(ItemKind.DRAFT, "x")
    previous = TranscriptItem(ItemKind.DRAFT, "x", superseded=True)
    for tokens in (LIGHT, DARK):
        assert TranscriptDelegate._colours(plain, tokens) == (
            tokens.color("draft_bg"),
            tokens.color("draft_border"),
        )
        assert TranscriptDelegate._colours(previous, tokens) == (
            tokens.color("surface"),
            tokens.color("border"),
        )


# --- through the real window -------------------------------------------------------------------


def _drafts(window: Any) -> list[TranscriptItem]:
    return [i for i in window.transcript_model.items() if i.kind is ItemKind.DRAFT]


def _header(window: Any, item: TranscriptItem) -> str:
    """The header the transcript really draws above ``item``."""
    option = QStyleOptionViewItem()
    window.transcript.initViewItemOption(option)
    render = window.transcript.delegate.render_for(item, 600.0, option)
    return render.header.toPlainText() if render.header is not None else ""


async def _stop_mid_answer(window: Any, sim: Any, question: str) -> None:
    sim.enqueue(Reply(tokens=4000, tokens_per_second=200))
    model = window.transcript_model
    assert window.controller.send(question)
    await until(lambda: model.streaming_item and len(model.streaming_item.text) > 300)
    window.composer.stop_button.click()
    await until(lambda: not window.controller.busy and window.resume_bar.isVisible(), what="bar")
    assert "You stopped this answer" in window.resume_bar.message.text()


async def _dismiss(window: Any) -> None:
    done: list[bool] = []
    window.controller.sessionsChanged.connect(lambda: done.append(True))
    window.resume_bar.dismiss_button.click()
    await until(lambda: done, what="dismissed")
    assert not window.resume_bar.isVisible()


async def _reopened(window: Any, data_dir: Path, base_url: str, session_id: str) -> Any:
    """The window closed and started again on the same data folder (the same conversation)."""
    await close_window(window)
    window = await open_window(data_dir, base_url)
    await until(lambda: window.controller.session_id == session_id, what="reopened")
    await until(lambda: window.transcript_model.rowCount() >= 1, what="history")
    await until(lambda: window.sidebar.session_ids(), what="sidebar")
    return window


async def _assert_dismissed_state(window: Any, session_id: str) -> None:
    """What a dismissed, reopened conversation looks like: its question, no draft, no bar."""
    info = await window.services.resume_info(session_id)
    assert info.dismissed and info.point is not None  # Resume would still pick up the same
    assert not window.resume_bar.isVisible()
    assert [i.kind for i in window.transcript_model.items()] == [ItemKind.USER]
    assert not window.sidebar.has_badge(session_id)


def test_dismiss_then_reopen_and_reopen_then_dismiss_end_the_same(run: Any, tmp_path: Path) -> None:
    from app.simulator import Simulator

    async def scenario() -> None:
        async with Simulator() as sim:
            url = sim.openai_base_url
            window = await open_window(tmp_path, url)
            try:
                # Dismiss, then reopen: no bar, and the draft is gone from the screen at once.
                await _stop_mid_answer(window, sim, "Tell me a story")
                session_id = window.controller.session_id
                assert _drafts(window)
                await _dismiss(window)
                assert not _drafts(window)
                window = await _reopened(window, tmp_path, url, session_id)
                await _assert_dismissed_state(window, session_id)
                # Reopened again: still nothing (no other words, no bar).
                window = await _reopened(window, tmp_path, url, session_id)
                await _assert_dismissed_state(window, session_id)

                # A new interruption shows the bar again, with its draft.
                await _stop_mid_answer(window, sim, "Another one")
                assert len(_drafts(window)) == 1
                await until(lambda: window.sidebar.has_badge(session_id), what="badge back")

                # Reopen, then dismiss: the draft shown from the journal goes the same way.
                window = await _reopened(window, tmp_path, url, session_id)
                await until(lambda: window.resume_bar.isVisible(), what="bar on reopening")
                assert len(_drafts(window)) == 1
                assert "Interrupted" in _header(window, _drafts(window)[0])
                await _dismiss(window)
                assert [i.kind for i in window.transcript_model.items()] == [
                    ItemKind.USER,
                    ItemKind.USER,
                ]
                window = await _reopened(window, tmp_path, url, session_id)
                info = await window.services.resume_info(session_id)
                assert info.dismissed and not window.resume_bar.isVisible()
                assert [i.kind for i in window.transcript_model.items()] == [
                    ItemKind.USER,
                    ItemKind.USER,
                ]
            finally:
                await close_window(window)

    run(scenario(), timeout=90)


def test_a_resumed_answer_shows_the_draft_as_its_previous_attempt(run: Any, tmp_path: Path) -> None:
    from app.simulator import Simulator

    async def scenario() -> None:
        async with Simulator() as sim:
            window = await open_window(tmp_path, sim.openai_base_url)
            model = window.transcript_model
            try:
                await _stop_mid_answer(window, sim, "Tell me a story")
                (draft,) = _drafts(window)
                full = draft.text
                assert len(full) > COLLAPSED_CHARS and not draft.superseded
                sim.enqueue(Reply(tokens=4000, tokens_per_second=200))
                window.resume_bar.resume_button.click()
                await until(lambda: model.streaming_item and model.streaming_item.text)
                # While the resumed answer streams: one draft, collapsed and dimmed, above it.
                assert _drafts(window) == [draft] and draft.superseded
                assert draft.text == collapsed(full) and len(draft.text) < len(full)
                assert _header(window, draft) == PREVIOUS_ATTEMPT
                rows = model.items()
                assert rows.index(draft) == rows.index(model.streaming_item) - 1
                tokens = tokens_for(window.transcript.palette())
                assert window.transcript.delegate._colours(draft, tokens) == (
                    tokens.color("surface"),
                    tokens.color("border"),
                )
                # Stopped again: the newer attempt replaces the previous one, as in the journal.
                await until(lambda: len(model.streaming_item.text) > 50)
                window.composer.stop_button.click()
                await until(lambda: not window.controller.busy and window.resume_bar.isVisible())
                (newer,) = _drafts(window)
                assert newer is not draft and not newer.superseded
                assert "Interrupted" in _header(window, newer)
                info = await window.services.resume_info(window.controller.session_id)
                assert info.draft and newer.text.startswith(info.draft[:20])
                # Resumed to the end: the answer replaces the attempt.
                sim.enqueue(Reply(text="The end."))
                window.resume_bar.resume_button.click()
                await until(lambda: not window.controller.busy and not _drafts(window))
                assert [i.kind for i in model.items()] == [ItemKind.USER, ItemKind.ASSISTANT]
            finally:
                await close_window(window)

    run(scenario(), timeout=90)


def test_dismissing_in_a_read_only_copy_leaves_the_other_windows_state(
    run: Any, tmp_path: Path
) -> None:
    """A second window shows the conversation read-only: its Dismiss hides its own notice and
    writes nothing (the stop record and draft belong to the window that holds it)."""
    from app.simulator import Simulator
    from tests.ui.helpers import make_services
    from ui.controller import LOCKED_ELSEWHERE
    from ui.window import MainWindow

    async def scenario() -> None:
        async with Simulator() as sim:
            window = await open_window(tmp_path, sim.openai_base_url)
            second = None
            try:
                await _stop_mid_answer(window, sim, "Tell me a story")
                session_id = window.controller.session_id
                other = await make_services(tmp_path, sim.openai_base_url)
                second = MainWindow(other)
                second.show()
                await second.start()
                assert second.controller.session_id == session_id and second.controller.read_only
                await until(lambda: second.resume_bar.isVisible(), what="notice")
                assert second.resume_bar.message.text() == LOCKED_ELSEWHERE
                second.resume_bar.dismiss_button.click()
                await until(lambda: not second.resume_bar.isVisible(), what="notice hidden")
                await second.controller.dismiss()  # what the click ran, awaited to its end
                info = await window.services.resume_info(session_id)
                assert not info.dismissed and info.stop is not None and info.draft
                assert _drafts(window) and window.resume_bar.isVisible()
            finally:
                if second is not None:
                    await close_window(second)
                await close_window(window)

    run(scenario(), timeout=60)
