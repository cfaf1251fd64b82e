"""Where an answer is cut into blocks: each block is a document of its own, streamed or not.

Streaming: :func:`stable_boundary` finds the end of the last *finished* block (a blank line
outside a code fence). Text before it never changes its rendering as more tokens arrive, so the
view renders it once and re-renders only the short tail on every frame. A blank line ends a
block only once the next line starts at the margin (an indented one continues a list item).
Every block is its own document (:func:`block_cuts`), streamed or not, so an answer is laid out
the same while it streams, when it finishes and when it is reopened. The cuts depend on the text
only, and each one only on the text before it (and the character after it), so every prefix of
a stream cuts alike. Pure functions.

Block-level work is bounded too: markdown-it and Qt spend ~10–120 µs per line of a block (a
list item, a table row), so 100,000 lines of ``*`` with no blank line between them took 1.3 s
to parse, every frame, as one unfinished block. Once a block outside a fence has
``MAX_BLOCK_LINES`` lines (or ``MAX_BLOCK_CHARS`` characters) it is ended at the next line that
can start a block of its own (no deeper indent than the block's first line, not a setext
underline or table delimiter, not a table row), and at ``2 × MAX_BLOCK_LINES`` lines in any
case (not at twice the characters: a table wider than that would fall apart). A list cut there
renders as two lists (an ordered one keeps its numbers: markdown-it's ``start``), a little more
space between them than between items; :func:`long_block_cuts` gives the same cuts for a
finished message, so it renders exactly as it did while streaming.

Long lines: Qt lays out a paragraph as one unit, so an answer written as one paragraph without
a line break (127,000 characters of it in the streaming benchmark) was laid out whole on every
frame (~13 ms at 50,000 characters, growing). A prose line (:func:`plain_line`) longer than
``LONG_LINE`` is cut inside, just after a space followed by a letter, where no inline markup
(emphasis, code, math, link, tag) is open; the view draws the pieces without a gap between them
and copies them back joined by a space. Lines that are not plain prose (list items, quotes,
headings, tables, code) are not cut at spaces. A run of ``LONG_LINE`` characters without any
whitespace (outside a code fence) is cut where it reaches that length, whatever the line: no
prose is written that way, and a hostile answer of 200 KB of ``![`` was otherwise laid out
whole on every frame (and those pieces copy back joined by nothing).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = [
    "LONG_LINE",
    "MAX_BLOCK_CHARS",
    "MAX_BLOCK_LINES",
    "WHOLE_LINE",
    "block_cuts",
    "long_block_cuts",
    "plain_line",
    "stable_boundary",
]

# Lines after which an unfinished block is ended at the next line that may start a block.
MAX_BLOCK_LINES = 200
# Characters after which it is, too (a list of 2,000-character items reached 100 KB in one
# block before its 200th line, re-rendered whole on every frame: 66 ms at 92 KB).
MAX_BLOCK_CHARS = 12_000
# Characters of a line that may underline a setext heading or delimit a table: never cut above.
_UNDERLINE = frozenset(" \t|:-=")
# Characters of a paragraph line after which it is cut at the next space that keeps its inline
# markup whole (:func:`_line_cuts`): Qt lays out a paragraph as one unit, so a streamed answer
# that is one long paragraph (no line break) cost a relayout of all of it on every frame.
LONG_LINE = 3_000
# Characters up to which a finished message's prose line is one document, not cut at spaces
# (:func:`block_cuts` with ``whole``): laid out once (~1-2 ms), not on every frame, and short
# enough for its picture (pictures.py) at ordinary widths. As MAX_BLOCK_CHARS for blocks.
WHOLE_LINE = 12_000
# Characters that may open a paragraph line that can be cut (letters too): not a list, quote,
# heading, table, HTML block, code block or thematic break.
_PLAIN_OPENERS = frozenset("\"'(“‘«¿¡")
# Inline markers that must come in pairs, and brackets that must close, in a piece that is cut.
_PAIRED = ("*", "_", "`", "~", "$")
_BRACKETS = (("[", "]"), ("(", ")"), ("<", ">"))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _may_start_block(line: str, indent: int) -> bool:
    """Whether a long block may be cut just before ``line`` without changing what it means."""
    stripped = line.strip()
    if _indent(line) > indent or not stripped:
        return False  # a deeper line continues an item (or would become indented code)
    if stripped.startswith("|"):
        return False  # a table row: its table would lose its header
    return not (set(stripped) <= _UNDERLINE and ("-" in stripped or "=" in stripped))


def plain_line(line: str) -> bool:
    """Whether a paragraph ``line`` starts like prose (a letter, a quote, emphasis, code): not
    like a list item, quote, heading, table, HTML block, indented code or thematic break.
    Up to three spaces may come first (Markdown ignores them; four make code)."""
    indent = 0
    while indent < 4 and line[indent : indent + 1] == " ":
        indent += 1
    if indent == 4:
        return False  # indented code
    line = line[indent:]
    first = line[:1]
    if first.isalpha() or first in _PLAIN_OPENERS:
        return True
    if first in ("*", "_"):  # emphasis, not a bullet ("* ") nor a rule ("***", "_ _ _")
        return len(line) > 1 and not line[1].isspace() and bool(line.strip(first + " \t"))
    return first == "`" and not line.startswith("``")


_MARKS = "".join(_PAIRED) + "".join(left + right for left, right in _BRACKETS)
_MARK_RE = re.compile("[" + re.escape(_MARKS) + "]")
_SPACE_RE = re.compile(r"\s")
# LONG_LINE characters without whitespace, from a word's start (from anywhere, a failed match
# was tried again at each of the run's characters: a line of 2,999-character words took ~250 ms).
_RUN_RE = re.compile(rf"(?<!\S)\S{{{LONG_LINE}}}")


def _balanced(counts: dict[str, int]) -> bool:
    """Whether a piece with these counts of :data:`_MARKS` leaves no inline construct
    (emphasis, code, math, strike-through, link, HTML tag) open: pairs even, brackets closed."""
    if any(counts[marker] % 2 for marker in _PAIRED):
        return False
    return all(counts[left] == counts[right] for left, right in _BRACKETS)


def _count(counts: dict[str, int], text: str, start: int, end: int) -> None:
    for mark in _MARKS:
        counts[mark] += text.count(mark, start, end)


def _soft_cut(text: str, piece: int, end: int) -> int:
    """The first place after ``piece + LONG_LINE`` in ``text[:end]`` that is just after a space,
    before a letter, with every inline mark opened since ``piece`` closed; -1: none yet.

    Linear: the marks are counted once as the search moves on, and while the piece is
    unbalanced the search jumps to the next mark (nothing between can balance it)."""
    counts = dict.fromkeys(_MARKS, 0)
    counted = piece
    pos = text.find(" ", piece + LONG_LINE, end)
    while 0 <= pos < end - 1:
        after = pos + 1
        _count(counts, text, counted, after)
        counted = after
        if not _balanced(counts):
            mark = _MARK_RE.search(text, after, end)
            if mark is None:
                return -1
            pos = text.find(" ", mark.start(), end)
        elif text[after].isalpha():
            return after
        else:
            pos = text.find(" ", after, end)
    return -1


def _line_cuts(text: str, start: int, end: int, prose: bool, whole: bool = False) -> Iterator[int]:
    """Where a long line ``text[start:end]`` is cut into pieces of about :data:`LONG_LINE`
    characters: a prose line (``prose``) at :func:`_soft_cut`; any line where its next
    ``LONG_LINE`` characters hold no whitespace at all (a run like that is no prose: a blob, a
    hash, a hostile answer), right there. Each cut depends only on the text before it and the
    character after it, so every prefix of a stream cuts alike, and a scan restarted at a cut
    finds the same next cuts (what follows a cut is judged as a line of its own).

    ``whole``: the line is finished (a finished message), and one of at most
    :data:`WHOLE_LINE` characters without such a run is not cut at all (judged on the whole
    line, wherever in it the scan started, so a restarted scan still finds the same cuts)."""
    if whole:
        first = text.rfind("\n", 0, start) + 1
        if end - first <= WHOLE_LINE and _RUN_RE.search(text, first, end) is None:
            return
    piece = start
    while end - piece > LONG_LINE:
        if _SPACE_RE.search(text, piece, piece + LONG_LINE) is None:
            cut = piece + LONG_LINE
        elif prose:
            cut = _soft_cut(text, piece, end)
            if cut < 0:
                return
        else:
            return
        yield cut
        piece = cut
        prose = plain_line(text[cut:end])


def _boundaries(text: str, start: int, whole: bool = False) -> Iterator[tuple[int, bool]]:
    """Each block end in ``text[start:]``: (offset after it, whether it was a forced cut).

    A blank line outside a fence ends a block only once the next line shows it starts at the
    margin: an indented line after a blank one continues a list item (or an indented code
    block), and rendering it apart would change what it means. Undecided until then. A long
    line of a prose paragraph is cut inside (:func:`_line_cuts`), even while unfinished;
    ``whole``: ``text`` is a finished message (see :func:`block_cuts`).
    """
    in_fence = False
    fence_marker = ""
    block_lines = 0
    block_chars = 0
    block_indent = 0
    block_prose = True  # every line of the block so far is a prose line (plain_line)
    pending = -1  # after the latest blank line, while the line after it is unknown
    pos = start
    length = len(text)
    while pos < length:
        end = text.find("\n", pos)
        line = text[pos:] if end < 0 else text[pos:end]
        if pending >= 0 and line.strip():
            if line[0] not in " \t":
                yield pending, False  # the next block starts at the margin
                block_lines = block_chars = 0
            pending = -1
        if not in_fence and len(line) > LONG_LINE:
            block_prose = (block_prose or block_lines == 0) and plain_line(line)
            line_end = length if end < 0 else end
            for cut in _line_cuts(text, pos, line_end, block_prose, whole):
                yield cut, True
                block_lines = block_chars = 0  # the rest of the line starts a block (a cut)
                pos = cut
            line = text[pos:line_end]
        if end < 0:
            break  # the last line is unfinished: it cannot close a block
        stripped = line.lstrip(" ")
        if in_fence:
            if stripped.startswith(fence_marker) and not stripped.strip(fence_marker[0]).strip():
                in_fence = False
                block_lines = block_chars = 0
                yield end + 1, False  # a closed fence ends a block
        elif stripped.startswith(("```", "~~~")) and len(line) - len(stripped) < 4:
            marker = stripped[0]
            count = len(stripped) - len(stripped.lstrip(marker))
            in_fence = True
            fence_marker = marker * count
        elif not line.strip():
            pending = end + 1
        else:
            if block_lines == 0:
                block_indent = _indent(line)
                block_prose = plain_line(line)
            else:
                block_prose = block_prose and plain_line(line)
            block_lines += 1
            block_chars += len(line) + 1
            if block_lines >= MAX_BLOCK_LINES or block_chars >= MAX_BLOCK_CHARS:
                # Decide on the whole next line only, so every prefix of a stream cuts alike.
                after = text.find("\n", end + 1)
                if after >= 0 and (
                    block_lines >= 2 * MAX_BLOCK_LINES
                    or _may_start_block(text[end + 1 : after], block_indent)
                ):
                    block_lines = block_chars = 0
                    yield end + 1, True
        pos = end + 1


def stable_boundary(text: str, start: int = 0) -> int:
    """The end of the last finished block in ``text[start:]`` (``start`` if none).

    A block is finished at a blank line outside a fenced code block, or cut once it is long
    (module docstring); ``start`` must itself be such a boundary (or 0). Cost is proportional
    to ``len(text) - start``.
    """
    boundary = start
    for end, _forced in _boundaries(text, start):
        boundary = end
    return boundary


def block_cuts(text: str, start: int = 0, *, whole: bool = False) -> list[int]:
    """Every block end in ``text[start:]`` that :func:`stable_boundary` may return, in order;
    ``whole``: of a finished message, whose prose lines up to :data:`WHOLE_LINE` characters
    are not cut inside.

    The view renders each block as its own document, cut here: the cuts depend on the text
    only (and on whether it is finished), so a message looks the same finished or reopened.
    While it streams, a long paragraph is cut every ~:data:`LONG_LINE` characters so a frame
    lays out only its tail; Qt cannot flow one paragraph across two documents, so each cut
    shows as a short line, and once the message is finished such a paragraph is one document
    again (a frame then lays it out whole, once).
    """
    return [pos for pos, _forced in _boundaries(text, start, whole)]


def long_block_cuts(text: str, start: int = 0) -> list[int]:
    """Where :func:`stable_boundary` cuts long blocks in ``text[start:]`` (not blank lines).

    Rendering a finished message in pieces at these offsets renders it as it was streamed.
    """
    return [pos for pos, forced in _boundaries(text, start) if forced]
