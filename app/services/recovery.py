"""Getting back to where things stood: the data folder after a crash or damage, and what the
Resume bar needs for one conversation.

* :func:`settle_interrupted_requests` turns the markers of requests that were running when the
  app died into stop records ("Continuum closed unexpectedly ...");
* :func:`set_aside_damaged_database` keeps a damaged database aside (never deleted) so a new
  one can start; :func:`database_damaged` is the store's callback for damage found while running;
* :class:`ResumeInfo` / :func:`resume_info`: the resume point or why there is none, the last
  stop record and draft, which unanswered calls provably never started, and whether the person
  dismissed the bar for this very state (:func:`resume_word` names the state dismissed).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from ..client import AgentClient
from ..locks import SessionLocks
from ..messages import ToolCall
from ..resume import ResumeBlocked, ResumePoint
from ..storage.journal import TOOL_AWAITING_APPROVAL, SessionJournal, StopKind, StopRecord
from .failures import tell

__all__ = [
    "DATABASE_FILE",
    "ResumeInfo",
    "database_damaged",
    "not_started_calls",
    "resume_info",
    "resume_word",
    "set_aside_damaged_database",
    "settle_interrupted_requests",
]

log = logging.getLogger(__name__)

DATABASE_FILE = "continuum.sqlite"


async def settle_interrupted_requests(
    journal: SessionJournal, locks: SessionLocks, running: Collection[str]
) -> None:
    """Turn the markers of requests that were running when the app died into stop records
    (skipping requests running here or in another live Continuum)."""
    for marker in await journal.running_markers():
        if marker.session_id in running:
            continue
        if locks.is_locked_elsewhere(marker.session_id):
            continue  # another live Continuum is answering there right now
        stop = await journal.stop_record(marker.session_id)
        if stop is None or stop.created_at < marker.started_at:
            # (A stop record newer than the marker says why already: a full disk saved the
            # reason but had no room left to remove the marker.)
            started = time.strftime("%H:%M", time.localtime(marker.started_at))
            await journal.record_stop(
                marker.session_id,
                StopKind.CRASHED,
                f"Continuum closed unexpectedly while answering (request started at {started}).",
            )
        await journal.clear_running(marker.session_id)


def set_aside_damaged_database(data_dir: Path, *, is_open: bool) -> Path:
    """Keep a damaged database aside under a timestamped name and return its new path.

    For startup after opening raised :class:`~app.errors.StorageCorruptError`: the
    file (with its ``-wal``/``-shm`` companions) is renamed to
    ``continuum.damaged-YYYYmmdd-HHMMSS.sqlite`` in the data folder — never deleted, never
    overwriting an earlier one — so the next open starts a new, empty database and
    the person can still hand the old file to a recovery tool. The companions move first:
    a stray ``-wal`` beside a new database would be replayed into it.
    """
    if is_open:
        raise RuntimeError("the database is open; only a database that failed to open is set aside")
    source = data_dir / DATABASE_FILE
    if not source.exists():
        raise FileNotFoundError(f"there is no database at {source} to set aside")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for attempt in range(1000):
        name = f"continuum.damaged-{stamp}{f'-{attempt}' if attempt else ''}.sqlite"
        target = data_dir / name
        if not any(Path(f"{target}{end}").exists() for end in ("", "-wal", "-shm")):
            break
    else:  # pragma: no cover - a thousand set-asides in one second
        raise FileExistsError(f"cannot find a free name to keep {source} aside")
    for end in ("-wal", "-shm", ""):
        companion = Path(f"{source}{end}")
        if companion.exists():
            os.replace(companion, f"{target}{end}")
    log.warning("kept a damaged database aside as %s", target.name)
    return target


def database_damaged(set_aside: Callable[[], Path], notify: Callable[[str], None] | None) -> str:
    """The store found damage while in use and closed the file: keep it aside, say so."""
    try:
        kept = set_aside()
    except Exception:
        log.exception("could not keep the damaged database aside")
        done = (
            "It could not be moved aside: close Continuum, move it away (or restore a "
            "backup) and start again."
        )
    else:
        done = (
            f"It was kept aside as {kept} (nothing was deleted; a recovery tool may "
            "get more back). Restart Continuum to start a new, empty database."
        )
    tell(
        notify,
        f"The conversation database was found damaged, so Continuum stopped writing to it. {done}",
    )
    return done


@dataclass(frozen=True, slots=True)
class ResumeInfo:
    """What the Resume bar needs for one conversation."""

    point: ResumePoint | None
    blocked_reason: str | None
    blocked_text: str | None
    stop: StopRecord | None
    draft: str | None
    #: Unanswered calls that were awaiting approval: they provably never started, and Resume
    #: asks again. The other unanswered calls of ``point`` may or may not have run.
    awaiting_approval: tuple[ToolCall, ...] = ()
    #: The person dismissed the bar for this state (nothing was added or stopped since).
    dismissed: bool = False

    @property
    def resumable(self) -> bool:
        return self.point is not None

    @property
    def may_have_run(self) -> tuple[ToolCall, ...]:
        """Unanswered calls that had started (or were not asked about): never run again."""
        if self.point is None:
            return ()
        waiting = {c.id for c in self.awaiting_approval}
        return tuple(c for c in self.point.unanswered_tool_calls if c.id not in waiting)


def resume_word(status: ResumePoint | ResumeBlocked) -> str:
    """The word a dismissal remembers: the resume kind, or the reason there is none."""
    return status.kind.value if isinstance(status, ResumePoint) else status.reason.value


async def resume_info(client: AgentClient, journal: SessionJournal, session_id: str) -> ResumeInfo:
    status = await client.resume_status(session_id)
    stop = await journal.stop_record(session_id)
    draft = await journal.draft(session_id)
    dismissal = await journal.dismissal(session_id)
    dismissed = dismissal is not None and dismissal.covers(resume_word(status), stop)
    if isinstance(status, ResumeBlocked):
        return ResumeInfo(None, status.reason, status.description, stop, draft, dismissed=dismissed)
    awaiting: tuple[ToolCall, ...] = ()
    if status.unanswered_tool_calls:
        states = await journal.tool_states(session_id)
        awaiting = tuple(
            c for c in status.unanswered_tool_calls if states.get(c.id) == TOOL_AWAITING_APPROVAL
        )
    return ResumeInfo(status, None, None, stop, draft, awaiting, dismissed)


async def not_started_calls(journal: SessionJournal, session_id: str) -> Collection[str]:
    """Ids of calls recorded as awaiting approval: they never started."""
    states = await journal.tool_states(session_id)
    return frozenset(cid for cid, state in states.items() if state == TOOL_AWAITING_APPROVAL)
