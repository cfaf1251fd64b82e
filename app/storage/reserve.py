"""A few hundred KB of disk kept in reserve, so the reason a request stopped can be saved even
when the disk is full to its last byte.

When the disk fills up mid-answer, the answer cannot be saved, and then neither can the small
stop record that tells the next launch "the disk was full" — the Resume bar would wrongly say
"Continuum closed unexpectedly". So the data folder holds a pre-allocated file: when a stop
record (or the removal of the running marker) fails with a full disk, the file is deleted to
make room and the write is tried once more. The file is created again when a data folder is
opened or a request starts and there is room again.

A plain file is used rather than space inside the database: deleting a file frees its blocks
at once on every ordinary file system (the blocks are really allocated, with
``posix_fallocate`` where available), and SQLite needs the room for its ``-wal``, which grows
outside the database file. A file system that keeps deleted blocks in a snapshot (btrfs/ZFS
snapshots) may not give the room back; then the stop record is lost as before, nothing worse.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Final

__all__ = ["RESERVE_BYTES", "RESERVE_FILE", "DiskReserve"]

RESERVE_FILE: Final = "continuum.reserve"
RESERVE_BYTES: Final = 256 * 1024  # a stop record and a marker removal take a few pages

log = logging.getLogger(__name__)


class DiskReserve:
    """A pre-allocated file of ``size`` bytes at ``path`` (see the module docstring)."""

    def __init__(self, path: Path, size: int = RESERVE_BYTES) -> None:
        self.path = path
        self.size = size

    def __repr__(self) -> str:
        return f"DiskReserve({str(self.path)!r}, {self.size})"

    def ensure(self) -> bool:
        """Create the reserve if it is missing (or short); whether it is in place now."""
        try:
            if self.path.stat().st_size >= self.size:
                return True
        except FileNotFoundError:
            pass
        except OSError:
            return False
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                try:
                    os.posix_fallocate(fd, 0, self.size)
                except (AttributeError, OSError) as err:
                    if isinstance(err, OSError) and err.errno == 28:  # ENOSPC
                        raise
                    os.write(fd, b"\0" * self.size)  # no fallocate here: write the blocks
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self.path)
        except OSError as err:
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass
            except OSError:
                log.warning("could not remove %s", tmp, exc_info=True)
            log.info("no room for the disk reserve %s yet: %s", self.path, err)
            return False
        return True

    def release(self) -> bool:
        """Delete the reserve to make room; whether there was one to delete."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        except OSError as err:
            log.warning("could not release the disk reserve %s: %s", self.path, err)
            return False
        log.warning(
            "the disk is full: released the reserve %s to save why a request stopped", self.path
        )
        return True
