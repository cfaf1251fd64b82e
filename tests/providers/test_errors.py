"""The pure error helpers: retry decisions, Retry-After parsing, HTTP error classification."""

from __future__ import annotations

import email.utils
import json

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
from app.providers import error_from_response, parse_retry_after, should_retry
from app.providers.errors import error_from_event, redact


@pytest.mark.parametrize(
    ("status", "expected"),
    [(400, False), (401, False), (403, False), (404, False), (408, True), (409, True),
     (422, False), (429, True), (500, True), (502, True), (503, True), (504, True),
     (529, True), (200, False)],
)  # fmt: skip
def test_should_retry_by_status(status: int, expected: bool) -> None:
    assert should_retry(status, {}) is expected


def test_should_retry_header_wins_either_way() -> None:
    assert should_retry(400, {"x-should-retry": "true"}) is True
    assert should_retry(503, {"X-Should-Retry": "false"}) is False
    assert should_retry(503, {"x-should-retry": "maybe"}) is True  # nonsense is ignored


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"retry-after": "3"}, 3.0),
        ({"Retry-After": "1.5"}, 1.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),  # the precise one wins
        ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),
        ({"retry-after": "-4"}, None),
        ({"retry-after": "nan"}, None),
        ({"retry-after": "tomorrow-ish"}, None),
        ({"retry-after": ""}, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers) == expected


def test_parse_retry_after_http_date() -> None:
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=now) == pytest.approx(30.0)
    past = email.utils.formatdate(now - 30, usegmt=True)
    assert parse_retry_after({"retry-after": past}, now=now) == 0.0


def _error(status: int, body: str, headers: dict[str, str] | None = None) -> ProviderError:
    return error_from_response(
        status,
        headers or {"content-type": "application/json"},
        body,
        provider="TestProvider",
        model="gpt-test",
        url="http://127.0.0.1:1/v1/chat/completions",
        secrets=("sk-live-THESECRET123",),
    )


def test_auth_errors_point_at_the_key() -> None:
    for status in (401, 403):
        err = _error(status, '{"error": {"message": "Incorrect API key provided: sk-li***123"}}')
        assert type(err) is ProviderAuthError
        assert "API key" in str(err) and not err.retryable and err.status_code == status


def test_not_found_names_model_and_url() -> None:
    err = _error(404, '{"error": {"message": "The model does not exist", "type": "x"}}')
    assert type(err) is ProviderNotFoundError
    assert "gpt-test" in str(err) and "http://127.0.0.1:1/v1/chat/completions" in str(err)


def test_rate_limit_carries_retry_after() -> None:
    err = _error(429, '{"error": {"message": "slow down"}}', {"retry-after": "7"})
    assert type(err) is ProviderRateLimitError
    assert err.retryable and err.retry_after == 7.0 and "7 s" in str(err)


@pytest.mark.parametrize("status", [500, 502, 503, 504, 529])
def test_server_errors_are_retryable(status: int) -> None:
    err = _error(status, '{"type":"error","error":{"type":"overloaded_error","message":"Ov"}}')
    assert type(err) is ProviderServerError and err.retryable and err.status_code == status


def test_x_should_retry_false_makes_server_error_final() -> None:
    err = _error(500, "{}", {"x-should-retry": "false"})
    assert type(err) is ProviderServerError and not err.retryable


@pytest.mark.parametrize(
    "body",
    [
        '{"error":{"message":"This model\'s maximum context length is 8192 tokens.",'
        '"type":"invalid_request_error","code":"context_length_exceeded"}}',
        '{"type":"error","error":{"type":"invalid_request_error",'
        '"message":"prompt is too long: 210000 tokens > 200000 maximum"}}',
    ],
)
def test_context_length_errors(body: str) -> None:
    err = _error(400, body)
    assert type(err) is ProviderContextLengthError and not err.retryable
    assert "context window" in str(err)


def test_other_bad_requests() -> None:
    err = _error(400, '{"error": {"message": "tools[0].name is invalid"}}')
    assert type(err) is ProviderBadRequestError and "tools[0].name is invalid" in str(err)


def test_408_is_a_retryable_timeout() -> None:
    err = _error(408, "")
    assert type(err) is ProviderTimeoutError and err.retryable


def test_html_error_page_becomes_a_readable_message() -> None:
    page = (
        "<!DOCTYPE html><html><head><title>502 Bad Gateway</title><style>body{}</style></head>"
        "<body><h1>Bad Gateway</h1><script>var x = 1;</script></body></html>"
    )
    err = _error(502, page, {"content-type": "text/html; charset=utf-8"})
    assert type(err) is ProviderServerError and err.retryable
    message = str(err)
    assert "<" not in message and "script" not in message
    assert "HTML page ('502 Bad Gateway')" in message and "base URL" in message


def test_ollama_style_string_error() -> None:
    err = _error(404, '{"error": "model \\"llama9\\" not found, try pulling it first"}')
    assert type(err) is ProviderNotFoundError and "try pulling it first" in str(err)


def test_long_provider_messages_are_clipped() -> None:
    err = _error(500, '{"error": {"message": "' + "x" * 5000 + '"}}')
    assert len(str(err)) < 600


def test_secrets_never_reach_the_message() -> None:
    body = '{"error": {"message": "Incorrect API key provided: sk-live-THESECRET123."}}'
    assert "THESECRET" not in str(_error(401, body))
    assert redact("key sk-proj-abcdefgh1234 here", ()) == "key [redacted] here"


@pytest.mark.parametrize(
    ("payload", "kind", "retryable"),
    [
        ({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
         ProviderServerError, True),
        ({"type": "error", "error": {"type": "api_error", "message": "boom"}},
         ProviderServerError, True),
        ({"error": {"type": "rate_limit_error", "message": "slow"}}, ProviderRateLimitError, True),
        ({"error": {"type": "invalid_request_error", "message": "prompt is too long"}},
         ProviderContextLengthError, False),
        ({"error": {"type": "authentication_error", "message": "bad key"}},
         ProviderAuthError, False),
    ],
)  # fmt: skip
def test_error_events_are_classified_by_type(
    payload: dict[str, object], kind: type[ProviderError], retryable: bool
) -> None:
    err = error_from_event(payload, provider="Anthropic", model="claude")
    assert type(err) is kind and err.retryable is retryable


# --- key redaction: before clipping, in any case, and long fragments of the key -----------------

#: Looks like no known key format, so the ``sk-…`` pattern cannot be what catches it.
RAW_KEY = "gsk_live_4f9Qz7Lm2Xc8Vb1Nr6Tw3Ye5Ui0Op"


def _longest_key_fragment(text: str, key: str = RAW_KEY) -> int:
    """The length of the longest piece of ``key`` in ``text``, ignoring case."""
    text, key = text.lower(), key.lower()
    best = 0
    for start in range(len(key)):
        for end in range(len(key), start + best, -1):
            if key[start:end] in text:
                best = end - start
                break
    return best


_PAD = "Request rejected for account 12345 because the key is not valid " * 6


@pytest.mark.parametrize(
    "message",
    [
        f"Incorrect API key provided: {RAW_KEY}.",
        f"Incorrect API key provided: {RAW_KEY.upper()}.",
        f"Incorrect API key provided: {RAW_KEY.lower()}.",
        f"Incorrect API key provided: {RAW_KEY.swapcase()}.",
        f"key ending in …{RAW_KEY[-12:]} was revoked",
        f"key starting with {RAW_KEY[:9]}… was revoked",
        f"fragments {RAW_KEY[3:11]} and {RAW_KEY[20:30].upper()} here",
        # The key straddles the clip boundary at every offset around it.
        *(_PAD[:n] + RAW_KEY + " trailing words" for n in range(262, 300, 3)),
        RAW_KEY * 3,
        "x" * 5000 + RAW_KEY,
    ],
)
def test_no_piece_of_the_key_of_eight_or_more_characters_survives(message: str) -> None:
    body = json.dumps({"error": {"message": message}})
    for status in (401, 400, 429, 500, 418):
        err = error_from_response(
            status,
            {"content-type": "application/json"},
            body,
            provider="P",
            model="m",
            url="http://127.0.0.1:1/v1",
            secrets=(RAW_KEY,),
        )
        assert _longest_key_fragment(str(err)) < 8, str(err)
    err = error_from_event(
        {"error": {"type": "api_error", "message": message}},
        provider="P",
        model="m",
        secrets=(RAW_KEY,),
    )
    assert _longest_key_fragment(str(err)) < 8, str(err)


def test_the_key_in_an_html_error_page_title_is_redacted_before_it_is_shortened() -> None:
    title = "Gateway error for " + "y" * 90 + " " + RAW_KEY
    body = f"<!doctype html><html><head><title>{title}</title></head></html>"
    err = error_from_response(
        502,
        {"content-type": "text/html"},
        body,
        provider="P",
        model="m",
        url="http://127.0.0.1:1/v1",
        secrets=(RAW_KEY,),
    )
    assert _longest_key_fragment(str(err)) < 8, str(err)


@pytest.mark.parametrize(
    ("text", "secrets", "expected"),
    [
        (f"a {RAW_KEY} b", (RAW_KEY,), "a [redacted] b"),
        (f"a {RAW_KEY.upper()} b", (RAW_KEY,), "a [redacted] b"),
        (f"a {RAW_KEY[10:18]} b", (RAW_KEY,), "a [redacted] b"),  # 8 characters: redacted
        (f"a {RAW_KEY[10:17]} b", (RAW_KEY,), f"a {RAW_KEY[10:17]} b"),  # 7: ordinary text
        (f"{RAW_KEY[:12]}…{RAW_KEY[-12:]}", (RAW_KEY,), "[redacted]…[redacted]"),
        ("model not found", (RAW_KEY,), "model not found"),
        ("the key abcd was wrong", ("ABCD",), "the key [redacted] was wrong"),  # short: whole
        ("the key abc was wrong", ("abc",), "the key abc was wrong"),  # too short to redact
        ("nothing secret", (None, ""), "nothing secret"),
        ("Grüße İstanbul " + RAW_KEY, (RAW_KEY,), "Grüße İstanbul [redacted]"),
    ],
)
def test_redact_table(text: str, secrets: tuple[str | None, ...], expected: str) -> None:
    assert redact(text, secrets) == expected
