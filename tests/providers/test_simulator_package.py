"""The shipped simulator package holds no benchmark; the benchmark lives in ``bench/``."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_simulator_package_ships_no_benchmark() -> None:
    assert importlib.util.find_spec("app.simulator.bench") is None


def test_python_m_bench_offers_the_provider_rates() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "provider_rates" in proc.stdout
