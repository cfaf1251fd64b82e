"""Record appends under the LD_PRELOAD shim, rebuild every power-cut state, judge each; a tally.

    python -m tests.power.run --seeds 20 --count 100 --torn 6 --jobs 2

Each seed is one recording per scenario (``appends`` of ``--count`` messages in three runs of
the store, and one whole ``agent`` request with a tool: :mod:`tests.power.child`). Every cut
point of a recording gives the synced state, the flushed state and ``--torn`` seeded torn or
garbage variants (:mod:`tests.power.replay`); each distinct state is judged by plain SQLite
and by the app's opening path (:mod:`tests.power.verdict`). Exits 1 when any state fails:
SQLite refuses it, a message whose append had returned is missing, or the app refuses a state
SQLite accepts. ``--keep DIR`` writes each failing state's files under ``DIR``.

The shim is built with gcc (``build_shim``); the work folders are on ``/dev/shm`` when it
exists (the app's opening path fsyncs; on a RAM disk that costs nothing).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .replay import Op, read_log, states
from .verdict import DB_NAME, Verdict, judge, write_state

__all__ = ["SHIM_SOURCE", "Tally", "build_shim", "check_recording", "record", "scratch_folder"]

SHIM_SOURCE = Path(__file__).with_name("shim.c")
ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ("appends", "agent")


def build_shim(folder: Path) -> Path:
    """Compile the recorder into ``folder``; raises ``FileNotFoundError`` without gcc."""
    gcc = shutil.which("gcc")
    if gcc is None:
        raise FileNotFoundError(
            "gcc is not installed: the power-cut test builds its recorder with it "
            "(apt-get install gcc libc6-dev)"
        )
    out = folder / "power_shim.so"
    subprocess.run(
        [gcc, "-shared", "-fPIC", "-O2", "-Wall", "-o", str(out), str(SHIM_SOURCE), "-ldl"],
        check=True,
        capture_output=True,
    )
    return out


def scratch_folder(prefix: str) -> Path:
    """A new folder on a RAM disk when there is one (see the module docstring)."""
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix=prefix, dir=base))


def record(
    shim: Path, folder: Path, scenario: str, seed: int, count: int, synchronous: str = "full"
) -> list[Op]:
    """Run the child under the shim in ``folder``; its recording."""
    folder.mkdir(parents=True, exist_ok=True)
    db = folder.resolve() / DB_NAME
    log = folder / "recording.bin"
    env = {**os.environ, "LD_PRELOAD": str(shim), "POWER_LOG": str(log), "POWER_DB": str(db)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.power.child",
            *(scenario, str(db), str(seed), str(count), synchronous),
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the recorded child failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return read_log(log)


@dataclass(slots=True)
class Tally:
    recordings: int = 0
    cuts: int = 0
    states: int = 0  # before removing duplicates
    distinct: int = 0
    saved: int = 0  # appends that returned, over all recordings
    most_lost: int = 0  # the most saved messages one state lacked (SQLite's view)
    counts: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.recordings += other.recordings
        self.cuts += other.cuts
        self.states += other.states
        self.distinct += other.distinct
        self.saved += other.saved
        self.most_lost = max(self.most_lost, other.most_lost)
        self.counts.update(other.counts)
        self.failures.extend(other.failures)

    def lines(self) -> list[str]:
        c = self.counts
        return [
            f"recordings: {self.recordings} ({self.saved} appends returned)",
            f"cut points: {self.cuts}; states: {self.states}, distinct: {self.distinct}",
            f"SQLite: integrity ok {c['sqlite_ok']}, refused {c['sqlite_refused']}, "
            f"lost a saved message {c['sqlite_lost']} (at most {self.most_lost} in one state)",
            f"app: opened {c['app_ok']}, refused a state SQLite accepts "
            f"{c['app_false_refusal']}, lost a saved message {c['app_lost']}",
            *(
                f"  of which beside {key.split(' beside ')[1]}: {n}"
                for key, n in sorted(c.items())
                if key.startswith("app_false_refusal beside ")
            ),
            f"failing states: {c['failed']}",
        ]


def _count(verdict: Verdict, tally: Tally) -> None:
    c = tally.counts
    c["sqlite_ok" if verdict.sqlite_problem is None else "sqlite_refused"] += 1
    c["sqlite_lost"] += bool(verdict.sqlite_missing)
    tally.most_lost = max(tally.most_lost, len(verdict.sqlite_missing))
    c["app_ok" if verdict.app_problem is None else "app_refused"] += 1
    if verdict.sqlite_problem is None and verdict.app_problem is not None:
        c["app_false_refusal"] += 1
        beside = ", ".join(sorted(k for k in verdict.state.files if k)) or "nothing"
        c[f"app_false_refusal beside {beside}"] += 1
    c["app_lost"] += verdict.app_problem is None and bool(verdict.app_missing)
    c["failed"] += bool(verdict.failures)


async def check_recording(
    ops: list[Op],
    seed: int,
    torn: int,
    work: Path,
    keep: Path | None = None,
    *,
    lying_disk: bool = False,
) -> Tally:
    """Judge every distinct state of one recording (``lying_disk``: see :func:`states`)."""
    tally = Tally(recordings=1)
    tally.saved = sum(1 for op in ops if op.kind == "M" and op.data.startswith(b"SAVED "))
    seen: set[str] = set()
    for cut in states(ops, seed, torn, lying_disk=lying_disk):
        tally.cuts += 1
        for state in cut.states:
            tally.states += 1
            if (digest := state.digest) in seen:
                continue
            seen.add(digest)
            tally.distinct += 1
            verdict = await judge(state, work)
            _count(verdict, tally)
            if verdict.failures:
                tally.failures.extend(verdict.failures)
                if keep is not None:
                    write_state(state, keep / f"seed{seed}-cut{state.cut}-{state.variant}")
    return tally


@dataclass(frozen=True, slots=True)
class Job:
    """One recording and its states, run in a worker process."""

    shim: Path
    scenario: str
    seed: int
    count: int
    torn: int
    keep: Path | None
    synchronous: str
    lying_disk: bool


def _one(job: Job) -> Tally:
    folder = scratch_folder(f"power-{job.scenario}-{job.seed}-")
    try:
        ops = record(job.shim, folder / "child", job.scenario, job.seed, job.count, job.synchronous)
        keep = job.keep / job.scenario if job.keep else None
        return asyncio.run(
            check_recording(
                ops, job.seed, job.torn, folder / "work", keep, lying_disk=job.lying_disk
            )
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.power.run", description=__doc__)
    parser.add_argument("--seeds", type=int, default=10, help="recordings per scenario")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=100, help="appends per recording")
    parser.add_argument("--torn", type=int, default=6, help="torn/garbage variants per cut")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="write failing states under this folder")
    parser.add_argument(
        "--synchronous",
        choices=("full", "normal"),
        default="full",
        help="the store's setting in the child (normal: to see what it loses; it fails)",
    )
    parser.add_argument(
        "--lying-disk",
        action="store_true",
        help="a disk that ignores flushes (to see what that loses; it fails)",
    )
    args = parser.parse_args(argv)
    build_dir = scratch_folder("power-shim-")
    try:
        shim = build_shim(build_dir)
        work = [
            Job(
                *(shim, scenario, seed, args.count, args.torn, args.keep),
                *(args.synchronous, args.lying_disk),
            )
            for scenario in args.scenarios.split(",")
            for seed in range(args.first_seed, args.first_seed + args.seeds)
        ]
        total = Tally()
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            for tally in pool.map(_one, work):
                total.add(tally)
    finally:
        shutil.rmtree(build_dir, ignore_errors=True)
    print("\n".join(total.lines()))
    for failure in total.failures[:50]:
        print("FAIL", failure[:300])
    return 1 if total.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
