"""The Resume bar shows exactly what ui.resume_text decides, for every state of its table."""

from __future__ import annotations

from typing import Any

import pytest

from app.services import ResumeInfo
from tests.ui.test_resume_text import CASES
from ui.plain import plain_tooltip
from ui.resume_bar import ResumeBar
from ui.resume_text import ResumeBarText


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
    assert bar.resume_button.isHidden() is (expected.resume is None)
    if expected.resume is not None:
        assert bar.resume_button.text() == expected.resume.value
        assert bar.resume_button.toolTip() == plain_tooltip(expected.resume_tooltip)
    assert bar.other_button.isHidden() is not expected.other_model
    assert not bar.dismiss_button.isHidden()
    assert bar.tools.isHidden() is (not expected.tools_html)
    if expected.tools_html:
        assert bar.tools.text() == expected.tools_html
    bar.show_notice("Locked elsewhere.")
    assert bar.message.text() == "Locked elsewhere." and bar.info is None
    assert bar.resume_button.isHidden() and bar.other_button.isHidden() and bar.tools.isHidden()
    bar.show_info(None)
    assert bar.isHidden()
