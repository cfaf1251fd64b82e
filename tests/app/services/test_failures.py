"""What a failed or stopped request is called (``describe_failure``): one row per kind of error."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from app import (
    AgentResumeError,
    IncompleteStreamError,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderContextLengthError,
    ProviderStreamError,
    ProviderTimeoutError,
    SessionBusyError,
    StorageFullError,
    ToolRoundLimitError,
)
from app.services import SessionLockedError, describe_failure
from app.services.failures import is_expected
from app.storage.journal import StopKind

LOG = "/home/someone/.local/state/Continuum/log/continuum.log"

EXPECTED: list[tuple[BaseException, StopKind, str]] = [
    (asyncio.CancelledError(), StopKind.STOPPED, "You stopped this answer."),
    (
        ProviderContextLengthError("too long"),
        StopKind.CONTEXT_FULL,
        "The conversation no longer fits the model: too long",
    ),
    (
        ProviderTimeoutError("no bytes for 60 s"),
        StopKind.CONNECTION,
        "The provider stopped responding: no bytes for 60 s",
    ),
    (
        ProviderConnectionError("refused"),
        StopKind.CONNECTION,
        "The connection to the provider dropped: refused",
    ),
    (
        ProviderStreamError("bad frame"),
        StopKind.CONNECTION,
        "The connection to the provider dropped: bad frame",
    ),
    (
        IncompleteStreamError("cut"),
        StopKind.CONNECTION,
        "The connection to the provider dropped: cut",
    ),
    (
        httpx.ReadError("reset"),
        StopKind.CONNECTION,
        "The connection to the provider dropped: reset",
    ),
    (
        ConnectionResetError(),
        StopKind.CONNECTION,
        "The connection to the provider dropped: ConnectionResetError",
    ),
    (TimeoutError(), StopKind.CONNECTION, "The connection to the provider dropped: TimeoutError"),
    (
        ProviderAuthError("bad key"),
        StopKind.PROVIDER_ERROR,
        "The provider reported an error: bad key",
    ),
    (ToolRoundLimitError(3), StopKind.TOOL_LIMIT, str(ToolRoundLimitError(3))),
    (StorageFullError("The disk is full."), StopKind.STORAGE, "The disk is full."),
    (
        AgentResumeError("empty", "Nothing to resume."),
        StopKind.PROVIDER_ERROR,
        "Nothing to resume.",
    ),
    (SessionBusyError("s1"), StopKind.PROVIDER_ERROR, str(SessionBusyError("s1"))),
    # Any of the package's own errors carries a person-facing message.
    (SessionLockedError(), StopKind.PROVIDER_ERROR, str(SessionLockedError())),
]


@pytest.mark.parametrize(
    ("error", "kind", "text"), EXPECTED, ids=[type(row[0]).__name__ for row in EXPECTED]
)
def test_expected_failures_keep_their_friendly_words(
    error: BaseException, kind: StopKind, text: str
) -> None:
    assert is_expected(error)
    assert describe_failure(error, log_at=LOG) == (kind, text)


INTERNAL: list[tuple[BaseException, str]] = [
    (RuntimeError("step state lost"), "RuntimeError: step state lost"),
    (KeyError("tool_call_id"), "KeyError: 'tool_call_id'"),
    (
        AttributeError("'NoneType' object has no attribute 'id'"),
        "AttributeError: 'NoneType' object has no attribute 'id'",
    ),
    (AssertionError(), "AssertionError"),
    (ValueError("x" * 500), "ValueError: " + "x" * 197 + "..."),
]


@pytest.mark.parametrize(
    ("error", "shown"), INTERNAL, ids=[type(row[0]).__name__ for row in INTERNAL]
)
def test_a_bug_is_called_an_internal_error_and_points_at_the_log(
    error: BaseException, shown: str
) -> None:
    assert not is_expected(error)
    kind, text = describe_failure(error, log_at=LOG)
    assert kind is StopKind.PROVIDER_ERROR
    assert text == (
        f"Continuum hit an internal error ({shown}); the details are in the log at "
        f"{LOG}; your conversation is saved. Resume to try again."
    )


def test_without_a_log_file_the_text_says_where_the_details_went() -> None:
    _kind, text = describe_failure(RuntimeError("boom"), log_at=None)
    assert text == (
        "Continuum hit an internal error (RuntimeError: boom); the details are in "
        "Continuum's log output; your conversation is saved. Resume to try again."
    )
