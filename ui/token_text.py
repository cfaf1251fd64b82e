"""What the app says about tokens: an answer's count and the conversation's context meter.

Pure functions (no Qt), so each rule is a table test. The numbers are only ever the provider's
own (an answer's reported usage) and a limit the server or a published table gave: nothing is
estimated, and where a number is missing the words say so instead of guessing.

* :func:`answer_tokens` — the quiet "312 tokens" under an answer and its hover text
  ("1,204 in · 312 out");
* :func:`context_reading` — the meter: "12.3k / 128k" with a bar, or "12.3k tokens" without
  one when the model's limit is unknown; from :data:`WARN_AT` full, a warning and a hint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = [
    "WARN_AT",
    "AnswerTokens",
    "ContextReading",
    "answer_tokens",
    "compact_tokens",
    "context_reading",
    "percent",
]

#: From this share of the context window used, the meter warns.
WARN_AT: Final = 0.8


def compact_tokens(count: int) -> str:
    """A token count in a few characters: 950, 1.2k, 12.3k, 128k, 1M, 1.5M."""
    if count < 1000:
        return str(count)
    if count < 999_950:
        return f"{count / 1000:.1f}".removesuffix(".0") + "k"
    return f"{count / 1_000_000:.1f}".removesuffix(".0") + "M"


def _plural(count: int) -> str:
    return f"{count:,} token" + ("" if count == 1 else "s")


@dataclass(frozen=True, slots=True)
class AnswerTokens:
    """What an answer's row says about its tokens (``text`` empty: nothing reported)."""

    text: str
    tooltip: str


def answer_tokens(input_tokens: int | None, output_tokens: int | None) -> AnswerTokens:
    """The answer's output tokens ("312 tokens"), input → output on hover; what the provider
    did not report is named as such, never filled in."""
    if input_tokens is None and output_tokens is None:
        return AnswerTokens("", "")
    if output_tokens is None:
        assert input_tokens is not None
        return AnswerTokens(
            f"{input_tokens:,} in", f"{input_tokens:,} in · output not reported by the provider"
        )
    if input_tokens is None:
        return AnswerTokens(
            _plural(output_tokens), f"input not reported by the provider · {output_tokens:,} out"
        )
    return AnswerTokens(_plural(output_tokens), f"{input_tokens:,} in · {output_tokens:,} out")


def percent(fraction: float) -> str:
    """A share as whole percent, with the space the app writes before "%" ("85 %"); a share
    under 1 % but above none is "<1 %" (not a misleading 0)."""
    if 0 < fraction < 0.005:
        return "<1 %"
    return f"{round(fraction * 100)} %"


@dataclass(frozen=True, slots=True)
class ContextReading:
    """What the context meter shows. ``fraction`` is ``None`` without a known limit (no bar)."""

    text: str
    tooltip: str
    fraction: float | None = None
    warning: bool = False
    hint: str = ""


def context_reading(
    used: int | None, limit: int | None, limit_source: str = ""
) -> ContextReading | None:
    """The meter for a conversation whose newest answer used ``used`` tokens (its input and
    output as the provider reported them) on a model with a ``limit`` (``None``: unknown);
    ``None`` when there is nothing to show (no answer yet, or no usage reported)."""
    if used is None:
        return None
    counted = (
        f"The newest answer used {_plural(used)} of context: what was sent to the model "
        "(this conversation so far) and what it wrote, as the provider reported them."
    )
    if not limit or limit <= 0:
        return ContextReading(
            f"{compact_tokens(used)} tokens",
            f"{counted}\nThe model's context limit is not known, so no share is shown.",
        )
    fraction = used / limit
    source = f" ({limit_source})" if limit_source else ""
    tooltip = (
        f"{counted}\nThe model's context window is {_plural(limit)}{source}: "
        f"{percent(fraction)} used."
    )
    warning = fraction >= WARN_AT
    hint = ""
    if warning:
        hint = (
            f"The context is {percent(fraction)} full: start a new conversation or remove "
            "attachments"
        )
        tooltip += (
            "\nWhen it is full the provider refuses the request or forgets the start of the "
            "conversation."
        )
    return ContextReading(
        f"{compact_tokens(used)} / {compact_tokens(limit)}", tooltip, fraction, warning, hint
    )
