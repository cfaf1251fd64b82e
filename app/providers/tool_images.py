"""Which images of a tool's result a model is sent, and what the result's text then says.

A tool's images (:attr:`~app.messages.ToolMessage.images`) are not the person's: nobody chose
to send them and nobody can remove them. So they never make a request fail: they are sent only
to a model known to read images (:func:`~app.providers.vision.reads_images` is ``True``); for
one known not to (``False``) or not known either way (``None``) they stay out, and the result's
text (which names every image) says why they were not sent. An image whose bytes are missing
from the database is left out the same way. :func:`tool_images` is that decision, pure; the
wire forms are :mod:`app.providers.convert`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..messages import ToolMessage
from ..parts import ImagePart

__all__ = ["SentToolImages", "numbered", "sends_tool_images", "tool_images"]


@dataclass(frozen=True, slots=True)
class SentToolImages:
    """What one tool result gives the model: the text it reads, and the images sent with it
    (``numbers``: theirs in the result's text, which counts from 1)."""

    text: str
    images: tuple[ImagePart, ...] = ()
    numbers: tuple[int, ...] = ()


def sends_tool_images(reads: bool | None) -> bool:
    """Whether a model whose reading of images is ``reads`` gets tools' images: only a yes."""
    return reads is True


def numbered(numbers: Sequence[int]) -> str:
    """``"image 1"``, ``"images 1 and 2"``, ``"images 1, 2 and 3"``."""
    if len(numbers) == 1:
        return f"image {numbers[0]}"
    head = ", ".join(str(n) for n in numbers[:-1])
    return f"images {head} and {numbers[-1]}"


def tool_images(
    message: ToolMessage, reads: bool | None, *, model: str, later: bool = False
) -> SentToolImages:
    """The text and images ``message`` sends to ``model`` (whose reading of images is
    ``reads``); ``later``: the images go in a user turn after the tool results (the
    OpenAI-compatible form, whose tool turns carry text only)."""
    if not message.images:
        return SentToolImages(message.content)
    numbers = range(1, len(message.images) + 1)
    if not sends_tool_images(reads):
        why = "does not read images" if reads is False else "is not known to read images"
        shown = numbered(list(numbers))
        note = f"[{shown[0].upper()}{shown[1:]} of this result {_was(numbers)} not sent to you: "
        note += f"{_who(model)} {why}.]"
        return SentToolImages(_joined(message.content, note), ())
    pairs = list(zip(numbers, message.images, strict=True))
    sent = tuple((n, image) for n, image in pairs if image.data is not None)
    notes: list[str] = []
    missing = [n for n, image in pairs if image.data is None]
    if missing:
        shown = numbered(missing)
        notes.append(
            f"[{shown[0].upper()}{shown[1:]} of this result {_was(missing)} not sent to you: "
            f"{'its' if len(missing) == 1 else 'their'} bytes are missing from this "
            "conversation's database.]"
        )
    kept = tuple(n for n, _image in sent)
    if sent and later:
        notes.append(f"[The {numbered(kept)} of this result: in the next user message.]")
    return SentToolImages(
        _joined(message.content, *notes), tuple(image for _n, image in sent), kept
    )


def _who(model: str) -> str:
    return f"the model {model!r}" if model else "this model"


def _was(numbers: Sequence[int] | range) -> str:
    return "was" if len(numbers) == 1 else "were"


def _joined(text: str, *notes: str) -> str:
    return "\n".join(part for part in (text, *notes) if part)
