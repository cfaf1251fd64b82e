"""Every exception Continuum raises on purpose, in one tree.

::

    ContinuumError
    ├── AgentError
    │   ├── AgentResumeError        .reason: app.resume.BlockedReason ("empty" | "completed" |
    │   │                                    "refused" | "context_full" | "unknown_stop" |
    │   │                                    "malformed")
    │   ├── BranchError (ValueError)  no new version of that message (not there / not the kind)
    │   ├── SessionBusyError        a session busy in this process or claimed by another
    │   ├── ToolRoundLimitError     max_tool_rounds reached; resume() continues
    │   └── IncompleteStreamError   a model stream ended without a stop reason
    ├── ProviderError               .retryable, .retry_after (seconds), .status_code
    │   ├── ProviderAuthError         401/403: check the API key
    │   ├── ProviderNotFoundError     404: unknown model or wrong base URL
    │   ├── ProviderBadRequestError   400/422: the request was refused as invalid
    │   │   └── ProviderContextLengthError   the prompt does not fit the context window
    │   ├── ProviderRateLimitError    429 (retryable)
    │   ├── ProviderQuotaError        no quota or credit left (429 insufficient_quota, 402)
    │   ├── ProviderServerError       5xx / 529 overloaded (retryable)
    │   ├── ProviderTimeoutError      connect/read timeout (retryable)
    │   ├── ProviderConnectionError   refused / reset / DNS (retryable)
    │   └── ProviderStreamError       malformed or cut stream after output started
    ├── StorageError                the database could not be used (see app.storage)
    │   ├── StorageCorruptError       not a database / damaged: left untouched
    │   ├── StorageVersionError       written by a newer Continuum: left untouched
    │   ├── StorageFullError          disk full
    │   ├── StorageReadOnlyError      read-only file or folder
    │   └── StorageBusyError          locked by another process for too long
    ├── MessageFormatError (ValueError)    a stored or received message cannot be read
    ├── ToolArgumentError (ValueError)     a model's arguments do not fit a tool
    ├── WorkspaceError (ValueError)        a workspace file operation was refused
    ├── McpServerError (RuntimeError)      an MCP server could not be started or listed
    ├── SettingsFormatError (ValueError)   a field of settings.json is wrong
    │   └── ProfileFormatError (app.profiles)  a saved provider or parameter is not usable
    ├── ImportFormatError (app.importing)   a file to import cannot be read as conversations
    ├── SettingsSaveError           the settings file could not be written (disk full, ...)
    ├── NoKeyringError (RuntimeError)      no usable OS keyring to keep the API key in
    └── SessionLockedError          (app.services) another window holds the conversation

The classes marked with a builtin keep it as a second base, so code that catches the builtin
(``except ValueError``) still does. Each stays importable from the module that raises it.
Deliberately outside the tree: ``app.testing.ScriptExhaustedError`` (an ``AssertionError``, so
a test runner reports an over-run script as a failed test) and the simulator's
``app.simulator.script.SpecError`` (a ``ValueError`` about a test script, not the app) and
``app.simulator.http.BadRequest`` (an unreadable HTTP request, answered inside the simulator
with its status); the private ``_``-named exceptions never leave their module.

Messages say what happened and what the person can do next. No message ever contains an
API key: provider errors are built from status, error type and the provider's message only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from .resume import BlockedReason

__all__ = [
    "RESUME_ERROR_REASONS",
    "AgentError",
    "AgentResumeError",
    "ContinuumError",
    "IncompleteStreamError",
    "McpServerError",
    "MessageFormatError",
    "NoKeyringError",
    "ProviderAuthError",
    "ProviderBadRequestError",
    "ProviderConnectionError",
    "ProviderContextLengthError",
    "ProviderError",
    "ProviderNotFoundError",
    "ProviderQuotaError",
    "ProviderRateLimitError",
    "ProviderServerError",
    "ProviderStreamError",
    "ProviderTimeoutError",
    "SessionBusyError",
    "SettingsFormatError",
    "SettingsSaveError",
    "StorageBusyError",
    "StorageCorruptError",
    "StorageError",
    "StorageFullError",
    "StorageReadOnlyError",
    "StorageVersionError",
    "ToolArgumentError",
    "ToolRoundLimitError",
    "WorkspaceError",
]


class ContinuumError(Exception):
    """Base of every error raised on purpose by Continuum."""


class AgentError(ContinuumError):
    """A request could not be run as asked."""


RESUME_ERROR_REASONS: Final = frozenset(
    {"empty", "completed", "refused", "context_full", "unknown_stop", "malformed"}
)


class AgentResumeError(AgentError):
    """There is nothing to resume; ``reason`` (a :class:`app.resume.BlockedReason`, equal to
    its word) says why."""

    def __init__(self, reason: str, message: str | None = None) -> None:
        from .resume import BlockedReason  # resume imports this module

        if reason not in RESUME_ERROR_REASONS:
            raise ValueError(f"unknown resume error reason {reason!r}")
        self.reason: BlockedReason = BlockedReason(reason)
        super().__init__(message or reason)

    def __reduce__(self) -> tuple[type[AgentResumeError], tuple[str, str]]:
        return (type(self), (self.reason.value, str(self)))


class BranchError(AgentError, ValueError):
    """A new version was asked of a message that cannot have one (not there, or not the
    right kind: only a person's message can be edited, only an answer to one regenerated)."""


class SessionBusyError(AgentError):
    """The session is already running a request in this process, or (``other_process``)
    another process has claimed it (see :mod:`app.locks`)."""

    def __init__(self, session_id: str, other_process: bool = False) -> None:
        self.session_id = session_id
        self.other_process = other_process
        if other_process:
            message = (
                f"Conversation {session_id!r} is in use by another Continuum process (the "
                "desktop app or continuum-chat has it open or is answering in it). Finish, "
                "stop or close it there, then try again."
            )
        else:
            message = (
                f"Conversation {session_id!r} is already answering a request. "
                "Wait for it to finish or stop it first."
            )
        super().__init__(message)

    def __reduce__(self) -> tuple[type[SessionBusyError], tuple[str, bool]]:
        return (type(self), (self.session_id, self.other_process))


class ToolRoundLimitError(AgentError):
    """The model kept asking for tools past ``max_tool_rounds``; the history is resumable."""

    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        super().__init__(
            f"Stopped after {rounds} rounds of tool calls without a final answer. "
            "Resume to let the model continue, or ask it to wrap up."
        )

    def __reduce__(self) -> tuple[type[ToolRoundLimitError], tuple[int]]:
        return (type(self), (self.rounds,))


class IncompleteStreamError(AgentError):
    """The model's stream ended without saying why it stopped (retried if nothing arrived)."""

    retryable = True


class ProviderError(ContinuumError):
    """A model provider failed. ``retryable`` errors are retried before any output."""

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
        retryable: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retry_after = retry_after
        if retryable is not None:
            self.retryable = retryable


class ProviderAuthError(ProviderError):
    """The provider refused the credentials."""


class ProviderNotFoundError(ProviderError):
    """The model or endpoint does not exist."""


class ProviderBadRequestError(ProviderError):
    """The provider refused the request as invalid."""


class ProviderContextLengthError(ProviderBadRequestError):
    """The conversation no longer fits the model's context window."""


class ProviderRateLimitError(ProviderError):
    """Too many requests; ``retry_after`` says when to try again if the provider said."""

    retryable = True


class ProviderQuotaError(ProviderError):
    """The account has no quota or credit left: a billing matter, so never retried (a retry
    cannot succeed until the plan or billing is fixed at the provider)."""


class ProviderServerError(ProviderError):
    """The provider failed or is overloaded."""

    retryable = True


class ProviderTimeoutError(ProviderError):
    """The provider did not answer in time."""

    retryable = True


class ProviderConnectionError(ProviderError):
    """The provider could not be reached or the connection broke."""

    retryable = True


class ProviderStreamError(ProviderError):
    """The stream was malformed or cut off."""

    retryable = True


class StorageError(ContinuumError):
    """The conversation database could not be used."""


class StorageCorruptError(StorageError):
    """The database file is damaged or is not a Continuum database."""


class StorageVersionError(StorageError):
    """The database was written by a newer version of Continuum."""


class StorageFullError(StorageError):
    """The disk (or the database's size limit) is full."""


class StorageReadOnlyError(StorageError):
    """The database file or its folder cannot be written."""


class StorageBusyError(StorageError):
    """Another process held the database lock for too long."""


class SettingsSaveError(ContinuumError):
    """The settings could not be written; the previous settings file is unchanged."""


class SettingsFormatError(ContinuumError, ValueError):
    """A field of the settings file has the wrong type or value (the message names it)."""


class MessageFormatError(ContinuumError, ValueError):
    """A stored or received message could not be understood."""


class ToolArgumentError(ContinuumError, ValueError):
    """The model's arguments do not fit the tool's parameters."""


class WorkspaceError(ContinuumError, ValueError):
    """A file operation was refused; the message says why and what to do instead."""


class McpServerError(ContinuumError, RuntimeError):
    """The server could not be started or listed (the message is fit for the person)."""


class NoKeyringError(ContinuumError, RuntimeError):
    """No usable OS keyring: the key cannot be stored safely."""
