"""What the model gets of an MCP tool's result: its content blocks as text and images, capped.

A server may answer with megabytes (a whole file, a database dump). Everything the model sees is
sent again with every later request of the conversation and stored in the database, so the text
is cut at :data:`MAX_RESULT_CHARS` and the cut is said in the result itself: how much there was,
how much is shown, and how to get the rest (ask the tool for a smaller part).

Images (``image`` blocks, and embedded ``resource`` blocks whose blob is an image) become
:class:`~app.parts.ImagePart` s with their bytes, checked by their bytes as a person's
attachments are (:func:`~app.parts.sniff_image`): PNG, JPEG, GIF or WebP whose size in pixels
can be read (a damaged image a provider refuses would make every later request fail, and
nobody can remove a tool's image), each at most :data:`TOOL_IMAGE_MAX_BYTES` and
:data:`TOOL_IMAGE_MAX_PIXELS` a side, at most :data:`MAX_RESULT_IMAGES` of them and
:data:`MAX_RESULT_IMAGE_BYTES` together per result. The text names each image where it was
(``[image 1: image/png, 640×480, 12 KB]``); one that is not used stays a line saying why.
Pure functions.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any, Final

from ..parts import ImagePart, describe_size, digest_of, sniff_image

__all__ = [
    "MAX_RESULT_CHARS",
    "MAX_RESULT_IMAGES",
    "MAX_RESULT_IMAGE_BYTES",
    "TOOL_IMAGE_MAX_BYTES",
    "TOOL_IMAGE_MAX_PIXELS",
    "ResultContent",
    "cap_result",
    "result_content",
    "result_text",
]

#: The most characters of one MCP result the model sees (about 25,000 tokens: it fits next to
#: a long conversation in a 128k-token context, where the 1 MB of the built-in ``read_file`` would
#: fill it). A server's setting can lower or raise it (``McpServerConfig.max_result_chars``).
MAX_RESULT_CHARS: Final = 100_000
#: The largest image a tool may return: Anthropic's API refuses images over 5 MB, and a tool's
#: image cannot be removed by the person (as an attachment can), so one a provider refuses
#: would make every later request of the conversation fail. (Attachments: ``IMAGE_MAX_BYTES``.)
TOOL_IMAGE_MAX_BYTES: Final = 5 * 1024 * 1024
#: The most pixels a side of an image from a tool (Anthropic refuses larger ones).
TOOL_IMAGE_MAX_PIXELS: Final = 8000
#: The most images one result carries (each costs about 1,500 tokens in every later request).
MAX_RESULT_IMAGES: Final = 4
#: The most image bytes one result carries, all its images together.
MAX_RESULT_IMAGE_BYTES: Final = 10 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ResultContent:
    """What a result gives the model: its text (naming every image) and its usable images."""

    text: str
    images: tuple[ImagePart, ...] = ()


def summarise(block: Any) -> str:
    """One non-image content block as text for the model: text as is, other kinds described."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        size = len(getattr(block, "data", "") or "") * 3 // 4
        return f"[{kind} content, {block.mime_type}, about {size} bytes, not shown]"
    if kind == "resource_link":
        return f"[resource link: {block.uri}" + (f" ({block.name})" if block.name else "") + "]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return text
        kind_text = resource.mime_type or "unknown type"
        return f"[binary resource {resource.uri}, {kind_text}, not shown]"
    return f"[{kind or type(block).__name__} content, not shown]"


def _image_source(block: Any) -> tuple[str, str, str] | None:
    """``(base64 data, declared type, what to call it)`` of a block that holds an image."""
    kind = getattr(block, "type", None)
    if kind == "image":
        return str(getattr(block, "data", "") or ""), str(block.mime_type or ""), "image"
    if kind == "resource":
        resource = block.resource
        blob = getattr(resource, "blob", None)
        mime = str(getattr(resource, "mime_type", None) or "")
        if isinstance(blob, str) and mime.startswith("image/"):
            return blob, mime, f"image resource {resource.uri}"
    return None


class _Images:
    """The images of one result so far, and the rules a new one must meet."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.kept: list[ImagePart] = []
        self.bytes = 0

    def take(self, data: str, declared: str, what: str) -> str:
        """The line for one image block; the image is kept when it can be used."""
        shown = declared or "no type given"
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            return f"[{what} ({shown}) not used: its data is not valid base64]"
        info = sniff_image(raw)
        if info is None:
            return (
                f"[{what} ({shown}, {describe_size(len(raw))}) not used: it is not a PNG, "
                "JPEG, GIF or WebP image]"
            )
        size = describe_size(len(raw))
        if not (info.width and info.height):
            return (
                f"[{what} ({info.media_type}, {size}) not used: its size in pixels cannot be "
                "read from it, so it is probably damaged]"
            )
        if max(info.width, info.height) > TOOL_IMAGE_MAX_PIXELS:
            return (
                f"[{what} ({info.media_type}, {info.width}×{info.height}) not used: an image "
                f"from a tool can be at most {TOOL_IMAGE_MAX_PIXELS} pixels a side]"
            )
        if len(raw) > TOOL_IMAGE_MAX_BYTES:
            return (
                f"[{what} ({info.media_type}, {size}) not used: an image from a tool can be "
                f"at most {describe_size(TOOL_IMAGE_MAX_BYTES)}]"
            )
        if len(self.kept) >= MAX_RESULT_IMAGES:
            return (
                f"[{what} ({info.media_type}, {size}) not used: one result can carry at most "
                f"{MAX_RESULT_IMAGES} images]"
            )
        if self.bytes + len(raw) > MAX_RESULT_IMAGE_BYTES:
            return (
                f"[{what} ({info.media_type}, {size}) not used: one result's images can be at "
                f"most {describe_size(MAX_RESULT_IMAGE_BYTES)} together]"
            )
        number = len(self.kept) + 1
        self.kept.append(
            ImagePart(
                media_type=info.media_type,
                digest=digest_of(raw),
                name=f"{self.tool} image {number}",
                width=info.width,
                height=info.height,
                size=len(raw),
                data=raw,
            )
        )
        self.bytes += len(raw)
        pixels = f", {info.width}×{info.height}" if info.width and info.height else ""
        return f"[image {number}: {info.media_type}{pixels}, {size}]"


def result_content(
    result: Any, *, server: str, tool: str, limit: int = MAX_RESULT_CHARS
) -> ResultContent:
    """A ``CallToolResult`` as what the model gets: text cut to ``limit`` characters, images."""
    images = _Images(tool)
    parts: list[str] = []
    lines: list[str] = []  # the kept images' lines, in order
    for block in result.content or ():
        source = _image_source(block)
        if source is None:
            parts.append(summarise(block))
            continue
        before = len(images.kept)
        parts.append(images.take(*source))
        if len(images.kept) > before:
            lines.append(parts[-1])
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    text = cap_result("\n".join(parts), server=server, tool=tool, limit=limit)
    cut = [line for line in lines if line not in text]
    if cut:  # the cut took an image's line: the image still goes, so it is still named
        text += "\n" + "\n".join(cut)
    return ResultContent(text, tuple(images.kept))


def result_text(result: Any, *, server: str, tool: str, limit: int = MAX_RESULT_CHARS) -> str:
    """A ``CallToolResult``'s text (see :func:`result_content`)."""
    return result_content(result, server=server, tool=tool, limit=limit).text


def cap_result(text: str, *, server: str, tool: str, limit: int = MAX_RESULT_CHARS) -> str:
    """``text`` if it fits in ``limit`` characters, else its start and a note saying what was
    cut and how to get the rest. The note is outside the limit (it is short)."""
    if len(text) <= limit:
        return text
    shown = text[:limit]
    # Do not end in the middle of a line when a line break is near: easier to continue from.
    cut = shown.rfind("\n", max(0, limit - 2_000))
    if cut > 0:
        shown = shown[:cut]
    return (
        f"{shown}\n\n[Continuum cut this result: the MCP server {server!r} answered {tool!r} "
        f"with {len(text):,} characters ({_size(text)}); only the first {len(shown):,} are "
        "shown, to keep the conversation within the model's context. To see the rest, call "
        "the tool again for a smaller part (an offset, a range of lines, a narrower query or "
        "a filter) if it offers one.]"
    )


def _size(text: str) -> str:
    size = len(text.encode("utf-8", errors="replace"))
    if size >= 1_000_000:
        return f"{size / 1_000_000:.1f} MB"
    return f"{size / 1_000:.0f} kB"
