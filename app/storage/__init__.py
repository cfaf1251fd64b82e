"""Where conversations are kept: the store protocol, SQLite (durable), memory, JSONL log."""

from .base import InMemorySessionStore, SessionInfo, SessionStore, StoredMessage
from .jsonl import JSONLExtension
from .sqlite import SCHEMA_VERSION, SQLiteSessionExtension, SQLiteSessionStore

__all__ = [
    "SCHEMA_VERSION",
    "InMemorySessionStore",
    "JSONLExtension",
    "SQLiteSessionExtension",
    "SQLiteSessionStore",
    "SessionInfo",
    "SessionStore",
    "StoredMessage",
]
