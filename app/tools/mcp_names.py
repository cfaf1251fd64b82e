"""The names the model sees for MCP tools: ``<prefix>__<tool>``, made to fit what providers
accept (``[a-zA-Z0-9_-]{1,64}``) and never shared by two tools. Pure functions.

A server's prefix is its name in ASCII: accents are dropped (``Données`` → ``Donnees``), other
characters become ``_``, at most :data:`PREFIX_LEN` characters. When letters of another script
would be lost (``файлы``, ``文件``), a short stable digest of the name is appended, so such names
neither become ``_____`` nor share a prefix. :func:`server_prefixes` makes the prefixes of all
configured servers unique (``my files`` and ``my.files``, or two long names alike in their
first characters: the later one gets ``_2``); Settings refuses a new name whose prefix is taken
(:func:`prefix_clash`).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Final

__all__ = ["PREFIX_LEN", "mcp_tool_name", "prefix_clash", "server_prefix", "server_prefixes"]

PREFIX_LEN: Final = 24
_NOT_OK = re.compile(r"[^a-zA-Z0-9_-]+")


def server_prefix(name: str) -> str:
    """``name`` as a tool-name prefix (see the module docstring)."""
    return _ascii_name(name, PREFIX_LEN, "mcp")


def _ascii_name(name: str, limit: int, fallback: str) -> str:
    """``name`` in ``[a-zA-Z0-9_-]``, at most ``limit`` characters; a digest of it appended when
    letters of another script were lost."""
    decomposed = unicodedata.normalize("NFKD", name)
    kept = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    ascii_text = _NOT_OK.sub("_", kept.encode("ascii", "ignore").decode("ascii")).strip("_")
    lost = any(ch.isalnum() and not ch.isascii() for ch in kept)
    if not lost and ascii_text:
        return ascii_text[:limit]
    digest = hashlib.blake2s(name.encode("utf-8"), digest_size=4).hexdigest()
    start = ascii_text[: limit - len(digest) - 1] or fallback
    return f"{start}_{digest}"


def _unique(base: str, taken: Iterable[str], limit: int) -> str:
    taken = set(taken)
    name, n = base, 2
    while name in taken:
        suffix = f"_{n}"
        name = base[: limit - len(suffix)] + suffix
        n += 1
    return name


def server_prefixes(names: Sequence[str]) -> dict[str, str]:
    """Each server name's prefix, unique among them (earlier servers keep theirs)."""
    prefixes: dict[str, str] = {}
    for name in names:
        if name not in prefixes:
            prefixes[name] = _unique(server_prefix(name), prefixes.values(), PREFIX_LEN)
    return prefixes


def prefix_clash(name: str, others: Iterable[str]) -> str | None:
    """The name among ``others`` whose tools would be named like ``name``'s, if any."""
    mine = server_prefix(name)
    return next((o for o in others if o != name and server_prefix(o) == mine), None)


def mcp_tool_name(
    server: str,
    tool: str,
    taken: set[str] | frozenset[str] = frozenset(),
    *,
    prefix: str | None = None,
) -> str:
    """``<prefix>__<tool>`` made to fit ``[a-zA-Z0-9_-]{1,64}``, unique among ``taken``
    (``prefix``: the server's from :func:`server_prefixes`, else :func:`server_prefix`)."""
    start = prefix or server_prefix(server)
    base = f"{start}__{_ascii_name(tool, 64, 'tool')}"[:64]
    return _unique(base, taken, 64)
