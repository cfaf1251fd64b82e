"""The workspace sandbox holds while another thread swaps a path component for a symlink.

A thread keeps turning a folder of the workspace (or a file) into a symlink to a folder outside
and back, while the file tools write, read, list and edit through that path. Whatever the
interleaving, nothing may be written outside and nothing read from outside; a tool that loses
the race refuses with a :class:`WorkspaceError`, never a raw ``OSError``.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.tools.workspace import Workspace, WorkspaceError

ATTEMPTS = 2500
SECRET = "OUTSIDE-SECRET"


def exchange(a: Path, b: Path) -> None:
    """Swap two names in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``): the path
    never goes missing, so the tools always meet either the real object or the link."""
    at_fdcwd, rename_exchange = -100, 2
    if _LIBC.renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange):
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), str(a))


_LIBC = ctypes.CDLL(None, use_errno=True)
pytestmark = pytest.mark.skipif(
    not hasattr(_LIBC, "renameat2"), reason="needs Linux renameat2 to swap a path atomically"
)


@pytest.fixture(autouse=True)
def fine_grained_switching() -> Iterator[None]:
    """Let the swapping thread run between any two steps of a tool (the default is 5 ms)."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


def outside_folder(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    outside = tmp_path / "outside"
    outside.mkdir()
    originals = {"secret.txt": SECRET, "edit.txt": f"{SECRET} edit me", "marker-outside.txt": "m"}
    for name, text in originals.items():
        (outside / name).write_text(text)
    return outside, originals


class Swapper(threading.Thread):
    """Flips ``toggle()`` as fast as it can until told to stop or ``limit`` flips are done."""

    def __init__(self, toggle: Callable[[], None], limit: int = 200_000) -> None:
        super().__init__(daemon=True)
        self.toggle, self.limit, self.flips = toggle, limit, 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set() and self.flips < self.limit:
            self.toggle()
            self.flips += 1


def run_attempts(
    workspace: Workspace,
    swapper: Swapper,
    operations: list[Callable[[int], str]],
    attempts: int = ATTEMPTS,
) -> tuple[list[str], Counter[str]]:
    outputs: list[str] = []
    failures: Counter[str] = Counter()
    swapper.start()
    try:
        for attempt in range(attempts):
            for operation in operations:
                try:
                    outputs.append(operation(attempt))
                except WorkspaceError:
                    failures["refused"] += 1
                except Exception as err:  # counted by type and asserted on below
                    failures[type(err).__name__] += 1
    finally:
        swapper.done.set()
        swapper.join()
    assert swapper.flips > 100  # the race really ran
    return outputs, failures


def assert_nothing_escaped(
    outside: Path, originals: dict[str, str], outputs: list[str], failures: Counter[str]
) -> None:
    written_outside = sorted(p.name for p in outside.iterdir() if p.name not in originals)
    changed_outside = sorted(
        n for n, text in originals.items() if (outside / n).read_text() != text
    )
    leaked = [o for o in outputs if SECRET in o or "marker-outside" in o]
    assert (written_outside, changed_outside, leaked[:3], len(leaked)) == ([], [], [], 0)
    raw = {name: n for name, n in failures.items() if name != "refused"}
    assert raw == {}, "a lost race must be a WorkspaceError the model can read"


def test_a_folder_swapped_for_a_link_outside_lets_nothing_through(tmp_path: Path) -> None:
    outside, originals = outside_folder(tmp_path)
    root = tmp_path / "work"
    root.mkdir()
    folder, link = root / "d", root / "d-link"
    folder.mkdir()
    (folder / "secret.txt").write_text("inside")
    (folder / "edit.txt").write_text("inside edit me")
    os.symlink(outside, link)
    workspace = Workspace(root)

    def toggle() -> None:  # "d": the real folder <-> a link to the folder outside
        exchange(folder, link)

    outputs, failures = run_attempts(
        workspace,
        Swapper(toggle),
        [
            lambda i: workspace.write_file(f"d/new-{i % 8}.txt", "written"),
            lambda i: workspace.read_file("d/secret.txt"),
            lambda i: workspace.list_directory("d"),
            lambda i: workspace.edit_file("d/edit.txt", "edit me", "edit me!"),
        ],
    )
    assert_nothing_escaped(outside, originals, outputs, failures)
    assert any(o == "inside" for o in outputs)  # the tools did work between the swaps


def test_a_link_retargeted_from_inside_to_outside_lets_nothing_through(tmp_path: Path) -> None:
    outside, originals = outside_folder(tmp_path)
    root = tmp_path / "work"
    (root / "real").mkdir(parents=True)
    (root / "real" / "secret.txt").write_text("inside")
    (root / "real" / "edit.txt").write_text("inside edit me")
    link, link_tmp = root / "d", root / "d-next"
    os.symlink("real", link)  # a link inside the workspace that stays inside is allowed
    workspace = Workspace(root)
    state = {"outside": False}

    def toggle() -> None:  # each swap is one atomic rename of a new link over the old one
        state["outside"] = not state["outside"]
        os.symlink(outside if state["outside"] else "real", link_tmp)
        link_tmp.replace(link)

    outputs, failures = run_attempts(
        workspace,
        Swapper(toggle),
        [
            lambda i: workspace.write_file(f"d/new-{i % 8}.txt", "written"),
            lambda i: workspace.read_file("d/secret.txt"),
            lambda i: workspace.list_directory("d"),
            lambda i: workspace.edit_file("d/edit.txt", "edit me", "edit me!"),
        ],
        attempts=1000,
    )  # a guard for following links inside; the old code held here already
    assert_nothing_escaped(outside, originals, outputs, failures)
    assert any(o == "inside" for o in outputs)


def test_a_file_swapped_for_a_link_outside_lets_nothing_through(tmp_path: Path) -> None:
    outside, originals = outside_folder(tmp_path)
    root = tmp_path / "work"
    root.mkdir()
    target, link = root / "notes.txt", root / "notes-link"
    target.write_text("inside edit me")
    os.symlink(outside / "edit.txt", link)
    workspace = Workspace(root)

    def toggle() -> None:  # "notes.txt": the real file <-> a link to a file outside
        if not (target.is_symlink() or link.is_symlink()):  # an edit replaced the link: renew it
            os.symlink(outside / "edit.txt", root / "renew")
            (root / "renew").replace(link)
        exchange(target, link)

    outputs, failures = run_attempts(
        workspace,
        Swapper(toggle),
        [
            lambda i: workspace.read_file("notes.txt"),
            lambda i: workspace.edit_file("notes.txt", "edit me", "edit me!"),
        ],
    )
    assert_nothing_escaped(outside, originals, outputs, failures)
    assert any(o.startswith("inside edit me") for o in outputs)
