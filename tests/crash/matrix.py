"""The crash matrix: ``kill -9`` the app's services at seeded points of a request, then recover.

Run::

    python -m tests.crash.matrix --kills 500 [--seed N] [--jobs 4] [--json out.json]
    python -m tests.crash.matrix --kills 40 --mutation rerun_unanswered   # must FAIL

Each trial starts a fresh child process (:mod:`tests.crash.matrix_child`) that runs one request
through :class:`app.services.AppServices` over a real database file, against its own simulator,
with the ``note`` tool — side effects, so every call goes through the services' approver and
the journal's ``awaiting_approval``/``started`` states — writing an fsynced side-effect log.
The parent reads the child's milestones and sends SIGKILL at a point chosen by a seeded RNG:

=====================  =====================================================================
``streaming``          after the n-th text token of step k, plus 0–3 ms
``tool_call_saved``    right after the assistant message with tool calls is committed (0–1 ms)
``awaiting_approval``  while the approver holds a call (``awaiting_approval`` is durable)
``mid_tool``           after a tool's side effect is durable, while the tool still runs
``tool_result_saved``  right after the r-th tool result is committed (0–1 ms)
``commit``             0–D ms into a burst of commits (many fast tool rounds and drafts)
``migration``          0–D ms into opening a v1 database that is being migrated
``recovery``           killed first at one of the first four points, then the *recovering*
                       process is killed too: after ``resume_info``, after its n-th commit,
                       while its resumed step's tool awaits approval or runs, or mid-stream
=====================  =====================================================================

Recovery is what a relaunch does, in a fresh child with the same real tool and log registered
(a tool that runs again is seen): ``open()``, ``resume_info``, ``stream_resume``, whose scripted
model step asks for one more tool. After each process the parent checks, from the raw file:

* ``PRAGMA integrity_check`` is ``ok``; sequence numbers are contiguous 1..n;
* every row is **what was scripted and reported**: each ``SAVED`` line (the child's record of a
  commit, with the hash and length of the text the agent handed to the store) matches its row;
  assistant rows carry exactly the scripted text and calls of their step, tool rows the note's
  result or the "may or may not have run" text; no unreported rows but the killed one's last;
  no call answered twice;
* each tool side effect happened at most once, only for a saved call, exactly once per saved
  successful result; a recovery runs only calls that were awaiting approval and its own;
* ``resume_info`` (in the recovering process) equals the status derived here from the raw rows
  by an independent reading of SPEC A2 (``mid_tool`` must be RECOVER_TOOLS); a call reported
  awaiting approval never started; a running marker left by a dead process became a CRASHED
  stop record; the draft is a prefix of a step's text consistent with what was on screen;
* after the resume finishes: rows already saved unchanged, exactly the unanswered calls that
  were not awaiting approval answered as "may or may not have run", the awaiting ones run, and
  (read back by the parent) nothing left to resume, no stop record, no draft;
* a killed migration leaves either the old schema untouched or the new one complete, and
  reopening migrates it with every message kept and searchable.

``--mutation NAME`` runs the children with a deliberate bug (:mod:`tests.crash.mutations`); the
matrix must then report violations. The tally (per kill point: kills, recovered, tool
double-runs, lost and changed messages, violations) is printed; the exit status is 1 if any
invariant failed.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tests.crash.childproc import run_and_kill
from tests.crash.matrix_checks import (
    Proc,
    check_draft,
    check_effects,
    check_info,
    check_linear_tree,
    check_new_effects,
    check_resumed,
    check_rows,
    expected_status,
    parse_child,
    raw_state,
    read_effects,
)
from tests.crash.mutations import ENV as MUTATION_ENV
from tests.crash.mutations import MUTATIONS

__all__ = [
    "POINTS",
    "Outcome",
    "Trial",
    "check_draft",
    "check_effects",
    "expected_status",
    "format_tally",
    "main",
    "plan",
    "run_matrix",
    "tally",
]

CHILD = Path(__file__).with_name("matrix_child.py")
POINTS = (
    "streaming",
    "tool_call_saved",
    "awaiting_approval",
    "mid_tool",
    "tool_result_saved",
    "commit",
    "migration",
    "recovery",
)
#: Where the first process dies in a ``recovery`` trial (each leaves something to resume).
BEFORE_RECOVERY = ("streaming", "tool_call_saved", "awaiting_approval", "mid_tool")
RECOVERY_KILLS = ("info", "saved", "awaiting_approval", "mid_tool", "streaming")
USER_TEXT = "Please write the notes for the plan."
FULL_STEPS = (
    {
        "text": "I will write two notes for you now, one for each part of the plan.",
        "tags": ["a1", "a2"],
    },
    {"text": "One more note, then I can summarise everything for you.", "tags": ["b1"]},
    {
        "text": "All three notes are written and the task is complete; nothing else is needed.",
        "tags": [],
    },
)
BURST_STEPS = tuple({"text": f"Round {i}: noting.", "tags": [f"c{i}"]} for i in range(1, 7)) + (
    {"text": "Done with every round.", "tags": []},
)
#: A v1 database (before drafts, stop records and search) the migration point opens.
V1_SESSIONS, V1_MESSAGES = 4, 4000
V1_WORD = "zebrafinch"
MILESTONE_TIMEOUT = 30.0
HOLD = 0.5  # seconds a tool or an approval is held at the point that kills inside it


def resume_steps(attempt: int) -> tuple[dict[str, Any], ...]:
    """What the model answers a resume: a step that asks for one more note, then the end."""
    return (
        {
            "text": f"Resuming (attempt {attempt}): one more note to check the others.",
            "tags": [f"r{attempt}"],
        },
        {
            "text": f"Resumed (attempt {attempt}): every note is in place; the task is done.",
            "tags": [],
        },
    )


@dataclass
class Trial:
    index: int
    point: str
    seed: int
    delay: float  # seconds slept after the milestone before SIGKILL
    target: dict[str, Any]
    scenario: str  # full | burst | migrate
    approval: str = "once"  # how the approver answers: once | conversation
    first: str = ""  # recovery trials: the point the first process is killed at
    resume_target: dict[str, Any] | None = None  # recovery trials: where the resume is killed
    resume_delay: float = 0.0

    @property
    def steps(self) -> tuple[dict[str, Any], ...]:
        return BURST_STEPS if self.scenario == "burst" else FULL_STEPS

    @property
    def kill_point(self) -> str:
        """Where the first process is killed."""
        return self.first or self.point


@dataclass
class Outcome:
    trial: Trial
    landed: str = ""  # the resume status found after the kill
    recovered: bool = False
    double_runs: int = 0
    lost: int = 0
    changed: int = 0  # rows whose text or calls are not what was scripted / reported
    duplicated: int = 0
    crashed_record: bool = False  # a CRASHED stop record was shown after the kill
    draft: bool = False  # a draft (the on-screen text) was kept
    resumes: int = 0  # recovering processes that ran (killed or not)
    violations: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _first_target(
    point: str,
    rng: random.Random,
    approval: str,
) -> tuple[dict[str, Any], float]:
    if point == "streaming":
        return {"step": rng.randrange(len(FULL_STEPS)), "piece": rng.randint(1, 8)}, rng.uniform(
            0, 0.003
        )
    if point == "tool_call_saved":
        return {"step": rng.randrange(2)}, rng.uniform(0, 0.001)
    if point == "awaiting_approval":
        # Allowed for the conversation after the first answer, b1 is never asked.
        tags = ["a1", "a2"] if approval == "conversation" else ["a1", "a2", "b1"]
        return {"tag": rng.choice(tags)}, rng.uniform(0, 0.05)
    if point == "mid_tool":
        return {"tag": rng.choice(["a1", "a2", "b1"])}, rng.uniform(0, 0.05)
    if point == "tool_result_saved":
        return {"result": rng.randint(1, 3)}, rng.uniform(0, 0.001)
    if point == "commit":
        # Most kills inside the burst of tool rounds (after the first, slower step).
        return {}, rng.uniform(0.085, 0.14) if rng.random() < 0.8 else rng.uniform(0, 0.085)
    # migration: most kills inside the migration itself, some later in the request.
    return {}, rng.uniform(0, 0.06) if rng.random() < 0.75 else rng.uniform(0.06, 0.4)


def _resume_target(rng: random.Random) -> tuple[dict[str, Any], float]:
    at = rng.choice(RECOVERY_KILLS)
    if at == "info":
        return {"point": "info"}, rng.uniform(0, 0.003)
    if at == "saved":
        return {"point": "saved", "n": rng.randint(1, 3)}, rng.uniform(0, 0.001)
    if at == "streaming":
        return {"point": "streaming", "step": 0, "piece": rng.randint(1, 6)}, rng.uniform(0, 0.003)
    return {"point": at, "tag": "r1"}, rng.uniform(0, 0.05)


def plan(kills: int, seed: int, points: Sequence[str] = POINTS) -> list[Trial]:
    """The trials: points round-robin (a seeded shuffle per round), parameters from the RNG."""
    rng = random.Random(seed)
    trials: list[Trial] = []
    order: list[str] = []
    for index in range(kills):
        if not order:
            order = list(points)
            rng.shuffle(order)
        point = order.pop()
        approval = "conversation" if rng.random() < 0.3 else "once"
        first = rng.choice(BEFORE_RECOVERY) if point == "recovery" else ""
        target, delay = _first_target(first or point, rng, approval)
        resume_target, resume_delay = _resume_target(rng) if point == "recovery" else (None, 0.0)
        scenario = {"commit": "burst", "migration": "migrate"}.get(point, "full")
        trials.append(
            Trial(
                index,
                point,
                rng.randrange(2**31),
                delay,
                target,
                scenario,
                approval,
                first,
                resume_target,
                resume_delay,
            )
        )
    return trials


# --- the children -----------------------------------------------------------------------------


def child_spec(
    trial: Trial,
    data_dir: Path,
    log: Path,
    *,
    attempt: int = 0,
    session: str | None = None,
    target: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The spec of the first process (``attempt`` 0) or of the ``attempt``-th recovery."""
    rng = random.Random(trial.seed + attempt)
    burst = trial.scenario == "burst"
    point = (target or {}).get("point") if attempt else trial.kill_point
    held = (target or {}).get("tag") if attempt else trial.target.get("tag")
    steps = resume_steps(attempt) if attempt else trial.steps
    tags = [t for step in steps for t in step["tags"]]

    def hold(at: str, top: float) -> dict[str, float]:
        if burst:
            return {}
        return {t: HOLD if (point == at and t == held) else rng.uniform(0, top) for t in tags}

    return {
        "mode": "resume" if attempt else "run",
        "session": session,
        "data_dir": str(data_dir),
        "log": str(log),
        "user_text": USER_TEXT,
        "steps": list(steps),
        "rate": 0.0 if burst else 300.0,
        "tool_hold": hold("mid_tool", 0.02),
        "approval": trial.approval,
        "approval_hold": hold("awaiting_approval", 0.005),
        "draft_interval": 0.0 if burst else 0.01,
    }


class Milestones:
    """Decides when the kill's milestone has been reached, from the child's lines.

    ``point`` ``done`` never kills early: the process runs to its end (``DONE``).
    """

    def __init__(self, point: str, target: dict[str, Any], *, resume: bool = False) -> None:
        self.point, self.target, self.resume = point, target, resume
        self.pieces: collections.Counter[int] = collections.Counter()
        self.tool_results = self.assistant_saved = self.saved = 0

    def reached(self, line: str) -> bool:
        tag, _, rest = line.partition(" ")
        words = rest.split(" ")
        point, target = self.point, self.target
        if tag == "DELTA":
            step_text, _, text = rest.partition(" ")
            step = int(step_text)
            # Pieces are counted in the simulator's tokens (words): a provider joins the pieces
            # that arrive together, so one DELTA may carry several (app.providers.coalesce).
            before = self.pieces[step]
            self.pieces[step] += max(1, len(json.loads(text).split()))
            return (
                point == "streaming"
                and step == target["step"]
                and before < target["piece"] <= self.pieces[step]
            )
        if tag == "SAVED":
            self.saved += 1
            if point == "saved" and self.saved == target["n"]:
                return True
            if words[1] == "AssistantMessage":
                self.assistant_saved += 1
                return (
                    point == "tool_call_saved"
                    and words[2] == "tool_use"
                    and (self.assistant_saved == target["step"] + 1)
                )
            if words[1] == "ToolMessage":
                self.tool_results += 1
                return point == "tool_result_saved" and self.tool_results == target["result"]
            return False
        if tag == "ASKED":
            return point == "awaiting_approval" and words[0] == target["tag"]
        if tag == "TOOL_EFFECT":
            return point == "mid_tool" and words[0] == target["tag"]
        if tag == "RUN_STARTED":
            return point == "commit"
        if tag == "OPENING":
            return point == "migration"
        if tag == "INFO":
            return point == "info"
        if tag == "DONE":
            # That step had fewer pieces, fewer commits or nothing to resume: kill at the end.
            return point in ("streaming", "done") or self.resume
        return False


def run_child(
    spec: dict[str, Any], milestones: Milestones, delay: float, work: Path, mutation: str | None
) -> tuple[list[str], str, bool]:
    """Start a child, SIGKILL it at its milestone; (its lines, stderr tail, reached)."""
    env = dict(os.environ)
    env.pop(MUTATION_ENV, None)
    if mutation:
        env[MUTATION_ENV] = mutation
    result = run_and_kill(
        [sys.executable, str(CHILD), json.dumps(spec)],
        stderr_path=work / "child.stderr",
        is_milestone=milestones.reached,
        timeout=MILESTONE_TIMEOUT,
        delay=delay,
        tail_chars=2000,
        env=env,
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
                message = (
                    UserMessage(f"question {seq} about the {V1_WORD} in session {s}")
                    if seq % 2
                    else AssistantMessage(f"answer {seq} " + "text " * 40)
                )
                kind = "user" if seq % 2 else "assistant"
                rows.append((f"v1-{s}", seq, "r", kind, message_to_json(message), now + seq))
        conn.executemany(
            "INSERT INTO messages(session_id, seq, request_id, kind, data, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
        conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
        conn.execute("PRAGMA user_version=1")
        conn.execute("COMMIT")
    finally:
        conn.close()


def check_migration_state(state: dict[str, Any], fail: Callable[[str], None]) -> None:
    from app.storage.sqlite import SCHEMA_VERSION

    version, tables = state["version"], state["tables"]
    if version == 1 and {"drafts", "stop_records", "running_requests"} & tables:
        fail(f"a half-applied migration: version 1 with tables {sorted(tables)}")
    if version not in (1, SCHEMA_VERSION):
        fail(f"unexpected schema version {version} after a killed migration")
    for s in range(V1_SESSIONS):
        got = [r[0] for r in state["rows"].get(f"v1-{s}", [])]
        if got != list(range(1, V1_MESSAGES // V1_SESSIONS + 1)):
            fail(f"v1 session {s} lost messages in the migration: {len(got)}")


async def check_migrated(services: Any, fail: Callable[[str], None]) -> None:
    # A search shows each conversation once, by its newest match (the question at seq 999);
    # every question must be in the index, counted by SQLite itself.
    hits = sorted((h.session_id, h.seq) for h in await services.search(V1_WORD))
    newest = V1_MESSAGES // V1_SESSIONS - 1
    if hits != [(f"v1-{s}", newest) for s in range(V1_SESSIONS)]:
        fail(f"after migrating, search finds {hits}")
    with contextlib.closing(sqlite3.connect(services.storage.storage.path)) as conn:
        (indexed,) = conn.execute(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (V1_WORD,)
        ).fetchone()
    if indexed != V1_MESSAGES // 2:
        fail(f"after migrating, the index finds {indexed} of {V1_MESSAGES // 2} messages")
    sessions = {s.id: s.message_count for s in await services.list_sessions()}
    for s in range(V1_SESSIONS):
        if sessions.get(f"v1-{s}") != V1_MESSAGES // V1_SESSIONS:
            fail(f"after migrating, session v1-{s} has {sessions.get(f'v1-{s}')} messages")


# --- checking ---------------------------------------------------------------------------------


class TrialCheck:
    """One trial's checks, after each process that ran on its data folder."""

    def __init__(self, trial: Trial, data_dir: Path, log: Path, out: Outcome) -> None:
        self.trial, self.data_dir, self.log, self.out = trial, data_dir, log, out
        self.procs: list[Proc] = []

    def fail(self, message: str) -> None:
        self.out.violations.append(message)

    def file(self, after: str) -> tuple[list[Any], dict[str, Any], collections.Counter[str]] | None:
        """The raw file after ``after`` died: rows, state, side effects (``None``: no file)."""
        from app.services import DATABASE_FILE

        db = self.data_dir / DATABASE_FILE
        if not db.exists():
            self.fail(f"no database file at all after {after}")
            return None
        state = raw_state(db)
        if state["integrity"] != "ok":
            self.fail(f"integrity_check after {after}: {state['integrity']}")
        check_linear_tree(state, lambda message: self.fail(f"after {after}: {message}"))
        sid = self.procs[0].session
        rows = state["rows"].get(sid, []) if sid else []
        counts: collections.Counter[str] = collections.Counter()

        def fail(message: str) -> None:
            self.fail(f"after {after}: {message}")

        check_rows(rows, self.procs, USER_TEXT, fail, counts)
        effects = read_effects(self.log)
        saved_calls = {
            c["id"] for r in rows if r[1] == "assistant" for c in r[2].get("tool_calls") or ()
        }
        probe = Outcome(self.trial)
        check_effects(effects, rows, saved_calls, probe)
        for message in probe.violations:
            fail(message)
        out = self.out
        out.double_runs = max(out.double_runs, probe.double_runs)
        out.lost = max(out.lost, counts["lost"])
        out.changed = max(out.changed, counts["changed"])
        out.duplicated = max(out.duplicated, counts["duplicated"])
        if (
            self.procs[-1].request_id
            and sid not in state["markers"]
            and (expected_status(rows) != "blocked:completed")
        ):
            fail("the request had started and is unfinished, yet no running marker was left")
        return rows, state, effects

    def draft_sources(self, rows: list[Any]) -> list[tuple[Any, int, dict[int, str]]]:
        return [
            (
                p.steps,
                sum(1 for r in rows if r[1] == "assistant" and r[3] == p.request_id),
                p.screen,
            )
            for p in self.procs
            if p.request_id
        ]


def check(
    trial: Trial,
    data_dir: Path,
    log: Path,
    lines: list[str],
    out: Outcome,
    work: Path,
    mutation: str | None,
) -> None:
    """Check the first kill, recover (killing the recovery too in ``recovery`` trials), check
    each step, then read the folder back in this process."""
    checks = TrialCheck(trial, data_dir, log, out)
    first = parse_child("the killed request", trial.steps, lines)
    checks.procs.append(first)
    got = checks.file("the first kill")
    if got is None:
        return
    rows, state, effects = got
    if trial.scenario == "migrate":
        check_migration_state(state, checks.fail)
    if trial.kill_point == "mid_tool" and expected_status(rows) != "recover_tools":
        checks.fail(f"killed mid-tool but the tail says {expected_status(rows)}")
    if trial.scenario == "migrate" and not first.opened:
        out.landed = f"mid-open (schema v{state['version']} on disk)"
    sid = first.session
    resumed = False
    for attempt in (1, 2):
        if sid is None:
            break
        killing = trial.resume_target if attempt == 1 else None
        target = killing or {"point": "done"}
        spec = child_spec(trial, data_dir, log, attempt=attempt, session=sid, target=target)
        lines, stderr, reached = run_child(
            spec,
            Milestones(target["point"], target, resume=True),
            trial.resume_delay if killing else 0.0,
            work,
            mutation,
        )
        out.resumes += 1
        proc = parse_child(f"recovery {attempt}", spec["steps"], lines)
        if not reached or proc.info is None:
            checks.fail(
                f"recovery {attempt} did not get to its milestone; it said {lines[-3:]}: {stderr}"
            )
            return
        info = proc.info

        def fail(message: str, attempt: int = attempt) -> None:
            checks.fail(f"recovery {attempt}: {message}")

        check_info(info, rows, sid in state["markers"], effects, checks.procs, fail)
        check_draft(checks.draft_sources(rows), info["draft"], fail)
        if attempt == 1:
            out.landed = out.landed or info["found"]
            out.crashed_record = info["stop"] == "crashed"
            out.draft = info["draft"] is not None
        checks.procs.append(proc)
        got = checks.file(f"recovery {attempt}")
        if got is None:
            return
        rows_after, state, effects_after = got
        resumed = not info["found"].startswith("blocked:")
        if killing is None:
            if not proc.done:
                fail("the resume did not finish")
            if resumed:
                check_resumed(rows, rows_after, info, effects, effects_after, proc, out)
            elif rows_after != rows:
                fail("nothing to resume, yet the history changed")
            break
        check_new_effects(info, effects, effects_after, proc, fail)
        rows, effects = rows_after, effects_after
    if sid is None:
        out.landed = out.landed or "before the conversation existed"
    asyncio.run(read_back(trial, data_dir, sid, resumed, checks.fail))
    out.recovered = not out.violations


async def read_back(
    trial: Trial, data_dir: Path, sid: str | None, resumed: bool, fail: Callable[[str], None]
) -> None:
    """The folder read back through the app in this (checking) process, after recovery."""
    from app.services import AppServices

    services = AppServices(data_dir)
    try:
        await asyncio.wait_for(services.open(), 30)
        if trial.scenario == "migrate":
            await check_migrated(services, fail)
        if sid is not None and resumed:
            info = await services.resume_info(sid)
            if info.point is not None or info.blocked_reason != "completed":
                fail(f"after the resume: {info.point} / {info.blocked_reason}")
            if info.stop is not None or info.draft is not None:
                fail(f"after the resume the journal still has {info.stop} / {info.draft!r}")
        if await services.journal.running_markers():
            fail("running markers survived the recovery")
        if (integrity := await services.storage.storage.integrity_check()) != ["ok"]:
            fail(f"integrity_check after recovery: {integrity}")
    finally:
        await asyncio.wait_for(services.close(), 30)


# --- running ----------------------------------------------------------------------------------


def run_trial(
    trial: Trial, root: Path, template_v1: Path | None, mutation: str | None = None
) -> Outcome:
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
        spec = child_spec(trial, data_dir, log)
        lines, stderr, reached = run_child(
            spec, Milestones(trial.kill_point, trial.target), trial.delay, work, mutation
        )
        if not reached:
            out.violations.append(f"milestone not reached; child said {lines[-3:]}: {stderr}")
        else:
            check(trial, data_dir, log, lines, out, work, mutation)
    except Exception as err:  # a check that crashed is a failed trial, with its reason
        out.violations.append(f"checker error {type(err).__name__}: {err}")
    out.seconds = time.monotonic() - started
    if not out.violations:
        shutil.rmtree(work, ignore_errors=True)
    return out


def run_matrix(
    kills: int,
    seed: int,
    *,
    jobs: int = 1,
    root: Path | None = None,
    progress: Callable[[Outcome], None] | None = None,
    mutation: str | None = None,
    points: Sequence[str] = POINTS,
) -> list[Outcome]:
    if mutation is not None and mutation not in MUTATIONS:
        raise ValueError(f"unknown mutation {mutation!r}; known: {', '.join(MUTATIONS)}")
    trials = plan(kills, seed, points)
    owned = root is None
    base = Path(tempfile.mkdtemp(prefix="continuum-matrix-")) if root is None else root
    template = base / "v1-template.sqlite"
    make_v1_database(template)
    outcomes: list[Outcome] = []
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for outcome in pool.map(lambda t: run_trial(t, base, template, mutation), trials):
                outcomes.append(outcome)
                if progress is not None:
                    progress(outcome)
        return outcomes
    finally:
        if owned and all(not o.violations for o in outcomes):
            shutil.rmtree(base, ignore_errors=True)


def tally(outcomes: list[Outcome]) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for point in POINTS:
        mine = [o for o in outcomes if o.trial.point == point]
        table[point] = {
            "kills": len(mine),
            "recovery_kills": sum(o.trial.resume_target is not None for o in mine),
            "recovered": sum(o.recovered for o in mine),
            "tool_double_runs": sum(o.double_runs for o in mine),
            "lost_messages": sum(o.lost for o in mine),
            "changed_messages": sum(o.changed for o in mine),
            "duplicated": sum(o.duplicated for o in mine),
            "violations": sum(bool(o.violations) for o in mine),
            "crashed_records": sum(o.crashed_record for o in mine),
            "drafts_kept": sum(o.draft for o in mine),
            "resumes": sum(o.resumes for o in mine),
            "landed": dict(collections.Counter(o.landed for o in mine)),
        }
    return table


COLUMNS = (
    ("kills", "kills", 5),
    ("+2nd", "recovery_kills", 4),
    ("recovered", "recovered", 9),
    ("tool 2x", "tool_double_runs", 7),
    ("lost", "lost_messages", 4),
    ("text", "changed_messages", 4),
    ("dup", "duplicated", 3),
    ("bad", "violations", 3),
    ("crashed", "crashed_records", 7),
    ("draft", "drafts_kept", 5),
    ("resumes", "resumes", 7),
)


def format_tally(table: dict[str, dict[str, Any]]) -> str:
    head = (
        f"{'kill point':<18} "
        + " ".join(f"{title:>{w}}" for title, _, w in COLUMNS)
        + "  resume status after the (first) kill"
    )
    lines = [head, "-" * len(head)]
    totals: collections.Counter[str] = collections.Counter()
    for point, row in table.items():
        landed = ", ".join(f"{k}={v}" for k, v in sorted(row["landed"].items()))
        lines.append(
            f"{point:<18} " + " ".join(f"{row[key]:>{w}}" for _, key, w in COLUMNS) + f"  {landed}"
        )
        totals.update({k: v for k, v in row.items() if isinstance(v, int)})
    lines.append(f"{'total':<18} " + " ".join(f"{totals[key]:>{w}}" for _, key, w in COLUMNS))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--kills", type=int, default=500, help="trials (a recovery trial kills twice)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=max(1, min(4, (os.cpu_count() or 2) // 2)))
    parser.add_argument("--json", type=Path, help="write the tally and every outcome here")
    parser.add_argument(
        "--mutation",
        choices=sorted(MUTATIONS),
        default=os.environ.get(MUTATION_ENV) or None,
        help="run the children with this deliberate bug (the run must fail)",
    )
    parser.add_argument(
        "--points",
        default=",".join(POINTS),
        help="comma-separated kill points to use (default: all)",
    )
    args = parser.parse_args(argv)
    points = tuple(p for p in args.points.split(",") if p)
    if unknown := set(points) - set(POINTS):
        parser.error(f"unknown kill points {sorted(unknown)}; known: {', '.join(POINTS)}")
    started = time.monotonic()
    done = 0

    def progress(outcome: Outcome) -> None:
        nonlocal done
        done += 1
        if outcome.violations:
            print(
                f"[{done}/{args.kills}] {outcome.trial.point} #{outcome.trial.index} FAILED: "
                + "; ".join(outcome.violations),
                flush=True,
            )
        elif done % 25 == 0:
            print(f"[{done}/{args.kills}] {time.monotonic() - started:.0f} s", flush=True)

    outcomes = run_matrix(
        args.kills,
        args.seed,
        jobs=args.jobs,
        progress=progress,
        mutation=args.mutation,
        points=points,
    )
    table = tally(outcomes)
    elapsed = time.monotonic() - started
    print(format_tally(table))
    kills = sum(row["kills"] + row["recovery_kills"] for row in table.values())
    print(
        f"{len(outcomes)} trials, {kills} kills in {elapsed:.0f} s (seed {args.seed}, "
        f"{args.jobs} jobs{f', mutation {args.mutation}' if args.mutation else ''})"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "seed": args.seed,
                    "kills": kills,
                    "seconds": elapsed,
                    "mutation": args.mutation,
                    "tally": table,
                    "outcomes": [{**asdict(o), "trial": asdict(o.trial)} for o in outcomes],
                },
                indent=2,
                default=str,
            )
        )
    return 1 if any(o.violations for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
