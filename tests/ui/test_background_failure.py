"""A failed background action (search, rename, listing models…) in the window: an expected
error is shown as its message; a bug is logged with its traceback and shown as an internal error,
never as a traceback and never silently."""

from __future__ import annotations

import logging

import pytest

from app.errors import StorageError
from ui.controller import background_failure


def test_an_expected_error_is_its_own_message(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="ui.controller"):
        text = background_failure(StorageError("The disk is full; free some space."))
    assert text == "The disk is full; free some space."
    assert all(record.exc_info is None for record in caplog.records)


def test_a_bug_is_logged_with_its_traceback_and_named_an_internal_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    try:
        {}["missing"]
    except KeyError as err:
        bug = err
    with caplog.at_level(logging.WARNING, logger="ui.controller"):
        text = background_failure(bug)
    assert text.startswith("Continuum hit an internal error (KeyError)")
    assert "Traceback" not in text and "missing" not in text
    [record] = [r for r in caplog.records if r.exc_info]
    assert record.exc_info[1] is bug
    assert "Traceback" in caplog.text and "KeyError" in caplog.text
