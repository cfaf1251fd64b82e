"""Anthropic Messages API over SSE.

Owns :class:`AnthropicModel` and :class:`AnthropicStreamParser`, the pure fold of Messages
stream events into model events:

- ``text`` blocks stream ``text_delta`` pieces; ``tool_use`` blocks collect
  ``input_json_delta`` pieces and become one ``ToolCallComplete`` at ``content_block_stop``;
- ``thinking`` blocks stream ``thinking_delta`` pieces as ``ReasoningDelta`` and collect their
  ``signature_delta``; at ``content_block_stop`` they become one
  ``ReasoningComplete(Reasoning(text, signature=…))``. A ``redacted_thinking`` block's ``data``
  (whole in ``content_block_start``) becomes ``ReasoningComplete(Reasoning(redacted=data))``
  at its stop. Signatures and data are kept byte for byte: they are sent back unchanged;
- server-tool blocks are not part of the saved history and are skipped;
- ``stop_reason``: end_turn/stop_sequence→END_TURN, max_tokens→MAX_OUTPUT, tool_use→TOOL_USE,
  pause_turn→PAUSED, refusal→REFUSAL, model_context_window_exceeded→CONTEXT_FULL, anything
  else is kept as the raw string;
- ``ping`` and unknown events are ignored; ``event: error`` (e.g. ``overloaded_error`` after
  HTTP 200) raises the error classified by ``error.type``;
- the step ends only at ``message_stop``; a body that ends before it raises
  ``ProviderStreamError``.

A tool_use block whose input is not a JSON object raises ``ProviderStreamError`` at its
``content_block_stop`` (the tool never runs); a block left open by ``max_tokens`` is dropped.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import httpx
from httpx_sse import ServerSentEvent

from ..errors import ProviderStreamError
from ..messages import Reasoning, StopReason, ToolCall, Usage
from ..model import (
    ModelEvent,
    ModelRequest,
    ReasoningComplete,
    ReasoningDelta,
    StepEnd,
    TextDelta,
    ToolCallComplete,
)
from ..profiles import Parameters
from .base import DEFAULT_TIMEOUT, HTTPModel, model_ids
from .coalesce import coalesced_from
from .convert import anthropic_messages, anthropic_tools
from .errors import error_from_event
from .options import anthropic_fields
from .sse import event_json
from .vision import check_images
from .vision import reads_images as model_reads_images
from .whole import anthropic_events

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "STOP_REASONS",
    "AnthropicModel",
    "AnthropicStreamParser",
    "api_root",
]

DEFAULT_MAX_TOKENS: Final = 8192
STOP_REASONS: Final[Mapping[str, StopReason]] = {
    "end_turn": StopReason.END_TURN,
    "stop_sequence": StopReason.END_TURN,
    "max_tokens": StopReason.MAX_OUTPUT,
    "tool_use": StopReason.TOOL_USE,
    "pause_turn": StopReason.PAUSED,
    "refusal": StopReason.REFUSAL,
    "model_context_window_exceeded": StopReason.CONTEXT_FULL,
}


@dataclass(slots=True)
class _ToolBlock:
    id: str
    name: str
    start_input: Any
    pieces: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _ThinkingBlock:
    """A ``thinking`` block being streamed, or a ``redacted_thinking`` one (``redacted`` set)."""

    pieces: list[str] = field(default_factory=list)
    signature: list[str] = field(default_factory=list)
    redacted: str | None = None

    def part(self) -> Reasoning:
        if self.redacted is not None:
            return Reasoning(redacted=self.redacted)
        return Reasoning("".join(self.pieces), signature="".join(self.signature) or None)


class AnthropicStreamParser:
    """Folds Messages stream events into model events. Pure: feed it events."""

    provider = "Anthropic"

    def __init__(self, *, model: str = "", secrets: tuple[str | None, ...] = ()) -> None:
        self._model = model
        self._secrets = secrets
        self._tools: dict[int, _ToolBlock] = {}
        self._thinking: dict[int, _ThinkingBlock] = {}
        self._stop: str | None = None
        self._input_tokens: int | None = None
        self._output_tokens: int | None = None
        self._started = False
        self._done = False

    @property
    def done(self) -> bool:
        return self._done

    def feed(self, event: ServerSentEvent) -> list[ModelEvent]:
        return self.feed_data(event.event, event.data)

    def feed_data(self, name: str, data: str) -> list[ModelEvent]:
        name = name or "message"
        if name == "ping" or not data.strip():
            return []
        # A block's start may hold a tool's whole input: its numbers must stay as sent.
        exact = name == "content_block_start" or '"content_block_start"' in data
        payload = event_json(data, f"a {name!r} event", sender="Anthropic", exact=exact)
        if not isinstance(payload, Mapping):
            raise ProviderStreamError(
                f"Anthropic sent a {name!r} event that is not an object. "
                "The answer was cut; try again."
            )
        # The SSE event name and the payload's "type" agree; trust the payload if unnamed.
        kind = payload.get("type") if name == "message" else name
        if kind == "error":
            raise error_from_event(
                payload, provider=self.provider, model=self._model, secrets=self._secrets
            )
        if kind == "message_start":
            self._started = True
            message = payload.get("message") or {}
            usage = message.get("usage") if isinstance(message, Mapping) else None
            if isinstance(usage, Mapping):
                self._read_usage(usage)
            return []
        if not self._started and kind in (
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ):
            raise ProviderStreamError(
                f"Anthropic sent {kind!r} before 'message_start'; the stream is malformed. "
                "Try again."
            )
        if kind == "content_block_start":
            return self._block_start(payload)
        if kind == "content_block_delta":
            return self._block_delta(payload)
        if kind == "content_block_stop":
            return self._block_stop(payload)
        if kind == "message_delta":
            delta = payload.get("delta") or {}
            if isinstance(delta, Mapping) and delta.get("stop_reason") is not None:
                self._stop = str(delta["stop_reason"])
            usage = payload.get("usage")
            if isinstance(usage, Mapping):
                self._read_usage(usage)
            return []
        if kind == "message_stop":
            self._done = True
        return []  # unknown event types are ignored, as the API's versioning policy asks

    def _read_usage(self, usage: Mapping[str, Any]) -> None:
        inputs = [
            usage.get(key)
            for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        ]
        counted = [n for n in inputs if isinstance(n, int) and not isinstance(n, bool)]
        if counted:
            self._input_tokens = sum(counted)
        output = usage.get("output_tokens")
        if isinstance(output, int) and not isinstance(output, bool):
            self._output_tokens = output

    def _block_start(self, payload: Mapping[str, Any]) -> list[ModelEvent]:
        block = payload.get("content_block") or {}
        index = payload.get("index")
        if not isinstance(block, Mapping) or not isinstance(index, int):
            return []
        if block.get("type") == "text":
            text = block.get("text")
            return [TextDelta(text)] if isinstance(text, str) and text else []
        if block.get("type") == "tool_use":
            self._tools[index] = _ToolBlock(
                id=str(block.get("id") or f"toolu_sim_{index}"),
                name=str(block.get("name") or ""),
                start_input=block.get("input"),
            )
        elif block.get("type") == "thinking":
            thinking = self._thinking[index] = _ThinkingBlock()
            text, signature = block.get("thinking"), block.get("signature")
            if isinstance(signature, str):
                thinking.signature.append(signature)
            if isinstance(text, str) and text:
                thinking.pieces.append(text)
                return [ReasoningDelta(text)]
        elif block.get("type") == "redacted_thinking":
            data = block.get("data")
            if isinstance(data, str) and data:
                self._thinking[index] = _ThinkingBlock(redacted=data)
        return []

    def _block_delta(self, payload: Mapping[str, Any]) -> list[ModelEvent]:
        delta = payload.get("delta") or {}
        if not isinstance(delta, Mapping):
            return []
        if delta.get("type") == "text_delta":
            text = delta.get("text")
            return [TextDelta(text)] if isinstance(text, str) and text else []
        if delta.get("type") == "input_json_delta":
            tool = self._tools.get(payload.get("index"))  # type: ignore[arg-type]
            piece = delta.get("partial_json")
            if tool is not None and isinstance(piece, str):
                tool.pieces.append(piece)
        elif delta.get("type") in ("thinking_delta", "signature_delta"):
            thinking = self._thinking.get(payload.get("index"))  # type: ignore[arg-type]
            if thinking is None or thinking.redacted is not None:
                return []
            if delta["type"] == "signature_delta":
                signature = delta.get("signature")
                if isinstance(signature, str):
                    thinking.signature.append(signature)
                return []
            text = delta.get("thinking")
            if isinstance(text, str) and text:
                thinking.pieces.append(text)
                return [ReasoningDelta(text)]
        return []

    def _block_stop(self, payload: Mapping[str, Any]) -> list[ModelEvent]:
        index = payload.get("index")
        if not isinstance(index, int):
            return []
        thinking = self._thinking.pop(index, None)
        if thinking is not None:
            return [ReasoningComplete(thinking.part())]
        tool = self._tools.pop(index, None)
        if tool is None:
            return []
        text = "".join(tool.pieces).strip()
        arguments: Any
        if text:
            try:
                arguments = json.loads(text)
            except (json.JSONDecodeError, RecursionError):
                arguments = None
        else:
            arguments = tool.start_input if tool.start_input is not None else {}
        if not tool.name or not isinstance(arguments, Mapping):
            what = f"tool {tool.name!r}" if tool.name else "a tool call without a name"
            raise ProviderStreamError(
                f"Anthropic sent arguments for {what} that are not a JSON object, so the tool "
                "was not run. Try again."
            )
        return [ToolCallComplete(ToolCall(tool.id, tool.name, arguments))]

    def finish(self) -> list[ModelEvent]:
        if not self._done:
            raise ProviderStreamError(
                "The answer stopped before Anthropic said it was finished (no message_stop). "
                "The connection or the server may have failed; try again."
            )
        if self._stop is None:
            raise ProviderStreamError(
                "Anthropic ended the answer without a stop reason; it may be incomplete. Try again."
            )
        # Blocks still open here were cut (e.g. by max_tokens); their calls are dropped, and
        # the thinking already streamed stays with the runtime as unsigned text.
        self._tools.clear()
        self._thinking.clear()
        usage = None
        if self._input_tokens is not None or self._output_tokens is not None:
            usage = Usage(self._input_tokens, self._output_tokens)
        return [StepEnd(STOP_REASONS.get(self._stop, self._stop), usage=usage)]


def api_root(base_url: str) -> str:
    """The API root for a typed Anthropic base URL: with or without ``/v1``, same root.

    Anthropic documents ``https://api.anthropic.com`` while OpenAI-style settings end in
    ``/v1``, so people type both. Trailing slashes and one last ``/v1`` segment are removed
    (``…/anthropic/v1/`` → ``…/anthropic``); anything else is kept as typed. Pure.
    """
    root = base_url.strip().rstrip("/")
    rest = root.removesuffix("/v1").rstrip("/")
    scheme, _, host = rest.partition("://")
    if rest != root and scheme and host:  # "http://v1" is a host named v1, not a version
        return rest
    return root


class AnthropicModel(HTTPModel):
    """A Claude model through the Messages API; requests go to ``{base_url}/v1/messages``.

    ``base_url`` is the API root (see :func:`api_root`): ``https://api.anthropic.com`` and
    ``https://api.anthropic.com/v1`` are the same setting.
    """

    provider = "Anthropic"
    #: Whether the model reads images (the person's choice; ``None``: the names' table).
    reads_images: bool | None = None

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
        anthropic_version: str = "2023-06-01",
        options: Parameters | None = None,
    ) -> None:
        super().__init__(api_root(base_url), model, api_key, timeout=timeout, headers=headers)
        if max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        self.max_tokens = max_tokens
        self.anthropic_version = anthropic_version
        #: Sampling parameters sent with every request (see :mod:`app.providers.options`).
        self.options = options or Parameters()

    def _auth_headers(self) -> dict[str, str]:
        headers = {"anthropic-version": self.anthropic_version}
        key = self._api_key()
        if key:
            headers["x-api-key"] = key
        return headers

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body sent for ``request`` (public so tests and tools can inspect it)."""
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_output_tokens or self.max_tokens,
            "messages": anthropic_messages(
                request.messages,
                reads_images=model_reads_images(self.model, self.reads_images),
                model=self.model,
            ),
            "stream": True,
        }
        if request.system_prompt:
            body["system"] = request.system_prompt
        if request.tools:
            body["tools"] = anthropic_tools(request.tools)
        body.update(anthropic_fields(self.options, body["max_tokens"]))
        return body

    def stream(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        check_images(request.messages, self.model, self.provider, self.reads_images)
        parser = AnthropicStreamParser(model=self.model, secrets=self._secrets())
        url, body = f"{self.base_url}/v1/messages", self.request_body(request)
        return coalesced_from(lambda delivery: self._stream_events(url, body, parser, delivery))

    def _whole_answer(self, body: Any) -> list[ServerSentEvent] | None:
        return anthropic_events(body)  # LiteLLM's /v1/messages answers stream: true whole

    async def list_models(self) -> list[str]:
        """Model ids the API offers (``GET {base_url}/v1/models``, every page)."""
        ids: list[str] = []
        after: str | None = None
        for _ in range(50):  # bounded: a misbehaving server cannot page forever
            params = {"limit": "1000", **({"after_id": after} if after else {})}
            data = await self._get_json(f"{self.base_url}/v1/models", params=params)
            page = model_ids(data)
            ids.extend(page)
            last = data.get("last_id") if isinstance(data, Mapping) else None
            if not (isinstance(data, Mapping) and data.get("has_more") and page and last):
                break
            after = str(last)
        return ids
