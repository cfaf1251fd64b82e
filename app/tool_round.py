"""A tool round: run one step's calls concurrently, commit each result as it arrives, and
answer every call left without a result when the round is stopped or fails.

Every result records its :class:`~app.messages.ToolOutcome`. Each call runs at most once: a
result is marked saved before its (shielded) commit, so Stop arriving during the commit never
answers that call a second time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from typing import Final

from .events import AgentEvent, ToolResultEvent
from .messages import Message, ToolCall, ToolMessage, ToolOutcome
from .run_state import RunState
from .tools import FunctionTool

__all__ = ["CANCELLED_TOOL_TEXT", "DENIED_TOOL_TEXT", "ToolApprover", "ToolRound"]

log = logging.getLogger(__name__)

CANCELLED_TOOL_TEXT: Final = (
    "The user stopped the request while this tool was running, so it was cancelled before it "
    "finished; whatever it changes may have partly happened. Check the current state before "
    "running it again."
)
DENIED_TOOL_TEXT: Final = "The user denied this tool call, so it did not run."

ToolApprover = Callable[[ToolCall, FunctionTool], Awaitable[bool]]
"""Asked before a tool with side effects runs; ``False`` answers the call as denied."""


def _failed_while_running(error: BaseException) -> str:
    return (
        f"The request failed while this tool was running ({type(error).__name__}), so "
        "it was cancelled before it finished; whatever it changes may have partly "
        "happened. Check the current state before running it again."
    )


class ToolRound:
    """Runs calls against ``tools``, asking ``approve`` before a tool with side effects."""

    def __init__(
        self, state: RunState, tools: Mapping[str, FunctionTool], approve: ToolApprover | None
    ) -> None:
        self.state = state
        self.tools = tools
        self.approve = approve

    async def run(self, calls: Sequence[ToolCall]) -> AsyncGenerator[AgentEvent, None]:
        """Run ``calls`` concurrently; commit each result as it arrives."""
        tasks = {call.id: asyncio.ensure_future(self.call(call)) for call in calls}
        saved: set[str] = set()
        try:
            pending = set(tasks.values())
            while pending:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for call in calls:  # the calls' own order among those that finished together
                    task = tasks[call.id]
                    if task in done:
                        result = task.result()
                        # Marked before the commit: the commit is shielded, so once begun it
                        # completes even if Stop arrives now; answering it again on the way
                        # out would save the call's result twice.
                        saved.add(call.id)
                        try:
                            events = await self.state.save([result])
                        except asyncio.CancelledError:
                            raise
                        except BaseException:
                            saved.discard(call.id)  # the commit failed: it is not saved
                            raise
                        for event in events:
                            yield event
                        yield ToolResultEvent(call, result)
        except BaseException as error:
            # Stop during tools (or the consumer left, or a save failed): cancel what still
            # runs, then answer every call that has no saved result, keeping results that did
            # arrive.
            await self._answer_unfinished(calls, tasks, saved, error)
            raise

    async def _answer_unfinished(
        self,
        calls: Sequence[ToolCall],
        tasks: Mapping[str, asyncio.Future[ToolMessage]],
        saved: set[str],
        error: BaseException,
    ) -> None:
        stopped = isinstance(error, asyncio.CancelledError | GeneratorExit)
        text = CANCELLED_TOOL_TEXT if stopped else _failed_while_running(error)
        for task in tasks.values():
            task.cancel()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        by_id = {call.id: call for call in calls}
        answers: list[Message] = []
        for call_id, task in tasks.items():
            if call_id in saved:
                continue
            call = by_id[call_id]
            if task.cancelled() or task.exception() is not None:
                answers.append(
                    ToolMessage(
                        call.id, call.name, text, success=False, outcome=ToolOutcome.CANCELLED
                    )
                )
            else:
                answers.append(task.result())
        try:
            await self.state.save(answers)
        except Exception:
            log.exception(
                "could not save the answers of %d tool call(s) after the request "
                "stopped; resume will answer them as 'may or may not have run'",
                len(answers),
            )

    async def call(self, call: ToolCall) -> ToolMessage:
        """Run one call (asking approval first if it has side effects); never raises for the
        tool's own failure."""
        tool = self.tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted(self.tools)) or "none"
            return ToolMessage(
                call.id,
                call.name,
                f"There is no tool named {call.name!r}; the available tools are: {known}.",
                success=False,
                outcome=ToolOutcome.FAILED,
            )
        if tool.side_effects and self.approve is not None:
            if not await self.approve(call, tool):
                return ToolMessage(
                    call.id, call.name, DENIED_TOOL_TEXT, success=False, outcome=ToolOutcome.DENIED
                )
        result = await tool.invoke(call)
        outcome = result.outcome or (ToolOutcome.DONE if result.success else ToolOutcome.FAILED)
        return ToolMessage(
            call.id,
            call.name,
            result.content,
            success=result.success,
            outcome=outcome,
            images=result.images,
        )
