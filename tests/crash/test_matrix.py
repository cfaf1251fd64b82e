"""A short run of the crash matrix (:mod:`tests.crash.matrix`) in the default suite.

The long run is one command: ``python -m tests.crash.matrix --kills 500``. Here: 24 trials,
three at each point of the lifecycle (the recovery ones kill the recovering process too); then
the matrix is run with each deliberate bug of :mod:`tests.crash.mutations` and must fail, and
the checker's own logic is checked on states it must reject, so a checker that accepts
everything cannot pass.
"""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from tests.crash import matrix, matrix_checks

KILLS = 24


@pytest.mark.timeout(180)
def test_crash_matrix_short_run(tmp_path: Path) -> None:
    outcomes = matrix.run_matrix(KILLS, seed=2024, jobs=2, root=tmp_path)
    table = matrix.tally(outcomes)
    report = matrix.format_tally(table)
    failures = [
        f"{o.trial.point}#{o.trial.index}: {o.violations}" for o in outcomes if o.violations
    ]
    assert not failures, report + "\n" + "\n".join(failures)
    assert {point: row["kills"] for point, row in table.items()} == dict.fromkeys(
        matrix.POINTS, KILLS // len(matrix.POINTS)
    )
    assert all(row["recovered"] == row["kills"] for row in table.values()), report
    assert (
        sum(
            row["tool_double_runs"] + row["lost_messages"] + row["changed_messages"]
            for row in table.values()
        )
        == 0
    )
    # The kills really landed mid-request: crash records, drafts, and tools left unanswered.
    per_point = KILLS // len(matrix.POINTS)
    assert table["mid_tool"]["landed"] == {"recover_tools": per_point}
    assert table["awaiting_approval"]["landed"] == {"recover_tools": per_point}
    assert table["streaming"]["crashed_records"] == table["streaming"]["kills"]
    assert table["streaming"]["drafts_kept"] >= 1
    # Recovery trials killed the recovering process, then recovered again.
    assert table["recovery"]["recovery_kills"] == per_point
    assert table["recovery"]["resumes"] == 2 * per_point


#: Per deliberate bug: what the matrix must then report (kills land mid-tool, where all three
#: bugs matter: a started tool, an unanswered call, assistant text already saved).
MUTATION_EVIDENCE = {
    "half_text": lambda o: o.changed > 0,
    "drop_started": lambda o: any("awaiting approval (never started)" in v for v in o.violations),
    "rerun_unanswered": lambda o: o.double_runs > 0,
    "lost_parent": lambda o: any("parent chain is broken" in v for v in o.violations),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mutation", sorted(MUTATION_EVIDENCE))
def test_each_deliberate_bug_makes_the_matrix_fail(tmp_path: Path, mutation: str) -> None:
    outcomes = matrix.run_matrix(
        3, seed=5, jobs=2, root=tmp_path, mutation=mutation, points=("mid_tool",)
    )
    report = matrix.format_tally(matrix.tally(outcomes))
    assert any(o.violations for o in outcomes), report
    assert any(MUTATION_EVIDENCE[mutation](o) for o in outcomes), (
        report
        + "\n"
        + "\n".join(f"{o.trial.point}#{o.trial.index}: {o.violations}" for o in outcomes)
    )


def test_plan_is_deterministic_and_covers_every_point() -> None:
    first, again = matrix.plan(50, seed=9), matrix.plan(50, seed=9)
    assert first == again and first != matrix.plan(50, seed=10)
    counts = collections.Counter(t.point for t in first)
    assert set(counts) == set(matrix.POINTS) and max(counts.values()) - min(counts.values()) <= 1


def _row(seq: int, kind: str, **data: object) -> tuple[int, str, dict[str, object]]:
    return seq, kind, data


CALLS = [
    {"id": "call_a1", "name": "note", "arguments": {}},
    {"id": "call_a2", "name": "note", "arguments": {}},
]


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([], "blocked:empty"),
        ([_row(1, "user")], "call_model"),
        (
            [_row(1, "user"), _row(2, "assistant", tool_calls=CALLS, stop_reason="tool_use")],
            "recover_tools",
        ),
        (
            [
                _row(1, "user"),
                _row(2, "assistant", tool_calls=CALLS, stop_reason="tool_use"),
                _row(3, "tool", tool_call_id="call_a2"),
            ],
            "recover_tools",
        ),
        (
            [
                _row(1, "user"),
                _row(2, "assistant", tool_calls=CALLS, stop_reason="tool_use"),
                _row(3, "tool", tool_call_id="call_a2"),
                _row(4, "tool", tool_call_id="call_a1"),
            ],
            "call_model",
        ),
        (
            [_row(1, "user"), _row(2, "assistant", tool_calls=[], stop_reason="interrupted")],
            "retry_response",
        ),
        (
            [_row(1, "user"), _row(2, "assistant", tool_calls=[], stop_reason="max_output")],
            "continue_response",
        ),
        (
            [_row(1, "user"), _row(2, "assistant", tool_calls=[], stop_reason="end_turn")],
            "blocked:completed",
        ),
        ([_row(1, "user"), _row(2, "tool", tool_call_id="x")], "blocked:malformed"),
    ],
)
def test_independent_reading_of_the_resume_table(
    rows: list[tuple[int, str, dict[str, object]]], expected: str
) -> None:
    assert matrix.expected_status(rows) == expected


def test_checker_catches_a_double_run_and_a_tool_without_its_call() -> None:
    trial = matrix.plan(1, seed=1)[0]
    outcome = matrix.Outcome(trial)
    rows = [
        _row(1, "user"),
        _row(2, "assistant", tool_calls=CALLS[:1], stop_reason="tool_use"),
        _row(3, "tool", tool_call_id="call_a1", success=True, content="noted a1"),
    ]
    matrix.check_effects(collections.Counter({"a1": 2, "b1": 1}), rows, {"call_a1"}, outcome)
    assert outcome.double_runs == 1
    assert any("b1 ran but its call was never saved" in v for v in outcome.violations)
    assert any("side effect ran 2 times" in v for v in outcome.violations)


def test_checker_rejects_a_draft_that_was_never_on_screen() -> None:
    sources = [(matrix.FULL_STEPS, 0, {0: "I will write"})]
    problems: list[str] = []
    matrix.check_draft(sources, "I will write two", problems.append)  # one piece ahead
    # A piece is what arrived while the app was busy: it may hold many words.
    matrix.check_draft(sources, "I will write two notes for you now, one", problems.append)
    matrix.check_draft(sources, "I will", problems.append)  # the screen was one piece ahead
    assert problems == []
    matrix.check_draft(sources, "Something else", problems.append)
    matrix.check_draft(sources, "I will write three", problems.append)  # not the step's text
    matrix.check_draft(
        [(matrix.FULL_STEPS, 0, {0: "I will write two"})], "I will say", problems.append
    )
    assert len(problems) == 3


def _killed_run(rows: list[tuple[int, str, dict[str, object], str]]) -> matrix_checks.Proc:
    """The record of a process that reported every one of ``rows`` committed as written."""
    proc = matrix_checks.Proc("run", matrix.FULL_STEPS, session="s", request_id="req")
    for seq, kind, data, _ in rows:
        content = str(data["content"])
        proc.saved[seq] = (kind, "-", matrix_checks.digest(content), len(content))
    return proc


def test_checker_compares_the_saved_text_with_the_record_and_the_script() -> None:
    step = matrix.FULL_STEPS[0]
    calls = [{"id": f"call_{t}", "name": "note", "arguments": {"tag": t}} for t in step["tags"]]
    rows = [
        (1, "user", {"content": matrix.USER_TEXT}, "req"),
        (2, "assistant", {"content": step["text"], "tool_calls": calls}, "req"),
        (3, "tool", {"tool_call_id": "call_a1", "content": "noted a1", "success": True}, "req"),
    ]
    proc = _killed_run(rows)
    problems: list[str] = []
    counts: collections.Counter[str] = collections.Counter()
    matrix_checks.check_rows(rows, [proc], matrix.USER_TEXT, problems.append, counts)
    assert problems == [] and sum(counts.values()) == 0
    half = (2, "assistant", {"content": step["text"][:30], "tool_calls": calls}, "req")
    matrix_checks.check_rows(
        [rows[0], half, rows[2]], [proc], matrix.USER_TEXT, problems.append, counts
    )
    assert counts["changed"] == 2  # against the child's record and against the script
    assert any("the agent handed over" in p for p in problems)


def test_checker_rejects_a_started_tool_reported_as_awaiting_approval() -> None:
    calls = [{"id": "call_a1", "name": "note", "arguments": {"tag": "a1"}}]
    rows = [
        (1, "user", {"content": "x"}),
        (2, "assistant", {"content": "y", "tool_calls": calls, "stop_reason": "tool_use"}),
    ]
    info = {
        "found": "recover_tools",
        "stop": "crashed",
        "draft": None,
        "unanswered": ["call_a1"],
        "awaiting": ["call_a1"],
        "markers": [],
    }
    never = matrix_checks.Proc("run", matrix.FULL_STEPS)
    problems: list[str] = []
    matrix_checks.check_info(info, rows, True, collections.Counter(), [never], problems.append)
    assert problems == []
    started = matrix_checks.Proc("run", matrix.FULL_STEPS, started_tools={"a1"})
    matrix_checks.check_info(info, rows, True, collections.Counter(), [started], problems.append)
    assert len(problems) == 1 and "Resume would run it again" in problems[0]
