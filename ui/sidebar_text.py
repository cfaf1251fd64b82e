"""What the sidebar says: plain titles, date-group labels and the search match spans.

Pure functions (no Qt) so each rule is a table test:

* :func:`plain_title` — a conversation title with its Markdown taken off (headings, emphasis,
  code, links, list and quote markers) and its whitespace collapsed. HTML-looking text is left
  as it is: titles are shown as plain text, so ``<b>`` is two characters, not markup to remove.
* :func:`date_group` / :func:`group_labels` — Today, Yesterday, Previous 7 days, Previous 30
  days, then one group per month ("November 2026"), decided by calendar days in ``now``'s zone.
* :func:`match_spans` / :func:`snippet_spans` — the parts of a title or a search snippet to
  highlight: the query's words in a title, the ``[bracketed]`` match in an FTS snippet.
* :func:`section_labels` / :func:`pin_action_text` — pinned conversations under "Pinned" above
  the date groups, and what the row menu offers for one; :func:`section_starts` finds the same
  sections by bisection (a few steps per section, not one per conversation).
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import date, datetime, time, timedelta
from typing import Any, Protocol

__all__ = [
    "title_matches",
    "ListedConversation",
    "sections",
    "MONTHS",
    "NO_CONVERSATIONS",
    "PINNED",
    "UNTITLED",
    "Span",
    "accessible_text",
    "date_group",
    "display_title",
    "group_labels",
    "ms_until_tomorrow",
    "pin_action_text",
    "section_labels",
    "section_starts",
    "match_spans",
    "no_match_text",
    "plain_title",
    "query_terms",
    "snippet_spans",
]

UNTITLED = "Untitled conversation"
#: The section above the pinned conversations (they come first, most recently pinned first).
PINNED = "Pinned"
NO_CONVERSATIONS = "No conversations yet. The ones you start are listed here."
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)

#: A run of text and whether it is highlighted (a search match).
Span = tuple[str, bool]


class _Lazy:
    """A regular expression compiled when first used: the start window imports this module
    for a few titles, and compiling every pattern here cost ~3 ms of a cold start."""

    __slots__ = ("_compiled", "_source")

    def __init__(self, source: str) -> None:
        self._source = source
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._source)
        return self._compiled

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str, count: int = 0) -> str:
        return self.compiled.sub(repl, text, count=count)

    def match(self, text: str) -> re.Match[str] | None:
        return self.compiled.match(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text)

    def findall(self, text: str) -> list[Any]:
        return self.compiled.findall(text)


# --- titles -------------------------------------------------------------------------------

_ESCAPABLE = r"\\`*_{}\[\]()#+\-.!>~|"
_ESCAPE = _Lazy(rf"\\([{_ESCAPABLE}])")
_PRIVATE = 0xE000  # escaped characters wait here (private use) while the markers go

_FENCE = _Lazy(r"^\s*(`{3,}|~{3,})[^`]*$")
_RULE = _Lazy(r"^\s*([-*_])(\s*\1){2,}\s*$")
_LINE_START = _Lazy(r"^\s*(?:>\s*)*(?:#{1,6}(?=\s|$)|[-*+](?=\s)|\d{1,3}[.)](?=\s))?\s*")
_CLOSING_HASHES = _Lazy(r"\s+#+\s*$")
_IMAGE = _Lazy(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = _Lazy(r"\[([^\]]+)\]\([^)]*\)")
_AUTOLINK = _Lazy(r"<((?:https?|mailto|ftp):[^>\s]+)>")
_CODE = _Lazy(r"(`+)(.+?)\1")
# Emphasis delimiters: a run of * or _ touching a word on one side only ("**must*", "_x_");
# one between two word characters (snake_case, 2*3) or between spaces (a * b) is kept.
_STAR = _Lazy(r"(?<![\w*])\*+(?=[^\s*])|(?<=[^\s*])\*+(?![\w*])")
_UNDERSCORE = _Lazy(r"(?<![^\W_])_+(?=[^\s_])|(?<=[^\s_])_+(?![^\W_])")
_STRIKE = _Lazy(r"~~")
_RESTORE = _Lazy("[\ue000-\ue07f]")
#: The characters some rule of :func:`plain_title` acts on (and a digit starting a line, a
#: numbered list's marker): a title with none of them only has its spaces folded.
_MARKUP = frozenset("\\`*_[]#>-+~!<")


def _hide_escapes(text: str) -> str:
    return _ESCAPE.sub(lambda m: chr(_PRIVATE + ord(m.group(1))), text)


def _restore_escapes(text: str) -> str:
    return _RESTORE.sub(lambda m: chr(ord(m.group(0)) - _PRIVATE), text)


@functools.lru_cache(maxsize=8192)  # every refill of the list asks again for the same titles
def plain_title(text: str | None) -> str:
    """``text`` without Markdown, on one line with single spaces ("" when nothing is left)."""
    if not text:
        return ""
    if _has_no_markdown(text):
        return " ".join(text.split())
    return _without_markdown(text)


def _has_no_markdown(text: str) -> bool:
    """Whether no rule of :func:`_without_markdown` can act on ``text``: none of the
    characters they look for, no line starting with a digit (a numbered list's marker), no
    character of the private range escapes wait in."""
    if not _MARKUP.isdisjoint(text):
        return False
    if any(line.lstrip()[:1].isdigit() for line in text.splitlines()):
        return False
    return not any("\ue000" <= c <= "\ue07f" for c in text)


def _without_markdown(text: str) -> str:
    """:func:`plain_title`'s rules, all applied (a test holds its shortcut to them)."""
    lines: list[str] = []
    for line in _hide_escapes(text).splitlines():
        if _FENCE.match(line) or _RULE.match(line):
            continue
        line = _LINE_START.sub("", line, count=1)
        line = _CLOSING_HASHES.sub("", line)
        lines.append(line)
    flat = " ".join(lines)
    flat = _IMAGE.sub(r"\1", flat)
    flat = _LINK.sub(r"\1", flat)
    flat = _AUTOLINK.sub(r"\1", flat)
    flat = _CODE.sub(lambda m: m.group(2).strip(), flat)
    flat = flat.replace("`", "")
    flat = _STAR.sub("", flat)
    flat = _UNDERSCORE.sub("", flat)
    flat = _STRIKE.sub("", flat)
    return " ".join(_restore_escapes(flat).split())


def display_title(text: str | None) -> str:
    """What the sidebar shows for a conversation titled ``text``."""
    return plain_title(text) or UNTITLED


def accessible_text(title: str, resumable: bool, pinned: bool = False) -> str:
    """What a screen reader says for one conversation."""
    text = f"{title} — pinned" if pinned else title
    return f"{text} — can be resumed" if resumable else text


def pin_action_text(pinned: bool) -> str:
    """The row menu's entry for a conversation that is (or is not) pinned."""
    return "Unpin" if pinned else "Pin to top"


# --- date groups --------------------------------------------------------------------------


def date_group(when: float, now: datetime) -> str:
    """The group of a conversation last changed at ``when`` (a Unix time), seen at ``now``.

    Calendar days in ``now``'s time zone (the local one when ``now`` is naive): a time after
    ``now`` (a clock set back) is Today."""
    then = datetime.fromtimestamp(when, now.tzinfo) if now.tzinfo else datetime.fromtimestamp(when)
    days = (now.date() - then.date()).days
    if days <= 0:
        return "Today"
    if days == 1:
        return "Yesterday"
    if days <= 7:
        return "Previous 7 days"
    if days <= 30:
        return "Previous 30 days"
    return f"{MONTHS[then.month - 1]} {then.year}"


def group_labels(times: Iterable[float], now: datetime) -> list[str | None]:
    """For rows in display order, the header above each row: the group's label on the first
    row of a group, ``None`` on the others."""
    labels: list[str | None] = []
    previous: str | None = None
    for when in times:
        group = date_group(when, now)
        labels.append(group if group != previous else None)
        previous = group
    return labels


def section_labels(rows: Iterable[tuple[float, bool]], now: datetime) -> list[str | None]:
    """:func:`group_labels` for rows of (changed at, pinned) in display order (the pinned
    first): the pinned ones are one "Pinned" section, whenever they changed."""
    labels: list[str | None] = []
    previous: str | None = None
    for when, pinned in rows:
        group = PINNED if pinned else date_group(when, now)
        labels.append(group if group != previous else None)
        previous = group
    return labels


class ListedConversation(Protocol):
    """What the list shows of a conversation: ``app.SessionInfo`` has it, and so do the titles
    the start window reads before the core is imported (:mod:`ui.start_window`)."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str | None: ...
    @property
    def created_at(self) -> float: ...
    @property
    def updated_at(self) -> float: ...
    @property
    def pinned_at(self) -> float | None: ...


def sections(listing: Sequence[ListedConversation], now: datetime) -> list[tuple[str, int, int]]:
    """(label, first row, end row) of each section of ``listing`` (pinned first, then newest
    first): the sidebar's (:func:`ui.sidebar_model.grouped_keys`) and the start window's."""
    pinned = 0
    while pinned < len(listing) and listing[pinned].pinned_at is not None:
        pinned += 1
    times = [info.updated_at or info.created_at for info in listing[pinned:]]
    starts = section_starts(pinned, times, now)
    if not starts:
        return []
    ends = [row for row, _label in starts[1:]] + [len(listing)]
    return [(label, row, end) for (row, label), end in zip(starts, ends, strict=True)]


def section_starts(pinned: int, times: Sequence[float], now: datetime) -> list[tuple[int, str]]:
    """(row, label) where each section starts, for ``pinned`` pinned rows followed by rows
    last changed at ``times`` (newest first): :func:`section_labels`' headers, found a section
    at a time by bisection, so a list of 10,000 costs about as much as one of 10."""
    starts = [(0, PINNED)] if pinned else []
    at = 0
    while at < len(times):
        when = times[at]
        starts.append((pinned + at, date_group(when, now)))
        floor = -_start_of(_group_first_day(when, now), now)
        at = max(bisect_right(times, floor, lo=at, key=lambda t: -t), at + 1)
    return starts


def _group_first_day(when: float, now: datetime) -> date:
    """The first calendar day of :func:`date_group`'s group for ``when`` (at ``now``)."""
    then = datetime.fromtimestamp(when, now.tzinfo) if now.tzinfo else datetime.fromtimestamp(when)
    today = now.date()
    days = (today - then.date()).days
    for limit in (0, 1, 7, 30):
        if days <= limit:
            return today - timedelta(days=limit)
    return then.date().replace(day=1)


def _start_of(day: date, now: datetime) -> float:
    """The Unix time ``day`` starts in ``now``'s time zone (the local one when naive)."""
    return datetime.combine(day, time.min, now.tzinfo).timestamp()


def ms_until_tomorrow(now: datetime) -> int:
    """Milliseconds from ``now`` to one second after its next midnight (when the date groups
    change). Early by an hour on a daylight-saving day (a fixed offset): the groups are then
    redrawn unchanged and the next wait is short."""
    midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), now.tzinfo)
    return int((midnight - now).total_seconds() * 1000) + 1000


# --- search -------------------------------------------------------------------------------

_TERM = _Lazy(r"[^\W_]+(?:['’][^\W_]+)*")
_SNIPPET_NOISE = _Lazy(r"\*\*|__|~~|`")
_MARK = _Lazy(r"\[([^\[\]\n]*[^\W_][^\[\]\n]*)\](?!\()")


def query_terms(query: str) -> list[str]:
    """The words of a search (quotes, operators and punctuation dropped; longest first so a
    longer word wins where two overlap)."""
    words = {w.casefold() for w in _TERM.findall(query)} - {"and", "or", "not", "near"}
    return sorted(words, key=lambda w: (-len(w), w))


def _merge(text: str, ranges: list[tuple[int, int]]) -> list[Span]:
    spans: list[Span] = []
    at = 0
    for start, end in sorted(ranges):
        if end <= at:
            continue
        start = max(start, at)
        if start > at:
            spans.append((text[at:start], False))
        spans.append((text[start:end], True))
        at = end
    if at < len(text):
        spans.append((text[at:], False))
    return spans


def match_spans(text: str, terms: Sequence[str]) -> list[Span]:
    """``text`` cut into runs, the ones starting with a query word (case-insensitively, as
    FTS prefix-matches words) highlighted to the word's end."""
    if not terms or not text:
        return [(text, False)] if text else []
    folded = text.casefold()
    if len(folded) != len(text):  # a character that folds to two: no safe offsets
        folded = text.lower()
        if len(folded) != len(text):
            return [(text, False)]
    ranges: list[tuple[int, int]] = []
    for word in _TERM.finditer(folded):
        if any(word.group(0).startswith(term) for term in terms):
            ranges.append(word.span())
    return _merge(text, ranges)


def title_matches(titles: Iterable[tuple[str, str]], terms: Sequence[str]) -> list[str]:
    """The ids of ``titles`` ((id, title) pairs, in the list's order) whose title has, for
    every query word, a word starting with it (case-insensitively, as the message search
    matches): a search finds a conversation by its title as well as by its messages."""
    if not terms:
        return []
    found: list[str] = []
    for session_id, title in titles:
        words = _TERM.findall(title.casefold())
        if all(any(word.startswith(term) for word in words) for term in terms):
            found.append(session_id)
    return found


def snippet_spans(snippet: str) -> list[Span]:
    """A search snippet (its match in ``[brackets]``, as the store marks it) as runs on one
    line; a bracketed run followed by ``(`` is a Markdown link, not a mark. The snippet's
    Markdown is lightly taken off (links, images, bold, code ticks, heading and list markers
    at line starts; single ``*``/``_`` stay, they may touch a mark: ``[snake]_case``)."""
    lines = snippet.splitlines()
    # A line's start is a line's start, except where the store cut the text before it ("…").
    whole = 1 if lines and lines[0].lstrip().startswith("…") else 0
    lines[whole:] = [_LINE_START.sub("", line, count=1) for line in lines[whole:]]
    flat = _LINK.sub(r"\1", _IMAGE.sub(r"\1", " ".join(" ".join(lines).split())))
    flat = _SNIPPET_NOISE.sub("", flat)
    ranges: list[tuple[int, int]] = []
    parts: list[str] = []
    at = 0
    length = 0
    for mark in _MARK.finditer(flat):
        before = flat[at : mark.start()]
        parts.append(before)
        length += len(before)
        inner = mark.group(1)
        parts.append(inner)
        ranges.append((length, length + len(inner)))
        length += len(inner)
        at = mark.end()
    parts.append(flat[at:])
    return _merge("".join(parts), ranges)


def no_match_text(query: str) -> str:
    """The line shown when a search finds nothing."""
    return f"No conversations match “{' '.join(query.split())}”"
