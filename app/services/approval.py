"""Tool approval: the person's answer to "may this tool run?", and the order it is recorded in.

:class:`Approvals` holds the window's asker and the tools allowed "for this conversation" (in
memory only); :meth:`Approvals.for_session` is the core's approval callback for one conversation.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable

from ..agent import ToolApprover
from ..messages import ToolCall
from ..storage.journal import TOOL_AWAITING_APPROVAL, TOOL_STARTED, SessionJournal
from ..tools import FunctionTool

__all__ = ["ApprovalDecision", "Approvals", "UIApprover"]


class ApprovalDecision(enum.StrEnum):
    """The person's answer to "may this tool run?"."""

    ALLOW_ONCE = "allow_once"
    ALLOW_CONVERSATION = "allow_conversation"  # this tool, for the rest of this conversation
    DENY = "deny"


UIApprover = Callable[[str, ToolCall, FunctionTool], Awaitable[ApprovalDecision]]
"""``(session_id, call, tool) -> decision``: asks the person (set by the window)."""


class Approvals:
    """Who asks the person, and what they allowed for the rest of a conversation."""

    def __init__(self, journal: SessionJournal) -> None:
        self.journal = journal
        #: Asks the person before a tool with side effects runs (the window sets it); without
        #: one such tools run unasked.
        self.approver: UIApprover | None = None
        #: Tool names allowed "for this conversation", per session (in memory only).
        self.allowed_tools: dict[str, set[str]] = {}

    def for_session(self, session_id: str) -> ToolApprover:
        """The core's approval callback for one conversation.

        Order matters for crash survival: ``awaiting_approval`` is durable *before* the person
        is asked, and ``started`` is durable *before* the tool may run — on every path that
        lets it run (asked, allowed for this conversation, no approver) — so a process killed
        in between leaves "awaiting", which truthfully means the tool never ran. States belong
        to the message that asked (see :meth:`SessionJournal.set_tool_state`): a reused call
        id never inherits an earlier turn's state.
        """

        async def approve(call: ToolCall, tool: FunctionTool) -> bool:
            ask = self.approver
            if ask is not None and tool.name not in self.allowed_tools.get(session_id, ()):
                await self.journal.set_tool_state(session_id, call.id, TOOL_AWAITING_APPROVAL)
                decision = ApprovalDecision(await ask(session_id, call, tool))
                if decision is ApprovalDecision.DENY:
                    return False
                if decision is ApprovalDecision.ALLOW_CONVERSATION:
                    self.allowed_tools.setdefault(session_id, set()).add(tool.name)
            await self.journal.set_tool_state(session_id, call.id, TOOL_STARTED)
            return True

        return approve
