"""Table tests for the pure error mapping in :mod:`app.providers.errors` (no I/O)."""

from __future__ import annotations

from typing import Any

import pytest

from app.errors import (
    ProviderAuthError,
    ProviderBadRequestError,
    ProviderContextLengthError,
    ProviderError,
    ProviderNotFoundError,
    ProviderRateLimitError,
    ProviderServerError,
    ProviderTimeoutError,
)
from app.providers.errors import (
    MAX_PROVIDER_MESSAGE,
    error_fields_from_json,
    error_from_event,
    error_from_response,
)

KEY = "sk-live-0123456789abcdefghijklmnop"


def _response(
    status: int, body: str = '{"error": {"message": "nope"}}', headers: dict[str, str] | None = None
) -> ProviderError:
    return error_from_response(
        status,
        headers or {},
        body,
        provider="P",
        model="m",
        url="http://h/v1/chat/completions",
        secrets=(KEY,),
    )


# status, body, exact type, retryable, a phrase of the message
RESPONSE_TABLE: list[tuple[int, str, type[ProviderError], bool, str]] = [
    (400, '{"error": {"message": "bad field"}}', ProviderBadRequestError, False, "as invalid"),
    (
        400,
        '{"error": {"code": "context_length_exceeded", "message": "x"}}',
        ProviderContextLengthError,
        False,
        "context window",
    ),
    (
        413,
        '{"error": {"message": "prompt is too long"}}',
        ProviderContextLengthError,
        False,
        "Start a new conversation",
    ),
    (422, '{"detail": "x"}', ProviderBadRequestError, False, "no details"),
    (401, '{"error": {"message": "bad key"}}', ProviderAuthError, False, "Check the API key in"),
    (403, '{"error": {"message": "no"}}', ProviderAuthError, False, "may use model 'm'"),
    (404, '{"error": {"message": "gone"}}', ProviderNotFoundError, False, "/v1"),
    (408, "", ProviderTimeoutError, True, "timed out"),
    (409, '{"error": "conflict"}', ProviderError, True, "unexpected error: conflict"),
    (418, '{"error": "teapot"}', ProviderError, False, "unexpected error: teapot"),
    (429, '{"error": {"message": "slow down"}}', ProviderRateLimitError, True, "rate limits"),
    (500, '{"error": {"message": "boom"}}', ProviderServerError, True, "failed: boom"),
    (503, "not json at all", ProviderServerError, True, "not json at all"),
    (
        529,
        '{"error": {"type": "overloaded_error", "message": "busy"}}',
        ProviderServerError,
        True,
        "is overloaded",
    ),
    (
        502,
        "<html><title>Bad Gateway</title></html>",
        ProviderServerError,
        True,
        "an HTML page ('Bad Gateway')",
    ),
]


@pytest.mark.parametrize(("status", "body", "kind", "retryable", "phrase"), RESPONSE_TABLE)
def test_error_from_response_table(
    status: int, body: str, kind: type[ProviderError], retryable: bool, phrase: str
) -> None:
    err = _response(status, body)
    assert type(err) is kind
    assert err.retryable is retryable
    assert err.status_code == status
    assert phrase in str(err)
    assert f"(HTTP {status})" in str(err)


@pytest.mark.parametrize(
    ("headers", "retryable", "retry_after"),
    [
        ({}, True, None),
        ({"x-should-retry": "false"}, False, None),
        ({"Retry-After": "7"}, True, 7.0),
        ({"retry-after-ms": "1500", "retry-after": "9"}, True, 1.5),
    ],
)
def test_error_from_response_reads_the_retry_hints(
    headers: dict[str, str], retryable: bool, retry_after: float | None
) -> None:
    err = _response(429, headers=headers)
    assert (err.retryable, err.retry_after) == (retryable, retry_after)


@pytest.mark.parametrize(
    "body",
    [
        f'{{"error": {{"message": "key {KEY} refused"}}}}',
        f'{{"error": {{"message": "{"x" * (MAX_PROVIDER_MESSAGE - 10)} {KEY.upper()}"}}}}',
        f"<html><title>denied {KEY}</title></html>",
    ],
    ids=["whole", "at-the-clip-boundary-upper-case", "html-title"],
)
def test_error_from_response_never_shows_the_key(body: str) -> None:
    text = str(_response(401, body))
    assert KEY[3:11].lower() not in text.lower()


# data, exact type, status_code, a phrase
EVENT_TABLE: list[tuple[Any, type[ProviderError], int | None, str]] = [
    (
        {"error": {"type": "overloaded_error", "message": "busy"}},
        ProviderServerError,
        529,
        "overloaded",
    ),
    (
        {"error": {"code": "rate_limit_exceeded", "message": "x"}},
        ProviderRateLimitError,
        429,
        "Wait a moment",
    ),
    ({"type": "rate_limit_error", "message": "x"}, ProviderRateLimitError, 429, "Wait"),
    ({"error": {"type": "authentication_error"}}, ProviderAuthError, None, "API key"),
    ({"error": {"type": "permission_error"}}, ProviderAuthError, None, "API key"),
    (
        {"error": {"type": "invalid_request_error", "message": "prompt is too long"}},
        ProviderContextLengthError,
        None,
        "context window of model 'm'",
    ),
    (
        {"error": {"type": "invalid_request_error", "message": "bad"}},
        ProviderBadRequestError,
        None,
        "model settings",
    ),
    ({"error": {"type": "not_found_error"}}, ProviderBadRequestError, None, "no details"),
    ({"error": {"type": "timeout_error"}}, ProviderTimeoutError, None, "Try again"),
    ({"error": "plain words"}, ProviderServerError, None, "plain words"),
    ({}, ProviderServerError, None, "reported error during the answer"),
    ([1, 2], ProviderServerError, None, "no details"),
]


@pytest.mark.parametrize(("data", "kind", "status", "phrase"), EVENT_TABLE)
def test_error_from_event_table(
    data: Any, kind: type[ProviderError], status: int | None, phrase: str
) -> None:
    err = error_from_event(data, provider="P", model="m", secrets=(KEY,))
    assert type(err) is kind
    assert err.status_code == status
    assert phrase in str(err)


def test_error_from_event_redacts_the_type_label_too() -> None:
    err = error_from_event(
        {"error": {"type": KEY, "message": KEY}}, provider="P", model="m", secrets=(KEY,)
    )
    assert KEY[:8] not in str(err)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"error": {"message": "m", "type": "t", "code": 42}}, ("m", "t", "42")),
        ({"message": "inside", "type": None}, ("inside", None, None)),
        ({"error": "text"}, ("text", None, None)),
        ("bare", ("bare", None, None)),
        (None, ("", None, None)),
        (7, ("", None, None)),
        ({"error": {"message": None, "code": "c"}}, ("", None, "c")),
    ],
)
def test_error_fields_from_json_table(
    data: Any, expected: tuple[str, str | None, str | None]
) -> None:
    assert error_fields_from_json(data) == expected
