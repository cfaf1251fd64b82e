"""A conversation's branches as the window reads them: the current branch with each message's
seq, and the groups of versions (messages that share a parent) it can switch between."""

from __future__ import annotations

from dataclasses import dataclass

from ..client import AgentClient
from ..errors import BranchError
from ..storage.base import StoredMessage

__all__ = ["BranchView", "read_branch", "read_until"]


@dataclass(frozen=True, slots=True)
class BranchView:
    """The branch shown: its records (oldest first) and the version groups (oldest first)."""

    records: list[StoredMessage]
    versions: list[tuple[int, ...]]


async def read_branch(client: AgentClient, session_id: str) -> BranchView:
    """The current branch and its versions."""
    records = await client.branch(session_id)
    return BranchView(records, await client.versions(session_id))


async def read_until(client: AgentClient, session_id: str, seq: int, *, keep: bool) -> BranchView:
    """The branch down to message ``seq`` (``keep``) or to the one before it (what an edit of
    ``seq`` starts from), without switching to it."""
    store = client.store
    try:
        leaf = seq if keep else await store.parent_of(session_id, seq)
        records = await store.load_branch(session_id, leaf)
    except LookupError as err:
        raise BranchError(f"{err} Reopen the conversation and try again.") from err
    return BranchView(records, await client.versions(session_id))
