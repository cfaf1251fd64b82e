"""How a transcript row becomes documents: inert rich text, built and cached per row.

Each row is drawn from a :class:`MessageRender`, a short stack of ``QTextDocument`` chunks. A
streaming answer keeps its finished blocks as rendered chunks and re-renders only the unfinished
tail each frame, so the cost of a frame does not grow with the answer's length; a finished answer
is rendered in the same pieces (long blocks cut where streaming cut them). What one row shows is
bounded in characters and in lines (beyond either, cut with a note). An answer's
reasoning is its own small document under the header: a toggle line ("▸ Thought for 3 s") and,
when open, the reasoning as escaped plain text (never Markdown), rebuilt only when it changes.
Documents never load resources (``loadResource`` returns nothing).
"""

from __future__ import annotations

import html
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import (
    QFont,
    QPalette,
    QTextDocument,
    QTextOption,
)

from ..theme import LIGHT, SPACE, TYPE_SCALE, Tokens, tokens_for
from ..token_text import answer_tokens
from .attachments import add_thumbnails, attachments_html
from .blocks import block_cuts
from .document import doc_gaps, document_css, outer_margins, trailing_leading
from .markdown import TAIL_FRESH, RenderedHtml, render_markdown
from .math import attach_math
from .rows import PREVIOUS_ATTEMPT, ItemKind, ToolState, TranscriptItem, reasoning_label

__all__ = [
    "LITERAL_RUN",
    "LONG_RUN",
    "MAX_RENDERED_CHARS",
    "MAX_RENDERED_LINES",
    "MAX_RENDERS",
    "TOGGLE_SCHEME",
    "MessageRender",
    "RenderCache",
    "doc_height",
    "footer_html",
    "has_long_run",
    "header_html",
    "is_dark",
    "reasoning_html",
    "shown_end",
    "tool_html",
    "update_render",
]

TOGGLE_SCHEME = "continuum-toggle"
# Beyond this a message is cut, with a note: a 10 MB paste must not stall the UI for seconds in
# the Markdown parser (the full text is saved and exported unchanged). What is shown keeps its
# pieces as they streamed, so crossing the limit mid-stream re-renders nothing (it used to
# switch to one plain-text document of 100,000 characters: ~25 ms in one frame).
MAX_RENDERED_CHARS = 100_000
# ... and beyond this many lines: markdown-it and Qt cost ~10-30 µs per line of list items,
# so 100,000 characters of "*\n" took ~0.7 s to show again. 2,000 lines of them cost ~30 ms,
# and an ordinary 100 KB answer (lines of 50 characters or more on average) is not affected.
MAX_RENDERED_LINES = 2_000
# Qt's default wrapping (at word boundaries, else anywhere) is quadratic in the length of a run
# without a break opportunity (100 KB of "[" took 177 ms to lay out, 200 KB 680 ms); wrapping
# anywhere is linear. A document whose source has a run longer than this wraps anywhere.
LONG_RUN = 10_000
# A block (or piece of a long line) that is one run of more than this many characters without
# whitespace is shown as written, not as Markdown (see _piece_html).
LITERAL_RUN = 1_000
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
    """A document that never fetches anything (images, style sheets, remote or local).

    ``margins``: its :func:`outer_margins`, read once when it is built; ``leading``: the
    space its last line's line height adds under the text (a bubble evens its padding);
    ``joiner``: ``None``, or its line goes on in the next document (a long line cut inside,
    :data:`.blocks.LONG_LINE`): nothing separates them on screen, and they are copied joined
    by ``joiner`` (the space it was cut after, or nothing in a run without spaces).
    """

    margins: tuple[float, float] = (0.0, 0.0)
    leading: float = 0.0
    joiner: str | None = None
    _height_at: tuple[float, int, float] = (-1.0, -1, 0.0)  # (width, revision, height)

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        return None

    def height(self) -> float:
        """``size().height()``, remembered while the text width and the content stay (a code
        block's Copy link relabelled in place is a new revision): a long answer's hundreds of
        documents are measured on every layout, and Qt's ``size()`` checks its layout each
        time."""
        width, revision = self.textWidth(), self.revision()
        at, seen, height = self._height_at
        if at != width or seen != revision:
            height = self.size().height()
            self._height_at = (width, revision, height)
        return height


def doc_height(doc: QTextDocument) -> float:
    """A document's height (remembered by the inert documents rows are made of)."""
    return doc.height() if isinstance(doc, _InertDocument) else doc.size().height()


def has_long_run(text: str, limit: int = LONG_RUN) -> bool:
    """Whether ``text`` has more than ``limit`` characters in a row without whitespace."""
    return len(text) > limit and max(map(len, text.split()), default=0) > limit


def shown_end(text: str) -> int:
    """How much of ``text`` a row shows: at most ``MAX_RENDERED_CHARS`` / ``_LINES``."""
    end = min(len(text), MAX_RENDERED_CHARS)
    if text.count("\n", 0, end) < MAX_RENDERED_LINES:
        return end
    pos = -1
    for _ in range(MAX_RENDERED_LINES):
        pos = text.find("\n", pos + 1)
    return pos + 1


def _document(
    html_text: str, width: float, font: Any, css: str, *, source: str = ""
) -> QTextDocument:
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
    attach_math(doc, html_text)  # the images of its formulas, before it is laid out
    doc.margins = outer_margins(doc)
    doc.leading = trailing_leading(doc)
    doc.setTextWidth(max(width, 50.0))
    return doc


@dataclass(slots=True)
class MessageRender:
    """The rendered form of one row: header, body chunks, footer (all inert documents)."""

    width: float
    dark: bool
    header: QTextDocument | None = None
    attachments: QTextDocument | None = None  # a person's images and files, above the text
    attachments_below: bool = False  # ... a tool's images, under its card's line
    reasoning: QTextDocument | None = None  # the reasoning's toggle line (and text when open)
    reasoning_key: tuple[object, ...] = ()  # what ``reasoning`` was built from
    header_key: tuple[object, ...] = ()  # ... ``header`` (a streaming answer's, every frame)
    footer_key: tuple[object, ...] = ()  # ... ``footer``
    chunks: list[QTextDocument] = field(default_factory=list)
    footer: QTextDocument | None = None
    code_blocks: list[str] = field(default_factory=list)
    stable_text: str = ""  # source of every chunk but the last (the tail)
    stable_code: int = 0  # code blocks inside the stable chunks
    stable_plain: int = 0  # blocks over the Markdown work budget inside the stable chunks
    plain_blocks: int = 0  # ... in the whole message (shown as literal text; tests, bench)
    version: int = -1
    last_rendered_chars: int = 0  # how much Markdown the latest update parsed (tests, bench)
    cut: bool = False  # cut at MAX_RENDERED_CHARS/_LINES: the last chunk is the note
    shown_chars: int = 0  # how much of the text the chunks show
    tail: bool = False  # the last chunk is the unfinished tail (re-rendered on each update)
    whole: bool = False  # cut as a finished message (blocks.block_cuts ``whole``), not streaming
    # After each cut of the stable chunks: (cut, chunks, stable_code, stable_plain) then.
    marks: list[tuple[int, int, int, int]] = field(default_factory=list)

    def docs(self) -> list[QTextDocument]:
        parts = [self.header] if self.header is not None else []
        below = self.attachments_below
        if self.attachments is not None and not below:
            parts.append(self.attachments)
        if self.reasoning is not None:
            parts.append(self.reasoning)
        parts.extend(self.chunks)
        if self.attachments is not None and below:
            parts.append(self.attachments)
        if self.footer is not None:
            parts.append(self.footer)
        return parts

    def height(self) -> float:
        docs = self.docs()
        return sum(map(doc_height, docs)) + sum(doc_gaps(docs))

    def set_width(self, width: float) -> None:
        self.width = width
        for doc in self.docs():
            doc.setTextWidth(max(width, 50.0))


def header_html(item: TranscriptItem) -> str:
    """The small line above a row (who speaks, or what the row is); empty: none."""
    if item.kind is ItemKind.USER:
        return ""  # the bubble says who wrote it
    if item.kind is ItemKind.ASSISTANT:
        if item.joined:
            return ""
        return "<b>Assistant</b>" + (" <i>(writing…)</i>" if item.streaming else "")
    if item.kind is ItemKind.DRAFT:
        if item.superseded:  # a resumed answer streams below it (issue 16)
            return f"<b>{html.escape(PREVIOUS_ATTEMPT)}</b>"
        return "<b>⚠ Interrupted</b> — not saved in the conversation, never sent to the model"
    if item.kind is ItemKind.NOTE:
        return f"<i>ⓘ {html.escape(item.text)}</i>"
    return ""


def reasoning_html(item: TranscriptItem, colour: str = "") -> str:
    """An answer's reasoning: a toggle line, and when open the text (escaped, plain); "": none.

    ``colour`` (a CSS colour) dims the toggle line like the rest of the reasoning.
    """
    label = reasoning_label(item)
    if not label:
        return ""
    arrow = "▾" if item.expanded else "▸"
    tint = f" color:{colour};" if colour else ""
    words = html.escape(label)
    if item.thinking:
        words = f"<i>{words}</i>"  # live: the row's header also says "writing…"
    head = f'<a href="{TOGGLE_SCHEME}:" style="text-decoration:none;{tint}">{arrow} {words}</a>'
    if not item.expanded or not item.reasoning:
        return f"<p>{head}</p>"
    text = item.reasoning
    end = shown_end(text)
    shown = html.escape(text[:end])
    more = (
        f"<p><i>… {len(text) - end:,} more characters of reasoning (saved in full)</i></p>"
        if end < len(text)
        else ""
    )
    return f'<p>{head}</p><p style="white-space: pre-wrap;">{shown}</p>{more}'


def footer_html(item: TranscriptItem, muted: str = "") -> str:
    """The small line under an answer: why it did not end normally, and quietly (in the CSS
    colour ``muted``) the tokens the provider reported for it; empty: none."""
    if item.kind is not ItemKind.ASSISTANT:
        return ""
    parts = []
    if item.stop_reason:
        words = _STOP_WORDS.get(
            item.stop_reason, f"The model stopped ({html.escape(item.stop_reason)})."
        )
        parts.append(f"<i>⚠ {words}</i>")
    if item.usage is not None and not item.streaming:
        count = answer_tokens(item.usage.input_tokens, item.usage.output_tokens).text
        if count:
            tint = f' style="color:{muted};"' if muted else ""
            parts.append(f"<span{tint}>{html.escape(count)}</span>")
    return " · ".join(parts)


def tool_state_token(state: ToolState) -> str:
    """The colour token a tool card's state words are drawn in."""
    return {
        ToolState.DONE: "success",
        ToolState.FAILED: "danger",
        ToolState.DENIED: "danger",
        ToolState.CANCELLED: "muted",
        ToolState.NOT_RUN: "muted",
        ToolState.AWAITING_APPROVAL: "warning",
        ToolState.REQUESTED: "warning",
        ToolState.UNKNOWN: "warning",
    }.get(state, "info")


def tool_html(item: TranscriptItem, tokens: Tokens = LIGHT) -> str:
    """A tool card: name and state, and when open its arguments and result."""
    call = item.call
    name = html.escape(call.name if call else "tool")
    state = item.state or ToolState.RUNNING
    arrow = "▾" if item.expanded else "▸"
    colour = getattr(tokens, tool_state_token(state))
    head = (
        f'<a href="{TOGGLE_SCHEME}:" style="text-decoration:none;">{arrow} Tool '
        f"<b>{name}</b></a> · "
        f'<span style="color:{colour};">{_TOOL_STATE_WORDS[state]}</span>'
    )
    if state is ToolState.RUNNING and item.progress:
        head += f" {html.escape(item.progress)}"
    if not item.expanded:
        return f"<p>{head}</p>"
    args = html.escape(item.arguments_text or "{}")
    result = html.escape(item.result) if item.result is not None else "<i>no result yet</i>"
    return (
        f"<p>{head}</p><p><b>Arguments</b></p>"
        f'<pre style="white-space: pre-wrap;">{args}</pre>'
        f'<p><b>Result</b></p><pre style="white-space: pre-wrap;">{result}</pre>'
    )


def update_render(
    render: MessageRender,
    item: TranscriptItem,
    font: QFont,
    palette: QPalette,
    *,
    keep_pieces: bool = False,
) -> None:
    """Bring ``render`` up to date with ``item`` (only a streaming answer's tail is redone).

    ``keep_pieces``: a finished answer keeps the documents it streamed with (text in them is
    selected, and a selection points at documents by number), instead of the paragraphs cut
    to keep frames short becoming whole (:func:`_rejoin`)."""
    tokens = tokens_for(palette)
    css, width = document_css(tokens, font.pointSizeF()), render.width
    small = QFont(font)
    small.setPointSizeF(max(small.pointSizeF() * TYPE_SCALE["small"], 6.0))
    header = header_html(item)
    header_key = (header, css, small.pointSizeF())
    if header_key != render.header_key:  # (the same line on every frame of a stream: kept)
        render.header = _document(header, width, small, css) if header else None
        if render.header is not None:
            render.header.margins = (0.0, float(SPACE[0]))  # type: ignore[attr-defined]
        render.header_key = header_key
    shown_parts = attachments_html(item.attachments)
    render.attachments = _document(shown_parts, width, font, css) if shown_parts else None
    if render.attachments is not None:
        add_thumbnails(render.attachments, item.attachments)
    render.attachments_below = item.kind is ItemKind.TOOL  # the card's line first, then images
    footer = footer_html(item, tokens.muted)
    footer_key = (footer, css, small.pointSizeF())
    if footer_key != render.footer_key:
        render.footer = _document(footer, width, small, css) if footer else None
        if render.footer is not None:
            render.footer.margins = (float(SPACE[1]), 0.0)  # type: ignore[attr-defined]
        render.footer_key = footer_key
    # Collapsed, only the label is drawn: a streaming thought must not rebuild (and rescan)
    # its whole text on every frame; open, the shown text is what counts.
    shown = item.reasoning[: shown_end(item.reasoning)] if item.expanded else None
    key = (shown, item.expanded, reasoning_label(item))
    if key != render.reasoning_key:
        # Rebuilt only when the reasoning changed: streamed answer text leaves it alone.
        muted = palette.color(QPalette.ColorRole.PlaceholderText)  # often translucent text
        tint = f"rgba({muted.red()},{muted.green()},{muted.blue()},{muted.alpha()})"
        thought = reasoning_html(item, tint)
        render.reasoning = (
            _document(thought, width, small, css, source=shown or "") if thought else None
        )
        render.reasoning_key = key
    if item.kind is ItemKind.TOOL:
        render.chunks = [
            _document(
                tool_html(item, tokens),
                width,
                font,
                css,
                source=f"{item.arguments_text} {item.result or ''}",
            )
        ]
        render.stable_text, render.code_blocks = "", []
        return
    if item.kind is ItemKind.NOTE or (not item.text and render.reasoning is not None):
        # A note is its header; a step that only thought (before tools) is its reasoning.
        render.chunks, render.code_blocks, render.cut = [], [], False
        render.stable_text, render.stable_code, render.stable_plain = "", 0, 0
        render.plain_blocks = 0
        return
    full = item.text
    end = shown_end(full)
    text = full[:end] if end < len(full) else full  # what the row shows (as Markdown)
    whole = not item.streaming
    if whole and not render.whole and not keep_pieces:
        _rejoin(render, text)
    render.whole = whole
    if render.cut:
        if end < len(full) and end == render.shown_chars and text.startswith(render.stable_text):
            # Still growing past the cut (a long stream): what is shown is unchanged; only the
            # count in the note changes.
            render.chunks[-1] = _more_note(len(full) - end, width, font, css)
            render.last_rendered_chars = 0
            return
        render.chunks.pop()  # the note
        render.cut = False
    if not render.chunks or not text.startswith(render.stable_text):
        render.chunks, render.code_blocks, render.marks = [], [], []
        render.stable_text, render.stable_code, render.stable_plain = "", 0, 0
    elif render.tail:
        render.chunks.pop()  # the old tail; the stable chunks stay as they are
    del render.code_blocks[render.stable_code :]
    start = len(render.stable_text)
    # Every block is a document of its own, cut where streaming cuts it (blocks.block_cuts):
    # the same documents whether the text finished or was reopened, and a frame re-renders
    # only the unfinished tail.
    rendered = 0
    spent = 0  # estimated µs of heavy Markdown in the blocks that became final just now
    boundary = start
    for cut in block_cuts(text, start, whole=whole):
        if cut <= boundary:
            continue
        stable = text[boundary:cut]
        if stable.strip():  # blank lines between blocks are spacing, not documents
            part = _piece_html(stable, render.dark, len(render.code_blocks))
            spent += part.inline_spent
            doc = _document(part.html, width, font, css, source=stable)
            if not stable.endswith("\n"):  # cut inside a long line: the line goes on
                doc.margins = (doc.margins[0], 0.0)  # type: ignore[attr-defined]
                doc.joiner = " " if stable[-1:].isspace() else ""  # type: ignore[attr-defined]
            render.chunks.append(doc)
            render.code_blocks.extend(part.code_blocks)
            render.stable_plain += part.plain_blocks
        render.stable_text = text[:cut]
        render.stable_code = len(render.code_blocks)
        render.marks.append((cut, len(render.chunks), render.stable_code, render.stable_plain))
        rendered += cut - boundary
        boundary = cut
    tail = text[boundary:]
    render.tail = bool(tail.strip()) or not render.chunks
    render.plain_blocks = render.stable_plain
    if render.tail:
        # A streaming tail is rendered again next frame: of its heavy pieces not parsed
        # before, it parses what the blocks finished in this frame (parsed now or cached: Qt
        # lays out their Markdown all the same) left of TAIL_FRESH; the rest show as text for
        # now. A finished message's last block is final: rendered as any block.
        fresh = max(0, TAIL_FRESH - spent) if item.streaming else None
        part = _piece_html(tail, render.dark, len(render.code_blocks), fresh)
        render.chunks.append(_document(part.html, width, font, css, source=tail))
        render.code_blocks.extend(part.code_blocks)
        render.plain_blocks += part.plain_blocks
    render.last_rendered_chars = rendered + len(tail)
    render.shown_chars = end
    if end < len(full):
        # Cut: the first MAX_RENDERED_CHARS (or _LINES) as they streamed, then a note. The
        # pieces shown so far stay: crossing the limit re-renders nothing.
        render.chunks.append(_more_note(len(full) - end, width, font, css))
        render.cut = True


def _rejoin(render: MessageRender, text: str) -> None:
    """A streamed answer just finished: where its documents were cut differently from a
    finished message's (a long paragraph cut inside to keep frames short), drop them from the
    first such cut on, so the update renders the rest as a reopened message is (each such
    paragraph one document). Only when a document was cut inside a line; the scans cost a few
    ms, once per answer."""
    if not any(getattr(doc, "joiner", None) is not None for doc in render.chunks):
        return
    streamed, finished = block_cuts(text), block_cuts(text, whole=True)
    same = 0  # the last cut both agree on, and every one before it
    for old, new in zip(streamed, finished, strict=False):
        if old != new:
            break
        same = old
    else:
        if len(streamed) == len(finished):
            return
    kept = [mark for mark in render.marks if mark[0] <= same]
    cut, chunks, code, plain = kept[-1] if kept else (0, 0, 0, 0)
    del render.chunks[chunks:]
    del render.code_blocks[code:]
    render.marks = kept
    render.stable_text, render.stable_code, render.stable_plain = text[:cut], code, plain
    render.cut = render.tail = False


def _more_note(more: int, width: float, font: QFont, css: str) -> QTextDocument:
    return _document(
        f"<p><i>… {more:,} more characters (saved in full; export the conversation to see "
        "them)</i></p>",
        width,
        font,
        css,
    )


def _piece_html(
    source: str, dark: bool, code_offset: int, fresh: int | None = None
) -> RenderedHtml:
    """One block (or piece of a long line) as HTML: Markdown, except a run of more than
    :data:`LITERAL_RUN` characters without whitespace, shown as written (no prose is written
    that way, and the Markdown of 3,000 characters of ``*a`` cost ~40 ms a frame)."""
    if len(source) > LITERAL_RUN and source.split() == [source]:
        return RenderedHtml(f"<p>{html.escape(source)}</p>", [], 1)
    return render_markdown(source, dark=dark, code_offset=code_offset, fresh=fresh)


class RenderCache(OrderedDict[int, MessageRender]):
    """Renders by row uid, least recently used first, at most ``MAX_RENDERS`` of them."""

    def render_for(
        self,
        item: TranscriptItem,
        width: float,
        font: QFont,
        palette: QPalette,
        selected: Callable[[int], bool] | None = None,
    ) -> MessageRender:
        """``item``'s render at ``width``, rebuilt only where the item changed; ``selected``
        says whether a row (by uid) has selected text (see ``update_render``'s
        ``keep_pieces``)."""
        dark = is_dark(palette)
        render = self.get(item.uid)
        if render is None or render.dark != dark:
            render = MessageRender(width, dark)
            self[item.uid] = render
            while len(self) > MAX_RENDERS:
                self.popitem(last=False)
        else:
            self.move_to_end(item.uid)
        if render.version != item.version:
            keep = (
                selected is not None
                and not item.streaming
                and not render.whole
                and selected(item.uid)
            )
            update_render(render, item, font, palette, keep_pieces=keep)
            render.version = item.version
        if abs(render.width - width) > 0.5:
            render.set_width(width)
        return render
