"""How a transcript row becomes documents: inert rich text, built and cached per row.

Each row is drawn from a :class:`MessageRender`, a short stack of ``QTextDocument`` chunks. A
streaming answer keeps its finished blocks as rendered chunks and re-renders only the unfinished
tail each frame, so the cost of a frame does not grow with the answer's length. Documents never
load resources (``loadResource`` returns nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QPalette, QTextDocument, QTextOption

from .model import ToolState

__all__ = ["LONG_RUN", "MAX_RENDERED_CHARS", "MAX_RENDERS", "TOGGLE_SCHEME", "MessageRender",
           "has_long_run", "is_dark"]

TOGGLE_SCHEME = "continuum-toggle"
# Beyond this a message is shown as plain text, cut, with a note: a 10 MB paste must not stall
# the UI for seconds in the Markdown parser (the full text is saved and exported unchanged).
MAX_RENDERED_CHARS = 100_000
# Qt's default wrapping (at word boundaries, else anywhere) is quadratic in the length of a run
# without a break opportunity (100 KB of "[" took 177 ms to lay out, 200 KB 680 ms); wrapping
# anywhere is linear. A document whose source has a run longer than this wraps anywhere.
LONG_RUN = 10_000
# Rendered rows kept at once (least recently used go first). A rendered row holds Qt text
# documents (tens of KB each): keeping one per row of a 10,000-message conversation took
# ~800 MB. Rows without a render are laid out with an estimated height; painting a row renders
# it and corrects its height on the next loop turn.
MAX_RENDERS = 300

_STOP_WORDS = {
    "interrupted": "The answer was cut off here (the connection or the app stopped).",
    "max_output": "The answer reached the output limit here.",
    "refusal": "The model refused to answer.",
    "context_full": "The conversation filled the model's context window.",
    "paused": "The provider paused this answer.",
}
_TOOL_STATE_WORDS = {
    ToolState.REQUESTED: "requested — not run yet (Resume asks for approval again)",
    ToolState.AWAITING_APPROVAL: "awaiting approval",
    ToolState.RUNNING: "running…",
    ToolState.DONE: "done",
    ToolState.FAILED: "failed",
    ToolState.DENIED: "denied — did not run",
    ToolState.CANCELLED: "cancelled",
    ToolState.NOT_RUN: "did not run — stopped before it started",
    ToolState.UNKNOWN: "interrupted — may or may not have run",
}


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


class _InertDocument(QTextDocument):
    """A document that never fetches anything (images, style sheets, remote or local)."""

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        return None


def has_long_run(text: str, limit: int = LONG_RUN) -> bool:
    """Whether ``text`` has more than ``limit`` characters in a row without whitespace."""
    return len(text) > limit and max(map(len, text.split()), default=0) > limit


def _document(html_text: str, width: float, font: Any, css: str, *,
              source: str = "") -> QTextDocument:
    """An inert document; ``source`` (the text it shows) decides how it may wrap."""
    doc = _InertDocument()
    if has_long_run(source):
        option = doc.defaultTextOption()
        option.setWrapMode(QTextOption.WrapMode.WrapAnywhere)
        doc.setDefaultTextOption(option)
    doc.setDocumentMargin(0)
    doc.setDefaultFont(font)
    doc.setDefaultStyleSheet(css)
    doc.setHtml(html_text)
    doc.setTextWidth(max(width, 50.0))
    return doc


def _css(palette: QPalette) -> str:
    link = palette.color(QPalette.ColorRole.Link).name()
    return (
        "p { margin-top: 0px; margin-bottom: 6px; } "
        "h1, h2, h3, h4 { margin-top: 4px; margin-bottom: 4px; } "
        "ul, ol { margin-top: 0px; margin-bottom: 6px; } "
        f"a {{ color: {link}; }} "
        "pre { font-family: monospace; } code { font-family: monospace; }"
    )


@dataclass(slots=True)
class MessageRender:
    """The rendered form of one row: header, body chunks, footer (all inert documents)."""

    width: float
    dark: bool
    header: QTextDocument | None = None
    chunks: list[QTextDocument] = field(default_factory=list)
    footer: QTextDocument | None = None
    code_blocks: list[str] = field(default_factory=list)
    stable_text: str = ""  # source of every chunk but the last (the tail)
    stable_code: int = 0  # code blocks inside the stable chunks
    stable_plain: int = 0  # blocks over the Markdown work budget inside the stable chunks
    plain_blocks: int = 0  # ... in the whole message (shown as literal text; tests, bench)
    version: int = -1
    last_rendered_chars: int = 0  # how much Markdown the latest update parsed (tests, bench)
    cut: bool = False  # shown as plain text cut at MAX_RENDERED_CHARS (chunks: text, note)

    def docs(self) -> list[QTextDocument]:
        parts = [self.header] if self.header is not None else []
        parts.extend(self.chunks)
        if self.footer is not None:
            parts.append(self.footer)
        return parts

    def height(self) -> float:
        return sum(doc.size().height() for doc in self.docs())

    def set_width(self, width: float) -> None:
        self.width = width
        for doc in self.docs():
            doc.setTextWidth(max(width, 50.0))
