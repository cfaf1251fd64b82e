"""OpenAI-compatible Chat Completions over SSE (OpenAI, Ollama, LM Studio, llama.cpp, vLLM, …).

Owns :class:`OpenAICompatibleModel` and :class:`OpenAIStreamParser`, the pure fold of
``chat.completion.chunk`` events into model events:

- text comes from ``delta.content`` (``null`` and ``""`` are skipped); a ``delta.refusal`` is
  shown as text and ends the step as ``REFUSAL``;
- tool calls are assembled by ``index`` (the id and name come once, the arguments in pieces)
  and emitted when the choice finishes, whatever its ``finish_reason`` (Ollama says ``stop``);
- ``finish_reason``: stop→END_TURN, length→MAX_OUTPUT, tool_calls/function_call→TOOL_USE,
  content_filter→REFUSAL, anything else is kept as the raw string;
- usage comes in a final chunk with empty ``choices`` (``stream_options.include_usage``);
- the step ends only at ``data: [DONE]``. A body that ends before it (or before a finish
  reason) raises ``ProviderStreamError``; a ``data: {"error": …}`` event raises the error
  classified by its type.

Tool arguments that are not a JSON object raise ``ProviderStreamError`` when the step would
otherwise run the tool (END_TURN/TOOL_USE): the step is then a failed request (no output yet)
or a cut one (``INTERRUPTED``), and a tool never runs with arguments the model did not finish.
When the step ends some other way (e.g. MAX_OUTPUT cut the arguments off), such a call is
dropped, since those steps never run tools anyway.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import httpx
from httpx_sse import ServerSentEvent

from ..errors import ProviderStreamError
from ..messages import StopReason, ToolCall, Usage
from ..model import ModelEvent, ModelRequest, StepEnd, TextDelta, ToolCallComplete
from .base import DEFAULT_TIMEOUT, HTTPModel, model_ids
from .convert import openai_messages, openai_tools
from .errors import error_from_event
from .sse import event_json

__all__ = ["FINISH_REASONS", "OpenAICompatibleModel", "OpenAIStreamParser"]

FINISH_REASONS: Final[Mapping[str, StopReason]] = {
    "stop": StopReason.END_TURN,
    "length": StopReason.MAX_OUTPUT,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "content_filter": StopReason.REFUSAL,
}
_RUNS_TOOLS: Final = (StopReason.END_TURN, StopReason.TOOL_USE)


@dataclass(slots=True)
class _PartialCall:
    index: int
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class OpenAIStreamParser:
    """Folds Chat Completions stream events into model events. Pure: feed it events."""

    provider = "OpenAI-compatible server"

    def __init__(self, *, model: str = "", secrets: tuple[str | None, ...] = ()) -> None:
        self._model = model
        self._secrets = secrets
        self._calls: dict[int, _PartialCall] = {}
        self._finish: str | None = None
        self._refused = False
        self._usage: Usage | None = None
        self._done = False

    @property
    def done(self) -> bool:
        return self._done

    def feed(self, event: ServerSentEvent) -> list[ModelEvent]:
        data = event.data
        if event.event == "error":
            raise error_from_event(
                event_json(data, "an error event") if data.strip() else {},
                provider=self.provider,
                model=self._model,
                secrets=self._secrets,
            )
        if event.event not in ("message", ""):
            return []  # other named events are not part of Chat Completions; ignore them
        if data.strip() == "[DONE]":
            self._done = True
            return []
        if not data.strip():
            return []
        chunk = event_json(data, "a stream chunk")
        if not isinstance(chunk, Mapping):
            raise ProviderStreamError(
                f"The provider sent a stream chunk that is not an object ({data[:80]!r}). "
                "The answer was cut; try again."
            )
        if chunk.get("error") is not None:
            raise error_from_event(
                chunk, provider=self.provider, model=self._model, secrets=self._secrets
            )
        out: list[ModelEvent] = []
        usage = chunk.get("usage")
        if isinstance(usage, Mapping):
            self._usage = Usage(
                input_tokens=_int(usage.get("prompt_tokens")),
                output_tokens=_int(usage.get("completion_tokens")),
            )
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, Mapping) or (choice.get("index") or 0) != 0:
                continue  # only the first choice is used (we never ask for n > 1)
            delta = choice.get("delta") or {}
            if isinstance(delta, Mapping):
                out.extend(self._delta(delta))
            finish = choice.get("finish_reason")
            if finish is not None and self._finish is None:
                self._finish = str(finish)
        return out

    def _delta(self, delta: Mapping[str, Any]) -> list[ModelEvent]:
        out: list[ModelEvent] = []
        for key in ("content", "refusal"):
            text = delta.get(key)
            if isinstance(text, str) and text:
                out.append(TextDelta(text))
                if key == "refusal":
                    self._refused = True
        for raw in delta.get("tool_calls") or ():
            if not isinstance(raw, Mapping):
                continue
            index = raw.get("index")
            if not isinstance(index, int):
                index = len(self._calls)  # some servers omit it when sending whole calls
            partial = self._calls.setdefault(index, _PartialCall(index))
            if isinstance(raw.get("id"), str) and raw["id"] and partial.id is None:
                partial.id = raw["id"]
            function = raw.get("function") or {}
            if isinstance(function, Mapping):
                if isinstance(function.get("name"), str) and function["name"]:
                    partial.name = partial.name or function["name"]
                pieces = function.get("arguments")
                if isinstance(pieces, str):
                    partial.arguments.append(pieces)
                elif isinstance(pieces, Mapping):  # a few servers send an object, not text
                    partial.arguments.append(json.dumps(pieces))
        return out

    def stop_reason(self) -> StopReason | str:
        if self._refused:
            return StopReason.REFUSAL
        assert self._finish is not None
        return FINISH_REASONS.get(self._finish, self._finish)

    def finish(self) -> list[ModelEvent]:
        if self._finish is None:
            raise ProviderStreamError(
                "The answer stopped before the provider said it was finished (no finish "
                "reason). The connection or the server may have failed; try again."
            )
        if not self._done:
            raise ProviderStreamError(
                "The stream ended without its end marker ([DONE]); the answer may be "
                "incomplete. Try again."
            )
        stop = self.stop_reason()
        out: list[ModelEvent] = []
        for index in sorted(self._calls):
            call = self._complete(self._calls[index], strict=stop in _RUNS_TOOLS)
            if call is not None:
                out.append(ToolCallComplete(call))
        out.append(StepEnd(stop, usage=self._usage))
        return out

    def _complete(self, partial: _PartialCall, *, strict: bool) -> ToolCall | None:
        text = "".join(partial.arguments).strip()
        problem: str | None = None
        arguments: Any = {}
        if not partial.name:
            problem = f"a tool call (#{partial.index}) without a tool name"
        elif text:
            try:
                arguments = json.loads(text)
            except (json.JSONDecodeError, RecursionError):
                problem = f"arguments for tool {partial.name!r} that are not valid JSON"
            else:
                if not isinstance(arguments, Mapping):
                    problem = f"arguments for tool {partial.name!r} that are not a JSON object"
        if problem is None:
            call_id = partial.id or f"call_{uuid.uuid4().hex[:24]}"
            return ToolCall(call_id, partial.name, arguments)
        if strict:
            raise ProviderStreamError(
                f"The model sent {problem}, so the tool was not run. Try again; if it keeps "
                "happening, the model may not support tools well."
            )
        return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class OpenAICompatibleModel(HTTPModel):
    """A Chat Completions model at ``base_url`` (which usually ends in ``/v1``).

    ``max_tokens_field`` names the output-limit field (``"max_tokens"`` works almost
    everywhere; OpenAI's reasoning models want ``"max_completion_tokens"``).
    ``include_usage=False`` leaves out ``stream_options`` for servers that reject it.
    """

    provider = "OpenAI-compatible server"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
        max_tokens_field: str = "max_tokens",
        include_usage: bool = True,
    ) -> None:
        super().__init__(base_url, model, api_key, timeout=timeout, headers=headers)
        self.max_tokens_field = max_tokens_field
        self.include_usage = include_usage

    def _auth_headers(self) -> dict[str, str]:
        key = self._api_key()
        return {"authorization": f"Bearer {key}"} if key else {}

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body sent for ``request`` (public so tests and tools can inspect it)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": openai_messages(request.messages, request.system_prompt),
            "stream": True,
        }
        if self.include_usage:
            body["stream_options"] = {"include_usage": True}
        if request.tools:
            body["tools"] = openai_tools(request.tools)
        if request.max_output_tokens is not None:
            body[self.max_tokens_field] = request.max_output_tokens
        return body

    def stream(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        parser = OpenAIStreamParser(model=self.model, secrets=self._secrets())
        return self._stream_events(
            f"{self.base_url}/chat/completions", self.request_body(request), parser
        )

    async def list_models(self) -> list[str]:
        """Model ids the server offers (``GET {base_url}/models``)."""
        return model_ids(await self._get_json(f"{self.base_url}/models"))
