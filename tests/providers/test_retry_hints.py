"""Table tests for the retry hints in :mod:`app.providers.errors`: should_retry, Retry-After."""

from __future__ import annotations

import pytest

from app.providers.errors import RETRYABLE_STATUSES, parse_retry_after, should_retry

NOW = 1_700_000_000.0  # 2023-11-14 22:13:20 GMT


@pytest.mark.parametrize(
    ("status", "headers", "expected"),
    [
        (400, {}, False),
        (401, {}, False),
        (404, {}, False),
        (408, {}, True),
        (409, {}, True),
        (429, {}, True),
        (499, {}, False),
        (500, {}, True),
        (599, {}, True),
        (529, {}, True),
        (600, {}, False),
        (400, {"x-should-retry": "true"}, True),
        (503, {"X-Should-Retry": " FALSE "}, False),
        (503, {"x-should-retry": "maybe"}, True),
        (400, {"x-should-retry": ""}, False),
    ],
)
def test_should_retry_table(status: int, headers: dict[str, str], expected: bool) -> None:
    assert should_retry(status, headers) is expected


def test_every_listed_status_is_retryable() -> None:
    assert all(should_retry(status, {}) for status in RETRYABLE_STATUSES)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"retry-after": "0"}, 0.0),
        ({"retry-after": " 2.5 "}, 2.5),
        ({"Retry-After": "30"}, 30.0),
        ({"retry-after": "-1"}, None),
        ({"retry-after": "nan"}, None),
        ({"retry-after": "inf"}, None),
        ({"retry-after": "soon"}, None),
        ({"retry-after-ms": "250"}, 0.25),
        ({"Retry-After-Ms": "0"}, 0.0),
        ({"retry-after-ms": "-5", "retry-after": "3"}, 3.0),
        ({"retry-after-ms": "x", "retry-after": "3"}, 3.0),
        ({"retry-after-ms": "inf"}, None),
        ({"retry-after": "Tue, 14 Nov 2023 22:13:30 GMT"}, 10.0),
        ({"retry-after": "Tue, 14 Nov 2023 22:13:00 GMT"}, 0.0),  # in the past: now
        ({"retry-after": "Tue, 14 Nov 2023 22:13:30"}, None),  # no zone: not an HTTP date
        ({"retry-after": "Tue, 99 Nov 2023 22:13:30 GMT"}, None),
    ],
)
def test_parse_retry_after_table(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers, now=NOW) == expected
