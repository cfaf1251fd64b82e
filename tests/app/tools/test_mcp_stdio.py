"""The MCP stdio transport's line reading (:mod:`app.tools.mcp_stdio`): table tests of the pure
parts; the transport against a real server is in ``tests/app/services/test_mcp_servers.py``."""

from __future__ import annotations

import pytest

from app.tools.mcp_stdio import LineSplitter, Oversized, oversized_answer, oversized_id


@pytest.mark.parametrize(
    ("chunks", "lines"),
    [
        ([b"a\n"], [b"a"]),
        ([b"a\nb\n"], [b"a", b"b"]),
        ([b"a", b"b", b"c\n"], [b"abc"]),
        ([b"ab", b"\ncd", b"\n"], [b"ab", b"cd"]),
        ([b"\n\n"], [b"", b""]),
        ([b"tail without end"], []),
        ([b"x" * 10, b"\n"], [b"x" * 10]),  # exactly the limit: a line
    ],
)
def test_lines_are_split_at_line_ends_only(chunks: list[bytes], lines: list[bytes]) -> None:
    splitter = LineSplitter(limit=10)
    out = [line for chunk in chunks for line in splitter.feed(chunk)]
    assert out == lines


def test_a_line_over_the_limit_keeps_only_its_size_and_ends() -> None:
    splitter = LineSplitter(limit=10_000)
    head = b'{"jsonrpc":"2.0","id":7,"result":"'
    out = splitter.feed(head)
    for _ in range(100):
        out += splitter.feed(b"y" * 5_000)
    out += splitter.feed(b'"}\n{"after":1}\n')
    big, after = out
    assert isinstance(big, Oversized)
    assert big.size == len(head) + 500_000 + 2
    assert big.head.startswith(head) and len(big.head) == 4_096
    assert big.tail.endswith(b'y"}') and len(big.tail) == 4_096
    assert after == b'{"after":1}'  # the next line is read as usual
    assert oversized_id(big) == 7


@pytest.mark.parametrize(
    ("head", "tail", "found"),
    [
        (b'{"jsonrpc":"2.0","id":3,"result":{', b"}}", 3),  # Python servers: id first
        (b'{"result":{"content":[', b'],"isError":false},"jsonrpc":"2.0","id":12}', 12),  # Node
        (b'{"id":"req-1","jsonrpc":"2.0","result":', b"}", "req-1"),
        (b'{"id" : -4 , "result":', b"}\r", -4),
        (b'{"result":{"x":', b'{"id":5}}', None),  # an inner object's id is not the message's
        (b'{"method":"notifications/message","params":{', b"}}", None),
        (b'{"result":', b'"text":"... \\"id\\":9}"}', None),
    ],
)
def test_the_id_of_an_oversized_answer(head: bytes, tail: bytes, found: object) -> None:
    line = Oversized(20_000_000, head, tail)
    assert oversized_id(line) == found
    answer = oversized_answer(line, limit=8_000_000)
    if found is None:
        assert answer is None
    else:
        assert answer is not None and answer["id"] == found
        assert "20.0 MB, more than the 8.0 MB" in answer["error"]["message"]
        assert "ask the tool for a smaller part" in answer["error"]["message"]
