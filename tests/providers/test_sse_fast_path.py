"""The per-chunk fast path of :func:`app.providers.sse.event_batches` (a chunk that is one whole
event goes straight to the parser) gives exactly what the line-by-line rules give, over every
recorded stream; :func:`lone_event` is table-tested; a compressed body still reads (httpx's
decoding layer is only skipped for an uncompressed one); orjson's reading of a chunk is the
standard library's, which still decides what orjson refuses."""

from __future__ import annotations

import asyncio
import gzip
import json
import math
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

import httpx
import pytest

from app.errors import ProviderError
from app.model import ModelEvent, TextDelta, ToolCallComplete
from app.providers.anthropic import AnthropicStreamParser
from app.providers.coalesce import Delivery
from app.providers.openai import OpenAIStreamParser
from app.providers.sse import event_batches, event_json, lone_event

from .conftest import FIXTURES, parser_for

QUIRKS = Path(__file__).resolve().parent / "quirks"
STREAMS = sorted(FIXTURES.glob("*.sse")) + sorted(QUIRKS.glob("*.sse"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('data: {"a":1}\n\n', ("", '{"a":1}')),
        ("data: [DONE]\n\n", ("", "[DONE]")),
        ("data: \n\n", ("", "")),
        ("event: ping\ndata: {}\n\n", ("ping", "{}")),
        ("event: content_block_delta\ndata: x y\n\n", ("content_block_delta", "x y")),
        ("data: x\n", None),  # not finished: no blank line yet
        ("data: x", None),
        ("data: a\ndata: b\n\n", None),  # two data lines: joined by the line rules
        ("data: a\n\ndata: b\n\n", None),  # two events
        ("data:x\n\n", None),  # no space: the line rules read it
        ("data: x\r\n\r\n", None),  # CRLF: the line rules
        ("data: x\r\n\n", None),
        (": keep-alive\n\n", None),
        ("id: 7\ndata: x\n\n", None),
        ("event: a\n\n", None),  # a name without data is not an event
        ("error: {}\n\n", None),  # llama.cpp's error field: the line rules
        ("", None),
        ("\n\n", None),
    ],
)
def test_lone_event(text: str, expected: tuple[str, str] | None) -> None:
    assert lone_event(text) == expected


class _Chunks(httpx.AsyncByteStream):
    """A response body given as chunks, as a server's writes arrive."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = list(chunks)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


async def _events(
    chunks: Iterable[bytes],
    protocol: str,
    *,
    headers: dict[str, str] | None = None,
    put: bool = False,
) -> tuple[list[ModelEvent], str | None]:
    """The events ``event_batches`` makes of ``chunks`` (yielded, or with ``put`` put into a
    delivery, as the providers run it), and the error that ended them."""
    response = httpx.Response(
        200,
        headers={"content-type": "text/event-stream", **(headers or {})},
        stream=_Chunks(chunks),
    )
    out: list[ModelEvent] = []
    delivery = Delivery(out, asyncio.Event()) if put else None
    error = None
    try:
        async for batch in event_batches(response, parser_for(protocol), delivery):
            assert not (put and batch)  # (a delivery gets everything)
            out.extend(batch)
    except ProviderError as err:
        error = f"{type(err).__name__}: {err}"
    return out, error


def _per_event(body: bytes, end: str = "\n") -> list[bytes]:
    """The body cut after each blank line: one chunk per event (the fast path's case), its
    lines ended by ``end``."""
    text = body.decode("utf-8").replace("\r\n", "\n")
    return [(event + "\n\n").replace("\n", end).encode() for event in text.split("\n\n") if event]


BODIES = {path.name: path.read_bytes() for path in STREAMS}


@pytest.mark.parametrize("name", sorted(BODIES))
async def test_fast_path_equals_the_line_rules(name: str) -> None:
    body = BODIES[name]
    path = Path(name)
    protocol = "anthropic" if path.name.startswith("anthropic") else "openai"
    per_event = _per_event(body)
    fast = await _events(per_event, protocol)
    # Byte by byte: no chunk is ever a whole event, so every one goes through the line rules.
    slow = await _events((bytes([b]) for b in b"".join(per_event)), protocol)
    assert fast == slow
    assert fast[0] or fast[1]  # (the recording produced something: events or its error)
    # Put into a delivery (as the providers run it): the same events, the same end.
    assert await _events(per_event, protocol, put=True) == fast
    # With CRLF line ends every chunk takes the line rules: the same again.
    assert await _events(_per_event(body, "\r\n"), protocol) == fast
    # Each event's first line in a chunk of its own: the decoder holds a field across chunks.
    split = [part for chunk in per_event for part in _first_line_apart(chunk)]
    assert await _events(split, protocol) == fast


def _first_line_apart(chunk: bytes) -> list[bytes]:
    line, _, rest = chunk.partition(b"\n")
    return [line + b"\n", rest] if rest else [chunk]


async def test_a_cut_between_chunks_is_joined_and_the_next_whole_event_is_fast() -> None:
    """A chunk ending inside an event leaves the splitter holding text: the next chunks go
    through the line rules until nothing is held, then the fast path takes over again."""
    events = [
        f'data: {{"choices":[{{"index":0,"delta":{{"content":"{word}"}}}}]}}\n\n'
        for word in ("Hello", " wide", " world")
    ] + [
        'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
        "data: [DONE]\n\n",
    ]
    first, second = events[0][:20], events[0][20:]
    chunks = [first.encode(), second.encode()] + [event.encode() for event in events[1:]]
    got, error = await _events(chunks, "openai")
    assert error is None
    assert "".join(getattr(event, "text", "") for event in got) == "Hello wide world"


async def test_a_compressed_stream_is_still_decoded() -> None:
    body = (
        b'data: {"choices":[{"index":0,"delta":{"content":"zipped"}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
        b"data: [DONE]\n\n"
    )
    packed = gzip.compress(body)
    got, error = await _events(
        [packed[:10], packed[10:]], "openai", headers={"content-encoding": "gzip"}
    )
    assert error is None
    assert [getattr(event, "text", None) for event in got][:1] == ["zipped"]


async def test_a_response_already_read_is_parsed_from_its_bytes() -> None:
    body = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)
    assert response.is_stream_consumed  # built from bytes: read at once
    batches = [batch async for batch in event_batches(response, OpenAIStreamParser())]
    assert any(batches)  # the step's end


@pytest.mark.parametrize(
    "data",
    [
        '{"a": 1, "a": 2}',
        '{"s": "caf\\u00e9 \\ud83d\\ude00 \\u2028"}',
        '{"n": [0, -0.0, 1.5e-400, 12345678901234567, 9007199254740993]}',
        '{"deep": ' + "[" * 200 + "]" * 200 + "}",
        '  {"spaced": true}  ',
        '"\\ud800"',  # a lone surrogate: orjson refuses, the standard library reads it
        "NaN",
        "[Infinity, -Infinity]",
        "1e400",
    ],
)
def test_event_json_reads_as_the_standard_library(data: str) -> None:
    got, expected = event_json(data, "a chunk"), json.loads(data)
    if isinstance(expected, float) and math.isnan(expected):
        assert isinstance(got, float) and math.isnan(got)
    else:
        assert got == expected
        assert type(got) is type(expected)


def test_the_openai_parser_reads_what_orjson_refuses() -> None:
    """A chunk orjson cannot read (a lone surrogate in the text) is read by the standard
    library, as before: the token is kept, not turned into an error."""
    parser = OpenAIStreamParser()
    events = parser.feed_data("", '{"choices":[{"index":0,"delta":{"content":"a\\ud800b"}}]}')
    assert [getattr(event, "text", None) for event in events] == ["a\ud800b"]


_PAY = '{"wei": 20000000000000000000, "small": 7}'  # beyond 64 bits, and not


def test_a_tool_s_big_numbers_stay_whole_in_an_openai_stream() -> None:
    """orjson reads a whole number beyond 64 bits as a float: a chunk that may carry a tool's
    arguments (as an object, as some servers send them) is read by the standard library."""
    parser = OpenAIStreamParser()
    call = {"index": 0, "id": "c1", "function": {"name": "pay", "arguments": json.loads(_PAY)}}
    chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": "stop"}]}
    assert parser.feed_data("", json.dumps(chunk)) == []
    done = [event for event in parser.finish() if isinstance(event, ToolCallComplete)]
    assert dict(done[0].call.arguments) == {"wei": 20000000000000000000, "small": 7}
    assert type(done[0].call.arguments["wei"]) is int


def test_a_tool_s_big_numbers_stay_whole_in_an_anthropic_stream() -> None:
    parser = AnthropicStreamParser()
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 3}}}
    block = {"type": "tool_use", "id": "t1", "name": "pay", "input": json.loads(_PAY)}
    events = [
        ("message_start", start),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    out: list[ModelEvent] = []
    for name, payload in events:
        out.extend(parser.feed_data(name, json.dumps(payload)))
    out.extend(parser.finish())
    done = [event for event in out if isinstance(event, ToolCallComplete)]
    assert type(done[0].call.arguments["wei"]) is int
    assert done[0].call.arguments["wei"] == 20000000000000000000


def test_event_json_exact_reads_by_the_standard_library_alone() -> None:
    assert event_json("[20000000000000000000]", "a chunk") == [2e19]  # (orjson: a float)
    exact = event_json("[20000000000000000000]", "a chunk", exact=True)
    assert exact == [20000000000000000000] and type(exact[0]) is int


async def test_a_delivery_gets_the_events_parsed_before_a_failure() -> None:
    """Text, then a chunk that is not JSON: the text is put before the error is raised."""
    chunks = [
        b'data: {"choices":[{"index":0,"delta":{"content":"kept"}}]}\n\n',
        b"data: {oops\n\n",
    ]
    out, error = await _events(chunks, "openai", put=True)
    assert out == [TextDelta("kept")]
    assert error is not None and "not valid JSON" in error


_BOM_BODY = [
    b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n',
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
    b"data: [DONE]\n\n",
]


@pytest.mark.parametrize("split", [1, 2, 3, 4])
async def test_a_byte_order_mark_before_the_first_event_is_ignored(split: int) -> None:
    """The SSE spec drops a BOM at the start of the stream; before, the first event's line
    became an unknown field and its token was lost. Also with the BOM cut across chunks."""
    plain = await _events(_BOM_BODY, "openai")
    assert plain[0][0] == TextDelta("hi") and plain[1] is None
    marked = [b"\xef\xbb\xbf" + _BOM_BODY[0], *_BOM_BODY[1:]]
    assert await _events(marked, "openai") == plain  # the first chunk: one whole event
    body = b"".join(marked)
    assert await _events([body[:split], body[split:]], "openai") == plain
    # Only at the very start: a BOM later in the stream is text, as the spec says.
    later = [_BOM_BODY[0], b"\xef\xbb\xbf" + _BOM_BODY[1], _BOM_BODY[2]]
    events, error = await _events(later, "openai")
    assert events[0] == TextDelta("hi") and error is not None  # the finish line was lost


async def test_a_byte_order_mark_before_a_stream_labelled_text_plain_is_ignored() -> None:
    from app.providers.sse import sse_lines

    async def text() -> AsyncIterator[str]:
        for piece in ("\ufeffdata: a\n", "\n"):
            yield piece

    assert [line async for line in sse_lines(text())] == ["data: a", ""]
