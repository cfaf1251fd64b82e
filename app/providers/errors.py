"""Provider errors as data: HTTP status and body to the typed :mod:`app.errors` tree.

Pure functions, no I/O: :func:`error_from_response` (an HTTP error response),
:func:`error_from_event` (an error sent inside a 200 stream), the retry hints
:func:`should_retry` and :func:`parse_retry_after`, :func:`request_validation_issue` (a body
that is a FastAPI/pydantic request-validation error: a 5xx carrying one is a bug in the request,
never retried), and :func:`redact`, through which every text
that comes from the provider passes before it is shortened (an API key never appears in an
error message, whatever its case, nor any piece of it of :data:`MIN_KEY_FRAGMENT` characters).
"""

from __future__ import annotations

import ast
import email.utils
import html
import json
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any, Final

from ..errors import (
    ProviderAuthError,
    ProviderBadRequestError,
    ProviderContextLengthError,
    ProviderError,
    ProviderNotFoundError,
    ProviderQuotaError,
    ProviderRateLimitError,
    ProviderServerError,
    ProviderTimeoutError,
)

__all__ = [
    "MAX_PROVIDER_MESSAGE",
    "MIN_KEY_FRAGMENT",
    "RETRYABLE_STATUSES",
    "base_url_hint",
    "error_fields_from_json",
    "error_from_event",
    "error_from_response",
    "parse_retry_after",
    "redact",
    "request_validation_issue",
    "should_retry",
]

#: Statuses worth a second try: timeout, conflict, rate limit, overloaded (plus every 5xx).
RETRYABLE_STATUSES: Final = frozenset({408, 409, 429, 529})
#: A provider's own message is cut to this length in our error messages.
MAX_PROVIDER_MESSAGE: Final = 300
#: Any piece of an API key this long is redacted wherever it appears. Eight characters of a
#: random key are ~48 bits of it (too much to show) while ordinary words, status codes and
#: model names practically never share eight consecutive characters with a random key;
#: shorter pieces (a provider's "…wxyz" hint) are harmless and would redact innocent text.
MIN_KEY_FRAGMENT: Final = 8
_REDACTED: Final = "[redacted]"


def _header(headers: Mapping[str, str], name: str) -> str | None:
    """Case-insensitive lookup that works for plain dicts as well as ``httpx.Headers``."""
    value = headers.get(name)
    if value is not None:
        return value
    for key, item in headers.items():
        if key.lower() == name:
            return item
    return None


def should_retry(status: int, headers: Mapping[str, str]) -> bool:
    """Whether a request that failed with HTTP ``status`` is worth sending again.

    The provider's ``x-should-retry: true|false`` header wins; otherwise 408, 409, 429, 529
    and every 5xx are retryable.
    """
    hint = _header(headers, "x-should-retry")
    if hint is not None:
        if hint.strip().lower() == "true":
            return True
        if hint.strip().lower() == "false":
            return False
    return status in RETRYABLE_STATUSES or 500 <= status <= 599


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds the provider asked us to wait, or ``None`` if it did not say (or said nonsense).

    Reads ``retry-after-ms`` (milliseconds) first, then ``retry-after`` as seconds or as an HTTP
    date. ``now`` (a Unix time) is for tests; a date in the past means "now" (``0.0``).
    """
    raw_ms = _header(headers, "retry-after-ms")
    if raw_ms is not None:
        try:
            millis = float(raw_ms)
        except ValueError:
            millis = float("nan")
        if millis == millis and millis >= 0 and millis != float("inf"):
            return millis / 1000.0
    raw = _header(headers, "retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        pass
    else:
        if seconds == seconds and 0 <= seconds != float("inf"):
            return seconds
        return None
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # an HTTP date is always GMT
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def _fold(text: str) -> str:
    """``text`` lower-cased so that indexes stay aligned with it (a few characters, like
    "İ", lower-case to two; those are kept as they are)."""
    folded = text.lower()
    if len(folded) == len(text):
        return folded
    return "".join(c if len(low := c.lower()) != 1 else low for c in text)


def _secret_spans(folded: str, secret: str) -> list[tuple[int, int]]:
    """Where ``secret``, or any piece of it of :data:`MIN_KEY_FRAGMENT` characters or more,
    occurs in ``folded`` (already case-folded), as ``(start, end)`` index pairs.

    Every such piece is a run of overlapping fragments of exactly that length, so it suffices
    to look up each window of the text in the set of the secret's windows: O(len(text)) set
    look-ups, memory O(len(secret)). A secret shorter than that is matched only whole.
    """
    secret = _fold(secret)
    width = min(len(secret), MIN_KEY_FRAGMENT)
    windows = {secret[i : i + width] for i in range(len(secret) - width + 1)}
    spans: list[tuple[int, int]] = []
    for start in range(len(folded) - width + 1):
        if folded[start : start + width] in windows:
            if spans and start <= spans[-1][1]:
                spans[-1] = (spans[-1][0], start + width)
            else:
                spans.append((start, start + width))
    return spans


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret replaced by ``[redacted]`` (and any ``sk-…`` looking key).

    Case does not matter (a provider may echo the key upper-cased), and so is any piece of a
    secret of :data:`MIN_KEY_FRAGMENT` characters or more (a provider may echo its first or
    last characters). Secrets shorter than 4 characters are not redacted (they would match
    ordinary words). Run this *before* shortening a text: a key cut at the boundary would
    otherwise no longer match and its first characters would stay.
    """
    usable = [s for s in secrets if s and len(s) >= 4]
    if usable:
        folded = _fold(text)
        spans = sorted(span for secret in usable for span in _secret_spans(folded, secret))
        merged: list[tuple[int, int]] = []
        for start, end in spans:
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        for start, end in reversed(merged):
            text = text[:start] + _REDACTED + text[end:]
    # Providers sometimes echo the key they refused ("Incorrect API key provided: sk-ab***yz").
    return re.sub(r"\b(sk|key)-[A-Za-z0-9_*\-]{6,}", _REDACTED, text)


_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_HEADING = re.compile(r"<h1[^>]*>(.*?)</h1>", re.IGNORECASE | re.DOTALL)
_TAGS = re.compile(r"<[^>]+>")


def _looks_like_html(body: str, content_type: str) -> bool:
    start = body.lstrip()[:100].lower()
    return "html" in content_type.lower() or start.startswith(("<!doctype html", "<html"))


def _html_summary(body: str, secrets: Iterable[str | None] = ()) -> str:
    """A one-line readable summary of an HTML error page (its title or first heading),
    redacted before it is shortened."""
    for pattern in (_TITLE, _HEADING):
        match = pattern.search(body)
        if match:
            text = html.unescape(_TAGS.sub("", match.group(1)))
            text = redact(" ".join(text.split()), secrets)
            if text:
                return text[:120]
    return ""


def _provider_error_fields(body: str) -> tuple[str, str | None, str | None]:
    """(message, type, code) out of an OpenAI-, Anthropic- or Ollama-style JSON error body."""
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, RecursionError):
        return " ".join(body.split()), None, None
    return error_fields_from_json(data)


def error_fields_from_json(data: Any) -> tuple[str, str | None, str | None]:
    """(message, type, code) from a parsed error object (``{"error": {...}}`` or its inside)."""
    if isinstance(data, Mapping) and "error" in data:
        data = data["error"]
    if isinstance(data, str):
        return data, None, None
    if not isinstance(data, Mapping):
        return "", None, None
    message = data.get("message")
    kind = data.get("type")
    code = data.get("code")
    return (
        str(message) if message is not None else "",
        str(kind) if kind is not None else None,
        str(code) if code is not None else None,
    )


_CONTEXT_PATTERNS: Final = (
    "context_length_exceeded",
    "prompt is too long",
    "maximum context length",
    "context window",
    "context length",
    "too many tokens",
    "exceed_context_size",  # llama.cpp's error type
    "available context size",  # llama.cpp: "… exceeds the available context size …"
)
#: Error types/codes that mean the account has no quota or credit left (OpenAI, Anthropic).
_QUOTA_KINDS: Final = frozenset({"insufficient_quota", "billing_error"})


def _is_context_overflow(message: str, kind: str | None, code: str | None) -> bool:
    haystack = " ".join(part for part in (message, kind or "", code or "") if part).lower()
    return any(pattern in haystack for pattern in _CONTEXT_PATTERNS)


def _is_quota(kind: str | None, code: str | None) -> bool:
    return kind in _QUOTA_KINDS or code in _QUOTA_KINDS


def _quota_error(where: str, detail: str, **common: Any) -> ProviderQuotaError:
    return ProviderQuotaError(
        f"{where}: the account has no quota or credit left ({detail}). Check your plan and "
        "billing at the provider (or pick another provider in Settings); trying again will "
        "not help until then.",
        retryable=False,
        **common,
    )


def _clip(text: str) -> str:
    """``text`` on one line, at most :data:`MAX_PROVIDER_MESSAGE` long (redact it first)."""
    text = " ".join(text.split()).rstrip(" .")
    if len(text) > MAX_PROVIDER_MESSAGE:
        text = text[: MAX_PROVIDER_MESSAGE - 1] + "…"
    return text


# --- request-validation errors (FastAPI / pydantic) -----------------------------------------

#: "1 validation error for Model" (pydantic), "7 validation errors:" (FastAPI 0.124+).
_VALIDATION_COUNT: Final = re.compile(r"\b\d+ validation errors?\b(?: for \S+|:)", re.IGNORECASE)
#: One entry of a printed list of pydantic errors: ``'loc': ('body', 'messages', 1), 'msg': '…'``.
_REPR_ENTRY: Final = re.compile(
    r"'loc': (\([^()]*\)), 'msg': ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
)
#: pydantic's own text: a location line, then the message indented, then ``[type=…]``.
_TEXT_ENTRY: Final = re.compile(r"^(\S[^\n]*)\n  ([^\n]+?)(?: \[type=[^\n]*\])?$", re.MULTILINE)
#: Where FastAPI says the value was read from (the first element of ``loc``).
_LOC_SOURCES: Final = frozenset({"body", "query", "path", "header", "cookie"})
#: Union-member and type tags pydantic puts in ``loc`` (not field names).
_TYPE_TAG: Final = re.compile(r"^(?:[A-Z]\w*|str|int|float|bool|list|dict|none|.*[-\[(].*)$")

_Loc = tuple[str | int, ...]


def _validation_entries(body: str) -> list[tuple[_Loc, str]] | None:
    """The (location, message) entries of a request-validation error body, ``[]`` if it is one
    without locations, ``None`` if ``body`` is not a validation error."""
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, RecursionError):
        data, text = None, body
    else:
        detail = data.get("detail") if isinstance(data, Mapping) else None
        if (
            isinstance(detail, list)
            and detail
            and all(
                isinstance(item, Mapping) and ("loc" in item or "msg" in item) for item in detail
            )
        ):  # FastAPI's own shape: {"detail": [{"loc": [...], "msg": "...", "type": "..."}]}
            return [(tuple(i.get("loc") or ()), str(i.get("msg") or "")) for i in detail]
        text = error_fields_from_json(data)[0]
    entries: list[tuple[_Loc, str]] = []
    for match in _REPR_ENTRY.finditer(text):
        try:
            loc, msg = ast.literal_eval(match.group(1)), ast.literal_eval(match.group(2))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(loc, tuple) and isinstance(msg, str):
            entries.append((loc, msg))
    if entries:
        return entries
    header = _VALIDATION_COUNT.search(text)
    if header is None:
        return None
    for match in _TEXT_ENTRY.finditer(text, header.end()):
        loc = tuple(int(p) if p.isdigit() else p for p in match.group(1).strip().split("."))
        entries.append((loc, match.group(2).strip()))
    return entries


def _field_path(loc: _Loc) -> str:
    """``('body', 'messages', 1, 'SomeMessage', 'content')`` as ``messages[1].content``."""
    parts = list(loc[1:] if loc and loc[0] in _LOC_SOURCES else loc)
    path = ""
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not _TYPE_TAG.match(str(part)):
            path += f".{part}" if path else str(part)
    return path


def request_validation_issue(body: str) -> tuple[str | None, str | None] | None:
    """``(field, problem)`` if ``body`` is a request-validation error, else ``None``.

    Reads FastAPI's ``{"detail": [{"loc": …, "msg": …}]}``, a printed list of pydantic errors
    (how llama-cpp-python's server reports one, inside an HTTP 500) and pydantic's own text.
    Of the entries, the first one that is not a union member refused for its ``role`` (a
    message type the turn was never meant to be) is the one that names the problem; either
    part is ``None`` when the body does not say.
    """
    entries = _validation_entries(body)
    if entries is None:
        return None
    if not entries:
        return None, None
    # FastAPI's ResponseValidationError: the server's own answer failed, not our request.
    entries = [(loc, msg) for loc, msg in entries if not loc or loc[0] != "response"]
    if not entries:
        return None
    wrong_role = {loc[:-1] for loc, _ in entries if loc and loc[-1] == "role"}
    relevant = [
        (loc, msg) for loc, msg in entries
        if not any(loc[: len(prefix)] == prefix for prefix in wrong_role)
    ] or entries  # fmt: skip
    loc, msg = relevant[0]
    return _field_path(loc) or None, msg or None


def _validation_error(
    where: str, issue: tuple[str | None, str | None], secrets: Iterable[str | None], **common: Any
) -> ProviderBadRequestError:
    """Never retried, even if ``x-should-retry`` says so: the same body would fail the same way."""
    field, problem = (_clip(redact(part, secrets)) if part else None for part in issue)
    said = ": ".join(part for part in (f"field {field}" if field else None, problem) if part)
    return ProviderBadRequestError(
        f"{where} rejected the request's format{': ' + said if said else ''}. This is a "
        "request-validation error, not a server hiccup, so Continuum does not send it again "
        "(it would fail the same way). It is likely a bug in the request Continuum built for "
        "this server, and worth reporting, with the server's name and version.",
        retryable=False,
        **common,
    )


def base_url_hint(provider: str) -> str:
    """What a base URL for ``provider`` looks like, for "check the base URL" messages."""
    if provider.lower().startswith("anthropic"):
        return "the API root, e.g. https://api.anthropic.com, with or without /v1"
    return "OpenAI-compatible servers usually end in /v1"


def error_from_response(
    status: int,
    headers: Mapping[str, str],
    body: str,
    *,
    provider: str,
    model: str,
    url: str,
    secrets: Iterable[str | None] = (),
) -> ProviderError:
    """The typed error for an HTTP error response (``status`` ≥ 400). Pure: no I/O."""
    content_type = _header(headers, "content-type") or ""
    retryable = should_retry(status, headers)
    retry_after = parse_retry_after(headers)
    message, kind, code = "", None, None
    if _looks_like_html(body, content_type):
        title = _html_summary(body, secrets)
        detail = (
            f"an HTML page{f' ({title!r})' if title else ''} instead of an API response; "
            "the base URL may point at a website or a proxy rather than the API"
        )
    else:
        message, kind, code = _provider_error_fields(body)
        # Redacted before it is clipped: a key cut at the boundary would no longer match.
        detail = _clip(redact(message, secrets)) if message else "no details"
    where = f"{provider} (HTTP {status})"
    common: dict[str, Any] = {"status_code": status, "retry_after": retry_after}

    if status in (401, 403):
        return ProviderAuthError(
            f"{where} refused the request: {detail}. Check the API key"
            f"{' and that it may use model ' + repr(model) if status == 403 else ''} in Settings.",
            retryable=False,
            **common,
        )
    if status == 404:
        return ProviderNotFoundError(
            f"{where} has no model {model!r} at {url}: {detail}. Check the model name and the "
            f"base URL ({base_url_hint(provider)}).",
            retryable=False,
            **common,
        )
    if status == 402 or _is_quota(kind, code):
        return _quota_error(where, detail, **common)
    if status in (400, 413, 422):
        issue = request_validation_issue(body) if not message else None
        if issue is not None and issue[0]:  # FastAPI's {"detail": [...]}: name the field
            detail = _clip(redact(f"field {issue[0]}: {issue[1] or 'invalid'}", secrets))
        if _is_context_overflow(message, kind, code):
            return ProviderContextLengthError(
                f"{where}: the conversation no longer fits the context window of model {model!r} "
                f"({detail}). Start a new conversation or shorten this one.",
                retryable=False,
                **common,
            )
        return ProviderBadRequestError(
            f"{where} refused the request as invalid: {detail}. This is likely a bug or a "
            "setting the model does not support; check the model settings.",
            retryable=False,
            **common,
        )
    if status == 429:
        wait = f" It asked to wait {retry_after:g} s." if retry_after is not None else ""
        return ProviderRateLimitError(
            f"{where}: too many requests or tokens ({detail}).{wait} Wait a moment and try "
            "again, or check your plan's rate limits.",
            retryable=retryable,
            **common,
        )
    if status == 408:
        return ProviderTimeoutError(
            f"{where}: the server timed out handling the request ({detail}). Try again.",
            retryable=retryable,
            **common,
        )
    if status == 529 or 500 <= status <= 599:
        issue = request_validation_issue(body)
        if issue is not None:  # a bug in the request, whatever the status says
            return _validation_error(where, issue, secrets, **common)
        what = "is overloaded" if status == 529 or kind == "overloaded_error" else "failed"
        return ProviderServerError(
            f"{where} {what}: {detail}. This is on the provider's side; try again shortly.",
            retryable=retryable,
            **common,
        )
    return ProviderError(
        f"{where} returned an unexpected error: {detail}.",
        retryable=retryable,
        **common,
    )


def error_from_event(
    data: Any, *, provider: str, model: str, secrets: Iterable[str | None] = ()
) -> ProviderError:
    """The typed error for an error the provider sent inside a 200 stream, by its type."""
    message, kind, code = error_fields_from_json(data)
    detail = _clip(redact(message, secrets)) if message else "no details"
    label = redact(kind or code or "error", secrets)
    where = f"{provider} reported {label} during the answer"
    if kind == "overloaded_error" or code == "overloaded_error":
        return ProviderServerError(
            f"{where}: {detail}. The provider is overloaded; try again shortly.",
            status_code=529,
        )
    if _is_quota(kind, code):
        return _quota_error(where, detail)
    if kind in ("rate_limit_error", "rate_limit_exceeded") or code == "rate_limit_exceeded":
        return ProviderRateLimitError(
            f"{where}: {detail}. Wait a moment and try again.", status_code=429
        )
    if kind in ("authentication_error", "permission_error"):
        return ProviderAuthError(f"{where}: {detail}. Check the API key in Settings.")
    if _is_context_overflow(message, kind, code):
        return ProviderContextLengthError(
            f"{where}: the conversation no longer fits the context window of model {model!r} "
            f"({detail}). Start a new conversation or shorten this one."
        )
    if kind in ("invalid_request_error", "not_found_error", "request_too_large"):
        return ProviderBadRequestError(f"{where}: {detail}. Check the model settings.")
    if kind == "timeout_error":
        return ProviderTimeoutError(f"{where}: {detail}. Try again.")
    return ProviderServerError(f"{where}: {detail}. Try again shortly.")
