"""What the approval card shows for a call: one human line and the rows of its diff or preview.

Pure decisions, no Qt: :func:`plan_call` turns a tool call (its name and arguments) and what is
known of its target file (:class:`Target`) into a :class:`CallView` — a summary sentence ("Edit
src/app.py in my-project: 3 lines removed, 5 added") and :class:`DiffRow` rows with the file's
real old/new line numbers. :func:`parse_unified` reads unified-diff text, counting line numbers
from each hunk header. :func:`probe` is the one small piece of I/O: it looks at the target under
the workspace folder (never outside it) so the card can say whether a write overwrites and where
an edit lands. :func:`button_rows` flows the card's buttons into rows that fit a width.

Why numbers need the file: ``edit_file`` replaces one exact occurrence of ``old_text`` anywhere
in the file, so a diff of ``old_text`` against ``new_text`` alone always starts at "line 1". The
real position is where ``old_text`` sits in the file; the diff is taken over those whole lines
(plus context) and its hunk headers are shifted by the lines above them.
"""

from __future__ import annotations

import difflib
import enum
import json
import logging
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

__all__ = [
    "CallView",
    "DiffRow",
    "RowKind",
    "Target",
    "TargetState",
    "button_rows",
    "count_lines",
    "parse_unified",
    "plan_call",
    "probe",
]

log = logging.getLogger(__name__)

#: Rows shown at most (a long write or diff ends with a "… more lines" note).
MAX_ROWS = 400
#: Characters of one row shown at most (a minified line is cut with "…").
MAX_ROW_CHARS = 400
#: Characters of one argument value shown at most.
MAX_VALUE_CHARS = 300
#: The largest file :func:`probe` reads to find an edit's lines or diff an overwrite.
MAX_READ_BYTES = 1_000_000
#: The most lines a diff matches up (difflib grows quadratically: ~0.1 s at 3000 lines); past
#: that a write is previewed, not diffed, and an edit shows its old lines out and new lines in.
MAX_DIFF_LINES = 3000
#: Lines of unchanged context around each change.
CONTEXT = 3

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


class RowKind(enum.Enum):
    FILE = "file"  # the file's path (a header)
    HUNK = "hunk"  # a hunk header between changes
    CONTEXT = "context"  # unchanged (or a plain preview line)
    ADD = "add"
    DELETE = "delete"
    NOTE = "note"  # "… 120 more lines", "\ No newline at end of file"
    ARG = "arg"  # one argument of a tool call: ``label`` is its name


@dataclass(frozen=True, slots=True)
class DiffRow:
    kind: RowKind
    text: str
    old: int | None = None  # line number before the change
    new: int | None = None  # line number after it
    label: str = ""


class TargetState(enum.Enum):
    UNKNOWN = "unknown"  # no workspace folder known, or it could not be looked at
    NEW = "new"
    EXISTS = "exists"
    FOLDER = "folder"
    OUTSIDE = "outside"  # the tool will refuse the path


@dataclass(frozen=True, slots=True)
class Target:
    """A call's ``path`` as found under the workspace folder."""

    shown: str  # the path as the person reads it (relative to the workspace when inside)
    state: TargetState = TargetState.UNKNOWN
    folder: str | None = None  # the workspace folder's name
    text: str | None = None  # the file's current text, when it is readable text


@dataclass(frozen=True, slots=True)
class CallView:
    summary: str
    rows: tuple[DiffRow, ...]
    numbered: bool  # rows carry real line numbers (the gutter shows them)


def _split(text: str) -> list[str]:
    """Lines as the file counts them (``\\n``-separated; no empty line after a final newline)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def count_lines(text: str) -> int:
    return len(_split(text))


def _lines_word(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"


def _clip(text: str, limit: int = MAX_ROW_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_unified(lines: Iterable[str], offset: int = 0) -> list[DiffRow]:
    """Rows of unified-diff text. Numbers count from each hunk header, plus ``offset`` (the lines
    above the diffed region); a header's own numbers are shifted by it too."""
    rows: list[DiffRow] = []
    old = new = old_left = new_left = 0
    for raw in lines:
        line = raw.rstrip("\n").removesuffix("\r")
        if old_left <= 0 and new_left <= 0:
            match = _HUNK.match(line)
            if match:
                a, b, c, d, rest = match.groups()
                old_left, new_left = int(b or "1"), int(d or "1")
                # A range of 0 lines names the line before it.
                old = int(a) + offset + (1 if old_left == 0 else 0)
                new = int(c) + offset + (1 if new_left == 0 else 0)
                header = f"@@ -{int(a) + offset},{old_left} +{int(c) + offset},{new_left} @@{rest}"
                rows.append(DiffRow(RowKind.HUNK, header))
            elif line.startswith("+++ "):
                rows.append(DiffRow(RowKind.FILE, line[4:].removeprefix("b/")))
            elif line.startswith("\\"):
                rows.append(DiffRow(RowKind.NOTE, line))
            continue  # "--- a/..." and anything else outside a hunk
        sign, body = line[:1], _clip(line[1:])
        if sign == "-":
            rows.append(DiffRow(RowKind.DELETE, body, old=old))
            old, old_left = old + 1, old_left - 1
        elif sign == "+":
            rows.append(DiffRow(RowKind.ADD, body, new=new))
            new, new_left = new + 1, new_left - 1
        elif sign == "\\":
            rows.append(DiffRow(RowKind.NOTE, line))
        else:  # " " (or an empty line some tools write for an empty context line)
            rows.append(DiffRow(RowKind.CONTEXT, body, old=old, new=new))
            old, new = old + 1, new + 1
            old_left, new_left = old_left - 1, new_left - 1
    return rows


def _diff(before: str, after: str, offset: int = 0) -> list[DiffRow]:
    old, new = _split(before), _split(after)
    if max(len(old), len(new)) > MAX_DIFF_LINES:
        return _blunt_diff(old, new, offset)
    lines = difflib.unified_diff(old, new, n=CONTEXT, lineterm="")
    rows = [r for r in parse_unified(lines, offset) if r.kind is not RowKind.FILE]
    # The gutter numbers the first hunk; a header row only separates later ones.
    return rows[1:] if rows and rows[0].kind is RowKind.HUNK else rows


def _blunt_diff(old: list[str], new: list[str], offset: int) -> list[DiffRow]:
    """Too long to match up: the common first and last lines are context, everything between
    goes out and comes in (still one hunk with the right numbers)."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    first = max(0, head - CONTEXT)
    rows = [
        DiffRow(RowKind.CONTEXT, _clip(old[i]), offset + i + 1, offset + i + 1)
        for i in range(first, head)
    ]
    rows += [
        DiffRow(RowKind.DELETE, _clip(old[i]), old=offset + i + 1)
        for i in range(head, len(old) - tail)
    ]
    rows += [
        DiffRow(RowKind.ADD, _clip(new[i]), new=offset + i + 1)
        for i in range(head, len(new) - tail)
    ]
    shift = len(new) - len(old)
    rows += [
        DiffRow(RowKind.CONTEXT, _clip(old[i]), offset + i + 1, offset + i + 1 + shift)
        for i in range(len(old) - tail, min(len(old), len(old) - tail + CONTEXT))
    ]
    return rows


def _region(file_text: str, start: int, end: int) -> tuple[int, int]:
    """The whole lines holding ``file_text[start:end]``, widened by ``CONTEXT`` lines each side."""
    first = file_text.rfind("\n", 0, start) + 1
    if end > start and file_text[end - 1] == "\n":
        last = end
    else:
        newline = file_text.find("\n", end)
        last = len(file_text) if newline < 0 else newline + 1
    for _ in range(CONTEXT):
        if first > 0:
            first = file_text.rfind("\n", 0, first - 1) + 1
        if last < len(file_text):
            newline = file_text.find("\n", last)
            last = len(file_text) if newline < 0 else newline + 1
    return first, last


def _capped(rows: Sequence[DiffRow]) -> tuple[DiffRow, ...]:
    if len(rows) <= MAX_ROWS:
        return tuple(rows)
    more = sum(1 for r in rows[MAX_ROWS:] if r.kind is not RowKind.HUNK)
    return (*rows[:MAX_ROWS], DiffRow(RowKind.NOTE, f"… {_lines_word(more)} more"))


def _changes(rows: Iterable[DiffRow]) -> tuple[int, int]:
    removed = added = 0
    for row in rows:
        removed += row.kind is RowKind.DELETE
        added += row.kind is RowKind.ADD
    return removed, added


def _change_words(removed: int, added: int) -> str:
    if removed and added:
        return f"{_lines_word(removed)} removed, {added} added"
    if removed:
        return f"{_lines_word(removed)} removed"
    if added:
        return f"{_lines_word(added)} added"
    return "no lines change"


def _where(target: Target) -> str:
    return f"{target.shown} in {target.folder}" if target.folder else target.shown


def _refusal(target: Target) -> str | None:
    if target.state is TargetState.OUTSIDE:
        return "it is outside the workspace folder, so the tool will refuse it"
    if target.state is TargetState.FOLDER:
        return "that is a folder, so the tool will refuse it"
    return None


def _plan_edit(old_text: str, new_text: str, target: Target) -> CallView:
    head = DiffRow(RowKind.FILE, target.shown)
    refused = _refusal(target)
    problem: str | None = refused
    located: list[DiffRow] | None = None
    if refused is None and target.state is TargetState.NEW:
        problem = "the file does not exist, so the edit will fail"
    elif refused is None and target.text is not None:
        found = target.text.count(old_text) if old_text else 0
        if found == 1:
            start = target.text.index(old_text)
            end = start + len(old_text)
            first, last = _region(target.text, start, end)
            before = target.text[first:last]
            after = target.text[first:start] + new_text + target.text[end:last]
            located = _diff(before, after, offset=target.text.count("\n", 0, first))
        elif found == 0:
            problem = "the text to replace is not in the file, so the edit will fail"
        else:
            problem = f"the text to replace occurs {found} times, so the edit will fail"
    if located is None:  # where in the file is unknown: the snippet's lines, unnumbered
        rows = [
            DiffRow(r.kind, "" if r.kind is RowKind.HUNK else r.text)
            for r in _diff(old_text, new_text)
        ]
    else:
        rows = located
    removed, added = _changes(rows)
    summary = f"Edit {_where(target)}: {_change_words(removed, added)}"
    if problem:
        summary += f" — {problem}"
    return CallView(summary, (head, *_capped(rows)), numbered=located is not None)


def _plan_write(content: str, target: Target) -> CallView:
    n = count_lines(content)
    what = "an empty file" if not content else _lines_word(n)
    summary = f"Write {what} to {_where(target)}"
    head = DiffRow(RowKind.FILE, target.shown)
    refused = _refusal(target)
    if refused:
        rows = [
            DiffRow(RowKind.CONTEXT, _clip(line), new=i)
            for i, line in enumerate(_split(content), 1)
        ]
        return CallView(f"{summary} — {refused}", (head, *_capped(rows)), numbered=True)
    current = target.text
    if current is not None and max(count_lines(current), n) > MAX_DIFF_LINES:
        current = None  # too long to diff here: a preview of the new content
    if target.state is TargetState.EXISTS and current is not None:
        if current == content:
            return CallView(f"{summary} — the file already has this content", (head,), True)
        rows = _diff(current, content)
        words = _change_words(*_changes(rows))
        summary += f" — overwrites the existing file ({words})"
        return CallView(summary, (head, *_capped(rows)), numbered=True)
    if target.state is TargetState.NEW:
        summary += " — creates a new file"
        rows = [
            DiffRow(RowKind.ADD, _clip(line), new=i) for i, line in enumerate(_split(content), 1)
        ]
    else:
        if target.state is TargetState.EXISTS:
            summary += " — overwrites the existing file"
        rows = [
            DiffRow(RowKind.CONTEXT, _clip(line), new=i)
            for i, line in enumerate(_split(content), 1)
        ]
    return CallView(summary, (head, *_capped(rows)), numbered=True)


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    text = " ⏎ ".join(text.splitlines()) if "\n" in text else text
    return _clip(text, MAX_VALUE_CHARS)


def plan_call(name: str, args: Mapping[str, Any], target: Target | None = None) -> CallView:
    """The card's summary and rows for a call to ``name`` (``target``: its ``path`` looked up
    with :func:`probe`; ``None`` when unknown)."""
    path = str(args.get("path", ""))
    where = target or Target(path)
    if name == "edit_file" and isinstance(args.get("old_text"), str):
        return _plan_edit(str(args["old_text"]), str(args.get("new_text", "")), where)
    if name == "write_file" and isinstance(args.get("content"), str):
        return _plan_write(str(args["content"]), where)
    rows = tuple(DiffRow(RowKind.ARG, _value_text(v), label=str(k)) for k, v in args.items())
    summary = "With these arguments:" if rows else "It takes no arguments."
    return CallView(summary, rows, numbered=False)


def _inside(root: Path, path: str) -> str | None:
    """``path`` relative to ``root`` (POSIX form) when the tool would accept it, else ``None``."""
    if "\0" in path or not path.strip():
        return None
    pure = PurePosixPath(path.replace(os.sep, "/"))
    if ".." in pure.parts:
        return None
    if pure.is_absolute():
        try:
            pure = pure.relative_to(PurePosixPath(root.as_posix()))
        except ValueError:
            return None
    relative = pure.as_posix()
    return None if relative in ("", ".") else relative


def probe(root: Path | str | None, path: str) -> Target:
    """Look ``path`` up under the workspace folder ``root`` (reads at most ``MAX_READ_BYTES`` of
    a regular file inside it; a link leading out of the folder counts as outside)."""
    if root is None:
        return Target(path)
    root = Path(root)
    folder = root.name or str(root)
    relative = _inside(root, path)
    if relative is None:
        return Target(path, TargetState.OUTSIDE, folder)
    try:
        base = root.resolve()
        full = (root / relative).resolve()
        if not full.is_relative_to(base):
            return Target(relative, TargetState.OUTSIDE, folder)
        if full.is_dir():
            return Target(relative, TargetState.FOLDER, folder)
        if not full.exists():
            return Target(relative, TargetState.NEW, folder)
        text: str | None = None
        if full.is_file() and full.stat().st_size <= MAX_READ_BYTES:
            data = full.read_bytes()
            if b"\0" not in data[:8192]:
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    text = None
        return Target(relative, TargetState.EXISTS, folder, text)
    except (OSError, RuntimeError) as err:  # unreadable, a link loop: asked without details
        log.info("approval card could not look at %r in %s: %s", path, root, err)
        return Target(relative, TargetState.UNKNOWN, folder)


def button_rows(widths: Sequence[int], available: int, spacing: int) -> list[list[int]]:
    """Indexes of ``widths`` flowed into rows no wider than ``available`` (each row holds at
    least one item, in order)."""
    rows: list[list[int]] = []
    used = 0
    for index, width in enumerate(widths):
        if rows and used + spacing + width <= available:
            rows[-1].append(index)
            used += spacing + width
        else:
            rows.append([index])
            used = width
    return rows
