"""A conversation's branches as the window reads them: the current branch with each message's
seq, and the groups of versions (messages that share a parent) it can switch between.

A conversation opens from its end (:func:`read_tail`: the last :data:`OPEN_TAIL` messages,
from a question on), so a 10,000-message one opens as fast as a short one; older parts are
read as the person scrolls up (``before``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..client import AgentClient
from ..errors import BranchError
from ..messages import UserMessage
from ..storage.base import StoredMessage

__all__ = [
    "EARLIER_CHUNK",
    "OPEN_TAIL",
    "BranchView",
    "from_question",
    "read_branch",
    "read_tail",
    "read_until",
]


#: How many messages a conversation opens with (its end); older ones come as it scrolls up.
OPEN_TAIL = 80
#: How many older messages one scroll to the top reads.
EARLIER_CHUNK = 200


@dataclass(frozen=True, slots=True)
class BranchView:
    """The branch shown: its records (oldest first) and the version groups (oldest first);
    ``earlier``: the branch has older messages than these (not read yet)."""

    records: list[StoredMessage]
    versions: list[tuple[int, ...]]
    earlier: bool = False


def from_question(records: list[StoredMessage]) -> list[StoredMessage]:
    """``records`` from their first question on, when one comes after the first record: a part
    of a branch read from its end then starts where a turn starts (never inside an answer's
    tool steps)."""
    for index, record in enumerate(records):
        if isinstance(record.message, UserMessage):
            return records[index:]
    return records  # one long answer: shown from where the read started


async def read_tail(
    client: AgentClient, session_id: str, n: int = OPEN_TAIL, *, before: int | None = None
) -> BranchView:
    """The end of the current branch (about ``n`` messages, from a question on); ``before``:
    the part above message ``before`` instead."""
    records = await client.store.tail_records(session_id, n, before=before)
    if len(records) == n:
        records = from_question(records)
    earlier = bool(records) and records[0].parent_seq is not None
    return BranchView(records, await client.versions(session_id), earlier)


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
