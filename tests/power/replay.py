"""Rebuild what a power cut leaves on disk, from a recording of the shim (:file:`shim.c`).

The model (the same idea as SQLite's own crash tests, on the calls it really made):

* **file data** is durable once ``fsync``/``fdatasync`` on that file returned; writes and
  truncations since then are in the page cache only. At a cut each unsynced 512-byte sector
  may have reached the disk or not, in any combination (torn pages), and a sector that was
  being written may hold garbage.
* **the folder** (a file created or unlinked) is durable once ``fsync``/``fdatasync`` on the
  folder returned (SQLite syncs the folder after creating a ``-journal`` or ``-wal``; it
  never syncs it for the database file itself nor after an unlink). At a cut, the
  unsynced folder changes reached the disk as a prefix of them, in order (a journalling file
  system commits metadata in order). A created file that did not reach the folder is absent;
  an unlinked one is still there with its synced bytes.
* the ``-shm`` index is memory-mapped (its writes are never seen): it is left out of the
  states, except that the garbage variants put a stale one (random bytes) where the folder
  has it; SQLite must rebuild it from the ``-wal`` either way.

A cut point is taken just before every sync (the most unsynced data there is), and at the end.
At each cut: the *synced* state (only synced data, folder as synced), the *flushed* state
(everything reached the disk, as after ``kill -9``), and ``torn`` seeded random variants (with
garbage sectors in some). The same seed gives the same states.
"""

from __future__ import annotations

import hashlib
import random
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Cut", "Op", "State", "read_log", "states"]

SECTOR = 512
_HEADER = struct.Struct("<ciqqI")
_SHM = "-shm"


@dataclass(frozen=True, slots=True)
class Op:
    kind: str  # O W T S C U M (see shim.c)
    fd: int
    a: int
    b: int
    data: bytes


def read_log(path: Path) -> list[Op]:
    """The records of a recording, in order."""
    raw = path.read_bytes()
    ops: list[Op] = []
    at = 0
    while at < len(raw):
        kind, fd, a, b, n = _HEADER.unpack_from(raw, at)
        at += _HEADER.size
        ops.append(Op(kind.decode("ascii"), fd, a, b, raw[at : at + n]))
        at += n
    return ops


@dataclass(slots=True)
class _Inode:
    current: bytearray = field(default_factory=bytearray)
    durable: bytearray = field(default_factory=bytearray)
    #: ("w", offset, bytes) and ("t", size, b"") since the last sync, in order.
    pending: list[tuple[str, int, bytes]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class State:
    """One possible content of the folder after a power cut: file suffix -> bytes."""

    cut: int  # the index of the op before which power was cut (len(ops): at the end)
    variant: str
    files: dict[str, bytes]
    #: The SAVED marks (session, seq, digest) recorded before the cut: must all be present.
    saved: tuple[tuple[str, int, str], ...]

    @property
    def digest(self) -> str:
        h = hashlib.sha256()
        for name in sorted(self.files):
            h.update(name.encode() + b"\0" + hashlib.sha256(self.files[name]).digest())
        return h.hexdigest()


@dataclass(frozen=True, slots=True)
class Cut:
    index: int
    states: list[State]


def _write(buf: bytearray, offset: int, data: bytes) -> None:
    if len(buf) < offset:
        buf.extend(bytes(offset - len(buf)))
    buf[offset : offset + len(data)] = data


def _truncate(buf: bytearray, size: int) -> None:
    if len(buf) > size:
        del buf[size:]
    else:
        buf.extend(bytes(size - len(buf)))


def _torn(inode: _Inode, rng: random.Random, keep: float, garbage: float) -> bytes:
    """The synced bytes plus each unsynced sector with probability ``keep`` (some garbage)."""
    out = bytearray(inode.durable)
    for kind, at, data in inode.pending:
        if kind == "t":
            if rng.random() < keep:
                _truncate(out, at)
            continue
        start = at
        while start < at + len(data):
            end = min((start // SECTOR + 1) * SECTOR, at + len(data))
            roll = rng.random()
            if roll < garbage:
                _write(out, start, rng.randbytes(end - start))
            elif roll < keep:
                _write(out, start, data[start - at : end - at])
            start = end
    return bytes(out)


class _Disk:
    def __init__(self) -> None:
        self.current: dict[str, _Inode] = {}  # the folder as programs see it
        self.durable: dict[str, _Inode] = {}  # the folder as synced
        self.pending_dir: list[
            tuple[str, str, _Inode | None]
        ] = []  # ("link"/"unlink", name, inode)
        self.fds: dict[int, _Inode | None] = {}  # None: the folder

    def folder_after(self, steps: int) -> dict[str, _Inode]:
        folder = dict(self.durable)
        for kind, name, inode in self.pending_dir[:steps]:
            if kind == "link":
                assert inode is not None
                folder[name] = inode
            else:
                folder.pop(name, None)
        return folder

    def drain(self) -> None:
        """Everything written so far reaches the disk (files and folder)."""
        for inode in {id(i): i for i in [*self.current.values(), *self.fds.values()] if i}.values():
            inode.durable = bytearray(inode.current)
            inode.pending.clear()
        self.durable = dict(self.current)
        self.pending_dir.clear()

    def apply(self, op: Op) -> None:
        if op.kind == "O":
            name = op.data.decode()
            if name == "/":
                self.fds[op.fd] = None
                return
            inode = self.current.get(name)
            if inode is None:
                inode = _Inode()
                self.current[name] = inode
                self.pending_dir.append(("link", name, inode))
            self.fds[op.fd] = inode
            if op.a & 0o1000:  # O_TRUNC
                _truncate(inode.current, 0)
                inode.pending.append(("t", 0, b""))
        elif op.kind == "W":
            inode = self.fds[op.fd]
            assert inode is not None
            _write(inode.current, op.a, op.data)
            inode.pending.append(("w", op.a, op.data))
        elif op.kind == "T":
            inode = self.fds[op.fd]
            assert inode is not None
            _truncate(inode.current, op.a)
            inode.pending.append(("t", op.a, b""))
        elif op.kind == "S":
            inode = self.fds[op.fd]
            if inode is None:
                self.durable = dict(self.current)
                self.pending_dir.clear()
            else:
                inode.durable = bytearray(inode.current)
                inode.pending.clear()
        elif op.kind == "U":
            name = op.data.decode()
            if self.current.pop(name, None) is not None:
                self.pending_dir.append(("unlink", name, None))
        elif op.kind == "C":
            self.fds.pop(op.fd, None)


def states(ops: list[Op], seed: int, torn: int = 3, *, lying_disk: bool = False) -> Iterator[Cut]:
    """Every cut point of the recording with its states (seeded: the same states each time).

    ``lying_disk``: a disk that acknowledges a flush without writing its cache: a sync makes
    nothing durable; the disk drains its whole cache at random moments instead (at one sync in
    eight), and until then the cached sectors reach it in any order (the torn variants).
    """
    disk = _Disk()
    drains = random.Random(seed)
    saved: list[tuple[str, int, str]] = []
    for index, op in enumerate([*ops, None]):
        if op is None or op.kind == "S":
            yield Cut(
                index,
                _states_at(disk, index, tuple(saved), random.Random(seed * 7919 + index), torn),
            )
        if op is None:
            break
        if op.kind == "M":
            words = op.data.decode().split()
            if words[0] == "SAVED":
                saved.append((words[1], int(words[2]), words[3]))
            continue
        if op.kind == "S" and lying_disk:
            if drains.random() < 1 / 8:
                disk.drain()
            continue
        disk.apply(op)


def _states_at(
    disk: _Disk, index: int, saved: tuple[tuple[str, int, str], ...], rng: random.Random, torn: int
) -> list[State]:
    def files(folder: dict[str, _Inode], content: Callable[[_Inode], bytes]) -> dict[str, bytes]:
        return {name: content(inode) for name, inode in folder.items() if name != _SHM}

    out = [
        State(index, "synced", files(disk.durable, lambda i: bytes(i.durable)), saved),
        State(index, "flushed", files(disk.current, lambda i: bytes(i.current)), saved),
    ]
    for n in range(torn):
        steps = rng.randint(0, len(disk.pending_dir))
        keep = rng.choice([0.25, 0.5, 0.75])
        garbage = 0.0 if n % 2 == 0 else 0.1
        folder = disk.folder_after(steps)
        content = files(folder, lambda i: _torn(i, rng, keep, garbage))  # noqa: B023
        if garbage and _SHM in folder:
            content[_SHM] = rng.randbytes(32768)  # a stale index: SQLite must rebuild it
        out.append(State(index, f"torn{n}" if not garbage else f"garbage{n}", content, saved))
    return out
