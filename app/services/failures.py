"""What a failed or stopped request is called: the words the Resume bar shows for it.

Pure decisions (table-tested in ``tests/app/services/test_failures.py``): which stop kind and
which person-facing sentence an exception or an orderly stop reason gets.
"""

from __future__ import annotations

import asyncio

import httpx

from ..errors import (
    AgentError,
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

__all__ = ["ORDERLY_STOPS", "describe_failure"]


def describe_failure(error: BaseException) -> tuple[StopKind, str]:
    """Why a request failed, in words for the Resume bar (never a traceback)."""
    if isinstance(error, asyncio.CancelledError):
        return StopKind.STOPPED, "You stopped this answer."
    if isinstance(error, ProviderContextLengthError):
        return StopKind.CONTEXT_FULL, f"The conversation no longer fits the model: {error}"
    if isinstance(error, ProviderTimeoutError):
        return StopKind.CONNECTION, f"The provider stopped responding: {error}"
    if isinstance(
        error,
        ProviderConnectionError | ProviderStreamError | IncompleteStreamError
        | httpx.TransportError | ConnectionError | TimeoutError,
    ):
        detail = str(error) or type(error).__name__
        return StopKind.CONNECTION, f"The connection to the provider dropped: {detail}"
    if isinstance(error, ProviderError):
        return StopKind.PROVIDER_ERROR, f"The provider reported an error: {error}"
    if isinstance(error, ToolRoundLimitError):
        return StopKind.TOOL_LIMIT, str(error)
    if isinstance(error, StorageError):
        return StopKind.STORAGE, str(error)
    if isinstance(error, AgentError):
        return StopKind.PROVIDER_ERROR, str(error)
    return StopKind.PROVIDER_ERROR, (
        f"The request failed unexpectedly ({type(error).__name__}: {error}). "
        "Resume to try again; if it keeps failing, check the provider settings."
    )


#: The stops that end a request in order but still deserve a line in the Resume bar.
ORDERLY_STOPS: dict[StopReason | str, tuple[StopKind, str]] = {
    StopReason.MAX_OUTPUT: (StopKind.OUTPUT_LIMIT, "The answer reached the model's output limit."),
    StopReason.REFUSAL: (StopKind.REFUSED, "The model refused to answer this request."),
    StopReason.CONTEXT_FULL: (
        StopKind.CONTEXT_FULL, "The conversation filled the model's context window."
    ),
    StopReason.PAUSED: (StopKind.PAUSED, "The provider paused the answer more times than allowed."),
}
