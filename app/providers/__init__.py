"""Model providers over HTTP: OpenAI-compatible Chat Completions and Anthropic Messages.

Both implement the :class:`app.model.Model` protocol, stream over SSE with one
``httpx.AsyncClient`` per instance, and raise the typed errors of :mod:`app.errors`.
"""

from __future__ import annotations

from .anthropic import AnthropicModel, AnthropicStreamParser
from .base import HTTPModel
from .convert import anthropic_messages, openai_messages, portable_tool_id
from .errors import error_from_response, parse_retry_after, should_retry
from .openai import OpenAICompatibleModel, OpenAIStreamParser
from .sse import events_from_response

__all__ = [
    "AnthropicModel",
    "AnthropicStreamParser",
    "HTTPModel",
    "OpenAICompatibleModel",
    "OpenAIStreamParser",
    "anthropic_messages",
    "error_from_response",
    "events_from_response",
    "openai_messages",
    "parse_retry_after",
    "portable_tool_id",
    "should_retry",
]
