"""``ConversationController``: the one place that starts, stops and resumes requests.

It owns the generation ``asyncio.Task`` (qasync's ``asyncSlot`` returns no handle, so requests
are never started with it): Stop cancels exactly that task, and a second request while one runs
is refused. It is the thin adapter of the design: core events in, transcript rows and Qt signals
out. It never writes to the database; :class:`app.services.AppServices` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from typing import Any

from PySide6.QtCore import QObject, Signal

from app import AgentEvent, FunctionTool, ToolCall, UserMessage
from app.services import (
    ApprovalDecision,
    AppServices,
    FilePart,
    ImagePart,
    ResumeInfo,
    is_expected,
    log_location,
)

from .resume_text import bar_shows
from .transcript.model import ToolState, TranscriptModel
from .transcript_events import apply_event

__all__ = ["ConversationController"]

log = logging.getLogger(__name__)

LOCKED_ELSEWHERE = (
    "This conversation is open in another Continuum window. It is shown here read-only: "
    "continue it in the other window, or close that window first."
)


def background_failure(error: Exception) -> str:
    """Log a failed background action (a bug with its traceback) and say it in a sentence."""
    if is_expected(error):
        log.warning("background action failed: %s: %s", type(error).__name__, error)
        return str(error) or type(error).__name__
    log.error("background action failed with an internal error", exc_info=error)
    where = log_location()
    return (
        f"Continuum hit an internal error ({type(error).__name__}); the details are in "
        f"{'the log at ' + where if where else 'its log'}. Nothing was lost."
    )


def _names(attachments: Sequence[ImagePart | FilePart]) -> str:
    """A message of only attachments is named after them."""
    return ", ".join(part.name for part in attachments if part.name)


def title_from(text: str) -> str:
    first = " ".join(text.split())[:60]
    return first or "New conversation"


class ConversationController(QObject):
    """Runs one conversation at a time in the window (see the module docstring)."""

    busyChanged = Signal(bool)
    # ResumeInfo, or None to hide the bar.
    resumeInfoChanged = Signal(object)
    # A message for the bar when there is nothing to resume (e.g. the conversation is locked).
    noticeChanged = Signal(str)
    sessionChanged = Signal(object)  # the open session id (str) or None for a new one
    sessionsChanged = Signal()
    statusMessage = Signal(str)
    runFinished = Signal()
    branchShown = Signal()  # the transcript shows a (re)loaded branch
    # (ToolCall, asyncio.Future[ApprovalDecision]): ask the person; the window's approval
    # card resolves the future. Cancelling the request cancels the future.
    approvalRequested = Signal(object, object)

    def __init__(
        self, services: AppServices, model: TranscriptModel, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.services = services
        self.model = model
        self.session_id: str | None = None
        self.read_only = False
        self._task: asyncio.Task[None] | None = None
        self._helpers: set[asyncio.Task[Any]] = set()
        self.last_error: str | None = None
        self.resume_info: ResumeInfo | None = None
        #: A conversation created empty (e.g. to remember its workspace folder): its first
        #: message names it, as for a conversation created by its first message.
        self.name_on_first_send: str | None = None
        self._shutting_down = False
        self._reload_after = False  # the request adds a version: show the branch again after
        self._loading = False  # older messages are being read (a scroll to the top)
        services.approver = self._approve

    # --- state -----------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """A request runs, until its end is handled (``_finished`` clears the task and emits
        ``busyChanged(False)``): asyncio runs a task's done callbacks a loop turn after the
        task is done, and in between the composer still showed Stop while ``busy`` said no
        (and a new request could start before the old one's end was handled)."""
        return self._task is not None

    @property
    def task(self) -> asyncio.Task[None] | None:
        return self._task

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any] | None:
        """Run a short helper coroutine (open, refresh); errors become a status message.

        Nothing starts once the window is shutting down, or when a Qt signal fires outside the
        event loop (a late timer): the coroutine is closed instead of left un-awaited.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            coro.close()
            return None
        if self._shutting_down:
            coro.close()
            return None
        task = asyncio.ensure_future(self._guard(coro))
        self._helpers.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self._helpers.discard(finished)
            # A task cancelled before its first step (e.g. on close) never awaited ``coro``:
            # close it so it is not reported as "never awaited". Harmless if it ran.
            coro.close()

        task.add_done_callback(done)
        return task

    async def _guard(self, coro: Coroutine[Any, Any, Any]) -> Any:
        try:
            return await coro
        except asyncio.CancelledError:
            raise
        except Exception as err:  # a person-facing message, never a traceback
            self.statusMessage.emit(background_failure(err))
            return None

    # --- tool approval ---------------------------------------------------------------------

    async def _approve(
        self, session_id: str, call: ToolCall, tool: FunctionTool
    ) -> ApprovalDecision:
        """Ask the person about ``call`` (the services made "awaiting" durable already).

        Awaits the approval card's answer; Stop cancels the request, which cancels this wait
        like a running tool (the call is answered as cancelled and never runs).
        """
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        self.model.set_tool_state(call.id, ToolState.AWAITING_APPROVAL)
        self.approvalRequested.emit(call, future)
        try:
            decision = await future
        finally:
            if not future.done():
                future.cancel()
        if decision is not ApprovalDecision.DENY:
            self.model.set_tool_state(call.id, ToolState.RUNNING)
        return decision

    # --- conversations ---------------------------------------------------------------------

    async def open_session(self, session_id: str | None) -> None:
        """Show a conversation (``None``: a new, empty one created on first send)."""
        if self.busy:
            self.statusMessage.emit("Stop the running answer before switching conversations.")
            return
        if self.session_id is not None and self.session_id != session_id:
            self.services.release_session(self.session_id)
        self.session_id = session_id
        self.read_only = False
        self.resume_info = None
        if session_id is None:
            self.model.clear()
            self.resumeInfoChanged.emit(None)
            self.sessionChanged.emit(None)
            return
        view = await self.services.branch_tail(session_id)  # its end; older parts on scroll
        if self.session_id != session_id:
            return  # another conversation was opened meanwhile
        self.model.load_branch(view.records, view.versions, earlier=view.earlier)
        self.read_only = not self.services.try_lock_session(session_id)
        self.sessionChanged.emit(session_id)
        await self.refresh_resume(show_draft=True)

    async def refresh_resume(self, *, show_draft: bool = False) -> None:
        session_id = self.session_id
        if session_id is None:
            self.resumeInfoChanged.emit(None)
            return
        info = await self.services.resume_info(session_id)
        if session_id != self.session_id:
            return
        self.resume_info = info
        # Never started: not "may or may not have run".
        self.model.mark_requested(call.id for call in info.awaiting_approval)
        if show_draft and info.draft and info.stop is not None:
            self.model.add_draft(info.draft, info.stop.message)
        if self.read_only:
            self.noticeChanged.emit(LOCKED_ELSEWHERE)
            return
        if bar_shows(info):
            self.resumeInfoChanged.emit(info)
        elif self.last_error:
            self.noticeChanged.emit(self.last_error)  # failed with nothing to resume
        else:
            self.resumeInfoChanged.emit(None)

    async def dismiss(self) -> None:
        """Hide the bar for good: the services remember it (reopening shows no bar until a
        request stops again) and forget the draft, so it leaves the screen now too — the same
        whether the person dismisses then reopens, or reopens then dismisses."""
        self.resumeInfoChanged.emit(None)
        if self.session_id is not None and not self.read_only:  # read-only: another window's
            self.model.remove_drafts()
            await self.services.dismiss_resume(self.session_id)
            self.sessionsChanged.emit()

    # --- requests --------------------------------------------------------------------------

    def send(self, text: str, attachments: Sequence[ImagePart | FilePart] = ()) -> bool:
        """Start a request with ``text`` and ``attachments``; ``False`` if one is running or
        there is nothing to send."""
        if self.busy or not (text.strip() or attachments):
            return False
        if self.read_only:
            self.noticeChanged.emit(LOCKED_ELSEWHERE)
            return False
        self.model.add_user(text, attachments)
        self._start(self._send(text, tuple(attachments)))
        return True

    async def _send(self, text: str, attachments: tuple[ImagePart | FilePart, ...] = ()) -> None:
        if self.session_id is None:
            info = await self.services.new_session(title_from(text or _names(attachments)))
            self.session_id = info.id
            self.services.try_lock_session(info.id)
            self.sessionChanged.emit(info.id)
            self.sessionsChanged.emit()
        elif self.session_id == self.name_on_first_send:
            self.name_on_first_send = None
            await self.services.rename_session(
                self.session_id, title_from(text or _names(attachments))
            )
            self.sessionsChanged.emit()
        await self._consume(lambda sid: self.services.stream(sid, text, attachments=attachments))

    def resume(self) -> bool:
        """Resume the open conversation's interrupted request."""
        if self.busy or self.session_id is None or self.read_only:
            return False
        self._start(self._consume(lambda sid: self.services.stream_resume(sid)))
        return True

    def resume_with_model(self, model_name: str) -> bool:
        if self.busy or self.session_id is None or self.read_only:
            return False

        async def switch_then_resume() -> None:
            await self.set_model(model_name)
            await self._consume(lambda sid: self.services.stream_resume(sid))

        self._start(switch_then_resume())
        return True

    # --- versions: edit, regenerate, switch (new branches; nothing is erased) ---------------

    def edit(self, seq: int, text: str, attachments: Sequence[ImagePart | FilePart] = ()) -> bool:
        """Send ``text`` (and ``attachments``) as a new version of the person's message
        ``seq``."""
        if not (text.strip() or attachments):
            return False
        parts = tuple(attachments)

        async def run(session_id: str) -> None:
            # Show the branch as it will be: up to the edited message's parent, then the text.
            view = await self.services.branch_until(session_id, seq, keep=False)
            self.model.load_branch(view.records, view.versions)
            self.model.add_user(text, parts)
            await self._consume(
                lambda sid: self.services.stream_edit(sid, seq, text, attachments=parts)
            )

        return self._start_version(run)

    def regenerate(self, seq: int, model_name: str | None = None) -> bool:
        """Answer again the question message ``seq`` belongs to (``model_name``: with another
        model, which then stays chosen, as in the model picker)."""

        async def run(session_id: str) -> None:
            if model_name:
                await self.set_model(model_name)
            view = await self.services.branch_until(session_id, seq)
            records = view.records
            end = len(records)
            while end and not isinstance(records[end - 1].message, UserMessage):
                end -= 1  # the answer goes; its question stays
            self.model.load_branch(records[:end], view.versions)
            await self._consume(lambda sid: self.services.stream_regenerate(sid, seq))

        return self._start_version(run)

    def _start_version(self, run: Callable[[str], Coroutine[Any, Any, None]]) -> bool:
        """Start a request that adds a version (``run(session_id)``); ``False`` while one runs,
        with no conversation, or read-only here (then the bar says why)."""
        session_id = self.session_id
        if self.busy or session_id is None:
            return False
        if self.read_only:
            self.noticeChanged.emit(LOCKED_ELSEWHERE)
            return False
        self._reload_after = True
        self._start(run(session_id))
        return True

    async def select_version(self, seq: int) -> None:
        """Show the version (the branch) through message ``seq``."""
        session_id = self.session_id
        if session_id is None:
            return
        if self.busy:
            self.statusMessage.emit(
                "Wait for the answer to finish (or stop it) to switch versions."
            )
            return
        await self.services.select_branch(session_id, seq)
        await self.reload_branch()
        await self.refresh_resume()
        self.sessionsChanged.emit()

    async def reload_branch(self) -> None:
        """Show the conversation's current branch again (after a version was added or chosen)."""
        session_id = self.session_id
        if session_id is None:
            return
        view = await self.services.branch_tail(session_id)
        if session_id == self.session_id and not self.busy:
            self.model.load_branch(view.records, view.versions, earlier=view.earlier)
            self.branchShown.emit()

    async def load_earlier(self) -> bool:
        """Put the branch's older messages above the rows (the view scrolled to the top);
        whether any came. One read at a time; a conversation switched meanwhile is left
        alone."""
        session_id, first = self.session_id, self.model.first_seq
        if session_id is None or first is None or not self.model.earlier or self._loading:
            return False
        self._loading = True
        try:
            view = await self.services.branch_before(session_id, first)
        finally:
            self._loading = False
        if session_id != self.session_id or self.model.first_seq != first:
            return False
        self.model.prepend_branch(view.records, view.versions, earlier=view.earlier)
        return bool(view.records)

    def stop(self) -> bool:
        """Cancel the running request (exactly the task this controller started)."""
        if not self.busy:
            return False
        assert self._task is not None
        self._task.cancel()
        return True

    async def set_model(self, name: str) -> None:
        """Use ``name`` for the open conversation (none open: as the default)."""
        current = (await self.services.resolved_setup(self.session_id)).model
        if name and name != current:
            await self.services.use_model(self.session_id, name)
            self.statusMessage.emit(f"Using {name}")

    def _start(self, coro: Coroutine[Any, Any, None]) -> None:
        self.last_error = None
        self._task = asyncio.ensure_future(coro)
        self.busyChanged.emit(True)
        self._task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        if task is self._task:
            self._task = None
        if not task.cancelled() and task.exception() is not None:
            # _consume handles every error; this is a bug path: keep it visible, not silent.
            err = task.exception()
            log.error("request task failed", exc_info=err)
            self.statusMessage.emit(str(err) or type(err).__name__)
        if self._shutting_down:  # closing: the store is about to close under it
            self.busyChanged.emit(False)
            return
        if self.session_id is not None and not self.read_only:
            # The request released the conversation's cross-process lock as it ended; the
            # conversation is still open here, so keep a second copy from resuming it.
            self.read_only = not self.services.try_lock_session(self.session_id)
        self.busyChanged.emit(False)
        self.spawn(self._after_run())

    async def _after_run(self) -> None:
        if self._reload_after:  # a new version: its arrows (and the saved rows) are shown
            self._reload_after = False
            await self.reload_branch()
        await self._settle_tool_cards()
        await self.refresh_resume()
        self.sessionsChanged.emit()
        self.runFinished.emit()
        if self.session_id is not None and not self.read_only:
            self.spawn(self._title_after_answer(self.session_id))

    async def _title_after_answer(self, session_id: str) -> None:
        """The model's short title after a first answer (never in the history: see
        ``app.services.titles``); the sidebar follows when it was renamed."""
        if await self.services.title_after_answer(session_id):
            self.sessionsChanged.emit()

    async def _settle_tool_cards(self) -> None:
        """After Stop or a failure during tools: show how each still-"running" card ended.

        The core answers such calls in the history (cancelled, or failed) but emits no event for
        them, so the cards are settled from the saved history; a call without a saved answer
        may or may not have happened.
        """
        session_id = self.session_id
        unsettled = self.model.unsettled_tools()
        if session_id is None or not unsettled:
            return
        history = await self.services.history(session_id)
        if session_id != self.session_id:
            return
        self.model.settle_tools(history, unsettled)

    async def _consume(self, make: Callable[[str], AsyncIterator[AgentEvent]]) -> None:
        session_id = self.session_id
        assert session_id is not None
        self.resumeInfoChanged.emit(None)
        try:
            async with contextlib.aclosing(make(session_id)) as events:  # type: ignore[type-var]
                async for event in events:
                    self._apply(event)
            self.model.finish_streaming()
        except asyncio.CancelledError:
            # Stop while streaming: the core keeps nothing of the step; keep it visibly.
            self.model.finish_streaming(unsaved=True)
            self.statusMessage.emit("Stopped.")
        except Exception as err:  # every failure becomes words in the Resume bar
            self.last_error = str(err) or type(err).__name__
            self.model.finish_streaming(unsaved=True)
            log.info("request ended with %s", type(err).__name__)

    def _apply(self, event: AgentEvent) -> None:
        apply_event(self.model, event, self.statusMessage.emit)

    async def shutdown(self) -> None:
        """Cancel the running request and helpers (bounded), for closing the window."""
        self._shutting_down = True
        tasks = [t for t in (self._task, *self._helpers) if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)
