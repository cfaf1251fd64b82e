"""A short run of the crash matrix (:mod:`tests.crash.matrix`) in the default suite.

The long run is one command: ``python -m tests.crash.matrix --kills 500``. Here: 24 kills,
four at each point of the lifecycle, then the checker's own logic is checked on states it must
reject, so a checker that accepts everything cannot pass.
"""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from tests.crash import matrix

KILLS = 24


@pytest.mark.timeout(180)
def test_crash_matrix_short_run(tmp_path: Path) -> None:
    outcomes = matrix.run_matrix(KILLS, seed=2024, jobs=2, root=tmp_path)
    table = matrix.tally(outcomes)
    report = matrix.format_tally(table)
    failures = [f"{o.trial.point}#{o.trial.index}: {o.violations}" for o in outcomes if o.violations]
    assert not failures, report + "\n" + "\n".join(failures)
    assert {point: row["kills"] for point, row in table.items()} == dict.fromkeys(
        matrix.POINTS, KILLS // len(matrix.POINTS))
    assert all(row["recovered"] == row["kills"] for row in table.values()), report
    assert sum(row["tool_double_runs"] + row["lost_messages"] for row in table.values()) == 0
    # The kills really landed mid-request: crash records, drafts, and tools left unanswered.
    assert table["mid_tool"]["landed"] == {"recover_tools": KILLS // len(matrix.POINTS)}
    assert table["streaming"]["crashed_records"] == table["streaming"]["kills"]
    assert table["streaming"]["drafts_kept"] >= 1


def test_plan_is_deterministic_and_covers_every_point() -> None:
    first, again = matrix.plan(50, seed=9), matrix.plan(50, seed=9)
    assert first == again and first != matrix.plan(50, seed=10)
    counts = collections.Counter(t.point for t in first)
    assert set(counts) == set(matrix.POINTS) and max(counts.values()) - min(counts.values()) <= 1


def _row(seq: int, kind: str, **data: object) -> tuple[int, str, dict[str, object]]:
    return seq, kind, data


CALLS = [{"id": "call_a1", "name": "note", "arguments": {}},
         {"id": "call_a2", "name": "note", "arguments": {}}]


@pytest.mark.parametrize(("rows", "expected"), [
    ([], "blocked:empty"),
    ([_row(1, "user")], "call_model"),
    ([_row(1, "user"), _row(2, "assistant", tool_calls=CALLS, stop_reason="tool_use")],
     "recover_tools"),
    ([_row(1, "user"), _row(2, "assistant", tool_calls=CALLS, stop_reason="tool_use"),
      _row(3, "tool", tool_call_id="call_a2")], "recover_tools"),
    ([_row(1, "user"), _row(2, "assistant", tool_calls=CALLS, stop_reason="tool_use"),
      _row(3, "tool", tool_call_id="call_a2"), _row(4, "tool", tool_call_id="call_a1")],
     "call_model"),
    ([_row(1, "user"), _row(2, "assistant", tool_calls=[], stop_reason="interrupted")],
     "retry_response"),
    ([_row(1, "user"), _row(2, "assistant", tool_calls=[], stop_reason="max_output")],
     "continue_response"),
    ([_row(1, "user"), _row(2, "assistant", tool_calls=[], stop_reason="end_turn")],
     "blocked:completed"),
    ([_row(1, "user"), _row(2, "tool", tool_call_id="x")], "blocked:malformed"),
])
def test_independent_reading_of_the_resume_table(
    rows: list[tuple[int, str, dict[str, object]]], expected: str
) -> None:
    assert matrix.expected_status(rows) == expected


def test_checker_catches_a_double_run_and_a_tool_without_its_call() -> None:
    trial = matrix.plan(1, seed=1)[0]
    outcome = matrix.Outcome(trial)
    rows = [_row(1, "user"), _row(2, "assistant", tool_calls=CALLS[:1], stop_reason="tool_use"),
            _row(3, "tool", tool_call_id="call_a1", success=True, content="noted a1")]
    matrix.check_effects(collections.Counter({"a1": 2, "b1": 1}), rows, {"call_a1"}, outcome)
    assert outcome.double_runs == 1
    assert any("b1 ran but its call was never saved" in v for v in outcome.violations)
    assert any("side effect ran 2 times" in v for v in outcome.violations)


def test_checker_rejects_a_draft_that_was_never_on_screen() -> None:
    trial = next(t for t in matrix.plan(12, seed=1) if t.scenario == "full")
    child = {"screen": {0: "I will write"}}
    problems: list[str] = []
    matrix.check_draft(trial, [], child, "I will write two", problems.append)  # one piece ahead
    assert problems == []
    matrix.check_draft(trial, [], child, "Something else", problems.append)
    matrix.check_draft(trial, [], child, "I will write two notes for you now, one", problems.append)
    assert len(problems) == 2
