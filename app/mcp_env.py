"""Environment variables of MCP servers: which are secrets, reading them as typed in Settings,
and where secrets live (the OS keyring, one entry per server and variable; never the settings
file, logs or reprs).

A variable is a secret when its name says so (:func:`is_secret_name`: TOKEN, KEY, SECRET,
PASSWORD, AUTH, CREDENTIAL…). Its value is read, like an API key, from Continuum's own
environment variable of the same name when set, else from the keyring (:func:`secret_values`).
Pure functions, but the keyring calls.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final

from .secrets import delete_api_key, get_api_key, set_api_key

__all__ = [
    "SECRET_WORDS",
    "delete_secrets",
    "is_env_name",
    "is_secret_name",
    "parse_env_lines",
    "secret_service",
    "secret_values",
    "store_secrets",
]

#: Parts of a variable's name that make it a secret.
SECRET_WORDS: Final = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "AUTH", "CREDENTIAL", "PAT")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD_SPLIT = re.compile(r"[_\d]+")


def is_env_name(name: str) -> bool:
    """A name a POSIX shell accepts for a variable."""
    return _NAME.fullmatch(name) is not None


def is_secret_name(name: str) -> bool:
    """Whether ``name`` holds a secret: one of its parts ends with one of :data:`SECRET_WORDS`
    (or starts with one of four letters or more): ``GITHUB_TOKEN``, ``APIKEY``, ``DB_PASSWORD``,
    ``AUTHORIZATION``; not ``KEYBOARD_LAYOUT`` or ``PATH``. A name taken for a secret by
    mistake costs nothing (its value is kept in the keyring)."""
    for part in _WORD_SPLIT.split(name.upper()):
        for word in SECRET_WORDS:
            if part.endswith(word) or (len(word) >= 4 and part.startswith(word)):
                return True
    return False


def parse_env_lines(text: str) -> tuple[dict[str, str], list[str]]:
    """``NAME=value`` lines (blank lines and ``#`` comments skipped) → the variables, and a
    description of each line that could not be read."""
    found: dict[str, str] = {}
    problems: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        name = name.strip()
        if line.startswith("export "):
            name = name.removeprefix("export ").strip()
        if not sep or not is_env_name(name):
            problems.append(f"line {number} is not NAME=value")
        elif name in found:
            problems.append(f"line {number} sets {name} a second time")
        else:
            found[name] = value.strip()
    return found, problems


def secret_service(server: str, variable: str) -> str:
    """The keyring entry of one secret variable of one server."""
    return f"mcp:{server}:{variable}"


def store_secrets(server: str, values: Mapping[str, str]) -> None:
    """Keep ``values`` in the keyring; :class:`~app.errors.NoKeyringError` where none exists
    (its message names the variable to set instead)."""
    for name, value in values.items():
        set_api_key(secret_service(server, name), value, env_var=name)


def delete_secrets(server: str, names: Iterable[str]) -> None:
    for name in names:
        delete_api_key(secret_service(server, name))


def secret_values(server: str, names: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """The secret variables' values (Continuum's environment first, else the keyring) and the
    names of those found in neither."""
    values: dict[str, str] = {}
    missing: list[str] = []
    for name in names:
        value = get_api_key(secret_service(server, name), env_var=name)
        if value:
            values[name] = value
        else:
            missing.append(name)
    return values, missing
