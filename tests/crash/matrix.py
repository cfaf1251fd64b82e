"""The crash matrix: ``kill -9`` the app's services at seeded points of a request, then recover.

Run::

    python -m tests.crash.matrix --kills 500 [--seed N] [--jobs 4] [--json out.json]

Each trial starts a fresh child process (:mod:`tests.crash.matrix_child`) that runs one request
through :class:`app.workspace.AppServices` over a real database file, against its own simulator,
with the ``note`` tool writing an fsynced side-effect log. The parent reads the child's
milestones and sends SIGKILL at a point of the lifecycle chosen by a seeded RNG:

=====================  =====================================================================
``streaming``          after the n-th text piece of step k, plus 0–3 ms
``tool_call_saved``    right after the assistant message with tool calls is committed (0–1 ms)
``mid_tool``           after a tool's side effect is durable, while the tool still runs
``tool_result_saved``  right after the r-th tool result is committed (0–1 ms)
``commit``             0–D ms into a burst of commits (many fast tool rounds and drafts)
``migration``          0–D ms into opening a v1 database that is being migrated
=====================  =====================================================================

Then the parent — a fresh process for the database — reopens it and checks:

* ``PRAGMA integrity_check`` is ``ok`` (before and after recovery);
* sequence numbers are contiguous 1..n; every row the child reported committed is there with
  the same kind (no message lost), no call is answered twice (no duplicate);
* the resume status :meth:`AppServices.resume_info` reports equals the one derived here, from
  the raw rows, by an independent reading of SPEC A2 (and ``mid_tool`` must be RECOVER_TOOLS);
* each tool side effect happened at most once, only for a call that was saved, and exactly once
  for every saved successful result — also after the resume, which must finish;
* the journal agrees: a running marker left by the dead child becomes a CRASHED stop record at
  ``AppServices.open()``, and the draft is a prefix of the step's text consistent with what the
  child had on screen; after the resume both are gone;
* a killed migration leaves either the old schema untouched or the new one complete, and
  reopening migrates it with every message kept and searchable.

The tally (per kill point: kills, recovered, tool double-runs, lost messages, violations) is
printed; the exit status is 1 if any invariant failed.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tests.crash.childproc import run_and_kill

CHILD = Path(__file__).with_name("matrix_child.py")
POINTS = ("streaming", "tool_call_saved", "mid_tool", "tool_result_saved", "commit", "migration")
USER_TEXT = "Please write the notes for the plan."
FULL_STEPS = (
    {"text": "I will write two notes for you now, one for each part of the plan.",
     "tags": ["a1", "a2"]},
    {"text": "One more note, then I can summarise everything for you.", "tags": ["b1"]},
    {"text": "All three notes are written and the task is complete; nothing else is needed.",
     "tags": []},
)
BURST_STEPS = tuple(
    {"text": f"Round {i}: noting.", "tags": [f"c{i}"]} for i in range(1, 7)
) + ({"text": "Done with every round.", "tags": []},)
#: A v1 database (before drafts, stop records and search) the migration point opens.
V1_SESSIONS, V1_MESSAGES = 4, 4000
V1_WORD = "zebrafinch"
MILESTONE_TIMEOUT = 30.0


@dataclass
class Trial:
    index: int
    point: str
    seed: int
    delay: float  # seconds slept after the milestone before SIGKILL
    target: dict[str, Any]
    scenario: str  # full | burst | migrate

    @property
    def steps(self) -> tuple[dict[str, Any], ...]:
        return BURST_STEPS if self.scenario == "burst" else FULL_STEPS


@dataclass
class Outcome:
    trial: Trial
    landed: str = ""  # the resume status found after the kill
    recovered: bool = False
    double_runs: int = 0
    lost: int = 0
    duplicated: int = 0
    crashed_record: bool = False  # a CRASHED stop record was shown after the kill
    draft: bool = False  # a draft (the on-screen text) was kept
    violations: list[str] = field(default_factory=list)
    seconds: float = 0.0


def plan(kills: int, seed: int) -> list[Trial]:
    """The trials: points round-robin (a seeded shuffle per round), parameters from the RNG."""
    rng = random.Random(seed)
    trials: list[Trial] = []
    order: list[str] = []
    for index in range(kills):
        if not order:
            order = list(POINTS)
            rng.shuffle(order)
        point = order.pop()
        scenario = {"commit": "burst", "migration": "migrate"}.get(point, "full")
        target: dict[str, Any]
        if point == "streaming":
            target = {"step": rng.randrange(len(FULL_STEPS)), "piece": rng.randint(1, 8)}
            delay = rng.uniform(0, 0.003)
        elif point == "tool_call_saved":
            target = {"step": rng.randrange(2)}
            delay = rng.uniform(0, 0.001)
        elif point == "mid_tool":
            target = {"tag": rng.choice(["a1", "a2", "b1"])}
            delay = rng.uniform(0, 0.05)
        elif point == "tool_result_saved":
            target = {"result": rng.randint(1, 3)}
            delay = rng.uniform(0, 0.001)
        elif point == "commit":
            # Most kills inside the burst of tool rounds (after the first, slower step).
            target = {}
            delay = rng.uniform(0.085, 0.14) if rng.random() < 0.8 else rng.uniform(0, 0.085)
        else:
            # Most kills inside the migration itself, some later in the request.
            target = {}
            delay = rng.uniform(0, 0.06) if rng.random() < 0.75 else rng.uniform(0.06, 0.4)
        trials.append(Trial(index, point, rng.randrange(2**31), delay, target, scenario))
    return trials


# --- the child --------------------------------------------------------------------------------


def child_spec(trial: Trial, data_dir: Path, log: Path) -> dict[str, Any]:
    rng = random.Random(trial.seed)
    return {
        "data_dir": str(data_dir),
        "log": str(log),
        "user_text": USER_TEXT,
        "steps": list(trial.steps),
        "rate": 0.0 if trial.scenario == "burst" else 300.0,
        "tool_hold": 0.0 if trial.scenario == "burst" else (
            0.5 if trial.point == "mid_tool" else rng.uniform(0, 0.02)),
        "draft_interval": 0.0 if trial.scenario == "burst" else 0.01,
    }


class Milestones:
    """Decides when the kill's milestone has been reached, from the child's lines."""

    def __init__(self, trial: Trial) -> None:
        self.trial = trial
        self.pieces: collections.Counter[int] = collections.Counter()
        self.tool_results = 0
        self.assistant_saved = 0

    def reached(self, line: str) -> bool:
        words = line.split(" ", 3)
        point, target = self.trial.point, self.trial.target
        if words[0] == "DELTA":
            step = int(words[1])
            self.pieces[step] += 1
            return point == "streaming" and step == target["step"] and (
                self.pieces[step] == target["piece"])
        if words[0] == "SAVED" and words[2] == "AssistantMessage":
            self.assistant_saved += 1
            return point == "tool_call_saved" and words[3] == "tool_use" and (
                self.assistant_saved == target["step"] + 1)
        if words[0] == "SAVED" and words[2] == "ToolMessage":
            self.tool_results += 1
            return point == "tool_result_saved" and self.tool_results == target["result"]
        if words[0] == "TOOL_EFFECT":
            return point == "mid_tool" and words[1] == target["tag"]
        if words[0] == "RUN_STARTED":
            return point == "commit"
        if words[0] == "OPENING":
            return point == "migration"
        if words[0] == "DONE" and point == "streaming":
            return True  # that step had fewer pieces: kill after the end instead
        return False


def run_child(trial: Trial, data_dir: Path, log: Path) -> tuple[list[str], str, bool]:
    """Start the child, SIGKILL it at the trial's point; (its lines, stderr tail, reached)."""
    milestones = Milestones(trial)
    result = run_and_kill(
        [sys.executable, str(CHILD), json.dumps(child_spec(trial, data_dir, log))],
        stderr_path=data_dir.parent / "child.stderr", is_milestone=milestones.reached,
        timeout=MILESTONE_TIMEOUT, delay=trial.delay, tail_chars=2000,
    )
    prefix = "" if result.by_sigkill else f"exit {result.returncode}: "
    return result.lines, prefix + result.stderr_tail, result.reached and result.by_sigkill


# --- a v1 database for the migration point ---------------------------------------------------


def make_v1_database(path: Path) -> None:
    """A schema-1 Continuum database, written the way the first version wrote it."""
    from app.messages import AssistantMessage, UserMessage, message_to_json
    from app.storage.sqlite import APPLICATION_ID, MIGRATIONS

    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("BEGIN IMMEDIATE")
        for statement in MIGRATIONS[0]:
            conn.execute(statement)
        rows = []
        now = time.time()
        for s in range(V1_SESSIONS):
            for seq in range(1, V1_MESSAGES // V1_SESSIONS + 1):
                message = (UserMessage(f"question {seq} about the {V1_WORD} in session {s}")
                           if seq % 2 else AssistantMessage(f"answer {seq} " + "text " * 40))
                kind = "user" if seq % 2 else "assistant"
                rows.append((f"v1-{s}", seq, "r", kind, message_to_json(message), now + seq))
        conn.executemany(
            "INSERT INTO messages(session_id, seq, request_id, kind, data, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)", rows)
        conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
        conn.execute("PRAGMA user_version=1")
        conn.execute("COMMIT")
    finally:
        conn.close()


# --- checking ---------------------------------------------------------------------------------


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
            for session_id, seq, kind, data in conn.execute(
                "SELECT session_id, seq, kind, data FROM messages ORDER BY session_id, seq"
            ):
                state["rows"][session_id].append((seq, kind, json.loads(data)))
        state["markers"] = (
            {r[0] for r in conn.execute("SELECT session_id FROM running_requests")}
            if "running_requests" in tables else set()
        )
        return state
    finally:
        conn.close()


def expected_status(rows: list[tuple[int, str, dict[str, Any]]]) -> str:
    """SPEC A2, read independently of app.resume: the point kind or ``blocked:<reason>``."""
    if not rows:
        return "blocked:empty"
    _, kind, last = rows[-1]
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
            stop, "blocked:unknown_stop")
    # tool results: find their assistant message, see whether every call is answered
    answered: set[str] = set()
    for _, k, data in reversed(rows):
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


def parse_child(lines: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"session": None, "saved": {}, "screen": collections.defaultdict(str),
                           "run_started": False, "done": False, "opened": False}
    for line in lines:
        words = line.split(" ", 3)
        if words[0] == "READY":
            out["session"] = words[1]
        elif words[0] == "OPENED":
            out["opened"] = True
        elif words[0] == "RUN_STARTED":
            out["run_started"] = True
        elif words[0] == "DONE":
            out["done"] = True
        elif words[0] == "DELTA":
            out["screen"][int(words[1])] += json.loads(line.split(" ", 2)[2])
        elif words[0] == "SAVED":
            out["saved"][int(words[1])] = words[2].removesuffix("Message").lower()
    return out


async def check(trial: Trial, data_dir: Path, log: Path, lines: list[str], out: Outcome) -> None:
    from app.resume import RECOVERED_TOOL_TEXT
    from app.storage.journal import StopKind
    from app.workspace import DATABASE_FILE, AppServices

    fail = out.violations.append
    db = data_dir / DATABASE_FILE
    child = parse_child(lines)
    effects_before = read_effects(log)

    if not db.exists():
        fail("no database file at all")
        return
    state = raw_state(db)
    if state["integrity"] != "ok":
        fail(f"integrity_check after the kill: {state['integrity']}")
    if trial.scenario == "migrate":
        check_migration_state(state, fail)

    sid = child["session"]
    rows = state["rows"].get(sid, []) if sid else []
    # Sequence numbers contiguous; every reported commit present with the same kind.
    seqs = [seq for seq, _, _ in rows]
    if seqs != list(range(1, len(seqs) + 1)):
        fail(f"sequence numbers not contiguous: {seqs}")
    by_seq = {seq: kind for seq, kind, _ in rows}
    for seq, kind in child["saved"].items():
        if by_seq.get(seq) != kind:
            out.lost += 1
            fail(f"message {seq} ({kind}) was reported saved but is {by_seq.get(seq)!r}")
    if child["saved"] and len(rows) > max(child["saved"]) + 1:
        fail(f"{len(rows) - max(child['saved'])} rows beyond the last reported commit")
    answered = collections.Counter(d["tool_call_id"] for _, k, d in rows if k == "tool")
    out.duplicated = sum(n - 1 for n in answered.values() if n > 1)
    if out.duplicated:
        fail(f"a call was answered more than once: {dict(answered)}")

    # Side effects: at most once, only for a saved call, exactly once per saved success.
    saved_calls = {c["id"] for _, k, d in rows if k == "assistant" for c in d.get("tool_calls") or ()}
    check_effects(effects_before, rows, saved_calls, out)

    expected = expected_status(rows)
    if trial.point == "mid_tool" and expected != "recover_tools":
        fail(f"killed mid-tool but the tail says {expected}")
    marker_left = sid in state["markers"]
    if child["run_started"] and not marker_left and expected != "blocked:completed":
        fail("the request had started and is unfinished, yet no running marker was left")

    services = AppServices(data_dir)
    try:
        await asyncio.wait_for(services.open(), 30)
        await services.start_simulator(tokens_per_second=0)
        await services.configure_model()
        if trial.scenario == "migrate":
            await check_migrated(services, fail)
        if trial.scenario == "migrate" and not child["opened"]:
            out.landed = f"mid-open (schema v{state['version']} on disk)"
        if sid is None:
            out.landed = out.landed or "before the conversation existed"
            out.recovered = not out.violations
            return
        info = await services.resume_info(sid)
        found = info.point.kind.value if info.point else f"blocked:{info.blocked_reason}"
        out.landed = out.landed or found
        out.crashed_record = info.stop is not None and info.stop.kind is StopKind.CRASHED
        out.draft = info.draft is not None
        if found != expected:
            fail(f"resume_info says {found}, the saved tail says {expected}")
        if marker_left:
            if info.stop is None or info.stop.kind is not StopKind.CRASHED:
                fail(f"a running marker was left but the stop record is {info.stop}")
        if await services.journal.running_markers():
            fail("running markers survived AppServices.open()")
        check_draft(trial, rows, child, info.draft, fail)

        if info.point is not None:
            unanswered = {c.id for c in info.point.unanswered_tool_calls}
            async with asyncio.timeout(30):
                async for _ in services.stream_resume(sid):
                    pass
            after = await services.storage.storage.load_records(sid)
            if [r.seq for r in after] != list(range(1, len(after) + 1)):
                fail("sequence numbers not contiguous after the resume")
            if [r.seq for r in after[: len(rows)]] != seqs:
                fail("the resume changed rows that were already saved")
            recovered = {m.tool_call_id for r in after[len(rows):]
                         if (m := r.message).__class__.__name__ == "ToolMessage"
                         and m.content == RECOVERED_TOOL_TEXT}  # type: ignore[attr-defined]
            if recovered != unanswered:
                fail(f"recovered calls {recovered} != unanswered {unanswered}")
            info = await services.resume_info(sid)
            if info.point is not None or info.blocked_reason != "completed":
                fail(f"after the resume: {info.point} / {info.blocked_reason}")
            if info.stop is not None or info.draft is not None:
                fail(f"after the resume the journal still has {info.stop} / {info.draft!r}")
        effects_after = read_effects(log)
        if effects_after != effects_before:
            out.double_runs += sum((effects_after - effects_before).values())
            fail(f"a tool ran during recovery: {effects_before} -> {effects_after}")
        if (integrity := await services.storage.storage.integrity_check()) != ["ok"]:
            fail(f"integrity_check after recovery: {integrity}")
        out.recovered = not out.violations
    finally:
        await asyncio.wait_for(services.close(), 30)


def read_effects(log: Path) -> collections.Counter[str]:
    """How many times each tool side effect happened (one line per run)."""
    return collections.Counter(log.read_text().split() if log.exists() else ())


def check_migration_state(state: dict[str, Any], fail: Callable[[str], None]) -> None:
    from app.storage.sqlite import SCHEMA_VERSION

    version, tables = state["version"], state["tables"]
    if version == 1 and {"drafts", "stop_records", "running_requests"} & tables:
        fail(f"a half-applied migration: version 1 with tables {sorted(tables)}")
    if version not in (1, SCHEMA_VERSION):
        fail(f"unexpected schema version {version} after a killed migration")
    for s in range(V1_SESSIONS):
        got = [seq for seq, _, _ in state["rows"].get(f"v1-{s}", [])]
        if got != list(range(1, V1_MESSAGES // V1_SESSIONS + 1)):
            fail(f"v1 session {s} lost messages in the migration: {len(got)}")


async def check_migrated(services: Any, fail: Callable[[str], None]) -> None:
    hits = await services.search(V1_WORD, limit=10_000)
    if len(hits) != V1_MESSAGES // 2:
        fail(f"after migrating, search finds {len(hits)} of {V1_MESSAGES // 2} messages")
    sessions = {s.id: s.message_count for s in await services.list_sessions()}
    for s in range(V1_SESSIONS):
        if sessions.get(f"v1-{s}") != V1_MESSAGES // V1_SESSIONS:
            fail(f"after migrating, session v1-{s} has {sessions.get(f'v1-{s}')} messages")


def check_effects(
    effects: collections.Counter[str], rows: list[tuple[int, str, dict[str, Any]]],
    saved_calls: set[str], out: Outcome,
) -> None:
    for tag, count in effects.items():
        if count > 1:
            out.double_runs += count - 1
            out.violations.append(f"tool side effect {tag} happened {count} times")
        if f"call_{tag}" not in saved_calls:
            out.violations.append(f"tool {tag} ran but its call was never saved")
    for _, kind, data in rows:
        if kind == "tool" and data.get("success") and data["content"].startswith("noted "):
            tag = data["content"].removeprefix("noted ")
            if effects[tag] != 1:
                out.violations.append(f"result of {tag} saved, but its side effect ran "
                                      f"{effects[tag]} times")


def check_draft(
    trial: Trial, rows: list[tuple[int, str, dict[str, Any]]], child: dict[str, Any],
    draft: str | None, fail: Callable[[str], None],
) -> None:
    """The draft is a prefix of the in-flight step's text, consistent with the screen."""
    if draft is None:
        return
    step = sum(1 for _, k, _ in rows if k == "assistant")
    candidates = [step] + ([step - 1] if step else [])  # killed between save and clear_draft
    for s in candidates:
        if s >= len(trial.steps):
            continue
        full, screen = trial.steps[s]["text"], child["screen"].get(s, "")
        # Saved before its piece is shown, the draft may be one piece ahead of the screen.
        ahead = draft.startswith(screen) and len(draft[len(screen):].split()) <= 1
        if full.startswith(draft) and (ahead or screen.startswith(draft)):
            return
    fail(f"draft {draft!r} is not a prefix of what was on screen for step {step}")


# --- running ----------------------------------------------------------------------------------


def run_trial(trial: Trial, root: Path, template_v1: Path | None) -> Outcome:
    started = time.monotonic()
    out = Outcome(trial)
    work = root / f"trial-{trial.index:05d}"
    data_dir = work / "data"
    data_dir.mkdir(parents=True)
    log = work / "side_effects.log"
    if trial.scenario == "migrate":
        assert template_v1 is not None
        shutil.copy(template_v1, data_dir / "continuum.sqlite")
    try:
        lines, stderr, reached = run_child(trial, data_dir, log)
        if not reached:
            out.violations.append(f"milestone not reached; child said {lines[-3:]}: {stderr}")
        else:
            asyncio.run(check(trial, data_dir, log, lines, out))
    except Exception as err:  # a check that crashed is a failed trial, with its reason
        out.violations.append(f"checker error {type(err).__name__}: {err}")
    out.seconds = time.monotonic() - started
    if not out.violations:
        shutil.rmtree(work, ignore_errors=True)
    return out


def run_matrix(
    kills: int, seed: int, *, jobs: int = 1, root: Path | None = None,
    progress: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    trials = plan(kills, seed)
    owned = root is None
    base = Path(tempfile.mkdtemp(prefix="continuum-matrix-")) if root is None else root
    template = base / "v1-template.sqlite"
    make_v1_database(template)
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            outcomes = []
            for outcome in pool.map(lambda t: run_trial(t, base, template), trials):
                outcomes.append(outcome)
                if progress is not None:
                    progress(outcome)
        return outcomes
    finally:
        if owned and all(not o.violations for o in outcomes if o):
            shutil.rmtree(base, ignore_errors=True)


def tally(outcomes: list[Outcome]) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for point in POINTS:
        mine = [o for o in outcomes if o.trial.point == point]
        table[point] = {
            "kills": len(mine),
            "recovered": sum(o.recovered for o in mine),
            "tool_double_runs": sum(o.double_runs for o in mine),
            "lost_messages": sum(o.lost for o in mine),
            "duplicated": sum(o.duplicated for o in mine),
            "violations": sum(bool(o.violations) for o in mine),
            "crashed_records": sum(o.crashed_record for o in mine),
            "drafts_kept": sum(o.draft for o in mine),
            "landed": dict(collections.Counter(o.landed for o in mine)),
        }
    return table


def format_tally(table: dict[str, dict[str, Any]]) -> str:
    head = f"{'kill point':<18} {'kills':>5} {'recovered':>9} {'tool 2x':>7} {'lost':>4} " \
           f"{'dup':>3} {'bad':>3} {'crashed':>7} {'draft':>5}  resume status after the kill"
    lines = [head, "-" * len(head)]
    totals = collections.Counter()
    for point, row in table.items():
        landed = ", ".join(f"{k}={v}" for k, v in sorted(row["landed"].items()))
        lines.append(f"{point:<18} {row['kills']:>5} {row['recovered']:>9} "
                     f"{row['tool_double_runs']:>7} {row['lost_messages']:>4} "
                     f"{row['duplicated']:>3} {row['violations']:>3} "
                     f"{row['crashed_records']:>7} {row['drafts_kept']:>5}  {landed}")
        totals.update({k: v for k, v in row.items() if isinstance(v, int)})
    lines.append(f"{'total':<18} {totals['kills']:>5} {totals['recovered']:>9} "
                 f"{totals['tool_double_runs']:>7} {totals['lost_messages']:>4} "
                 f"{totals['duplicated']:>3} {totals['violations']:>3} "
                 f"{totals['crashed_records']:>7} {totals['drafts_kept']:>5}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=max(1, min(4, (os.cpu_count() or 2) // 2)))
    parser.add_argument("--json", type=Path, help="write the tally and every outcome here")
    args = parser.parse_args(argv)
    started = time.monotonic()
    done = 0

    def progress(outcome: Outcome) -> None:
        nonlocal done
        done += 1
        if outcome.violations:
            print(f"[{done}/{args.kills}] {outcome.trial.point} #{outcome.trial.index} FAILED: "
                  + "; ".join(outcome.violations), flush=True)
        elif done % 25 == 0:
            print(f"[{done}/{args.kills}] {time.monotonic() - started:.0f} s", flush=True)

    outcomes = run_matrix(args.kills, args.seed, jobs=args.jobs, progress=progress)
    table = tally(outcomes)
    elapsed = time.monotonic() - started
    print(format_tally(table))
    print(f"{len(outcomes)} kills in {elapsed:.0f} s (seed {args.seed}, {args.jobs} jobs)")
    if args.json:
        args.json.write_text(json.dumps({
            "seed": args.seed, "kills": len(outcomes), "seconds": elapsed, "tally": table,
            "outcomes": [{**asdict(o), "trial": asdict(o.trial)} for o in outcomes],
        }, indent=2, default=str))
    return 1 if any(o.violations for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
