"""The crash matrix's checks: what a killed (and a recovering) process must leave behind.

Everything here reads the database file with plain :mod:`sqlite3` or compares it with the
children's own record (:class:`Proc`, parsed from the lines each child printed as things became
true, which survive the kill) and with what the simulator was scripted to send — never with the
app's own reading of itself, so a bug in the app cannot vouch for itself.
"""

from __future__ import annotations

import collections
import hashlib
import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Fail = Callable[[str], None]
Row = tuple[Any, ...]  # (seq, kind, data[, request_id])


@dataclass
class Proc:
    """One child process: its script and what it reported (see :mod:`matrix_child`)."""

    name: str
    steps: Sequence[dict[str, Any]]
    session: str | None = None
    request_id: str | None = None
    opened: bool = False
    done: bool = False
    info: dict[str, Any] | None = None
    #: seq -> (kind, stop, sha, length) of each MESSAGE_SAVED
    saved: dict[int, tuple[str, str, str, int]] = field(default_factory=dict)
    screen: dict[int, str] = field(default_factory=lambda: collections.defaultdict(str))
    asked: set[str] = field(default_factory=set)
    started_tools: set[str] = field(default_factory=set)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def parse_child(name: str, steps: Sequence[dict[str, Any]], lines: list[str]) -> Proc:
    proc = Proc(name, steps)
    for line in lines:
        tag, _, rest = line.partition(" ")
        words = rest.split(" ")
        if tag == "READY":
            proc.session = words[0]
        elif tag == "OPENED":
            proc.opened = True
        elif tag == "RUN_STARTED":
            proc.request_id = words[0]
        elif tag == "DONE":
            proc.done = True
        elif tag == "INFO":
            proc.info = json.loads(rest)
        elif tag == "DELTA":
            step, _, text = rest.partition(" ")
            proc.screen[int(step)] += json.loads(text)
        elif tag == "SAVED":
            kind = words[1].removesuffix("Message").lower()
            proc.saved[int(words[0])] = (kind, words[2], words[3], int(words[4]))
        elif tag == "ASKED":
            proc.asked.add(words[0])
        elif tag == "TOOL_START":
            proc.started_tools.add(words[0])
    return proc


# --- the file ---------------------------------------------------------------------------------


def raw_state(db: Path) -> dict[str, Any]:
    """What is in the file, read with plain sqlite3 (not through the app)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        state: dict[str, Any] = {
            "integrity": conn.execute("PRAGMA integrity_check").fetchone()[0],
            "version": conn.execute("PRAGMA user_version").fetchone()[0],
        }
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        state["tables"] = tables
        state["rows"] = collections.defaultdict(list)
        if "messages" in tables:
            for session_id, seq, kind, data, request_id in conn.execute(
                "SELECT session_id, seq, kind, data, request_id FROM messages "
                "ORDER BY session_id, seq"
            ):
                state["rows"][session_id].append((seq, kind, json.loads(data), request_id))
        # The tree (schema 7): each message's parent, and each conversation's leaf.
        state["parents"] = {}
        state["leaves"] = {}
        if "messages" in tables and _has_column(conn, "messages", "parent_seq"):
            state["parents"] = {
                (sid, seq): parent
                for sid, seq, parent in conn.execute(
                    "SELECT session_id, seq, parent_seq FROM messages"
                )
            }
            state["leaves"] = dict(conn.execute("SELECT id, leaf_seq FROM sessions"))
        state["markers"] = (
            {r[0] for r in conn.execute("SELECT session_id FROM running_requests")}
            if "running_requests" in tables
            else set()
        )
        return state
    finally:
        conn.close()


def _has_column(conn: sqlite3.Connection, table: str, column: str) -> bool:
    return any(r[1] == column for r in conn.execute(f"PRAGMA table_info({table})"))


def check_linear_tree(state: dict[str, Any], fail: Callable[[str], None]) -> None:
    """In a database with the tree (schema 7), a conversation that never branched is one
    chain: each message follows the one before, and the leaf is the newest message."""
    if not state["leaves"] and not state["parents"]:
        return
    for sid, rows in state["rows"].items():
        seqs = [r[0] for r in rows]
        parents = [state["parents"].get((sid, seq)) for seq in seqs]
        if parents != [None, *seqs[:-1]]:
            pairs = list(zip(seqs, parents, strict=True))[:8]
            fail(f"session {sid}: the parent chain is broken: {pairs}")
        if seqs and state["leaves"].get(sid) != seqs[-1]:
            fail(f"session {sid}: leaf {state['leaves'].get(sid)} but newest is {seqs[-1]}")


def expected_status(rows: Sequence[Row]) -> str:
    """SPEC A2, read independently of app.resume: the point kind or ``blocked:<reason>``."""
    if not rows:
        return "blocked:empty"
    kind, last = rows[-1][1], rows[-1][2]
    if kind in ("user", "internal"):
        return "call_model"
    if kind == "assistant":
        stop = last.get("stop_reason")
        if stop == "interrupted":
            return "retry_response"
        if stop == "max_output":
            return "continue_response"
        if stop == "paused":
            return "call_model"
        if last.get("tool_calls") and stop in (None, "tool_use"):
            return "recover_tools"
        if stop in (None, "end_turn"):
            return "blocked:completed"
        return {"refusal": "blocked:refused", "context_full": "blocked:context_full"}.get(
            stop, "blocked:unknown_stop"
        )
    # tool results: find their assistant message, see whether every call is answered
    answered: set[str] = set()
    for row in reversed(rows):
        k, data = row[1], row[2]
        if k == "tool":
            answered.add(data["tool_call_id"])
            continue
        if k != "assistant":
            return "blocked:malformed"
        calls = {c["id"] for c in data.get("tool_calls") or ()}
        if not answered <= calls:
            return "blocked:malformed"
        return "call_model" if calls <= answered else "recover_tools"
    return "blocked:malformed"


def unanswered(rows: Sequence[Row]) -> set[str]:
    """Ids of the calls of the last assistant message with no result after it."""
    answered: set[str] = set()
    for row in reversed(rows):
        if row[1] == "tool":
            answered.add(row[2]["tool_call_id"])
        elif row[1] == "assistant":
            return {c["id"] for c in row[2].get("tool_calls") or ()} - answered
        else:
            return set()
    return set()


# --- the history against the children's record and the script ---------------------------------


def check_rows(
    rows: Sequence[Row],
    procs: Sequence[Proc],
    user_text: str,
    fail: Fail,
    counts: collections.Counter[str],
) -> None:
    """Every row is what its process was scripted to write and was told it committed.

    ``counts`` gets ``lost`` (reported committed, not there), ``changed`` (there, but not the
    text the agent handed over or the script sent) and ``duplicated`` (a call answered twice).
    """
    from app.resume import CONTINUE_TEXT, RECOVERED_TOOL_TEXT, RETRY_TEXT

    seqs = [row[0] for row in rows]
    if seqs != list(range(1, len(seqs) + 1)):
        fail(f"sequence numbers not contiguous: {seqs}")
    by_seq = {row[0]: row for row in rows}
    reported: set[int] = set()
    for proc in procs:
        for seq, (kind, _stop, sha, length) in proc.saved.items():
            reported.add(seq)
            row = by_seq.get(seq)
            if row is None or row[1] != kind:
                counts["lost"] += 1
                fail(
                    f"{proc.name}: message {seq} ({kind}) was reported saved but is "
                    f"{row[1] if row else None!r}"
                )
                continue
            content = row[2].get("content", "")
            if digest(content) != sha or len(content) != length:
                counts["changed"] += 1
                fail(
                    f"{proc.name}: message {seq} ({kind}) was saved as {len(content)} chars "
                    f"{content[:40]!r}…, but the agent handed over {length} chars"
                )
    # A row nobody reported is the last commit of a killed process: after all it reported.
    last_reported = {p.request_id: max(p.saved, default=0) for p in procs}
    unreported = [row for row in rows if row[0] not in reported]
    late = [row[0] for row in unreported if len(row) > 3 and row[0] < last_reported.get(row[3], 0)]
    if late:
        fail(f"rows {late} were never reported saved, yet their request reported later ones")
    requests = {p.request_id: p for p in procs if p.request_id}
    step_of: collections.Counter[str] = collections.Counter()
    calls_open: dict[str, str] = {}  # id -> tag of the newest assistant message's calls
    answered = collections.Counter[str]()
    for row in rows:
        seq, kind, data = row[0], row[1], row[2]
        content = data.get("content", "")
        proc = requests.get(row[3]) if len(row) > 3 else None
        if len(row) > 3 and proc is None:
            fail(f"message {seq} ({kind}) belongs to a request no process started")
            continue
        if kind == "user":
            if seq != 1 or content != user_text:
                counts["changed"] += 1
                fail(f"user message {seq} is {content!r}")
        elif kind == "internal":
            if content not in (RETRY_TEXT, CONTINUE_TEXT):
                fail(f"internal message {seq} is {content[:60]!r}")
        elif kind == "assistant":
            key = row[3] if len(row) > 3 else ""
            k = step_of[key]
            step_of[key] += 1
            steps = proc.steps if proc is not None else ()
            if k >= len(steps):
                fail(f"assistant message {seq} is step {k} of a script with {len(steps)}")
                continue
            script = steps[k]
            calls = [
                (c["id"], (c.get("arguments") or {}).get("tag"))
                for c in data.get("tool_calls") or ()
            ]
            if content != script["text"]:
                counts["changed"] += 1
                fail(f"assistant message {seq} says {content!r}, the model sent {script['text']!r}")
            if calls != [(f"call_{t}", t) for t in script["tags"]]:
                counts["changed"] += 1
                fail(
                    f"assistant message {seq} asks for {calls}, the model asked for "
                    f"{script['tags']}"
                )
            calls_open = {cid: tag for cid, tag in calls}
        elif kind == "tool":
            cid = data.get("tool_call_id")
            answered[cid] += 1
            tag = calls_open.get(cid)
            if tag is None:
                fail(f"tool result {seq} answers {cid!r}, which the step before did not ask for")
            elif not (content == RECOVERED_TOOL_TEXT and not data.get("success")) and not (
                content == f"noted {tag}" and data.get("success")
            ):
                counts["changed"] += 1
                fail(
                    f"tool result {seq} for {cid} is {content[:60]!r} "
                    f"(success={data.get('success')})"
                )
    counts["duplicated"] += sum(n - 1 for n in answered.values() if n > 1)
    if any(n > 1 for n in answered.values()):
        fail(f"a call was answered more than once: {dict(answered)}")


def read_effects(log: Path) -> collections.Counter[str]:
    """How many times each tool side effect happened (one line per run)."""
    return collections.Counter(log.read_text().split() if log.exists() else ())


def check_effects(
    effects: collections.Counter[str],
    rows: Sequence[Row],
    saved_calls: set[str],
    out: Any,
) -> None:
    """At most once, only for a saved call, exactly once per saved successful result."""
    for tag, count in effects.items():
        if count > 1:
            out.double_runs += count - 1
            out.violations.append(f"tool side effect {tag} happened {count} times")
        if f"call_{tag}" not in saved_calls:
            out.violations.append(f"tool {tag} ran but its call was never saved")
    for row in rows:
        kind, data = row[1], row[2]
        if kind == "tool" and data.get("success") and data["content"].startswith("noted "):
            tag = data["content"].removeprefix("noted ")
            if effects[tag] != 1:
                out.violations.append(
                    f"result of {tag} saved, but its side effect ran {effects[tag]} times"
                )


def check_draft(
    candidates: Sequence[tuple[Sequence[dict[str, Any]], int, dict[int, str]]],
    draft: str | None,
    fail: Fail,
) -> None:
    """The draft is a prefix of the in-flight step's text of one of the processes that may
    have left it, consistent with what it had on screen.

    ``candidates``: per process, (its script, how many of its steps are saved, its screen).
    """
    if draft is None:
        return
    for steps, done, screen in candidates:
        for s in (done, done - 1):  # killed between saving the step and clearing the draft
            if not 0 <= s < len(steps):
                continue
            full, shown = steps[s]["text"], screen.get(s, "")
            # Saved before its piece is shown, the draft may be one piece ahead of the screen;
            # a piece is what arrived while the consumer was busy (app/providers/coalesce.py),
            # so it may hold many words: ahead is fine while it is the step's own text.
            ahead = draft.startswith(shown)
            if full.startswith(draft) and (ahead or shown.startswith(draft)):
                return
    fail(f"draft {draft!r} is not a prefix of what was on screen")


def check_info(
    info: dict[str, Any],
    rows: Sequence[Row],
    marker_left: bool,
    effects: collections.Counter[str],
    earlier: Sequence[Proc],
    fail: Fail,
) -> None:
    """What the recovering process's ``resume_info`` said, against the file and the record."""
    expected = expected_status(rows)
    if info["found"] != expected:
        fail(f"resume_info says {info['found']}, the saved tail says {expected}")
    if marker_left and info["stop"] != "crashed":
        fail(f"a running marker was left but the stop record is {info['stop']}")
    if info["markers"]:
        fail(f"running markers survived AppServices.open(): {info['markers']}")
    open_calls = unanswered(rows)
    if set(info["unanswered"]) != (open_calls if expected == "recover_tools" else set()):
        fail(f"resume_info's unanswered calls {info['unanswered']} != {sorted(open_calls)}")
    for cid in info["awaiting"]:
        tag = cid.removeprefix("call_")
        if cid not in open_calls:
            fail(f"{cid} is reported awaiting approval but is answered or unknown")
        if effects[tag] or any(tag in p.started_tools for p in earlier):
            fail(
                f"{cid} is reported awaiting approval (never started), but the tool had "
                f"started (side effects: {effects[tag]}); Resume would run it again"
            )


def check_resumed(
    before: Sequence[Row],
    after: Sequence[Row],
    info: dict[str, Any],
    effects_before: collections.Counter[str],
    effects_after: collections.Counter[str],
    resumer: Proc,
    out: Any,
) -> None:
    """What a finished resume wrote and ran."""
    from app.resume import RECOVERED_TOOL_TEXT

    fail = out.violations.append
    if [r[:3] for r in after[: len(before)]] != [r[:3] for r in before]:
        fail("the resume changed rows that were already saved")
    new = after[len(before) :]
    recovered = {
        r[2]["tool_call_id"]
        for r in new
        if r[1] == "tool" and r[2]["content"] == RECOVERED_TOOL_TEXT
    }
    must_recover = set(info["unanswered"]) - set(info["awaiting"])
    if recovered != must_recover:
        fail(
            f"answered as 'may or may not have run': {sorted(recovered)}, should be "
            f"{sorted(must_recover)} (awaiting approval: {info['awaiting']})"
        )
    ran_now = {r[2]["tool_call_id"] for r in new if r[1] == "tool" and r[2].get("success")}
    for cid in info["awaiting"]:
        if cid not in ran_now:
            fail(f"{cid} was awaiting approval, yet the resume did not run it")
    check_new_effects(info, effects_before, effects_after, resumer, fail)


def check_new_effects(
    info: dict[str, Any],
    effects_before: collections.Counter[str],
    effects_after: collections.Counter[str],
    resumer: Proc,
    fail: Fail,
) -> None:
    """A recovering process runs only calls that were awaiting approval and its own."""
    allowed = {cid.removeprefix("call_") for cid in info["awaiting"]} | {
        t for step in resumer.steps for t in step["tags"]
    }
    for tag in effects_after - effects_before:
        if tag not in allowed:
            fail(
                f"tool {tag} ran during {resumer.name} ({effects_before[tag]} -> "
                f"{effects_after[tag]} times), but it may have run before and was not "
                "awaiting approval"
            )
