"""A power cut at every sync point loses no message whose append returned, and the app opens
every state SQLite recovers from (issue 21).

The recorder (``shim.c``, built here with gcc) runs under a real child process appending
through the real store with ``synchronous=FULL``; :mod:`tests.power.replay` rebuilds the files
as a power cut leaves them (synced data only, plus torn and garbage sectors in the unsynced
tail); :mod:`tests.power.verdict` judges each state with plain SQLite and with the app's own
opening path. ``python -m tests.power.run`` is the long run.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.errors import StorageCorruptError
from app.storage.checks import damaged_file, has_hot_journal, judged_header
from app.storage.sqlite import SQLiteSessionStore

from .replay import read_log, states
from .run import build_shim, check_recording, record, scratch_folder
from .verdict import DB_NAME

FIXTURES = Path(__file__).with_name("fixtures")
IN_CI = os.environ.get("CI", "").lower() not in ("", "0", "false", "no")
MAGIC = b"SQLite format 3\x00"


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not sys.platform.startswith("linux"):
        pytest.skip("the recorder is an LD_PRELOAD library: Linux only")
    try:
        return build_shim(tmp_path_factory.mktemp("shim"))
    except FileNotFoundError as err:
        if IN_CI:
            pytest.fail(f"{err}; CI must install it (.ci/run)")
        pytest.skip(str(err))


@pytest.fixture
def scratch() -> Iterator[Path]:
    folder = scratch_folder("power-test-")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


async def test_appends_survive_a_power_cut_at_every_sync_point(shim: Path, scratch: Path) -> None:
    ops = record(shim, scratch / "child", "appends", seed=1, count=100)
    kinds = {op.kind for op in ops}
    # The recording saw SQLite's own writes and syncs (a statically linked SQLite would not).
    assert {"W", "S", "T", "U"} <= kinds, f"the shim recorded only {kinds}"
    tally = await check_recording(ops, seed=1, torn=3, work=scratch / "work")
    assert tally.failures == []
    assert tally.saved == 100
    assert tally.cuts > 100 and tally.distinct > 300, tally.lines()
    assert tally.counts["sqlite_ok"] == tally.counts["app_ok"] == tally.distinct, tally.lines()


async def test_an_agent_request_with_a_tool_survives_a_power_cut(shim: Path, scratch: Path) -> None:
    ops = record(shim, scratch / "child", "agent", seed=1, count=0)
    tally = await check_recording(ops, seed=1, torn=3, work=scratch / "work")
    assert tally.failures == []
    # The question, the step asking for the tool, the tool's answer, the final answer.
    assert tally.saved == 4
    assert tally.cuts >= 10, tally.lines()
    assert tally.counts["sqlite_ok"] == tally.counts["app_ok"] == tally.distinct, tally.lines()


def test_the_replayer_keeps_only_synced_data_in_the_synced_state(
    shim: Path, tmp_path: Path
) -> None:
    ops = record(shim, tmp_path / "child", "appends", seed=2, count=3)
    cuts = list(states(ops, seed=2, torn=2))
    assert [c.index for c in cuts] == [i for i, op in enumerate(ops) if op.kind == "S"] + [len(ops)]
    first = cuts[0].states[0]
    assert first.variant == "synced" and first.files == {}  # nothing synced yet: nothing there
    final = {s.variant: s for s in cuts[-1].states}
    # At the end every byte was synced, but the -wal that the last close deleted is still
    # there in the synced state: SQLite does not sync the folder after that unlink.
    assert "-wal" not in final["flushed"].files and "-wal" in final["synced"].files
    assert {k: v for k, v in final["synced"].files.items() if k != "-wal"} == final["flushed"].files
    assert len(final["synced"].saved) == 3
    # And the same seed gives the same states.
    again = list(states(read_log(tmp_path / "child" / "recording.bin"), seed=2, torn=2))
    assert [s.digest for c in again for s in c.states] == [s.digest for c in cuts for s in c.states]


# --- the two states the damage check used to refuse ------------------------------------------


def _unpack(name: str, folder: Path) -> tuple[Path, list[tuple[str, int, str]]]:
    for packed in (FIXTURES / name).glob("*.gz"):
        (folder / packed.name.removesuffix(".gz")).write_bytes(gzip.decompress(packed.read_bytes()))
    saved = json.loads((FIXTURES / name / "saved.json").read_text())
    return folder / DB_NAME, [(str(s), int(q), str(d)) for s, q, d in saved]


@pytest.mark.parametrize(
    ("name", "companion"),
    [
        ("creation_torn_page1", "-journal"),  # cut while the database was first created
        ("creation_garbage_page1", "-journal"),
        ("checkpoint_garbage_page1", "-wal"),  # cut while a checkpoint wrote page 1
    ],
)
async def test_a_state_sqlite_recovers_from_is_opened(
    name: str, companion: str, tmp_path: Path
) -> None:
    db, saved = _fixture_sqlite_accepts(name, companion, tmp_path)
    store = SQLiteSessionStore(db)
    try:
        await store.open()
        seqs = [r.seq for r in await store.tree("power")] if saved else []
    finally:
        await store.close()
    assert seqs == [seq for _, seq, _ in saved]
    assert _starts_like_sqlite(db)


def _fixture_sqlite_accepts(
    name: str, companion: str, folder: Path
) -> tuple[Path, list[tuple[str, int, str]]]:
    """The fixture unpacked in ``folder``, after checking it is the state the issue names."""
    db, saved = _unpack(name, folder)
    raw = db.read_bytes()
    # What made the old check refuse it: page 1 torn or not SQLite's, judged without its companion.
    assert judged_header(raw[:100], len(raw), hot_journal=False, wal=False) is not None
    assert Path(f"{db}{companion}").stat().st_size > 0
    assert damaged_file(db) is None
    plain = folder / "plain"
    plain.mkdir()
    for file in folder.glob(f"{DB_NAME}*"):
        shutil.copy(file, plain / file.name)
    with sqlite3.connect(plain / DB_NAME) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()
    return db, saved


def _starts_like_sqlite(db: Path) -> bool:
    return db.read_bytes().startswith(MAGIC)


def _files(folder: Path) -> dict[str, bytes]:
    """The database's files but the -shm index (SQLite rebuilds it from the -wal)."""
    return {p.name: p.read_bytes() for p in folder.glob(f"{DB_NAME}*") if p.suffix != ".sqlite-shm"}


def _garbage_page_1_cases(folder: Path) -> Iterator[Path]:
    """Garbage page 1 beside a -wal with SQLite's header but no frames (page 1 must come from
    the file), then beside a -journal that is not SQLite's (nothing to roll back)."""
    db, _ = _unpack("checkpoint_garbage_page1", folder)
    wal = Path(f"{db}-wal")
    wal.write_bytes(wal.read_bytes()[:32])
    yield db
    wal.unlink()
    Path(f"{db}-journal").write_bytes(b"not a journal at all" * 30)
    yield db


async def test_garbage_page_1_that_no_companion_holds_is_still_refused_untouched(
    tmp_path: Path,
) -> None:
    for db in _garbage_page_1_cases(tmp_path):
        before = _files(tmp_path)
        store = SQLiteSessionStore(db)
        with pytest.raises(StorageCorruptError, match="damaged"):
            await store.open()
        await store.close()
        assert _files(tmp_path) == before


def _header(pages: int, valid: bool) -> bytes:
    head = bytearray(100)
    head[:16] = MAGIC
    head[16:18] = (4096).to_bytes(2, "big")
    head[24:28] = (7).to_bytes(4, "big")
    head[28:32] = pages.to_bytes(4, "big")
    head[92:96] = (7 if valid else 8).to_bytes(4, "big")
    return bytes(head)


@pytest.mark.parametrize(
    ("header", "size", "hot_journal", "wal", "refused"),
    [
        (_header(3, True), 3 * 4096, False, False, None),
        (_header(3, True), 4096, False, False, "cut short: 4096 of 12288"),
        (_header(3, False), 4096, False, False, None),  # the size field is not valid: no claim
        (_header(3, True), 4096, False, True, None),  # the rest is in the -wal
        (_header(3, True), 512, True, False, None),  # rolled back first
        (b"\x13\x71" * 50, 4096, False, False, "does not start like"),
        (b"\x13\x71" * 50, 4096, False, True, None),  # page 1 may be in the -wal
        (b"\x13\x71" * 50, 4096, True, False, None),  # the journal restores it
        (MAGIC, 16, False, False, "does not start like"),  # shorter than a header
    ],
)
def test_judged_header(
    header: bytes, size: int, hot_journal: bool, wal: bool, refused: str | None
) -> None:
    found = judged_header(header, size, hot_journal=hot_journal, wal=wal)
    if refused is None:
        assert found is None
    else:
        assert found is not None and refused in found


@pytest.mark.parametrize(
    ("journal", "hot"),
    [
        (None, False),
        (b"", False),
        (bytes(512), False),  # zeroed at commit (journal_mode=PERSIST)
        (b"junk" * 100, False),  # not SQLite's: nothing to roll back
        (bytes.fromhex("d9d505f920a163d7") + bytes(504), True),
    ],
)
def test_has_hot_journal(journal: bytes | None, hot: bool, tmp_path: Path) -> None:
    db = tmp_path / DB_NAME
    if journal is not None:
        Path(f"{db}-journal").write_bytes(journal)
    assert has_hot_journal(str(db)) is hot


def test_without_gcc_the_shim_build_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a folder without gcc
    with pytest.raises(FileNotFoundError, match="apt-get install gcc libc6-dev"):
        build_shim(tmp_path)
