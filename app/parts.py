"""Message parts: what a person's message holds besides text (images, files), and their rules.

A :class:`~app.messages.UserMessage`'s content is a plain string or a tuple of parts:

- :class:`TextPart` — what the person typed;
- :class:`ImagePart` — an image for a vision model, referred to by the SHA-256 ``digest`` of its
  bytes (stored once, in the database's ``attachments`` table, in the same transaction as the
  message: :mod:`app.storage.attachments`). ``data`` holds the bytes in memory (a new part, or
  one the store loaded); it is never part of the JSON form nor of equality;
- :class:`FilePart` — a text or code file, or a PDF's extracted text: the model reads ``text``.

:func:`attachment_from_bytes` turns what the person attached into a part, or refuses it with an
:class:`AttachmentError` that says what to do (before anything is saved or sent). Images are
recognised by their bytes, never by their name (:func:`sniff_image`).
"""

from __future__ import annotations

import hashlib
import io
import logging
import mimetypes
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias

from .errors import ContinuumError

__all__ = [
    "IMAGE_MAX_BYTES",
    "IMAGE_TYPES",
    "PDF_MAX_BYTES",
    "TEXT_MAX_BYTES",
    "AttachmentError",
    "ImagesNotReadError",
    "Content",
    "FilePart",
    "ImageInfo",
    "ImagePart",
    "Part",
    "TextPart",
    "attachment_from_bytes",
    "attachment_parts",
    "content_parts",
    "content_text",
    "describe_size",
    "digest_of",
    "file_prompt",
    "image_parts",
    "index_text",
    "part_from_dict",
    "part_to_dict",
    "sniff_image",
    "with_text",
]

log = logging.getLogger(__name__)

#: Largest image sent (OpenAI and Anthropic both cap a request's images near this).
IMAGE_MAX_BYTES: Final = 20 * 1024 * 1024
#: Largest text or code file, in UTF-8 bytes (and largest text taken out of a PDF).
TEXT_MAX_BYTES: Final = 1024 * 1024
#: Largest PDF read for its text.
PDF_MAX_BYTES: Final = 50 * 1024 * 1024
#: The image types every provider takes.
IMAGE_TYPES: Final = ("image/png", "image/jpeg", "image/gif", "image/webp")


class AttachmentError(ContinuumError, ValueError):
    """An attachment that cannot be used; the message says why and what to do instead."""


class ImagesNotReadError(AttachmentError):
    """The model in use cannot read images (known, or said so by its server)."""


@dataclass(frozen=True, slots=True)
class TextPart:
    """Text the person typed."""

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"a text part's text must be a string, got {self.text!r:.80}")


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image, by the SHA-256 of its bytes; ``data`` is the bytes when at hand."""

    media_type: str
    digest: str
    name: str = ""
    width: int | None = None
    height: int | None = None
    size: int | None = None
    data: bytes | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class FilePart:
    """A file the model reads as ``text`` (a text or code file, or a PDF's text)."""

    name: str
    media_type: str
    digest: str
    text: str
    size: int | None = None
    data: bytes | None = field(default=None, compare=False, repr=False)


Part: TypeAlias = TextPart | ImagePart | FilePart
#: A user message's content: a plain string, or parts.
Content: TypeAlias = str | tuple[Part, ...]


def digest_of(data: bytes) -> str:
    """The content address of ``data``: its SHA-256 in hex."""
    return hashlib.sha256(data).hexdigest()


def content_parts(content: Content) -> tuple[Part, ...]:
    """``content`` as parts (a plain string is one text part; an empty one none)."""
    if isinstance(content, str):
        return (TextPart(content),) if content else ()
    return content


def content_text(content: Content) -> str:
    """The plain text of content: its text parts (not its files' text)."""
    if isinstance(content, str):
        return content
    return "\n\n".join(p.text for p in content if isinstance(p, TextPart))


def with_text(text: str, attachments: Iterable[ImagePart | FilePart]) -> Content:
    """The content of a message of ``attachments`` and ``text`` (none: the plain string).

    The attachments come first: both providers advise the image before the question about it.
    """
    parts: list[Part] = list(attachments)
    if not parts:
        return text
    return tuple(parts) + ((TextPart(text),) if text else ())


def attachment_parts(content: Content) -> tuple[ImagePart | FilePart, ...]:
    """The images and files of content, in order (a plain string has none)."""
    if isinstance(content, str):
        return ()
    return tuple(p for p in content if isinstance(p, ImagePart | FilePart))


def image_parts(content: Content) -> tuple[ImagePart, ...]:
    """The images of content."""
    if isinstance(content, str):
        return ()
    return tuple(p for p in content if isinstance(p, ImagePart))


def index_text(content: Content) -> str:
    """What the search index holds for ``content``: its text and the attachments' names."""
    if isinstance(content, str):
        return content
    words = [p.text if isinstance(p, TextPart) else p.name for p in content]
    return "\n".join(w for w in words if w)


def file_prompt(part: FilePart) -> str:
    """How a file reaches the model: its name, then its text."""
    return f'<file name="{part.name}" type="{part.media_type}">\n{part.text}\n</file>'


def describe_size(size: int) -> str:
    """``size`` bytes in words a person reads (``"1.5 MB"``)."""
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


# --- the JSON form -------------------------------------------------------------------------


def part_to_dict(part: Part) -> dict[str, Any]:
    """The stable JSON form of a part (never its bytes)."""
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        data: dict[str, Any] = {
            "type": "image",
            "media_type": part.media_type,
            "digest": part.digest,
            "name": part.name,
        }
        for key in ("width", "height", "size"):
            if getattr(part, key) is not None:
                data[key] = getattr(part, key)
        return data
    data = {
        "type": "file",
        "name": part.name,
        "media_type": part.media_type,
        "digest": part.digest,
        "text": part.text,
    }
    if part.size is not None:
        data["size"] = part.size
    return data


def _field(raw: Mapping[str, Any], key: str, default: str | None = None) -> str:
    value = raw.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"part field {key!r} must be a string, got {value!r:.80}")
    return value


def _count(raw: Mapping[str, Any], key: str) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"part field {key!r} must be a whole number, got {value!r:.80}")
    return value


def part_from_dict(raw: Any) -> Part:
    """Rebuild a part from :func:`part_to_dict` output (``ValueError`` if it cannot be read)."""
    if not isinstance(raw, Mapping):
        raise ValueError(f"a message part must be a JSON object, got {raw!r:.80}")
    kind = raw.get("type")
    if kind == "text":
        return TextPart(_field(raw, "text"))
    if kind == "image":
        return ImagePart(
            media_type=_field(raw, "media_type"),
            digest=_field(raw, "digest"),
            name=_field(raw, "name", ""),
            width=_count(raw, "width"),
            height=_count(raw, "height"),
            size=_count(raw, "size"),
        )
    if kind == "file":
        return FilePart(
            name=_field(raw, "name"),
            media_type=_field(raw, "media_type", "text/plain"),
            digest=_field(raw, "digest"),
            text=_field(raw, "text"),
            size=_count(raw, "size"),
        )
    raise ValueError(f"unknown message part type {kind!r:.40}")


# --- recognising what was attached -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ImageInfo:
    """What an image's first bytes say: its type and (when readable) its size in pixels."""

    media_type: str
    width: int | None = None
    height: int | None = None


def sniff_image(data: bytes) -> ImageInfo | None:
    """The image type of ``data`` from its bytes (PNG, JPEG, GIF, WebP), else ``None``."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        if len(data) >= 24 and data[12:16] == b"IHDR":
            width, height = struct.unpack(">II", data[16:24])
            return ImageInfo("image/png", width, height)
        return ImageInfo("image/png")
    if data[:6] in (b"GIF87a", b"GIF89a"):
        if len(data) >= 10:
            width, height = struct.unpack("<HH", data[6:10])
            return ImageInfo("image/gif", width, height)
        return ImageInfo("image/gif")
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ImageInfo("image/webp", *_webp_size(data))
    if data.startswith(b"\xff\xd8\xff"):
        return ImageInfo("image/jpeg", *_jpeg_size(data))
    return None


def _webp_size(data: bytes) -> tuple[int | None, int | None]:
    chunk = data[12:16]
    try:
        if chunk == b"VP8X":
            width = int.from_bytes(data[24:27], "little") + 1
            height = int.from_bytes(data[27:30], "little") + 1
            return width, height
        if chunk == b"VP8L" and data[20] == 0x2F:
            bits = int.from_bytes(data[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
            width, height = struct.unpack("<HH", data[26:30])
            return width & 0x3FFF, height & 0x3FFF
    except (IndexError, struct.error):
        pass
    return None, None


#: JPEG start-of-frame markers (they carry the size); C4, C8 and CC are other segments.
_JPEG_SOF: Final = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_size(data: bytes) -> tuple[int | None, int | None]:
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            return None, None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if marker in _JPEG_SOF:
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        at += 2 + length
    return None, None


#: Image formats people have that no provider takes (recognised to say so clearly).
_OTHER_IMAGES: Final = (
    (b"BM", "BMP"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
)


def _other_image(data: bytes) -> str | None:
    for magic, name in _OTHER_IMAGES:
        if data.startswith(magic):
            return name
    if data[4:8] == b"ftyp" and data[8:12] in (b"heic", b"heix", b"mif1", b"avif"):
        return "HEIC/AVIF"
    return None


def attachment_from_bytes(data: bytes, name: str) -> ImagePart | FilePart:
    """The part for a file the person attached, or :class:`AttachmentError` saying why not."""
    shown = name or "The attachment"
    image = sniff_image(data)
    if image is not None:
        if len(data) > IMAGE_MAX_BYTES:
            raise AttachmentError(
                f"{shown} is {describe_size(len(data))}; images can be at most "
                f"{describe_size(IMAGE_MAX_BYTES)}. Make it smaller (or crop it) and attach it "
                "again."
            )
        return ImagePart(
            media_type=image.media_type,
            digest=digest_of(data),
            name=name,
            width=image.width,
            height=image.height,
            size=len(data),
            data=data,
        )
    other = _other_image(data)
    if other is not None:
        raise AttachmentError(
            f"{shown} is a {other} image; models take PNG, JPEG, GIF or WebP. "
            "Save it as PNG or JPEG and attach it again."
        )
    if data.startswith(b"%PDF-"):
        return FilePart(
            name, "application/pdf", digest_of(data), _pdf_text(data, shown), len(data), data
        )
    if len(data) > TEXT_MAX_BYTES:
        raise AttachmentError(
            f"{shown} is {describe_size(len(data))}; text and code files can be at most "
            f"{describe_size(TEXT_MAX_BYTES)}. Attach the part that matters, or paste an excerpt."
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = None
    if text is None or "\x00" in text:
        raise AttachmentError(
            f"{shown} is not text (UTF-8) nor an image (PNG, JPEG, GIF, WebP) nor a PDF, so no "
            "model can read it. Save it as UTF-8 text, or export it as PDF or an image."
        )
    media_type = mimetypes.guess_type(name)[0] if name else None
    if media_type is None or not media_type.startswith("text/"):
        media_type = "text/plain"
    return FilePart(name, media_type, digest_of(data), text, len(data), data)


def _pdf_text(data: bytes, shown: str) -> str:
    """The text of a PDF (pypdf), within the limits, or :class:`AttachmentError`."""
    if len(data) > PDF_MAX_BYTES:
        raise AttachmentError(
            f"{shown} is {describe_size(len(data))}; PDFs can be at most "
            f"{describe_size(PDF_MAX_BYTES)}. Attach the pages that matter (print them to PDF)."
        )
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError as err:  # pragma: no cover - a dependency; only a broken install lacks it
        raise AttachmentError(
            f"{shown} is a PDF, and this installation cannot read PDFs (pypdf is missing). "
            "Copy its text into the message instead."
        ) from err
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise AttachmentError(
                f"{shown} is password-protected. Save an unprotected copy and attach that."
            )
        pages = [page.extract_text() or "" for page in reader.pages]
    except AttachmentError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as err:
        log.info("PDF %r could not be read: %s", shown, err)
        raise AttachmentError(
            f"{shown} could not be read as a PDF ({err}). Copy its text into the message instead."
        ) from err
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text:
        raise AttachmentError(
            f"{shown} has no text to read (a scanned PDF?). Attach its pages as images instead."
        )
    if len(text.encode("utf-8")) > TEXT_MAX_BYTES:
        raise AttachmentError(
            f"The text of {shown} is more than {describe_size(TEXT_MAX_BYTES)}. "
            "Attach the pages that matter (print them to a smaller PDF)."
        )
    return text
