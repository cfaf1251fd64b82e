"""Which models read images: a table of well-known model names, and the person's choice.

:func:`reads_images` answers ``True`` (known to read images), ``False`` (known not to: a
request with an image is refused before anything is sent) or ``None`` (unknown: the image is
sent, and a server that refuses it gets a clear message, :func:`refused_images`). The person's
choice (``override``) wins over the table.

Names are matched case-insensitively after dropping a ``provider/`` prefix and an Ollama
``:tag``; the first rule found in the name decides, so specific names come before families.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from ..errors import ProviderError
from ..messages import Message
from ..parts import ImagesNotReadError
from .convert import has_images

__all__ = ["VISION_RULES", "check_images", "images_refused", "reads_images", "refused_images"]

#: ``(pattern, reads images)``, searched in the bare name; the first found wins.
VISION_RULES: Final[tuple[tuple[str, bool], ...]] = (
    # OpenAI
    (r"^gpt-3\.5", False),
    (r"^gpt-4o(-mini)?-(audio|realtime|search|transcribe|tts)", False),
    (r"^(chatgpt-)?gpt-4o", True),
    (r"^gpt-4\.[15]", True),
    (r"^gpt-4-(turbo|vision)", True),
    (r"^gpt-4(-\d|$)", False),
    (r"^gpt-5", True),
    (r"^o1-(mini|preview)", False),
    (r"^o3-mini", False),
    (r"^o[134](-|$)", True),
    # Anthropic: every Claude 3 and later reads images; Claude 2 and Instant do not.
    (r"^claude-(2|instant)", False),
    (r"^claude", True),
    # Open models (Ollama, llama.cpp, vLLM, LM Studio names), anywhere in the name
    (r"llama-?3\.2-(\d+b-)?vision", True),
    (r"llama-?4", True),
    (r"llava|moondream|minicpm-v|pixtral|granite3\.2-vision|-vl\b|vl-|qwen\d(\.\d)?-?vl", True),
    (r"gemma-?3(?!n)(?!-1b)", True),
    (r"mistral-small-?3\.[12]", True),
    (r"deepseek", False),
    (r"llama|mistral|mixtral|qwen|phi|gemma|smollm|starcoder|granite", False),
)

_COMPILED: Final = tuple((re.compile(p), reads) for p, reads in VISION_RULES)


def _bare(model: str) -> str:
    name = model.strip().lower()
    name = name.rsplit("/", 1)[-1]
    return name.split(":", 1)[0]


def reads_images(model: str, override: bool | None = None) -> bool | None:
    """Whether ``model`` reads images: the person's ``override``, else the table, else None."""
    if override is not None:
        return override
    name = _bare(model)
    for pattern, reads in _COMPILED:
        if pattern.search(name):
            return reads
    return None


#: What servers say when a request's image is more than the model can take.
_REFUSALS: Final = re.compile(
    r"image|vision|multimodal|multi-modal|image_url|mmproj|content.*(array|list)", re.IGNORECASE
)


def refused_images(message: str) -> bool:
    """True when an HTTP 400 error's words say the server refused the request's image."""
    return bool(_REFUSALS.search(message))


def check_images(
    messages: Sequence[Message], model: str, provider: str, override: bool | None = None
) -> None:
    """Refuse (:class:`ImagesNotReadError`, nothing sent) a request with an image to a model
    known not to read images."""
    if has_images(messages) and reads_images(model, override) is False:
        raise ImagesNotReadError(
            f"Model {model!r} ({provider}) cannot read images, so nothing was sent. Choose a "
            "model that reads images (for example gpt-4o, Claude, llava or gemma3), or remove "
            "the image; your message and its attachments are kept."
        )


def images_refused(
    model: str, provider: str, error: ProviderError, *, tools_only: bool = False
) -> ImagesNotReadError:
    """The clear error for a server's HTTP 400 over an image (local servers without vision);
    ``tools_only``: the request's images were all a tool's (nothing the person can remove)."""
    if tools_only:
        return ImagesNotReadError(
            f"{provider} refused the images a tool returned for model {model!r}, so it "
            "probably cannot read images although its name suggests it can. Choose another "
            f"model to go on with this conversation. (The server said: {error})"
        )
    return ImagesNotReadError(
        f"{provider} refused the image for model {model!r}, so it probably cannot read images. "
        "Choose a model that reads images, or remove the image; your message and its "
        f"attachments are kept. (The server said: {error})"
    )
