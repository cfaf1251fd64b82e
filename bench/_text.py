"""Deterministic, realistic Markdown for the benchmarks (paragraphs, lists, code, links)."""

from __future__ import annotations

_WORDS = (
    "the model reads every message of the conversation before it answers and the "
    "store keeps each one safe on disk so a crash loses nothing a person typed "
    "while `resume_point()` decides what to do next with **bold** and *emphasis*"
).split()

_BLOCKS = (
    "{p}\n\n",
    "- {s}\n- {s}\n- {s}\n\n",
    "```python\ndef step(n):\n    return [i * i for i in range(n)]  # {s}\n```\n\n",
    "See [the docs](https://example.org/docs) for {s}.\n\n",
    "{p}\n\n",
    "### A heading about {s}\n\n",
)


def _sentence(i: int, words: int) -> str:
    return " ".join(_WORDS[(i + k) % len(_WORDS)] for k in range(words))


def markdown_text(chars: int, seed: int = 0) -> str:
    """About ``chars`` characters of Markdown (exactly ``chars``, cut at the end)."""
    parts: list[str] = []
    size = 0
    i = seed
    while size < chars:
        block = _BLOCKS[i % len(_BLOCKS)].format(p=_sentence(i, 60), s=_sentence(i, 6))
        parts.append(block)
        size += len(block)
        i += 1
    return "".join(parts)[:chars]
