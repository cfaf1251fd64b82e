"""Plain prose: the HTML markdown-it makes of a paragraph in which no Markdown can start,
without running it.

Most of a long answer is paragraphs of words and ordinary punctuation, and markdown-it reads
them a character at a time in Python (~0.7 ms for 3,000 characters, more than building and
laying out their document). :func:`prose_html` recognises such a block by its characters
alone: letters, digits, spaces, line breaks and punctuation that opens no construct, every
line starting with a letter (so no list, heading, quote, table, code or underline) and none
ending in a space (no hard break), no blank line inside. For any other text it returns
``None`` and markdown-it decides; a test compares both on generated texts.
"""

from __future__ import annotations

from typing import Final

__all__ = ["prose_html"]

#: Besides letters and digits (any script), the characters a prose block may hold: none opens
#: a Markdown construct in the middle of a line, and a line must start with a letter.
_PLAIN: Final = frozenset(" \n,.;:!?'\"()%/+-=")


def prose_html(text: str) -> str | None:
    """The HTML markdown-it renders ``text`` to, if ``text`` is one paragraph of plain prose
    (see the module docstring); otherwise ``None``. Pure."""
    body = text.lstrip("\n").rstrip(" \n")  # (a leading space may start code: see below)
    if not body:
        return None
    plain = _PLAIN
    for char in set(body):
        if char not in plain and not char.isalnum():
            return None
    for line in body.split("\n"):
        # (Not empty: no blank line. Its first character a letter: no block starts. Its last
        # not a space: a break, not a hard break.)
        if not line or not line[0].isalpha() or line[-1] == " ":
            return None
    return "<p>" + body.replace('"', "&quot;") + "</p>\n"
