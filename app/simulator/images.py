"""What the simulator makes of the images in a request: a summary to echo, or a refusal.

Both protocols are read: OpenAI-compatible ``image_url`` parts with a ``data:`` URL and
Anthropic ``image`` blocks with a base64 source, also inside a ``tool_result`` block's content
(where Anthropic takes a tool's images). The echo names what arrived ("1 image:
640×480 PNG"), so tests can prove the bytes crossed the wire. A model whose name contains
``text`` (``sim-text``) refuses images with HTTP 400, as local servers without vision do.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Final

from ..parts import sniff_image

__all__ = ["TEXT_ONLY_MARK", "image_problem", "image_summary"]

#: A simulated model with this in its name cannot read images.
TEXT_ONLY_MARK: Final = "text"


def _encoded(part: Any) -> tuple[str, str] | None:
    """``(declared media type, base64 data)`` of an image part of either protocol."""
    if not isinstance(part, Mapping):
        return None
    if part.get("type") == "image_url":
        url = (
            part.get("image_url", {}).get("url")
            if isinstance(part.get("image_url"), Mapping)
            else None
        )
        if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
            head, data = url[5:].split(";base64,", 1)
            return head, data
        return ("", "") if url is not None else None
    if part.get("type") == "image":
        source = part.get("source")
        if isinstance(source, Mapping) and source.get("type") == "base64":
            return str(source.get("media_type", "")), str(source.get("data", ""))
        return "", ""
    return None


def _blocks(content: Any) -> list[Any]:
    """A user turn's blocks, a ``tool_result``'s own blocks in its place."""
    blocks: list[Any] = []
    for part in content if isinstance(content, list) else ():
        is_result = isinstance(part, Mapping) and part.get("type") == "tool_result"
        inner = part.get("content") if is_result else None
        if isinstance(inner, list):
            blocks.extend(inner)
        else:
            blocks.append(part)
    return blocks


def _images(messages: Any, *, last_only: bool) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for message in reversed(messages if isinstance(messages, list) else []):
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        content = message.get("content")
        parts = [_encoded(p) for p in _blocks(content)]
        images = [p for p in parts if p is not None]
        found[:0] = images
        if last_only and (images or content):
            break
    return found


def _describe(media_type: str, data: str) -> str | None:
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    info = sniff_image(raw)
    if info is None or info.media_type != media_type:
        return None
    kind = info.media_type.removeprefix("image/").upper()
    size = f"{info.width}×{info.height} " if info.width and info.height else ""
    return f"{size}{kind}"


def image_summary(messages: Any) -> str:
    """``"1 image: 640×480 PNG"`` for the last user turn's images (``""``: none)."""
    described = [_describe(*image) or "unreadable" for image in _images(messages, last_only=True)]
    if not described:
        return ""
    count = f"{len(described)} image" + ("s" if len(described) > 1 else "")
    return f"{count}: {', '.join(described)}"


def image_problem(body: Mapping[str, Any]) -> str | None:
    """Why a real server would refuse the request's images (HTTP 400), or None."""
    images = _images(body.get("messages"), last_only=False)
    if not images:
        return None
    if TEXT_ONLY_MARK in str(body.get("model") or ""):
        return "This model does not support image input (no vision capability)."
    for media_type, data in images:
        if _describe(media_type, data) is None:
            return (
                f"Invalid image: the data is not a base64 {media_type or 'image'} "
                "(PNG, JPEG, GIF or WebP)."
            )
    return None
