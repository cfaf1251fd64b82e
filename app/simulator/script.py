"""What the simulator answers: scripted replies, faults, and their text and JSON forms.

A :class:`Reply` is one answer (echo or scripted text, tool calls, a stop reason, optional
reasoning) optionally carrying one :class:`Fault` and any number of server :class:`Quirk` values.
Replies come, in this order of precedence, from the request's ``X-Sim-Fault`` header (UTF-8
bytes are read as UTF-8; clients that send only ASCII, like httpx, use RFC 8187's
``utf-8''text%3Dh%C3%A9`` form that :func:`fault_header_value` makes, or a JSON spec with
``\\u`` escapes), the simulator's queue
(``sim.enqueue(...)`` or a scenario JSON file), or the simulator's default (echo the last user
text).

The header (and :func:`parse_spec`) takes ``;``-separated ``key=value`` items, or a JSON object
in the form of :meth:`Reply.from_dict`::

    drop_after=3            abort the connection after 3 SSE events
    stall_after=2           send 2 events, then hold the connection silently
    status=429;retry_after=2    an HTTP error before any byte (also 500/502/503/529, 401, 404…)
    html=502                an HTML error page (what a proxy sends)
    context_full            HTTP 400 in the provider's context-length format
    malformed_after=1       a data line that is not JSON after 1 event
    eof_after=4             end the body cleanly after 4 events (no finish, no [DONE])
    error_after=2;error_type=overloaded_error   a mid-stream error event
    length | refusal | pause_turn | stop=<raw>  how the reply ends (stop=weird: unknown reason);
                            an OpenAI refusal is ``delta.refusal`` text with finish ``stop``
    tool=read_file;args={"path":"a.txt"};split=3   a tool call, arguments in 3-char pieces
                            (each ``tool=`` starts another call: parallel tool calls)
    bad_args                the (last) tool call's arguments are not valid JSON
    text=Hello | tokens=500 | rate=50            reply text, filler length, tokens per second
    think | think=Let me see    reasoning first: OpenAI ``delta.reasoning_content`` (or
                            ``reasoning_field=reasoning``), Anthropic a signed thinking block
    redacted_thinking       Anthropic: a ``redacted_thinking`` block first (OpenAI: nothing);
                            a thinking block sent back changed is refused (HTTP 400)

Named server quirks and faults (what real servers send; see :class:`Quirk`)::

    content_filter          Azure: prompt/content filter results, finish ``content_filter``
    ollama_index0           Ollama 0.20: each tool call whole, every one ``"index": 0``
    finish_empty | finish_null_string   ``finish_reason: ""`` / ``"null"`` on every chunk
                            before the last (Ollama 2024, SGLang, KoboldCpp)
    no_done                 no ``data: [DONE]`` after the finish (TGI < 2.2, mistral.rs, …)
    gemini_no_index         tool-call deltas without ``index`` (arguments split, the id
                            repeated) and a metadata-only ``extra_content`` tool-call delta
    json_body               a whole JSON answer (200) although ``stream`` is true (LiteLLM)
    text_plain | no_content_type    valid SSE as ``text/plain`` / with no Content-Type
    llamacpp_ctx_400        llama.cpp: HTTP 400 ``exceed_context_size_error``
    llamacpp_error_field[=N]    llama.cpp (to late 2025): after N events an ``error: {…}``
                            SSE field (not ``data:``), then ``data: [DONE]``
    quota_429               OpenAI out of credit: 429 ``insufficient_quota`` (Anthropic
                            routes: 400 "credit balance is too low")
    reject_stream_options   HTTP 400 to a request that has ``stream_options`` (old vLLM,
                            Azure with data sources); a request without it is answered

A request with ``"stream": false`` gets the whole answer as one JSON body (both protocols); one
that asks for reasoning (Anthropic ``thinking`` enabled, OpenAI ``reasoning_effort``) thinks as
``think`` does.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from ..messages import StopReason

__all__ = [
    "BAD_ARGUMENTS",
    "Fault",
    "FaultKind",
    "Quirk",
    "Reply",
    "SimToolCall",
    "SpecError",
    "fault_header_value",
    "load_scenario",
    "parse_header_spec",
    "parse_spec",
]

#: Arguments text that is cut mid-string: what ``bad_args`` sends.
BAD_ARGUMENTS: Final = '{"path": "notes.txt", "content": "unterminated'


class SpecError(ValueError):
    """A fault spec, reply JSON or scenario file could not be understood."""


class FaultKind(StrEnum):
    DROP = "drop"  # abort the TCP connection (RST) after `after` events
    STALL = "stall"  # stop sending after `after` events; hold the connection open
    STATUS = "status"  # an HTTP error response instead of a stream
    HTML = "html"  # an HTML error page (status `status`)
    CONTEXT_FULL = "context_full"  # HTTP 400 saying the prompt does not fit
    MALFORMED = "malformed"  # an event whose data is not JSON, after `after` events
    EOF = "eof"  # a clean end of the body after `after` events, without the end marker
    ERROR_EVENT = "error_event"  # the provider's mid-stream error event after `after` events
    LLAMACPP_CTX = "llamacpp_ctx_400"  # llama.cpp's HTTP 400 exceed_context_size_error
    LLAMACPP_ERROR_FIELD = "llamacpp_error_field"  # an `error: {…}` SSE field, then [DONE]
    QUOTA = "quota_429"  # out of credit (OpenAI 429 insufficient_quota)
    REJECT_STREAM_OPTIONS = "reject_stream_options"  # 400 when the body has stream_options


#: Faults that replace the whole response (before any byte of a stream).
RESPONSE_FAULTS: Final = frozenset(
    {FaultKind.STATUS, FaultKind.HTML, FaultKind.CONTEXT_FULL, FaultKind.LLAMACPP_CTX,
     FaultKind.QUOTA, FaultKind.REJECT_STREAM_OPTIONS}
)  # fmt: skip


class Quirk(StrEnum):
    """A way a real server's answer differs from the official format (a reply may have many)."""

    CONTENT_FILTER = "content_filter"  # Azure's filter results and finish `content_filter`
    OLLAMA_INDEX0 = "ollama_index0"  # whole tool calls, each with "index": 0 and its own id
    FINISH_EMPTY = "finish_empty"  # `"finish_reason": ""` on every chunk before the last
    FINISH_NULL_STRING = "finish_null_string"  # `"finish_reason": "null"` likewise
    NO_DONE = "no_done"  # no `data: [DONE]` (Anthropic: no `message_stop`)
    GEMINI_NO_INDEX = "gemini_no_index"  # tool-call deltas without index; extra_content delta
    JSON_BODY = "json_body"  # a whole JSON answer although the request asked for a stream
    TEXT_PLAIN = "text_plain"  # the SSE stream labelled text/plain
    NO_CONTENT_TYPE = "no_content_type"  # the SSE stream with no Content-Type at all


#: Quirks of OpenAI-compatible servers only (refused on the Anthropic route).
OPENAI_ONLY_QUIRKS: Final = frozenset(
    {Quirk.OLLAMA_INDEX0, Quirk.FINISH_EMPTY, Quirk.FINISH_NULL_STRING, Quirk.GEMINI_NO_INDEX}
)
#: Reasoning text sent for a bare ``think``.
DEFAULT_THINKING: Final = "Let me think about this step by step."


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault to inject into one response."""

    kind: FaultKind
    after: int = 0
    status: int = 500
    retry_after: float | None = None
    error_type: str = "overloaded_error"
    message: str | None = None

    @classmethod
    def drop_after(cls, events: int) -> Fault:
        return cls(FaultKind.DROP, after=events)

    @classmethod
    def stall_after(cls, events: int) -> Fault:
        return cls(FaultKind.STALL, after=events)

    @classmethod
    def http_status(
        cls, status: int, *, retry_after: float | None = None, message: str | None = None
    ) -> Fault:
        return cls(FaultKind.STATUS, status=status, retry_after=retry_after, message=message)

    @classmethod
    def html(cls, status: int = 502) -> Fault:
        return cls(FaultKind.HTML, status=status)

    @classmethod
    def context_full(cls) -> Fault:
        return cls(FaultKind.CONTEXT_FULL, status=400)

    @classmethod
    def malformed_after(cls, events: int) -> Fault:
        return cls(FaultKind.MALFORMED, after=events)

    @classmethod
    def eof_after(cls, events: int) -> Fault:
        return cls(FaultKind.EOF, after=events)

    @classmethod
    def error_event_after(cls, events: int, error_type: str = "overloaded_error") -> Fault:
        return cls(FaultKind.ERROR_EVENT, after=events, error_type=error_type)

    @classmethod
    def named(cls, kind: FaultKind, after: int = 0) -> Fault:
        """A server's own fault (``llamacpp_ctx_400``, ``quota_429``, …) by its kind."""
        return cls(kind, after=after, status=_NAMED_STATUS.get(kind, 500),
                   error_type=_NAMED_ERROR_TYPE.get(kind, "overloaded_error"))  # fmt: skip


_NAMED_ERROR_TYPE: Final = {
    FaultKind.LLAMACPP_CTX: "exceed_context_size_error",
    FaultKind.LLAMACPP_ERROR_FIELD: "exceed_context_size_error",
}
_NAMED_STATUS: Final = {
    FaultKind.LLAMACPP_CTX: 400,
    FaultKind.QUOTA: 429,
    FaultKind.REJECT_STREAM_OPTIONS: 400,
    FaultKind.CONTEXT_FULL: 400,
    FaultKind.LLAMACPP_ERROR_FIELD: 200,
}


@dataclass(frozen=True, slots=True)
class SimToolCall:
    """A tool call the simulator sends. ``arguments`` as a string is sent verbatim."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(dict(self.arguments), ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Reply:
    """One simulated answer.

    ``text=None`` echoes the last user (or internal) text; ``tokens=N`` sends N filler tokens
    instead. ``stop`` is a neutral stop reason (``end_turn``, ``max_output``, ``tool_use``,
    ``refusal``, ``paused``, ``context_full``) or any raw provider string, sent as is;
    ``None`` means ``tool_use`` when there are tool calls, else ``end_turn``. ``raw`` replays
    a recorded SSE body verbatim (one HTTP chunk per event; a fault still applies).
    ``thinking`` is reasoning sent before the answer (``reasoning_field`` names the OpenAI
    delta field: ``reasoning_content`` or ``reasoning``); ``redacted_thinking`` adds an
    Anthropic ``redacted_thinking`` block; ``quirks`` are :class:`Quirk` values.
    """

    text: str | None = None
    tool_calls: tuple[SimToolCall, ...] = ()
    stop: StopReason | str | None = None
    fault: Fault | None = None
    tokens: int | None = None
    argument_chunk: int = 8
    tokens_per_second: float | None = None
    raw: str | None = None
    thinking: str | None = None
    reasoning_field: str = "reasoning_content"
    quirks: frozenset[Quirk] = frozenset()
    redacted_thinking: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "tool_calls", tuple(self.tool_calls))
        try:
            object.__setattr__(self, "quirks", frozenset(Quirk(q) for q in self.quirks))
        except ValueError as err:
            raise SpecError(f"unknown quirk: {err}") from None
        if self.reasoning_field not in ("reasoning_content", "reasoning"):
            raise SpecError("reasoning_field is 'reasoning_content' or 'reasoning'")
        if self.argument_chunk < 1:
            raise SpecError("argument_chunk must be at least 1")
        if self.tokens is not None and self.tokens < 0:
            raise SpecError("tokens cannot be negative")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Reply:
        """A reply from its JSON form (a scenario file item, or a JSON ``X-Sim-Fault``)."""
        if not isinstance(data, Mapping):
            raise SpecError(f"a reply must be a JSON object, got {type(data).__name__}")
        unknown = set(data) - {
            "text", "tool_calls", "stop", "fault", "tokens", "argument_chunk",
            "tokens_per_second", "raw", "thinking", "reasoning_field", "quirks",
            "redacted_thinking",
        }  # fmt: skip
        if unknown:
            raise SpecError(f"unknown reply field(s): {', '.join(sorted(unknown))}")
        calls = []
        for raw in data.get("tool_calls") or ():
            if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str):
                raise SpecError("each tool call needs a 'name'")
            calls.append(SimToolCall(raw["name"], raw.get("arguments") or {}, raw.get("id")))
        fault = data.get("fault")
        return cls(
            text=data.get("text"),
            tool_calls=tuple(calls),
            stop=data.get("stop"),
            fault=_fault_from(fault) if fault is not None else None,
            tokens=data.get("tokens"),
            argument_chunk=int(data.get("argument_chunk", 8)),
            tokens_per_second=data.get("tokens_per_second"),
            raw=data.get("raw"),
            thinking=data.get("thinking"),
            reasoning_field=str(data.get("reasoning_field", "reasoning_content")),
            quirks=frozenset(data.get("quirks") or ()),
            redacted_thinking=bool(data.get("redacted_thinking", False)),
        )


def _fault_from(value: Any) -> Fault:
    if isinstance(value, str):
        reply = parse_spec(value)
        if reply.fault is None:
            raise SpecError(f"{value!r} describes no fault")
        return reply.fault
    if not isinstance(value, Mapping):
        raise SpecError("a fault must be a spec string or a JSON object")
    try:
        kind = FaultKind(str(value.get("kind")))
    except ValueError as err:
        raise SpecError(f"unknown fault kind {value.get('kind')!r}") from err
    return Fault(
        kind,
        after=int(value.get("after", 0)),
        status=int(value.get("status", _NAMED_STATUS.get(kind, 500))),
        retry_after=value.get("retry_after"),
        error_type=str(value.get("error_type", _NAMED_ERROR_TYPE.get(kind, "overloaded_error"))),
        message=value.get("message"),
    )


_AFTER_KEYS: Final = {
    "drop_after": FaultKind.DROP,
    "stall_after": FaultKind.STALL,
    "malformed_after": FaultKind.MALFORMED,
    "eof_after": FaultKind.EOF,
    "error_after": FaultKind.ERROR_EVENT,
}
_NAMED_FAULTS: Final = {
    kind.value: kind
    for kind in (FaultKind.LLAMACPP_CTX, FaultKind.LLAMACPP_ERROR_FIELD, FaultKind.QUOTA,
                 FaultKind.REJECT_STREAM_OPTIONS)
}  # fmt: skip
_QUIRK_WORDS: Final = frozenset(q.value for q in Quirk)
_STOP_WORDS: Final[dict[str, StopReason]] = {
    "length": StopReason.MAX_OUTPUT,
    "max_tokens": StopReason.MAX_OUTPUT,
    "refusal": StopReason.REFUSAL,
    "pause_turn": StopReason.PAUSED,
    "paused": StopReason.PAUSED,
}


def _number(key: str, value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise SpecError(f"{key} needs a number, got {value!r}") from None


def parse_spec(spec: str) -> Reply:
    """The reply an ``X-Sim-Fault`` header (or a scenario string) describes."""
    spec = spec.strip()
    if spec.startswith("{"):
        try:
            return Reply.from_dict(json.loads(spec))
        except json.JSONDecodeError as err:
            raise SpecError(f"fault spec is not valid JSON: {err}") from err
    fault: Fault | None = None
    fault_extra: dict[str, Any] = {}
    reply: dict[str, Any] = {}
    tools: list[dict[str, Any]] = []
    quirks: set[Quirk] = set()
    for item in filter(None, (part.strip() for part in spec.split(";"))):
        key, _, value = item.partition("=")
        key, value = key.strip().lower(), value.strip()
        if key in _AFTER_KEYS:
            fault = Fault(_AFTER_KEYS[key], after=int(_number(key, value or "0")))
        elif key == "status":
            fault = Fault(FaultKind.STATUS, status=int(_number(key, value)))
        elif key == "html":
            fault = Fault(FaultKind.HTML, status=int(_number(key, value or "502")))
        elif key == "context_full":
            fault = Fault(FaultKind.CONTEXT_FULL, status=400)
        elif key in _NAMED_FAULTS and (not value or key == "llamacpp_error_field"):
            fault = Fault.named(_NAMED_FAULTS[key], after=int(_number(key, value or "0")))
        elif key in _QUIRK_WORDS and not value:
            quirks.add(Quirk(key))
        elif key == "think":
            reply["thinking"] = value or DEFAULT_THINKING
        elif key == "reasoning_field":
            reply["reasoning_field"] = value
        elif key == "redacted_thinking" and not value:
            reply["redacted_thinking"] = True
        elif key == "retry_after":
            fault_extra["retry_after"] = _number(key, value)
        elif key == "error_type":
            fault_extra["error_type"] = value
        elif key == "message":
            fault_extra["message"] = value
        elif key in _STOP_WORDS and not value:
            reply["stop"] = _STOP_WORDS[key]
        elif key == "stop":
            reply["stop"] = value
        elif key == "text":
            reply["text"] = value
        elif key == "tokens":
            reply["tokens"] = int(_number(key, value))
        elif key == "rate":
            reply["tokens_per_second"] = _number(key, value)
        elif key == "split":
            reply["argument_chunk"] = int(_number(key, value))
        elif key == "tool":
            if tools and "name" not in tools[-1]:
                tools[-1]["name"] = value  # args came first
            else:
                tools.append({"name": value})
        elif key == "args":
            try:
                _last(tools)["arguments"] = json.loads(value)
            except json.JSONDecodeError as err:
                raise SpecError(f"args must be JSON (use bad_args for broken JSON): {err}") from err
        elif key == "bad_args":
            _last(tools)["arguments"] = BAD_ARGUMENTS
        else:
            raise SpecError(f"unknown fault spec item {item!r}")
    if fault is not None and fault_extra:
        fault = replace(fault, **fault_extra)
    elif fault_extra:
        raise SpecError("retry_after/error_type/message need a fault (e.g. status=429)")
    calls = tuple(SimToolCall(t.get("name", "write_file"), t.get("arguments", {})) for t in tools)
    return Reply(fault=fault, tool_calls=calls, quirks=frozenset(quirks), **reply)


def _last(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The tool call ``args``/``bad_args`` belong to (a ``write_file`` call if none yet)."""
    if not tools:
        tools.append({})
    return tools[-1]


_EXT_VALUE: Final = "utf-8''"


def fault_header_value(spec: str) -> str:
    """``spec`` as an ``X-Sim-Fault`` value any HTTP client can send: as is when it is ASCII,
    else in RFC 8187's ``utf-8''<percent-encoded>`` form (which :func:`parse_header_spec`
    reads back)."""
    if spec.isascii():
        return spec
    return _EXT_VALUE + urllib.parse.quote(spec, safe="")


def parse_header_spec(value: str) -> Reply:
    """The reply an ``X-Sim-Fault`` header value describes (plain, or RFC 8187 encoded)."""
    if value[: len(_EXT_VALUE)].lower() == _EXT_VALUE:
        try:
            value = urllib.parse.unquote(value[len(_EXT_VALUE) :], errors="strict")
        except UnicodeDecodeError as err:
            raise SpecError(f"the utf-8'' fault spec is not valid UTF-8: {err}") from None
    return parse_spec(value)


def load_scenario(path: str | Path) -> list[Reply]:
    """Replies from a scenario file: a JSON list (or ``{"replies": [...]}``) of reply objects
    or spec strings, served in order to the requests that carry no ``X-Sim-Fault``."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise SpecError(f"cannot read scenario file {str(path)!r}: {err.strerror}") from err
    except json.JSONDecodeError as err:
        raise SpecError(f"scenario file {str(path)!r} is not valid JSON: {err}") from err
    if isinstance(data, Mapping):
        data = data.get("replies")
    if not isinstance(data, list):
        raise SpecError('a scenario is a JSON list of replies (or {"replies": [...]})')
    return [parse_spec(item) if isinstance(item, str) else Reply.from_dict(item) for item in data]
