"""A conversation's request parameters as each provider's top-level request fields (pure).

:class:`~app.profiles.Parameters` say what the person chose; these functions say how each API
spells it. Only what is set is sent, so a server's own defaults apply otherwise.

* OpenAI-compatible: ``temperature``, ``top_p`` and ``reasoning_effort`` as given; the
  thinking budget is Anthropic's and is not sent.
* Anthropic: ``temperature`` at most 1 (its range is 0–1; a higher choice is sent as 1) and
  ``top_p``; ``reasoning_effort`` is OpenAI's and is not sent. A thinking budget sends
  ``thinking: {type: enabled, budget_tokens}`` and then, as the API requires, no temperature
  or top-p, and a ``max_tokens`` above the budget (the budget plus the usual limit when the
  limit asked for is not above it).
"""

from __future__ import annotations

from typing import Any

from ..profiles import Parameters

__all__ = ["anthropic_fields", "openai_fields"]


def openai_fields(options: Parameters) -> dict[str, Any]:
    """The Chat Completions fields for ``options`` (only those set)."""
    fields: dict[str, Any] = {}
    if options.temperature is not None:
        fields["temperature"] = options.temperature
    if options.top_p is not None:
        fields["top_p"] = options.top_p
    if options.reasoning_effort is not None:
        fields["reasoning_effort"] = options.reasoning_effort
    return fields


def anthropic_fields(options: Parameters, max_tokens: int) -> dict[str, Any]:
    """The Messages API fields for ``options``; ``max_tokens`` is the limit the body has."""
    fields: dict[str, Any] = {}
    budget = options.thinking_budget
    if budget is not None:
        fields["thinking"] = {"type": "enabled", "budget_tokens": budget}
        if max_tokens <= budget:
            fields["max_tokens"] = budget + max_tokens
        return fields
    if options.temperature is not None:
        fields["temperature"] = min(options.temperature, 1.0)
    if options.top_p is not None:
        fields["top_p"] = options.top_p
    return fields
