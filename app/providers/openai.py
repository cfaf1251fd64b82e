"""OpenAI-compatible Chat Completions over SSE (OpenAI, Ollama, LM Studio, llama.cpp, vLLM, …).

Owns :class:`OpenAICompatibleModel` and :class:`OpenAIStreamParser`, the pure fold of
``chat.completion.chunk`` events into model events:

- text comes from ``delta.content`` (``null`` and ``""`` are skipped); a ``delta.refusal`` is
  shown as text and ends the step as ``REFUSAL``;
- thinking comes from ``delta.reasoning_content`` (DeepSeek, vLLM) or ``delta.reasoning``
  (Ollama, LM Studio, OpenRouter; the first when a delta has both) as ``ReasoningDelta``
  pieces; the runtime keeps them as one unsigned part, never sent back;
- tool calls are assembled by ``id`` and ``index`` (the id and name come once, the arguments in
  pieces; see :meth:`OpenAIStreamParser._call_for`) and emitted when the choice finishes,
  whatever its ``finish_reason`` (Ollama says ``stop``). A new ``id`` with a name at an index
  already in use is a new call (Ollama 0.20 numbers every parallel call 0); a piece with
  neither id nor index continues the last call (Gemini); a piece with no name and no
  arguments (Gemini's ``extra_content`` metadata) is ignored;
- ``finish_reason``: stop→END_TURN, length→MAX_OUTPUT, tool_calls/function_call→TOOL_USE,
  content_filter→REFUSAL, anything else is kept as the raw string; ``""`` and ``"null"`` on
  intermediate chunks (Ollama 2024, SGLang, KoboldCpp) are no finish reason;
- usage comes in a final chunk with empty ``choices`` (``stream_options.include_usage``);
- the step ends at ``data: [DONE]``, or at a clean end of the body after a finish reason
  (TGI < 2.2, ik_llama.cpp, mistral.rs and oobabooga never send ``[DONE]``). A body that ends
  before any finish reason raises ``ProviderStreamError``; a ``data: {"error": …}`` event
  raises the error classified by its type. (A proxy that turns a cut upstream into a clean
  ``stop`` cannot be told from a complete answer.)

Tool arguments that are not a JSON object raise ``ProviderStreamError`` when the step would
otherwise run the tool (END_TURN/TOOL_USE): the step is then a failed request (no output yet)
or a cut one (``INTERRUPTED``), and a tool never runs with arguments the model did not finish.
When the step ends some other way (e.g. MAX_OUTPUT cut the arguments off), such a call is
dropped, since those steps never run tools anyway.

``stream_options`` (asking for usage) is sent unless the model is told not to; a server that
refuses it with HTTP 400/422 naming the field (old vLLM, Fireworks, Azure with data sources) is
asked once more without it, and that endpoint is asked without it from then on.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import httpx
from httpx_sse import ServerSentEvent

from ..errors import ProviderBadRequestError, ProviderError, ProviderStreamError
from ..messages import StopReason, ToolCall, Usage
from ..model import (
    ModelEvent,
    ModelRequest,
    ReasoningDelta,
    StepEnd,
    TextDelta,
    ToolCallComplete,
)
from ..profiles import Parameters
from .base import DEFAULT_TIMEOUT, HTTPModel, model_ids
from .coalesce import Delivery, coalesced_from
from .convert import has_images, openai_messages, openai_tools
from .errors import error_from_event
from .options import openai_fields
from .sse import event_json
from .vision import check_images, images_refused, refused_images
from .vision import reads_images as model_reads_images
from .whole import openai_events

__all__ = ["FINISH_REASONS", "OpenAICompatibleModel", "OpenAIStreamParser"]

logger = logging.getLogger("app.providers")

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
    position: int  # 0, 1, … in order of arrival (what messages call "#1", "#2", …)
    index: int | None = None
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class OpenAIStreamParser:
    """Folds Chat Completions stream events into model events. Pure: feed it events."""

    provider = "OpenAI-compatible server"

    def __init__(self, *, model: str = "", secrets: tuple[str | None, ...] = ()) -> None:
        self._model = model
        self._secrets = secrets
        self._calls: list[_PartialCall] = []
        self._by_id: dict[str, _PartialCall] = {}
        self._by_index: dict[int, _PartialCall] = {}  # the latest call given each index
        self._finish: str | None = None
        self._refused = False
        self._usage: Usage | None = None
        self._done = False

    @property
    def done(self) -> bool:
        return self._done

    def feed(self, event: ServerSentEvent) -> list[ModelEvent]:
        return self.feed_data(event.event, event.data)

    def feed_data(self, kind: str, data: str) -> list[ModelEvent]:
        if kind == "error":
            raise error_from_event(
                event_json(data, "an error event") if data.strip() else {},
                provider=self.provider,
                model=self._model,
                secrets=self._secrets,
            )
        if kind != "message" and kind:
            return []  # other named events are not part of Chat Completions; ignore them
        # The hot path (one event per token): JSON objects decode to dicts, so the exact type
        # tests below stand for the Mapping checks (the shapes are unchanged).
        if data[:1] != "{":
            stripped = data.strip()
            if stripped == "[DONE]":
                self._done = True
                return []
            if not stripped:
                return []
        # A tool call's arguments may be sent as an object: its numbers must stay as sent.
        chunk = event_json(data, "a stream chunk", exact='"tool_calls"' in data)
        if type(chunk) is not dict:
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
        if type(usage) is dict:
            self._usage = Usage(
                input_tokens=_int(usage.get("prompt_tokens")),
                output_tokens=_int(usage.get("completion_tokens")),
            )
        for choice in chunk.get("choices") or ():
            if type(choice) is not dict or (choice.get("index") or 0) != 0:
                continue  # only the first choice is used (we never ask for n > 1)
            delta = choice.get("delta")
            if type(delta) is dict and delta:
                text = delta.get("content")
                if (
                    type(text) is str
                    and text
                    and (len(delta) == 1 or (len(delta) == 2 and "role" in delta))
                ):
                    out.append(TextDelta(text))  # the common token: only text (and its role)
                else:
                    out.extend(self._delta(delta))
            finish = choice.get("finish_reason")
            if finish is not None and self._finish is None:
                self._finish = _finish_reason(finish)
        return out

    def _delta(self, delta: dict[str, Any]) -> list[ModelEvent]:
        out: list[ModelEvent] = []
        thought = delta.get("reasoning_content")  # DeepSeek, vLLM
        if not (isinstance(thought, str) and thought):
            thought = delta.get("reasoning")  # Ollama, LM Studio, OpenRouter, newer vLLM
        if isinstance(thought, str) and thought:
            out.append(ReasoningDelta(thought))
        for key in ("content", "refusal"):
            text = delta.get(key)
            if isinstance(text, str) and text:
                out.append(TextDelta(text))
                if key == "refusal":
                    self._refused = True
        for raw in delta.get("tool_calls") or ():
            if isinstance(raw, Mapping):
                self._tool_piece(raw)
        return out

    def _tool_piece(self, raw: Mapping[str, Any]) -> None:
        function = raw.get("function")
        if not isinstance(function, Mapping):
            function = {}
        name = function.get("name") if isinstance(function.get("name"), str) else ""
        pieces = function.get("arguments")
        if isinstance(pieces, Mapping):  # a few servers send an object, not text
            pieces = json.dumps(pieces)
        text = pieces if isinstance(pieces, str) else ""
        call_id = raw.get("id") if isinstance(raw.get("id"), str) and raw["id"] else None
        index = raw.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            index = None
        if not name and not text and call_id not in self._by_id:
            if call_id is None or index is None:
                return  # metadata only (Gemini's extra_content) or an empty piece
        partial = self._call_for(call_id, index, named=bool(name))
        if call_id is not None and partial.id is None:
            partial.id = call_id
            self._by_id[call_id] = partial
        if name and not partial.name:
            partial.name = name
        if text:
            partial.arguments.append(text)

    def _call_for(self, call_id: str | None, index: int | None, *, named: bool) -> _PartialCall:
        """The call a tool-call piece belongs to (made if it is a new one).

        By ``id`` when it is known; a new ``id`` at an index whose call already has another id
        starts a new call when the piece names a tool (Ollama gives every parallel call index
        0), and otherwise continues that call (servers that re-roll ids on each piece). By
        ``index`` when there is no id; with neither, the last call continues unless the
        piece names a tool while that call already has a name.
        """
        if call_id is not None and call_id in self._by_id:
            return self._by_id[call_id]
        current = self._by_index.get(index) if index is not None else None
        if index is None and self._calls:
            current = self._calls[-1]
        if current is not None:
            if call_id is not None and current.id is not None and named:
                return self._new_call(index)  # another id names another tool: a new call
            if call_id is None and index is None and named and current.name:
                return self._new_call(index)  # a whole call from a server that numbers none
            return current
        return self._new_call(index)

    def _new_call(self, index: int | None) -> _PartialCall:
        partial = _PartialCall(len(self._calls), index)
        self._calls.append(partial)
        if index is not None:
            self._by_index[index] = partial
        return partial

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
        # A finish reason and then a clean end of the body, without [DONE], is complete:
        # several servers never send the marker (a cut connection raises before this).
        stop = self.stop_reason()
        out: list[ModelEvent] = []
        for partial in self._calls:
            call = self._complete(partial, strict=stop in _RUNS_TOOLS)
            if call is not None:
                out.append(ToolCallComplete(call))
        out.append(StepEnd(stop, usage=self._usage))
        return out

    def _complete(self, partial: _PartialCall, *, strict: bool) -> ToolCall | None:
        text = "".join(partial.arguments).strip()
        problem: str | None = None
        arguments: Any = {}
        if not partial.name:
            problem = f"a tool call (#{partial.position + 1}) without a tool name"
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


def _refuses_stream_options(err: ProviderError, body: Mapping[str, Any]) -> bool:
    """Whether ``err`` is a server refusing the ``stream_options`` field that ``body`` sent.

    Old vLLM ("extra_forbidden … 'stream_options'"), Fireworks and Azure with data sources
    ("Unrecognized request argument supplied: stream_options") answer 400 (or 422) and name it.
    """
    return (
        "stream_options" in body and err.status_code in (400, 422) and "stream_options" in str(err)
    )


def _sends_images(body: Mapping[str, Any]) -> bool:
    """True when a Chat Completions body holds an ``image_url`` part."""
    return any(
        isinstance(part, Mapping) and part.get("type") == "image_url"
        for message in body.get("messages", ())
        if isinstance(message.get("content"), list)
        for part in message["content"]
    )


def _finish_reason(value: Any) -> str | None:
    """A chunk's ``finish_reason``, or ``None`` when it says none (``null``, ``""``, ``"null"``)."""
    if value is None:
        return None
    text = str(value).strip()
    return None if not text or text.lower() == "null" else text


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class OpenAICompatibleModel(HTTPModel):
    """A Chat Completions model at ``base_url`` (which usually ends in ``/v1``).

    ``max_tokens_field`` names the output-limit field (``"max_tokens"`` works almost
    everywhere; OpenAI's reasoning models want ``"max_completion_tokens"``).
    ``stream_options`` (asking for usage): ``None`` (the default) sends it, and if the server
    refuses it (HTTP 400/422 naming the field) asks once more without it and leaves it out for
    this endpoint from then on; ``True`` always sends it; ``False`` never does.
    ``include_usage=False`` is the older spelling of ``stream_options=False``.
    """

    provider = "OpenAI-compatible server"
    #: Whether the model reads images (the person's choice; ``None``: the names' table).
    reads_images: bool | None = None

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
        stream_options: bool | None = None,
        options: Parameters | None = None,
    ) -> None:
        super().__init__(base_url, model, api_key, timeout=timeout, headers=headers)
        #: Sampling parameters sent with every request (see :mod:`app.providers.options`).
        self.options = options or Parameters()
        self.max_tokens_field = max_tokens_field
        self.include_usage = include_usage
        self.stream_options = stream_options if include_usage else False
        #: Endpoints that refused ``stream_options`` (remembered for this model's lifetime).
        self._refused_stream_options: set[str] = set()

    def _auth_headers(self) -> dict[str, str]:
        key = self._api_key()
        return {"authorization": f"Bearer {key}"} if key else {}

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body sent for ``request`` (public so tests and tools can inspect it)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": openai_messages(
                request.messages,
                request.system_prompt,
                reads_images=model_reads_images(self.model, self.reads_images),
                model=self.model,
            ),
            "stream": True,
        }
        if self._sends_stream_options(self._completions_url()):
            body["stream_options"] = {"include_usage": True}
        if request.tools:
            body["tools"] = openai_tools(request.tools)
        if request.max_output_tokens is not None:
            body[self.max_tokens_field] = request.max_output_tokens
        body.update(openai_fields(self.options))
        return body

    def _completions_url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _sends_stream_options(self, url: str) -> bool:
        if self.stream_options is None:
            return url not in self._refused_stream_options
        return self.stream_options

    def stream(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        check_images(request.messages, self.model, self.provider, self.reads_images)
        body = self.request_body(request)
        tools_only = not has_images(request.messages)  # any image sent then is a tool's
        url = self._completions_url()
        return coalesced_from(
            lambda delivery: self._stream(url, body, tools_only=tools_only, delivery=delivery)
        )

    async def _stream(
        self,
        url: str,
        body: dict[str, Any],
        *,
        tools_only: bool = False,
        delivery: Delivery | None = None,
    ) -> AsyncGenerator[list[ModelEvent], None]:
        started = False
        try:
            async for batch in self._stream_events(url, body, self._parser(), delivery):
                started = started or bool(batch)
                yield batch
            return
        except ProviderBadRequestError as err:
            started = started or (delivery is not None and delivery.delivered > 0)
            if not started and _sends_images(body) and refused_images(str(err)):
                raise images_refused(self.model, self.provider, err, tools_only=tools_only) from err
            if started or self.stream_options is not None or not _refuses_stream_options(err, body):
                raise
            self._refused_stream_options.add(url)
            logger.warning(
                "%s at %s refused stream_options (HTTP %s); asking again without it, and "
                "without it from now on (no token usage from this server)",
                self.provider,
                url,
                err.status_code,
            )
        body = {key: value for key, value in body.items() if key != "stream_options"}
        async for batch in self._stream_events(url, body, self._parser(), delivery):
            yield batch

    def _parser(self) -> OpenAIStreamParser:
        return OpenAIStreamParser(model=self.model, secrets=self._secrets())

    def _whole_answer(self, body: Any) -> list[ServerSentEvent] | None:
        return openai_events(body)  # a proxy's whole chat.completion despite stream: true

    async def list_models(self) -> list[str]:
        """Model ids the server offers (``GET {base_url}/models``)."""
        return model_ids(await self._get_json(f"{self.base_url}/models"))
