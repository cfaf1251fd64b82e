"""The ``mcp_servers`` entries of the settings file: validating each (an unusable entry is
skipped with its reason, the rest used) and writing them back. Pure."""

from __future__ import annotations

import math
from typing import Any, TypeGuard

from .mcp_env import is_env_name
from .tools.mcp import McpServerConfig
from .tools.mcp_results import MAX_RESULT_CHARS

__all__ = ["MAX_CALL_TIMEOUT", "is_text", "mcp_servers", "mcp_to_dict"]

MAX_CALL_TIMEOUT = 86_400.0  # seconds: one day


def is_text(value: Any) -> TypeGuard[str]:
    """A string that can be sent and stored (no lone surrogate from a ``\\udXXX`` escape)."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _mcp_server(entry: Any) -> McpServerConfig:
    """One ``mcp_servers`` entry of the file (``ValueError`` saying what is wrong)."""
    if not isinstance(entry, dict):
        raise ValueError("not an object")
    name, command, args = entry.get("name"), entry.get("command"), entry.get("args", [])
    env, timeout = entry.get("env"), entry.get("call_timeout", 30.0)
    cwd, side_effects = entry.get("cwd"), entry.get("side_effects", True)
    max_result = entry.get("max_result_chars", MAX_RESULT_CHARS)
    secret_env = entry.get("secret_env", [])
    trust_read_only = entry.get("trust_read_only", False)
    if not is_text(name) or not is_text(command) or not name.strip() or not command.strip():
        raise ValueError("needs a text name and command")
    if not isinstance(args, list) or not all(is_text(a) for a in args):
        raise ValueError("args must be a list of text")
    if env is not None and not (
        isinstance(env, dict)
        and all(is_text(k) and is_env_name(k) and is_text(v) for k, v in env.items())
    ):
        raise ValueError("env must map variable names to text")
    if not isinstance(secret_env, list) or not all(
        is_text(n) and is_env_name(n) for n in secret_env
    ):
        raise ValueError("secret_env must be a list of variable names")
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not _in_range(timeout, 0.0, MAX_CALL_TIMEOUT)
        or timeout == 0
    ):
        raise ValueError(
            f"call_timeout must be a number of seconds above 0 and at most {MAX_CALL_TIMEOUT:.0f}"
        )
    if not isinstance(side_effects, bool) or not isinstance(trust_read_only, bool):
        raise ValueError("side_effects and trust_read_only must be true or false")
    if cwd is not None and not is_text(cwd):
        raise ValueError("cwd must be text")
    if (
        isinstance(max_result, bool)
        or not isinstance(max_result, int)
        or not 1_000 <= max_result <= 100_000_000
    ):
        raise ValueError("max_result_chars must be a whole number from 1000 to 100000000")
    return McpServerConfig(
        name,
        command,
        tuple(args),
        env=env,
        call_timeout=float(timeout),
        side_effects=side_effects,
        cwd=cwd or None,
        max_result_chars=max_result,
        secret_env=tuple(dict.fromkeys(n for n in secret_env if n not in (env or {}))),
        trust_read_only=trust_read_only,
    )


def _in_range(number: int | float, low: float, high: float) -> bool:
    """Whether a JSON number lies in ``[low, high]`` (a 400-digit integer or NaN does not)."""
    if isinstance(number, int):
        return low <= number <= high  # exact: never converted to a float that may overflow
    return math.isfinite(number) and low <= number <= high


def mcp_servers(entries: list[Any]) -> tuple[tuple[McpServerConfig, ...], list[str]]:
    """The valid servers, and a description of each entry skipped."""
    servers: list[McpServerConfig] = []
    skipped: list[str] = []
    for index, entry in enumerate(entries):
        label = entry.get("name") if isinstance(entry, dict) else None
        label = repr(label) if is_text(label) and label else f"number {index + 1}"
        try:
            server = _mcp_server(entry)
        except ValueError as err:
            skipped.append(f"{label} ({err})")
            continue
        if any(s.name == server.name for s in servers):
            skipped.append(f"{label} (the name is used twice)")
            continue
        servers.append(server)
    return tuple(servers), skipped


def mcp_to_dict(server: McpServerConfig) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": server.name,
        "command": server.command,
        "args": list(server.args),
    }
    if server.env:
        data["env"] = dict(server.env)
    if server.call_timeout != 30.0:
        data["call_timeout"] = server.call_timeout
    if not server.side_effects:
        data["side_effects"] = False
    if server.cwd:
        data["cwd"] = server.cwd
    if server.trust_read_only:
        data["trust_read_only"] = True
    if server.secret_env:
        data["secret_env"] = list(server.secret_env)  # the names only: values in the keyring
    if server.max_result_chars != MAX_RESULT_CHARS:
        data["max_result_chars"] = server.max_result_chars
    return data
