"""The approval card's looks and words (issue 16): pure tables for what it says and the diff's
line numbers, the real widget for its size, theme and narrow layout, and one run through the
real window where the numbers shown must match the file the real ``edit_file`` then writes."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app import ToolCall
from app.simulator import Reply, SimToolCall
from tests.ui.helpers import until, window_on_simulator
from tests.ui.test_approval import send, setup_tools
from ui.approval import ApprovalCard, describe_call
from ui.approval_view import (
    MAX_ROWS,
    DiffRow,
    RowKind,
    Target,
    TargetState,
    button_rows,
    parse_unified,
    plan_call,
    probe,
)
from ui.theme import DARK, LIGHT, palette_for

A, D, C, H, N = RowKind.ADD, RowKind.DELETE, RowKind.CONTEXT, RowKind.HUNK, RowKind.NOTE


def numbered(rows: Any) -> list[tuple[RowKind, int | None, int | None, str]]:
    return [(r.kind, r.old, r.new, r.text) for r in rows if r.kind is not RowKind.FILE]


def file_of(n: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, n + 1))


# --- parse_unified: numbers from each hunk header ---------------------------------------------

MULTI_HUNK = """\
--- a/f.py
+++ b/f.py
@@ -1,3 +1,3 @@
 a
-b
+B
 c
@@ -10,3 +10,3 @@ def g():
 j
+J2
 k
--- not a header: a removed line starting with two dashes
@@ -20 +21 @@
-t
+T
\\ No newline at end of file
@@ -30,0 +31,2 @@
+x
+y
"""


@pytest.mark.parametrize(
    ("offset", "expected"),
    [
        (
            0,
            [
                (H, None, None, "@@ -1,3 +1,3 @@"),
                (C, 1, 1, "a"),
                (D, 2, None, "b"),
                (A, None, 2, "B"),
                (C, 3, 3, "c"),
                (H, None, None, "@@ -10,3 +10,3 @@ def g():"),
                (C, 10, 10, "j"),
                (A, None, 11, "J2"),
                (C, 11, 12, "k"),
                (D, 12, None, "-- not a header: a removed line starting with two dashes"),
                (H, None, None, "@@ -20,1 +21,1 @@"),
                (D, 20, None, "t"),
                (A, None, 21, "T"),
                (N, None, None, "\\ No newline at end of file"),
                (H, None, None, "@@ -30,0 +31,2 @@"),
                (A, None, 31, "x"),
                (A, None, 32, "y"),
            ],
        ),
        (
            100,
            [
                (H, None, None, "@@ -101,3 +101,3 @@"),
                (C, 101, 101, "a"),
                (D, 102, None, "b"),
                (A, None, 102, "B"),
                (C, 103, 103, "c"),
                (H, None, None, "@@ -110,3 +110,3 @@ def g():"),
                (C, 110, 110, "j"),
                (A, None, 111, "J2"),
                (C, 111, 112, "k"),
                (D, 112, None, "-- not a header: a removed line starting with two dashes"),
                (H, None, None, "@@ -120,1 +121,1 @@"),
                (D, 120, None, "t"),
                (A, None, 121, "T"),
                (N, None, None, "\\ No newline at end of file"),
                (H, None, None, "@@ -130,0 +131,2 @@"),
                (A, None, 131, "x"),
                (A, None, 132, "y"),
            ],
        ),
    ],
)
def test_parse_unified_counts_from_each_hunk_header(offset: int, expected: list[Any]) -> None:
    rows = parse_unified(MULTI_HUNK.splitlines(), offset)
    assert rows[0] == DiffRow(RowKind.FILE, "f.py")
    assert numbered(rows) == expected


# --- edits: located in the file ---------------------------------------------------------------


def edit(old: str, new: str, text: str | None, state: TargetState = TargetState.EXISTS) -> Any:
    target = Target("src/app.py", state, "my-project", text)
    return plan_call("edit_file", {"path": "src/app.py", "old_text": old, "new_text": new}, target)


def test_an_edit_is_numbered_where_it_sits_in_the_file() -> None:
    text = file_of(60)
    view = edit("line 40\nline 41\n", "forty\nforty-one\nforty-two\n", text)
    assert view.numbered
    assert view.summary == "Edit src/app.py in my-project: 2 lines removed, 3 added"
    assert view.rows[0] == DiffRow(RowKind.FILE, "src/app.py")
    assert numbered(view.rows) == [
        (C, 37, 37, "line 37"),
        (C, 38, 38, "line 38"),
        (C, 39, 39, "line 39"),
        (D, 40, None, "line 40"),
        (D, 41, None, "line 41"),
        (A, None, 40, "forty"),
        (A, None, 41, "forty-one"),
        (A, None, 42, "forty-two"),
        (C, 42, 43, "line 42"),
        (C, 43, 44, "line 43"),
        (C, 44, 45, "line 44"),
    ]


def test_an_edit_with_changes_far_apart_has_two_hunks_both_numbered() -> None:
    text = file_of(60)
    old = "".join(f"line {i}\n" for i in range(10, 26))
    new = old.replace("line 10\n", "ten\n").replace("line 25\n", "twenty-five\n")
    rows = numbered(edit(old, new, text).rows)
    changed = [(k, o, n, t) for k, o, n, t in rows if k in (A, D)]
    assert changed == [
        (D, 10, None, "line 10"),
        (A, None, 10, "ten"),
        (D, 25, None, "line 25"),
        (A, None, 25, "twenty-five"),
    ]
    # The first hunk is numbered by the gutter; a separator row comes before the second.
    assert [k for k, *_ in rows].count(H) == 1
    assert rows[0] == (C, 7, 7, "line 7")


@pytest.mark.parametrize(
    ("text", "old", "new", "expected"),
    [
        # Mid-line: the whole line is what changes.
        (
            "a\nb\n    x = 1  # one\nc\n",
            "x = 1",
            "x = 2",
            [
                (C, 1, 1, "a"),
                (C, 2, 2, "b"),
                (D, 3, None, "    x = 1  # one"),
                (A, None, 3, "    x = 2  # one"),
                (C, 4, 4, "c"),
            ],
        ),
        # The first line, no context above.
        (
            "top\nnext\n",
            "top\n",
            "TOP\n",
            [(D, 1, None, "top"), (A, None, 1, "TOP"), (C, 2, 2, "next")],
        ),
        # The last line without a final newline.
        (
            "a\nb\nend",
            "end",
            "END",
            [(C, 1, 1, "a"), (C, 2, 2, "b"), (D, 3, None, "end"), (A, None, 3, "END")],
        ),
        # Pure insertion inside a line's text that adds a line.
        (
            "a\nb\nc\n",
            "b\n",
            "b\nb2\n",
            [(C, 1, 1, "a"), (C, 2, 2, "b"), (A, None, 3, "b2"), (C, 3, 4, "c")],
        ),
    ],
)
def test_edit_rows_table(text: str, old: str, new: str, expected: list[Any]) -> None:
    assert numbered(edit(old, new, text).rows) == expected


@pytest.mark.parametrize(
    ("text", "state", "summary_end"),
    [
        (
            "a\nb\n",
            TargetState.EXISTS,
            "the text to replace is not in the file, so the edit will fail",
        ),
        ("x\nx\n", TargetState.EXISTS, "the text to replace occurs 2 times, so the edit will fail"),
        (None, TargetState.NEW, "the file does not exist, so the edit will fail"),
        (
            None,
            TargetState.OUTSIDE,
            "it is outside the workspace folder, so the tool will refuse it",
        ),
        (None, TargetState.FOLDER, "that is a folder, so the tool will refuse it"),
        (None, TargetState.UNKNOWN, "1 line removed, 1 added"),
        (None, TargetState.EXISTS, "1 line removed, 1 added"),  # unreadable (binary, too big)
    ],
)
def test_an_edit_that_cannot_be_placed_is_shown_unnumbered(
    text: str | None, state: TargetState, summary_end: str
) -> None:
    view = edit("x\n", "y\n", text, state)
    assert view.summary.endswith(summary_end), view.summary
    assert not view.numbered
    assert numbered(view.rows) == [(D, None, None, "x"), (A, None, None, "y")]


# --- writes: path, new or overwrite, preview --------------------------------------------------


def write(content: str, target: Target | None) -> Any:
    return plan_call("write_file", {"path": "docs/plan.md", "content": content}, target)


TWELVE = "".join(f"step {i}\n" for i in range(1, 13))


@pytest.mark.parametrize(
    ("content", "target", "summary"),
    [
        (
            TWELVE,
            Target("docs/plan.md", TargetState.NEW, "my-project"),
            "Write 12 lines to docs/plan.md in my-project — creates a new file",
        ),
        (
            TWELVE,
            Target(
                "docs/plan.md", TargetState.EXISTS, "my-project", TWELVE.replace("step 3", "s3")
            ),
            "Write 12 lines to docs/plan.md in my-project — overwrites the existing file "
            "(1 line removed, 1 added)",
        ),
        (
            TWELVE,
            Target("docs/plan.md", TargetState.EXISTS, "my-project", None),
            "Write 12 lines to docs/plan.md in my-project — overwrites the existing file",
        ),
        (
            TWELVE,
            Target("docs/plan.md", TargetState.EXISTS, "my-project", TWELVE),
            "Write 12 lines to docs/plan.md in my-project — the file already has this content",
        ),
        (
            "one line",
            Target("../x", TargetState.OUTSIDE, "my-project"),
            "Write 1 line to ../x in my-project — it is outside the workspace folder, so the "
            "tool will refuse it",
        ),
        (
            "",
            Target("docs/plan.md", TargetState.NEW, "p"),
            "Write an empty file to docs/plan.md in p — creates a new file",
        ),
        (TWELVE, None, "Write 12 lines to docs/plan.md"),
    ],
)
def test_write_summary_table(content: str, target: Target | None, summary: str) -> None:
    assert write(content, target).summary == summary


def test_a_new_file_is_all_added_lines_an_overwrite_is_a_diff() -> None:
    new = write("a\nb\n", Target("docs/plan.md", TargetState.NEW, "p"))
    assert numbered(new.rows) == [(A, None, 1, "a"), (A, None, 2, "b")]
    old = "".join(f"l{i}\n" for i in range(1, 21))
    changed = old.replace("l15\n", "fifteen\n")
    over = write(changed, Target("docs/plan.md", TargetState.EXISTS, "p", old))
    assert [(k, o, n) for k, o, n, _ in numbered(over.rows) if k in (A, D)] == [
        (D, 15, None),
        (A, None, 15),
    ]
    assert numbered(over.rows)[0] == (C, 12, 12, "l12")


def test_a_long_preview_is_cut_with_a_note() -> None:
    content = "".join(f"{i}\n" for i in range(MAX_ROWS + 50))
    view = write(content, Target("docs/plan.md", TargetState.NEW, "p"))
    assert len(view.rows) == MAX_ROWS + 2  # the file row, the rows, the note
    assert view.rows[-1] == DiffRow(RowKind.NOTE, "… 50 lines more")


def test_past_the_diff_limit_an_edit_is_old_lines_out_new_lines_in(monkeypatch: Any) -> None:
    monkeypatch.setattr("ui.approval_view.MAX_DIFF_LINES", 4)
    text = file_of(20)
    old = "".join(f"line {i}\n" for i in range(10, 15))
    view = edit(old, old.replace("line 12\n", "twelve\n12b\n"), text)
    assert numbered(view.rows) == [
        (C, 9, 9, "line 9"),
        (C, 10, 10, "line 10"),
        (C, 11, 11, "line 11"),
        (D, 12, None, "line 12"),
        (A, None, 12, "twelve"),
        (A, None, 13, "12b"),
        (C, 13, 14, "line 13"),
        (C, 14, 15, "line 14"),
        (C, 15, 16, "line 15"),
    ]
    # A write that long is previewed (numbered), not diffed against the file.
    over = write(file_of(6), Target("docs/plan.md", TargetState.EXISTS, "p", file_of(5)))
    assert over.summary.endswith("— overwrites the existing file")
    assert [(k, n) for k, _, n, _ in numbered(over.rows)] == [(C, i) for i in range(1, 7)]


def test_other_tools_show_their_arguments_as_key_value_rows() -> None:
    view = plan_call(
        "github__create_issue",
        {"repo": "me/x", "body": "two\nlines", "labels": ["a", "b"], "draft": False, "n": None},
    )
    assert view.summary == "With these arguments:" and not view.numbered
    assert [(r.label, r.text) for r in view.rows] == [
        ("repo", "me/x"),
        ("body", "two ⏎ lines"),
        ("labels", '["a", "b"]'),
        ("draft", "false"),
        ("n", "null"),
    ]
    assert plan_call("ping", {}).summary == "It takes no arguments."
    long = plan_call("t", {"v": "x" * 1000}).rows[0].text
    assert len(long) == 300 and long.endswith("…")


def test_describe_call_is_the_cards_words_as_text() -> None:
    call = ToolCall(
        "e", "edit_file", {"path": "a.py", "old_text": "x = 1\n", "new_text": "x = 2\n"}
    )
    text = describe_call(call)
    assert text.splitlines()[0] == "Edit a.py: 1 line removed, 1 added"
    assert "--- a/a.py" in text and "-x = 1" in text and "+x = 2" in text


# --- probe: the target under the workspace ----------------------------------------------------


def test_probe_looks_only_inside_the_workspace(tmp_path: Path) -> None:
    root = tmp_path / "my-project"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "plan.md").write_text("hello\n")
    (root / "bin.dat").write_bytes(b"\x00\x01")
    (tmp_path / "secret.txt").write_text("outside\n")
    os.symlink(tmp_path / "secret.txt", root / "link.txt")
    os.symlink(root / "loop2", root / "loop1")
    os.symlink(root / "loop1", root / "loop2")
    cases = {
        "docs/plan.md": Target("docs/plan.md", TargetState.EXISTS, "my-project", "hello\n"),
        "./docs/plan.md": Target("docs/plan.md", TargetState.EXISTS, "my-project", "hello\n"),
        str(root / "docs" / "plan.md"): Target(
            "docs/plan.md", TargetState.EXISTS, "my-project", "hello\n"
        ),
        "docs/new.md": Target("docs/new.md", TargetState.NEW, "my-project"),
        "docs": Target("docs", TargetState.FOLDER, "my-project"),
        "bin.dat": Target("bin.dat", TargetState.EXISTS, "my-project", None),
        "../secret.txt": Target("../secret.txt", TargetState.OUTSIDE, "my-project"),
        str(tmp_path / "secret.txt"): Target(
            str(tmp_path / "secret.txt"), TargetState.OUTSIDE, "my-project"
        ),
        "link.txt": Target("link.txt", TargetState.OUTSIDE, "my-project"),
        "a\0b": Target("a\0b", TargetState.OUTSIDE, "my-project"),
        "loop1": Target("loop1", TargetState.UNKNOWN, "my-project"),
    }
    for path, expected in cases.items():
        assert probe(root, path) == expected, path
    assert probe(None, "docs/plan.md") == Target("docs/plan.md")


@pytest.mark.parametrize(
    ("widths", "available", "rows"),
    [
        ([100, 120, 80], 400, [[0, 1, 2]]),
        ([100, 120, 80], 316, [[0, 1, 2]]),  # exactly fits: 100 + 8 + 120 + 8 + 80
        ([100, 120, 80], 315, [[0, 1], [2]]),
        ([100, 120, 80], 200, [[0], [1], [2]]),
        ([100, 120, 80], 50, [[0], [1], [2]]),  # each row holds at least one
    ],
)
def test_button_rows_table(widths: list[int], available: int, rows: list[list[int]]) -> None:
    assert button_rows(widths, available, 8) == rows


# --- the real widget --------------------------------------------------------------------------


def hosted(qtbot: Any, width: int, height: int, root: Path | None) -> tuple[QWidget, ApprovalCard]:
    host = QWidget()
    qtbot.addWidget(host)
    layout = QVBoxLayout(host)
    card = ApprovalCard(workspace=root)
    layout.addWidget(card)
    layout.addStretch(1)
    host.resize(width, height)
    host.show()
    return host, card


def ask(qtbot: Any, card: ApprovalCard, call: ToolCall) -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    card.ask(call, loop.create_future())
    qtbot.waitUntil(card.isVisible, timeout=5000)
    return loop


def edit_call(root: Path) -> ToolCall:
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "src" / "app.py").write_text(file_of(60))
    return ToolCall(
        "c", "edit_file", {"path": "src/app.py", "old_text": "line 40\n", "new_text": "forty\n"}
    )


def test_the_card_shows_the_edit_numbered_and_is_sized_to_it(qtbot: Any, tmp_path: Path) -> None:
    root = tmp_path / "my-project"
    root.mkdir()
    host, card = hosted(qtbot, 800, 900, root)
    loop = ask(qtbot, card, edit_call(root))
    try:
        assert card.title.text() == "Allow <b>edit_file</b> to run?"
        assert card.summary.text() == "Edit src/app.py in my-project: 1 line removed, 1 added"
        changes = [(r.kind, r.old, r.new) for r in card.details.rows if r.kind in (A, D)]
        assert changes == [(D, 40, None), (A, None, 40)]
        # As tall as its rows: nothing scrolls and no empty box below them.
        qtbot.waitUntil(lambda: card.details.height() == card.details.content_height())
        assert card.details.verticalScrollBar().maximum() == 0
        assert card.height() < 320
        # Added lines on the add tint, removed on the delete tint, context plain.
        doc = card.details.document()
        kinds = [r.kind for r in card.details.rows]
        tint = doc.findBlockByNumber(kinds.index(A)).blockFormat().background().color().name()
        assert tint == LIGHT.diff_add_bg
        tint = doc.findBlockByNumber(kinds.index(D)).blockFormat().background().color().name()
        assert tint == LIGHT.diff_del_bg
        context = doc.findBlockByNumber(kinds.index(C)).blockFormat().background()
        assert context.style() == Qt.BrushStyle.NoBrush
        assert card.details.gutter_width() > 0
        # Copying gives the file's text: the numbers and signs live in the gutter.
        assert doc.findBlockByNumber(kinds.index(D)).text() == "line 40"
    finally:
        loop.close()


def test_a_long_diff_scrolls_inside_a_bounded_card(qtbot: Any, tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    host, card = hosted(qtbot, 800, 700, root)
    content = "".join(f"row {i}\n" for i in range(300))
    loop = ask(qtbot, card, ToolCall("c", "write_file", {"path": "big.txt", "content": content}))
    try:
        assert card.summary.text() == "Write 300 lines to big.txt in p — creates a new file"
        qtbot.waitUntil(lambda: card.details.verticalScrollBar().maximum() > 0)
        # Laid out (layouts settle on a posted event): within 40% of the window.
        qtbot.waitUntil(lambda: card.height() <= 0.4 * host.height() + 1)
        # A taller window gives the diff more room.
        before = card.details.height()
        host.resize(800, 1000)
        qtbot.waitUntil(lambda: card.details.height() > before)
        qtbot.waitUntil(lambda: 0.3 * host.height() < card.height() <= 0.4 * host.height() + 1)
    finally:
        loop.close()


def test_the_card_follows_the_theme(qtbot: Any, tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    host, card = hosted(qtbot, 800, 700, root)
    loop = ask(qtbot, card, edit_call(root))
    try:
        kinds = [r.kind for r in card.details.rows]

        def add_tint() -> str:
            block = card.details.document().findBlockByNumber(kinds.index(A))
            return str(block.blockFormat().background().color().name())

        assert card.tokens is LIGHT and add_tint() == LIGHT.diff_add_bg
        assert LIGHT.accent in card.allow_once_button.styleSheet()
        host.setPalette(palette_for(DARK))
        qtbot.waitUntil(lambda: card.tokens is DARK)
        assert add_tint() == DARK.diff_add_bg
        assert DARK.accent in card.allow_once_button.styleSheet()
        assert DARK.code_bg in card.details.styleSheet()
        # The card is painted on the theme's card colour.
        image = card.grab().toImage()
        assert image.pixelColor(card.width() // 2, 3).name() == DARK.tool_bg
        host.setPalette(palette_for(LIGHT))
        qtbot.waitUntil(lambda: card.tokens is LIGHT)
        assert add_tint() == LIGHT.diff_add_bg
    finally:
        loop.close()


def test_the_buttons_flow_into_rows_when_narrow(qtbot: Any) -> None:
    host, card = hosted(qtbot, 900, 600, None)
    loop = ask(qtbot, card, ToolCall("c", "ping", {"host": "example.org"}))
    try:
        once, conversation, deny = card.buttons
        qtbot.waitUntil(lambda: once.y() == deny.y() and deny.x() > conversation.x())
        assert deny.geometry().right() > card.width() - 30  # Deny sits at the far end
        widest = max(b.sizeHint().width() for b in card.buttons)
        assert card.minimumSizeHint().width() < widest + 40  # never forces a wide window
        host.resize(widest + 60, 600)
        qtbot.waitUntil(lambda: len({once.y(), conversation.y(), deny.y()}) > 1)
        for button in card.buttons:
            assert button.geometry().right() <= card.width()
            assert button.width() >= button.sizeHint().width()  # not squeezed: all words show
        # The arguments: a key: value row, no gutter.
        assert card.summary.text() == "With these arguments:"
        assert card.details.toPlainText() == "host: example.org"
        assert card.details.gutter_width() == 0
    finally:
        loop.close()


def test_buttons_keep_their_security_and_have_human_names(qtbot: Any) -> None:
    host, card = hosted(qtbot, 800, 600, None)
    loop = asyncio.new_event_loop()
    try:
        first, second = loop.create_future(), loop.create_future()
        card.ask(ToolCall("c1", "x<b>", {}), first)
        card.ask(ToolCall("c2", "y", {}), second)
        assert "x&lt;b&gt;" in card.title.text() and "1 more waiting" in card.title.text()
        names = [b.accessibleName() for b in card.buttons]
        assert names == ["Allow once", "Allow for this conversation", "Deny"]
        for button in card.buttons:
            assert button.focusPolicy() == Qt.FocusPolicy.NoFocus
            assert not button.isDefault() and not button.autoDefault()
        assert "Ctrl+Shift+A" in card.allow_once_button.text()
        assert "Ctrl+Shift+D" in card.deny_button.text()
        first.cancel()
        loop.run_until_complete(asyncio.sleep(0))
        assert card.current_call is not None and card.current_call.id == "c2"
        assert "more waiting" not in card.title.text()
    finally:
        loop.close()


def test_the_card_says_whether_a_write_overwrites(qtbot: Any, tmp_path: Path) -> None:
    root = tmp_path / "my-project"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "old.md").write_text("a\nb\n")
    host, card = hosted(qtbot, 800, 700, root)
    loop = asyncio.new_event_loop()
    try:
        for path, end in (("docs/new.md", "creates a new file"), ("docs/old.md", "overwrites")):
            future = loop.create_future()
            card.ask(ToolCall(path, "write_file", {"path": path, "content": "a\nc\n"}), future)
            assert end in card.summary.text(), card.summary.text()
            assert path in card.details.toPlainText()
            future.cancel()
            loop.run_until_complete(asyncio.sleep(0))
        assert not card.isVisible()
    finally:
        loop.close()


def test_the_workspace_may_be_a_lookup_asked_at_each_question(qtbot: Any, tmp_path: Path) -> None:
    folders = {"now": tmp_path / "first"}
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
    (tmp_path / "second" / "a.txt").write_text("old\n")
    host, card = hosted(qtbot, 800, 600, None)
    card.set_workspace(lambda: folders["now"])
    loop = asyncio.new_event_loop()
    try:
        call = ToolCall("w", "write_file", {"path": "a.txt", "content": "new\n"})
        for folder, end in (("first", "in first — creates a new file"), ("second", "overwrites")):
            folders["now"] = tmp_path / folder
            future = loop.create_future()
            card.ask(call, future)
            assert end in card.summary.text(), card.summary.text()
            future.cancel()
            loop.run_until_complete(asyncio.sleep(0))
    finally:
        loop.close()


# --- the real window --------------------------------------------------------------------------


def test_the_numbers_shown_are_where_the_real_edit_lands(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (sim, window):
            ws = setup_tools(window, tmp_path)
            before = file_of(50)
            (ws / "notes.txt").write_text(before)
            old_text = "line 30\nline 31\n"
            new_text = "thirty\nline 31\nthirty-one and a half\n"
            args = {"path": "notes.txt", "old_text": old_text, "new_text": new_text}
            sim.enqueue(
                Reply(text="Editing.", tool_calls=(SimToolCall("edit_file", args, id="e1"),))
            )
            sim.enqueue(Reply(text="Done."))
            card = window.approval_card
            card.set_workspace(ws)  # what the window does for the open conversation's folder
            await send(window, "Edit the notes")
            await until(card.isVisible, 10, "the approval card")
            assert card.summary.text() == "Edit notes.txt in ws: 1 line removed, 2 added"
            rows = card.details.rows
            assert any(r.kind is A for r in rows) and any(r.kind is D for r in rows)
            await until(lambda: card.armed, 5, "armed")
            card.allow_once_button.click()
            await until(lambda: not window.controller.busy, 10, "the edit")
            after = (ws / "notes.txt").read_text()
            assert after == before.replace(old_text, new_text)
            old_lines, new_lines = before.splitlines(), after.splitlines()
            for row in rows:
                if row.old is not None:
                    assert old_lines[row.old - 1] == row.text, row
                if row.new is not None:
                    assert new_lines[row.new - 1] == row.text, row
            assert [r.old for r in rows if r.kind is D] == [30]
            assert [r.new for r in rows if r.kind is A] == [30, 32]

    run(scenario(), timeout=45)


def test_through_the_window_a_write_says_it_overwrites(run: Any, tmp_path: Path) -> None:
    """The conversation's real workspace folder (File tools from the window's own flow); the
    card looks it up the way the window hands it over."""

    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (sim, window):
            folder = tmp_path / "my-project"
            (folder / "docs").mkdir(parents=True)
            (folder / "docs" / "plan.md").write_text("# Plan\n\n1. Old step\n")
            card = window.approval_card
            card.set_workspace(lambda: window.workspace._path)
            await window.set_workspace(str(folder))
            content = "# Plan\n\n1. New step\n2. Another\n"
            args = {"path": "docs/plan.md", "content": content}
            sim.enqueue(
                Reply(text="Saving.", tool_calls=(SimToolCall("write_file", args, id="w1"),))
            )
            sim.enqueue(Reply(text="Saved."))
            await send(window, "Save the plan")
            await until(card.isVisible, 10, "the approval card")
            assert card.summary.text() == (
                "Write 4 lines to docs/plan.md in my-project — overwrites the existing file "
                "(1 line removed, 2 added)"
            )
            assert [(r.kind, r.old, r.new) for r in card.details.rows if r.kind in (A, D)] == [
                (D, 3, None),
                (A, None, 3),
                (A, None, 4),
            ]
            # Sized to its content inside the window, not a fixed box.
            await until(
                lambda: (
                    card.details.verticalScrollBar().maximum() == 0
                    and card.details.height() == card.details.content_height()
                    and card.height() < 0.4 * window.height()
                ),
                5,
                "the card sized to its rows",
            )
            card.deny_button.click()
            await until(lambda: not window.controller.busy, 10, "the answer")
            assert (folder / "docs" / "plan.md").read_text() == "# Plan\n\n1. Old step\n"

    run(scenario(), timeout=45)
