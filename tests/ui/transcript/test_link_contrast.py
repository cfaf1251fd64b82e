"""Links and tool-card toggles stay readable on the row's background in any theme: a theme's
link colour below WCAG AA (4.5:1) is mixed toward white (dark base) or black (light base)."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor

from ui.transcript.render import MIN_LINK_CONTRAST, contrast, readable_link


@pytest.mark.parametrize(
    ("link", "base", "kept"),
    [
        ("#0000ff", "#353535", False),  # GTK dark: pure blue on dark grey (~2.4:1)
        ("#0000ff", "#ffffff", True),  # pure blue on white already reads (8.6:1)
        ("#8ab4f8", "#202124", True),  # a dark theme's own light blue is kept
        ("#ffff00", "#ffffff", False),  # yellow on white is darkened
        ("#2a82da", "#2b2b2b", False),  # Fusion dark's link, a little short of AA
    ],
)
def test_link_colour_reaches_aa_contrast(link: str, base: str, kept: bool) -> None:
    before, background = QColor(link), QColor(base)
    after = readable_link(before, background)
    assert contrast(after, background) >= MIN_LINK_CONTRAST
    assert (after.name() == before.name()) is kept


def test_contrast_is_the_wcag_ratio() -> None:
    assert contrast(QColor("#000000"), QColor("#ffffff")) == pytest.approx(21.0)
    assert contrast(QColor("#777777"), QColor("#777777")) == pytest.approx(1.0)
    assert contrast(QColor("#0000ff"), QColor("#353535")) < 3.0
