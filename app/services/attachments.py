"""The app's side of attachments: reading what the person picked, and whether it can be sent.

:func:`read_attachment` reads a chosen or dropped file into a part (:mod:`app.parts`), looking
at its size before reading it (a 4 GB video is refused without being read);
:func:`pasted_image` does the same for an image from the clipboard. :func:`send_problem` says,
before anything is saved or sent, why the model in use cannot take the attachments (an image
for a model known not to read images), so the composer keeps the message and its attachments.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from ..model import Model
from ..parts import (
    IMAGE_MAX_BYTES,
    PDF_MAX_BYTES,
    AttachmentError,
    FilePart,
    ImagePart,
    attachment_from_bytes,
    describe_size,
)
from ..providers.vision import reads_images

__all__ = ["model_name", "pasted_image", "read_attachment", "send_problem"]

log = logging.getLogger(__name__)

#: No attachment can be larger than this; a bigger file is refused before it is read.
_READ_LIMIT = max(IMAGE_MAX_BYTES, PDF_MAX_BYTES)


def read_attachment(path: str | Path) -> ImagePart | FilePart:
    """The part for the file at ``path``, or :class:`AttachmentError` saying why not."""
    path = Path(path)
    name = path.name
    try:
        size = path.stat().st_size
        if path.is_dir():
            raise AttachmentError(f"{name} is a folder; attach the files in it instead.")
        if size > _READ_LIMIT:
            raise AttachmentError(
                f"{name} is {describe_size(size)}; attachments can be at most "
                f"{describe_size(IMAGE_MAX_BYTES)} (images) or {describe_size(PDF_MAX_BYTES)} "
                "(PDFs). Attach a smaller file."
            )
        data = path.read_bytes()
    except OSError as err:
        log.info("could not read attachment %s: %s", path, err)
        raise AttachmentError(f"{name} could not be read: {err.strerror or err}.") from err
    return attachment_from_bytes(data, name)


def pasted_image(data: bytes, name: str = "Pasted image.png") -> ImagePart:
    """The part for an image pasted from the clipboard (``data``: PNG bytes)."""
    part = attachment_from_bytes(data, name)
    if not isinstance(part, ImagePart):
        raise AttachmentError("The clipboard's image could not be read as an image.")
    return part


def model_name(model: Model) -> str:
    """The provider's name of ``model`` (an HTTP model's ``model``, else its ``name``)."""
    name = getattr(model, "model", None)
    return name if isinstance(name, str) and name else model.name


def send_problem(
    name: str, attachments: Iterable[ImagePart | FilePart], override: bool | None = None
) -> str | None:
    """Why model ``name`` cannot take ``attachments`` (``None``: it can, or it is not known);
    ``override`` is the person's word on whether it reads images."""
    images = [a for a in attachments if isinstance(a, ImagePart)]
    if not images or reads_images(name, override) is not False:
        return None
    count = "the image" if len(images) == 1 else f"the {len(images)} images"
    return (
        f"Model {name!r} cannot read images, so nothing was sent. Choose a model that "
        f"reads images (for example gpt-4o, Claude, llava or gemma3), or remove {count}; "
        "your message and its attachments are kept."
    )
