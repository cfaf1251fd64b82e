"""Workspace file tools: confinement (``..``, absolute paths, symlink escapes), limits, edits.

Every test runs twice: walking directory descriptors (POSIX) and walking paths (the fallback
where ``dir_fd`` is missing, as on Windows), which must refuse and allow exactly the same.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import (
    Agent,
    AgentRunConfig,
    SQLiteSessionExtension,
    ToolCall,
    ToolMessage,
)
from app.testing import ScriptedModel, text_step, tool_step
from app.tools import sandbox
from app.tools.workspace import Workspace, WorkspaceError


@pytest.fixture(autouse=True, params=["descriptors", "paths"])
def walk_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "descriptors" and not sandbox._FD_WALK:
        pytest.skip("this platform has no dir_fd support; only the path walk applies")
    monkeypatch.setattr(sandbox, "_FD_WALK", request.param == "descriptors")
    yield request.param


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Workspace, Path]:
    root = tmp_path / "work"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "notes.txt").write_text("hello\nworld\n")
    (root / "sub").mkdir()
    (outside / "secret.txt").write_text("do not read")
    os.symlink(outside / "secret.txt", root / "link_to_secret")
    os.symlink(outside, root / "link_to_outside")
    return Workspace(root), outside


@pytest.mark.parametrize(
    "path",
    [
        "../outside/secret.txt",
        "sub/../../outside/secret.txt",
        "link_to_secret",
        "link_to_outside/secret.txt",
    ],
)
def test_reads_cannot_leave_the_workspace(layout: tuple[Workspace, Path], path: str) -> None:
    workspace, _ = layout
    with pytest.raises(WorkspaceError, match="workspace"):
        workspace.read_file(path)


def test_absolute_paths_only_inside(layout: tuple[Workspace, Path]) -> None:
    workspace, outside = layout
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        workspace.read_file(str(outside / "secret.txt"))
    with pytest.raises(WorkspaceError):
        workspace.read_file("/etc/passwd")
    assert workspace.read_file(str(workspace.root / "notes.txt")) == "hello\nworld\n"


@pytest.mark.parametrize(
    "path",
    ["../escape.txt", "link_to_outside/new.txt", "link_to_secret", "/tmp/escape-continuum.txt"],
)
def test_writes_cannot_leave_the_workspace(layout: tuple[Workspace, Path], path: str) -> None:
    workspace, outside = layout
    with pytest.raises(WorkspaceError):
        workspace.write_file(path, "pwned")
    assert (outside / "secret.txt").read_text() == "do not read"
    assert not (outside / "new.txt").exists() and not Path("/tmp/escape-continuum.txt").exists()


def test_nul_in_a_path_is_refused(layout: tuple[Workspace, Path]) -> None:
    workspace, _ = layout
    with pytest.raises(WorkspaceError, match="NUL"):
        workspace.read_file("notes.txt\x00.png")


def test_binary_and_oversized_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / "big.txt").write_text("x" * 2000)
    workspace = Workspace(tmp_path, max_read_bytes=1000, max_write_bytes=1000)
    with pytest.raises(WorkspaceError, match="binary"):
        workspace.read_file("image.png")
    with pytest.raises(WorkspaceError, match="not UTF-8"):
        workspace.read_file("latin1.txt")
    with pytest.raises(WorkspaceError, match="limit"):
        workspace.read_file("big.txt")
    with pytest.raises(WorkspaceError, match="limit"):
        workspace.write_file("out.txt", "y" * 1001)
    assert not (tmp_path / "out.txt").exists()


def test_write_edit_and_list(layout: tuple[Workspace, Path]) -> None:
    workspace, _ = layout
    assert workspace.write_file("sub/deeper/new.txt", "one two two") == (
        "Created sub/deeper/new.txt (11 bytes)."
    )
    with pytest.raises(WorkspaceError, match="2 times"):
        workspace.edit_file("sub/deeper/new.txt", "two", "three")
    with pytest.raises(WorkspaceError, match="not found"):
        workspace.edit_file("sub/deeper/new.txt", "four", "five")
    workspace.edit_file("sub/deeper/new.txt", "one", "ONE")
    assert workspace.read_file("sub/deeper/new.txt") == "ONE two two"
    listing = workspace.list_directory(".").splitlines()
    assert listing == [  # folders first, then files; links out are shown, never followed
        "link_to_outside -> (link outside the workspace)",
        "sub/",
        "link_to_secret -> (link outside the workspace)",
        "notes.txt (12 bytes)",
    ]
    assert not [p for p in workspace.root.rglob(".continuum-*")]  # no temporary files left


def test_tool_specs_and_side_effects(layout: tuple[Workspace, Path]) -> None:
    workspace, _ = layout
    tools = {t.name: t for t in workspace.tools()}
    assert set(tools) == {"list_directory", "read_file", "write_file", "edit_file"}
    assert [n for n, t in tools.items() if t.side_effects] == ["write_file", "edit_file"]
    assert tools["read_file"].parameters["required"] == ["path"]


async def test_an_escape_through_the_agent_is_a_failed_result(
    layout: tuple[Workspace, Path], tmp_path: Path
) -> None:
    workspace, outside = layout
    storage = SQLiteSessionExtension(tmp_path / "db.sqlite")
    model = ScriptedModel(
        [
            tool_step(
                ToolCall("r", "read_file", {"path": "../outside/secret.txt"}),
                ToolCall("w", "write_file", {"path": "link_to_outside/x.txt", "content": "x"}),
            ),
            text_step("I cannot reach that file."),
        ]
    )
    agent = await Agent.create(
        model, AgentRunConfig("s"), tools=workspace.tools(), extensions=[storage]
    )
    await agent.run("read the secret")
    results = {m.tool_call_id: m for m in model.requests[1].messages if isinstance(m, ToolMessage)}
    assert not results["r"].success and "'..'" in results["r"].content
    assert "do not read" not in results["r"].content
    assert not results["w"].success and "outside the workspace" in results["w"].content
    assert not (outside / "x.txt").exists()
    await storage.storage.close()


def test_links_that_stay_inside_are_followed(layout: tuple[Workspace, Path]) -> None:
    workspace, _ = layout
    root = workspace.root
    os.symlink("sub", root / "to_sub")
    os.symlink(root / "notes.txt", root / "abs_to_notes")
    os.symlink("to_sub/../notes.txt", root / "via_dotdot")
    os.symlink("missing.txt", root / "dangling")
    os.symlink("loop", root / "loop")
    assert workspace.read_file("abs_to_notes") == "hello\nworld\n"
    assert workspace.read_file("via_dotdot") == "hello\nworld\n"
    assert workspace.write_file("to_sub/x.txt", "x") == "Created sub/x.txt (1 bytes)."
    assert workspace.read_file(str(root / "to_sub" / "x.txt")) == "x"
    assert workspace.write_file("via_dotdot", "new") == "Replaced notes.txt (3 bytes)."
    assert (root / "via_dotdot").is_symlink()  # the link's target was replaced, not the link
    with pytest.raises(WorkspaceError, match="more than 40 symbolic links"):
        workspace.read_file("loop")
    listing = workspace.list_directory().splitlines()
    assert "to_sub/" in listing and "abs_to_notes (3 bytes)" in listing
    assert "dangling -> (broken link)" in listing and "loop -> (broken link)" in listing


def test_what_is_not_a_plain_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    os.mkfifo(tmp_path / "pipe")
    workspace = Workspace(tmp_path)
    with pytest.raises(WorkspaceError, match="is not a file"):
        workspace.read_file("pipe")  # and it does not wait for a writer
    with pytest.raises(WorkspaceError, match="is not a file"):
        workspace.read_file("a.txt/b")
    with pytest.raises(WorkspaceError, match="'a.txt' in it is a file, not a folder"):
        workspace.write_file("a.txt/b", "x")
    with pytest.raises(WorkspaceError, match="is a folder"):
        workspace.write_file(".", "x")
    with pytest.raises(WorkspaceError, match="not a folder"):
        workspace.list_directory("a.txt")
    assert workspace.list_directory().splitlines() == ["a.txt (1 bytes)", "pipe (0 bytes)"]


def test_a_replaced_file_keeps_its_mode(tmp_path: Path) -> None:
    (tmp_path / "script.sh").write_text("echo old")
    os.chmod(tmp_path / "script.sh", 0o750)
    workspace = Workspace(tmp_path)
    workspace.write_file("script.sh", "echo new")
    assert stat.S_IMODE((tmp_path / "script.sh").stat().st_mode) == 0o750
    workspace.write_file("fresh.txt", "x")
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "fresh.txt").stat().st_mode) == 0o666 & ~umask


def test_a_lone_surrogate_is_written_as_a_replacement_and_reads_back(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    result = workspace.write_file("s.txt", "half \ud83d of an emoji, whole \ud83d\ude00")
    assert result.startswith("Created s.txt (32 bytes). 1 character that is not valid Unicode")
    assert "U+FFFD" in result
    assert workspace.read_file("s.txt") == "half \ufffd of an emoji, whole \U0001f600"
    assert (tmp_path / "s.txt").read_bytes().decode("utf-8")  # valid UTF-8 on disk
    # An edit whose old text carries the same surrogate still matches what was stored.
    assert workspace.edit_file("s.txt", "half \ud83d", "two \udc00\udc01") == (
        "Edited s.txt: replaced 1 occurrence. 2 characters that are not valid Unicode (a lone "
        "UTF-16 surrogate) became U+FFFD (\ufffd); write the intended characters if they matter."
    )
    assert workspace.read_file("s.txt").startswith("two \ufffd\ufffd of an emoji")
    assert workspace.write_file("ok.txt", "plain \ufffd") == "Created ok.txt (9 bytes)."
