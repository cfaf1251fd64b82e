"""The README tells the truth: its "core in five lines" example is ``examples/core_in_five_lines.py``
verbatim and runs (against the simulator, through a cut stream and a resume), and every
repository file, folder or ``python -m`` module it names exists."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

from app.simulator import Fault, SimulatorThread

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
EXAMPLE = ROOT / "examples" / "core_in_five_lines.py"

# Where a repository path starts; anything else in backticks (data-folder names, home paths,
# build outputs such as dist/ and bench/results/) is not a file of the repository.
REPO_ROOTS = (
    "app/",
    "ui/",
    "tests/",
    "bench/",
    "packaging/",
    "resources/",
    "examples/",
    ".ci/",
    "../",
    "pyproject.toml",
)
GENERATED = {"bench/results/"}


def section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else None]


def test_the_readme_example_is_the_example_file() -> None:
    blocks = re.findall(r"```python\n(.*?)```", section("The core in five lines"), re.S)
    assert blocks == [EXAMPLE.read_text(encoding="utf-8")]


def test_the_example_runs_through_a_cut_stream_and_resumes(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with SimulatorThread() as sim:
        sim.enqueue(Fault.drop_after(3))  # the first answer breaks mid-stream; then echoes
        done = subprocess.run(
            [sys.executable, str(EXAMPLE), sim.openai_base_url, "sim-echo"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    assert done.returncode == 0, done.stderr
    first, *rest = done.stdout.splitlines()
    assert first.startswith("retry_response "), done.stdout
    assert rest, "the resumed reply is printed"
    with sqlite3.connect(tmp_path / "chats.sqlite") as db:
        count = db.execute(
            "SELECT count(*) FROM messages WHERE session_id = 'my-session'"
        ).fetchone()
    assert count[0] >= 3  # the question, the cut answer, the resumed answer


def referenced_paths(text: str) -> set[str]:
    quoted = set(re.findall(r"`([^`\s]+)`", text))
    in_blocks = set()
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        in_blocks |= set(re.findall(r"(?<![\w/.~-])([\w.]+/[\w./-]*)", block))
    return {p for p in quoted | in_blocks if p.startswith(REPO_ROOTS)} - GENERATED


def referenced_modules(text: str) -> set[str]:
    return set(re.findall(r"python3? -m ((?:app|ui|tests|bench)(?:\.\w+)*)", text))


def module_exists(name: str) -> bool:
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def test_every_repository_path_the_readme_names_exists() -> None:
    paths = referenced_paths(README)
    assert {"app/resume.py", "packaging/build_wheel.sh", "examples/core_in_five_lines.py"} <= paths
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert missing == [], f"README names files that are not in the repository: {missing}"
    assert not any(p.startswith("../") for p in paths), "README names files outside the repository"


def test_every_module_the_readme_runs_exists() -> None:
    modules = referenced_modules(README)
    assert {"tests.crash.matrix", "bench"} <= modules
    assert sorted(m for m in modules if not module_exists(m)) == []
