"""The conversation list's update steps (:mod:`ui.sidebar_diff`): a table of the changes a
person causes, and random orders checked by replaying the steps."""

from __future__ import annotations

import random

import pytest

from ui.sidebar_diff import apply, plan

ROWS = list("abcdefgh")


@pytest.mark.parametrize(
    ("new", "steps"),
    [
        (ROWS, []),  # nothing changed: nothing to do
        (["e", *"abcdfgh"], [("move", 4, 0)]),  # a new message: "e" goes to the top
        ([*"bcdefg", "a", "h"], [("move", 0, 7)]),  # unpinned: the top one goes down
        (["x", *ROWS], [("insert", 0, 1)]),  # a new conversation
        ([*"abc", *"efgh"], [("remove", 3, 1)]),  # one deleted
        ([*"ab", "x", "y", *"cdefgh"], [("insert", 2, 2)]),  # a run inserted at once
        (["a", "h"], [("remove", 1, 6)]),  # a run removed at once
        ([*"abcdefg", "h", "z"], [("insert", 8, 1)]),  # at the end
        (["h", "x", *"abcdefg"], [("move", 7, 0), ("insert", 1, 1)]),
        ([], [("remove", 0, 8)]),
    ],
)
def test_a_change_is_a_few_steps(new: list[str], steps: list[tuple[str, int, int]]) -> None:
    assert plan(ROWS, new) == steps
    assert apply(ROWS, plan(ROWS, new) or [], new) == new


def test_from_nothing_is_one_insertion() -> None:
    assert plan([], ROWS) == [("insert", 0, 8)]


def test_too_many_steps_means_refill() -> None:
    old = [str(n) for n in range(200)]
    shuffled = old[:]
    random.Random(1).shuffle(shuffled)
    assert plan(old, shuffled) is None
    assert plan(old, old[::-1], limit=1000) is not None
    assert len(plan(old, old[::-1], limit=1000) or []) <= 199


@pytest.mark.parametrize("seed", range(100))
def test_random_changes_replay_to_the_new_order(seed: int) -> None:
    rng = random.Random(seed)
    universe = [f"k{n}" for n in range(rng.randint(0, 30))]
    old = rng.sample(universe, rng.randint(0, len(universe)))
    new = rng.sample(universe, rng.randint(0, len(universe)))
    steps = plan(old, new, limit=10_000)
    assert steps is not None
    assert apply(old, steps, new) == new
    # Moves only for rows whose order changed: never more than the rows both lists have.
    moves = [s for s in steps if s[0] == "move"]
    assert len(moves) <= len(set(old) & set(new))


@pytest.mark.parametrize("seed", range(100))
def test_a_few_edits_replay_and_stay_few_steps(seed: int) -> None:
    """What a person does between two refreshes: a move, a new one, a deleted one."""
    rng = random.Random(seed)
    old = [f"k{n}" for n in range(rng.randint(1, 40))]
    new = old[:]
    edits = rng.randint(1, 3)
    for n in range(edits):
        kind = rng.choice(["move", "insert", "remove"])
        if kind == "move" and new:
            new.insert(rng.randint(0, len(new) - 1), new.pop(rng.randrange(len(new))))
        elif kind == "insert":
            new.insert(rng.randint(0, len(new)), f"new{n}")
        elif new:
            new.pop(rng.randrange(len(new)))
    steps = plan(old, new)
    assert steps is not None and len(steps) <= edits
    assert apply(old, steps, new) == new
