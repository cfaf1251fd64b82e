"""``require_wheel``: a missing llama.cpp wheel fails the llama tests under CI, skips them else."""

from __future__ import annotations

import importlib.util

import pytest

from .server import require_wheel


@pytest.fixture
def no_xllamacpp(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "xllamacpp" else real(name)
    )


@pytest.mark.usefixtures("no_xllamacpp")
def test_missing_wheel_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="xllamacpp not installed"):
        require_wheel()


@pytest.mark.usefixtures("no_xllamacpp")
def test_missing_wheel_skips_elsewhere_saying_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"xllamacpp not installed.*\[test\]"):
        require_wheel()


def test_installed_wheel_passes() -> None:
    require_wheel()  # both are installed here (the test extra brings them)
