"""Table tests for :func:`app.providers.errors.redact`: any case, any 8+ character piece."""

from __future__ import annotations

import pytest

from app.providers.errors import MIN_KEY_FRAGMENT, redact

KEY = "k3yAbCdEfGhIjKlMnOpQrStUv"
R = "[redacted]"


@pytest.mark.parametrize(
    ("text", "secrets", "expected"),
    [
        (f"key {KEY} refused", (KEY,), f"key {R} refused"),
        (f"KEY {KEY.upper()}!", (KEY,), f"KEY {R}!"),
        (f"{KEY.lower()}", (KEY,), R),
        (f"starts {KEY[:MIN_KEY_FRAGMENT]}…", (KEY,), f"starts {R}…"),
        (f"ends …{KEY[-MIN_KEY_FRAGMENT:]}", (KEY,), f"ends …{R}"),
        (f"middle {KEY[5 : 5 + MIN_KEY_FRAGMENT]} x", (KEY,), f"middle {R} x"),
        (
            f"short {KEY[: MIN_KEY_FRAGMENT - 1]} stays",
            (KEY,),
            f"short {KEY[: MIN_KEY_FRAGMENT - 1]} stays",
        ),
        (f"{KEY}{KEY}", (KEY,), R),
        ("two: aaaaaaaaa bbbbbbbbb", ("aaaaaaaaa", "bbbbbbbbb"), f"two: {R} {R}"),
        ("pin abcd here", ("abcd",), f"pin {R} here"),
        ("pin abc here", ("abc",), "pin abc here"),
        ("nothing to hide", (None, ""), "nothing to hide"),
        ("Incorrect API key provided: sk-ab***yz12", (), f"Incorrect API key provided: {R}"),
        ("key-abcdef1 in text", (), f"{R} in text"),
        ("sk-short", (), "sk-short"),
        ("İİİ k3yAbCdEf", (KEY,), f"İİİ {R}"),
    ],
)
def test_redact_table(text: str, secrets: tuple[str | None, ...], expected: str) -> None:
    assert redact(text, secrets) == expected


def test_redact_before_clipping_keeps_no_prefix_of_a_cut_key() -> None:
    text = "x" * 290 + " " + KEY
    clipped = redact(text, (KEY,))[:295]
    assert clipped == "x" * 290 + " " + R[:4]
