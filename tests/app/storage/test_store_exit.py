"""A process that ends without closing the store must still exit (and lose nothing committed).

Qt calls ``exit()`` when the display connection breaks; the store is still referenced then. With
aiosqlite's non-daemon worker thread the interpreter waited for it forever (found by killing the
X server under a running app).
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path


def test_process_exits_without_closing_a_referenced_store(tmp_path: Path) -> None:
    db = tmp_path / "unclosed.sqlite"
    script = textwrap.dedent(
        f"""
        import asyncio
        from app import SQLiteSessionStore, UserMessage

        KEEP = []  # still referenced at exit, like the app's store when Qt exits

        async def main():
            store = SQLiteSessionStore({str(db)!r})
            KEEP.append(store)
            await store.append("s", "r", UserMessage("kept"))
            print("appended", flush=True)

        asyncio.run(main())
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "appended"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 1
