"""What a failed or stopped request is called, and how the services' own failures are logged.

Pure decisions (table-tested in ``tests/app/services/test_failures.py``): whether an exception
is an *expected* failure (the provider, the connection, storage, or another of the package's
own errors, each with a person-facing message) or a bug, and which stop kind and sentence the
Resume bar shows for it (:func:`describe_failure`), or for an orderly stop (:data:`ORDERLY_STOPS`).

A bug is shown as an internal error that points at the log; the caller logs its traceback.
:func:`tell` and :func:`close_logged` replace silent ``suppress(Exception)`` blocks: a failure
is logged (with a traceback when unexpected), never swallowed, and ``CancelledError`` is never
caught.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable

import httpx

from ..errors import (
    ContinuumError,
    IncompleteStreamError,
    ProviderConnectionError,
    ProviderContextLengthError,
    ProviderError,
    ProviderStreamError,
    ProviderTimeoutError,
    StorageError,
    ToolRoundLimitError,
)
from ..messages import StopReason
from ..storage.journal import StopKind

__all__ = [
    "ORDERLY_STOPS",
    "close_logged",
    "describe_failure",
    "is_expected",
    "log_location",
    "tell",
]

log = logging.getLogger(__name__)

_CONNECTION_ERRORS = (
    ProviderConnectionError,
    ProviderStreamError,
    IncompleteStreamError,
    httpx.TransportError,
    ConnectionError,
    TimeoutError,
)
#: Failures with a person-facing message; anything else is a bug.
_EXPECTED = (asyncio.CancelledError, ContinuumError, *_CONNECTION_ERRORS)
_SHOWN_DETAIL = 200  # characters of a bug's message shown in the Resume bar


def is_expected(error: BaseException) -> bool:
    """An expected failure (Stop, provider, connection, storage, the package's own errors)
    rather than a bug, whose traceback belongs in the log."""
    return isinstance(error, _EXPECTED)


def describe_failure(
    error: BaseException,
    *,
    log_at: str | None = None,
) -> tuple[StopKind, str]:
    """Why a request failed, in words for the Resume bar (never a traceback).

    ``log_at`` is where the log is written (:func:`log_location`), named for a bug.
    """
    if isinstance(error, asyncio.CancelledError):
        return StopKind.STOPPED, "You stopped this answer."
    if isinstance(error, ProviderContextLengthError):
        return StopKind.CONTEXT_FULL, f"The conversation no longer fits the model: {error}"
    if isinstance(error, ProviderTimeoutError):
        return StopKind.CONNECTION, f"The provider stopped responding: {error}"
    if isinstance(error, _CONNECTION_ERRORS):
        detail = str(error) or type(error).__name__
        return StopKind.CONNECTION, f"The connection to the provider dropped: {detail}"
    if isinstance(error, ProviderError):
        return StopKind.PROVIDER_ERROR, f"The provider reported an error: {error}"
    if isinstance(error, ToolRoundLimitError):
        return StopKind.TOOL_LIMIT, str(error)
    if isinstance(error, StorageError):
        return StopKind.STORAGE, str(error)
    if isinstance(error, ContinuumError):
        return StopKind.PROVIDER_ERROR, str(error)
    where = f"the log at {log_at}" if log_at else "Continuum's log output"
    return StopKind.PROVIDER_ERROR, (
        f"Continuum hit an internal error ({_short(error)}); the details are in {where}; "
        "your conversation is saved. Resume to try again."
    )


def _short(error: BaseException) -> str:
    text = str(error)
    if not text:
        return type(error).__name__
    if len(text) > _SHOWN_DETAIL:
        text = text[: _SHOWN_DETAIL - 3] + "..."
    return f"{type(error).__name__}: {text}"


def log_location(logger: logging.Logger = log) -> str | None:
    """The file the log records of ``logger`` are written to (the app's rotating log), if any."""
    current: logging.Logger | None = logger
    while current is not None:
        for handler in current.handlers:
            if isinstance(handler, logging.FileHandler) and handler.baseFilename != os.devnull:
                return handler.baseFilename
        current = current.parent if current.propagate else None
    return None


#: The stops that end a request in order but still deserve a line in the Resume bar.
ORDERLY_STOPS: dict[StopReason | str, tuple[StopKind, str]] = {
    StopReason.MAX_OUTPUT: (StopKind.OUTPUT_LIMIT, "The answer reached the model's output limit."),
    StopReason.REFUSAL: (StopKind.REFUSED, "The model refused to answer this request."),
    StopReason.CONTEXT_FULL: (
        StopKind.CONTEXT_FULL,
        "The conversation filled the model's context window.",
    ),
    StopReason.PAUSED: (StopKind.PAUSED, "The provider paused the answer more times than allowed."),
}


def tell(notify: Callable[[str], None] | None, message: str) -> None:
    """Show ``message`` through the window's ``notify``; a notifier that fails is logged."""
    if notify is None:
        return
    try:
        notify(message)
    except Exception:
        log.exception("could not show the notice %r", message)


async def close_logged(what: str, close: Callable[[], Awaitable[object]]) -> None:
    """Await ``close()``; a failure is logged (a traceback unless an expected I/O error) and
    does not stop the rest of the clean-up. Cancellation propagates."""
    try:
        await close()
    except (OSError, httpx.HTTPError, ContinuumError, TimeoutError) as error:
        log.warning("could not close %s: %s", what, error or type(error).__name__)
    except Exception:
        log.exception("could not close %s", what)
