"""What the simulator answers: scripted replies, faults, and their text and JSON forms.

A :class:`Reply` is one answer (echo or scripted text, tool calls, a stop reason) optionally
carrying one :class:`Fault`. Replies come, in this order of precedence, from the request's
``X-Sim-Fault`` header, the simulator's queue (``sim.enqueue(...)`` or a scenario JSON file),
or the simulator's default (echo the last user text).

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
    length | refusal | pause_turn | stop=<raw>  how the reply ends (stop=weird: unknown reason)
    tool=read_file;args={"path":"a.txt"};split=3   a tool call, arguments in 3-char pieces
    bad_args                the tool call's arguments are not valid JSON
    text=Hello | tokens=500 | rate=50            reply text, filler length, tokens per second
"""

from __future__ import annotations

import json
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
    "Reply",
    "SimToolCall",
    "SpecError",
    "load_scenario",
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


#: Faults that replace the whole response (before any byte of a stream).
RESPONSE_FAULTS: Final = frozenset({FaultKind.STATUS, FaultKind.HTML, FaultKind.CONTEXT_FULL})


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
    """

    text: str | None = None
    tool_calls: tuple[SimToolCall, ...] = ()
    stop: StopReason | str | None = None
    fault: Fault | None = None
    tokens: int | None = None
    argument_chunk: int = 8
    tokens_per_second: float | None = None
    raw: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tool_calls", tuple(self.tool_calls))
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
            "tokens_per_second", "raw",
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
        status=int(value.get("status", 400 if kind is FaultKind.CONTEXT_FULL else 500)),
        retry_after=value.get("retry_after"),
        error_type=str(value.get("error_type", "overloaded_error")),
        message=value.get("message"),
    )


_AFTER_KEYS: Final = {
    "drop_after": FaultKind.DROP,
    "stall_after": FaultKind.STALL,
    "malformed_after": FaultKind.MALFORMED,
    "eof_after": FaultKind.EOF,
    "error_after": FaultKind.ERROR_EVENT,
}
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
    tool: dict[str, Any] = {}
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
            tool["name"] = value
        elif key == "args":
            try:
                tool["arguments"] = json.loads(value)
            except json.JSONDecodeError as err:
                raise SpecError(f"args must be JSON (use bad_args for broken JSON): {err}") from err
        elif key == "bad_args":
            tool["arguments"] = BAD_ARGUMENTS
        else:
            raise SpecError(f"unknown fault spec item {item!r}")
    if fault is not None and fault_extra:
        fault = replace(fault, **fault_extra)
    elif fault_extra:
        raise SpecError("retry_after/error_type/message need a fault (e.g. status=429)")
    if "arguments" in tool and "name" not in tool:
        tool["name"] = "write_file"
    calls = (SimToolCall(tool["name"], tool.get("arguments", {})),) if tool else ()
    return Reply(fault=fault, tool_calls=calls, **reply)


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
