"""Judge one power-cut state: what plain SQLite makes of it, and what the app's opening path does.

For each state (written to a folder of its own, twice: SQLite and the app each get a copy,
since opening recovers — rolls back a hot ``-journal``, replays a ``-wal`` — and so changes the
files):

* **SQLite**: a plain ``sqlite3`` connection, ``PRAGMA integrity_check`` (must say ``ok``) and
  the ``(session, seq)`` of every saved message;
* **the app**: :class:`~app.storage.sqlite.SQLiteSessionStore` opened as the app opens it (the
  damage check before SQLite touches the file, the read-only check beside a ``-wal``, the
  mark, version and ``quick_check``, the migration), then every message of the conversation,
  compared by the digest of its JSON with what the recording says was saved.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from app.errors import StorageError
from app.messages import message_to_json
from app.storage.sqlite import SQLiteSessionStore

from .replay import State

__all__ = ["DB_NAME", "Verdict", "judge", "write_state"]

DB_NAME = "continuum.sqlite"


@dataclass(frozen=True, slots=True)
class Verdict:
    state: State
    #: None when SQLite opened it and its integrity check said ok; else what it said.
    sqlite_problem: str | None
    #: Saved messages SQLite does not have: (session, seq).
    sqlite_missing: tuple[tuple[str, int], ...]
    #: None when the app opened it; else its error.
    app_problem: str | None
    #: Saved messages the app did not load, or loaded with other content.
    app_missing: tuple[tuple[str, int], ...]

    @property
    def failures(self) -> list[str]:
        """What is wrong with this state, in words (empty: all is well)."""
        where = f"cut {self.state.cut} ({self.state.variant})"
        out = []
        if self.sqlite_problem is not None:
            out.append(f"{where}: SQLite refuses it: {self.sqlite_problem}")
        if self.sqlite_missing:
            out.append(f"{where}: SQLite lost saved messages {list(self.sqlite_missing)}")
        if self.sqlite_problem is None and self.app_problem is not None:
            out.append(f"{where}: SQLite accepts it but the app refuses it: {self.app_problem}")
        if self.app_problem is None and self.app_missing:
            out.append(f"{where}: the app lost saved messages {list(self.app_missing)}")
        return out


def write_state(state: State, folder: Path) -> Path:
    """The state's files in ``folder`` (emptied first); the database's path."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for suffix, data in state.files.items():
        (folder / f"{DB_NAME}{suffix}").write_bytes(data)
    return folder / DB_NAME


def _sqlite_view(db: Path) -> tuple[str | None, set[tuple[str, int]]]:
    try:
        conn = sqlite3.connect(db)
    except sqlite3.Error as err:
        return f"{type(err).__name__}: {err}", set()
    try:
        found = [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
        if found != ["ok"]:
            return f"integrity_check: {found[:3]}", set()
        tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master")}
        if "messages" not in tables:
            return None, set()
        rows = conn.execute("SELECT session_id, seq FROM messages").fetchall()
        return None, {(str(s), int(q)) for s, q in rows}
    except sqlite3.Error as err:
        return f"{type(err).__name__}: {err}", set()
    finally:
        conn.close()


async def _app_view(db: Path, sessions: set[str]) -> tuple[str | None, dict[tuple[str, int], str]]:
    store = SQLiteSessionStore(db)
    try:
        await store.open()
        loaded: dict[tuple[str, int], str] = {}
        for session in sorted(sessions):
            for record in await store.tree(session):
                text = message_to_json(record.message)
                loaded[(session, record.seq)] = hashlib.sha256(text.encode()).hexdigest()
        return None, loaded
    except StorageError as err:
        return f"{type(err).__name__}: {err}", {}
    finally:
        await store.close()


async def judge(state: State, work: Path) -> Verdict:
    """Check ``state`` in two copies under ``work`` (see the module docstring)."""
    plain = write_state(state, work / "sqlite")
    problem, present = _sqlite_view(plain)
    sqlite_missing = tuple((s, q) for s, q, _ in state.saved if (s, q) not in present)
    app_db = write_state(state, work / "app")
    app_problem, loaded = await _app_view(app_db, {s for s, _, _ in state.saved})
    app_missing = tuple((s, q) for s, q, d in state.saved if loaded.get((s, q)) != d)
    return Verdict(state, problem, sqlite_missing, app_problem, app_missing)
