"""One configured stdio MCP server (:class:`McpServerConfig`): what the settings file and the
Settings dialog hold for it. Pure data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from .mcp_results import MAX_RESULT_CHARS

__all__ = ["DEFAULT_CALL_TIMEOUT", "McpServerConfig"]

#: How long a call may go without an answer or a progress report, unless configured.
DEFAULT_CALL_TIMEOUT: Final = 30.0


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    """One stdio MCP server the person configured.

    ``env`` is added to a small inherited environment (PATH, HOME, locale, proxies, ...: see
    :func:`.mcp_stdio.server_environment`); ``secret_env`` names more variables whose values
    the caller passes to :class:`McpToolSource` (``secrets``), never kept here.
    ``side_effects`` (default true) sends every call through the approval path.
    ``max_result_chars`` caps what the model sees of one result (see :mod:`.mcp_results`).
    """

    name: str
    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] | None = field(default=None, repr=False)
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    side_effects: bool = True
    cwd: str | None = None
    max_result_chars: int = MAX_RESULT_CHARS
    #: Names of variables whose values are secrets kept outside the settings (the keyring).
    secret_env: tuple[str, ...] = ()
    #: Tools that declare ``readOnlyHint`` run without asking (the person's choice per server).
    trust_read_only: bool = False

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("an MCP server needs a name")
        if not self.command.strip():
            raise ValueError(f"the MCP server {self.name!r} needs a command")
        if self.call_timeout <= 0:
            raise ValueError("call_timeout must be positive")
        if self.max_result_chars < 1_000:
            raise ValueError("max_result_chars must be at least 1000")
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "secret_env", tuple(self.secret_env))
