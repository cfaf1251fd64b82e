"""How the conversation list goes from what it shows to what it should show, in a few steps.

Pure (no Qt), so each case is a table test. :func:`plan` compares two orders of row keys and
returns the removals, moves and insertions that turn the first into the second: after a new
message one conversation moves to the top (one move), a new conversation is one insertion, a
deleted one a removal. The rows that keep their relative order are the longest increasing run
of their new positions (:func:`_keep`); only the others move. When the steps would be many
(a search's results replaced by every conversation), :func:`plan` returns ``None`` and the
list is refilled at once instead. :func:`apply` runs the steps on a Python list, as the model
runs them on its rows (the tests check the one against the other).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from typing import Literal

__all__ = ["MAX_STEPS", "Step", "apply", "plan"]

#: More steps than this: refill the list instead (each step is a signal the view handles).
MAX_STEPS = 64

#: ("remove", row, count) | ("insert", row, count) | ("move", row, before): ``before`` is the
#: row the moved one goes in front of, counted before it moves (as ``QAbstractItemModel``).
Step = tuple[Literal["remove", "insert", "move"], int, int]


def plan(old: Sequence[str], new: Sequence[str], limit: int = MAX_STEPS) -> list[Step] | None:
    """The steps from ``old`` to ``new`` (keys unique within each), or None if over ``limit``."""
    # The rows above and below what changed stay as they are: plan only the middle.
    top = _common(old, new)
    bottom = _common(old, new, above=top)
    old_middle, new_middle = old[top : len(old) - bottom], new[top : len(new) - bottom]
    if len(old_middle) == len(new_middle) > 1:  # one row moved from one end to the other:
        if new_middle[0] == old_middle[-1] and new_middle[1:] == old_middle[:-1]:
            return [("move", top + len(old_middle) - 1, top)]  # a new message (the usual)
        if new_middle[-1] == old_middle[0] and new_middle[:-1] == old_middle[1:]:
            return [("move", top, top + len(old_middle))]
    middle = _plan(old_middle, new_middle, limit)
    if middle is None:
        return None
    return [
        (kind, row + top, amount + top if kind == "move" else amount)
        for kind, row, amount in middle
    ]


def _plan(old: Sequence[str], new: Sequence[str], limit: int) -> list[Step] | None:
    steps: list[Step] = []
    wanted = set(new)
    # Removals, bottom up, a run of neighbours at a time.
    row = len(old) - 1
    while row >= 0:
        if old[row] in wanted:
            row -= 1
            continue
        end = row
        while row >= 0 and old[row] not in wanted:
            row -= 1
        steps.append(("remove", row + 1, end - row))
        if len(steps) > limit:
            return None
    current = [key for key in old if key in wanted]
    position = {key: at for at, key in enumerate(new)}
    kept = _keep([position[key] for key in current])
    stays = {current[at] for at in kept}
    present = set(current)
    at = 0
    while at < len(new):
        key = new[at]
        if key in stays:
            at += 1
            continue
        before = current.index(new[at - 1]) + 1 if at else 0
        if key in present:  # a move: in front of the row after its new predecessor
            source = current.index(key)
            if before not in (source, source + 1):
                steps.append(("move", source, before))
                current.insert(before - 1 if before > source else before, current.pop(source))
            at += 1
        else:  # new rows, a run of neighbours at a time
            end = at
            while end < len(new) and new[end] not in present:
                end += 1
            steps.append(("insert", before, end - at))
            current[before:before] = new[at:end]
            at = end
        if len(steps) > limit:
            return None
    return steps


def _common(old: Sequence[str], new: Sequence[str], above: int | None = None) -> int:
    """How many rows both start with, or (given ``above``, the rows they start with) end
    with: by bisection over slices, compared at C speed (10,000 rows in ~14 steps)."""
    low, high = 0, min(len(old), len(new)) - (above or 0)
    while low < high:
        mid = (low + high + 1) // 2
        if above is None:
            same = old[:mid] == new[:mid]
        else:
            same = old[len(old) - mid :] == new[len(new) - mid :]
        if same:
            low = mid
        else:
            high = mid - 1
    return low


def apply(rows: list[str], steps: Sequence[Step], new: Sequence[str]) -> list[str]:
    """``rows`` after ``steps`` (inserted rows take their keys from ``new``, in order)."""
    rows = list(rows)
    for kind, row, amount in steps:
        if kind == "remove":
            del rows[row : row + amount]
        elif kind == "move":
            key = rows.pop(row)
            rows.insert(amount - 1 if amount > row else amount, key)
        else:
            rows[row:row] = new[_slot(rows, row, new) : _slot(rows, row, new) + amount]
    return rows


def _slot(rows: list[str], row: int, new: Sequence[str]) -> int:
    """Where in ``new`` the rows inserted at ``row`` start: just after the row above them."""
    return new.index(rows[row - 1]) + 1 if row else 0


def _keep(sequence: Sequence[int]) -> list[int]:
    """Indexes of a longest strictly increasing subsequence of ``sequence`` (patience sort)."""
    tails: list[int] = []  # tails[k]: the smallest last value of a run of length k + 1
    tail_at: list[int] = []  # where that value is in sequence
    previous = [-1] * len(sequence)
    for at, value in enumerate(sequence):
        k = bisect_left(tails, value)
        if k == len(tails):
            tails.append(value)
            tail_at.append(at)
        else:
            tails[k] = value
            tail_at[k] = at
        previous[at] = tail_at[k - 1] if k else -1
    run: list[int] = []
    at = tail_at[-1] if tail_at else -1
    while at >= 0:
        run.append(at)
        at = previous[at]
    return run[::-1]
