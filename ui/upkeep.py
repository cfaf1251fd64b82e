"""Idle housekeeping for the window: merge the search index when nothing has happened for a while.

:class:`IdleUpkeep` waits :data:`IDLE_MS` after the window started or a request ended, then
runs the job it was given (``AppServices.tidy_search_index``, see :mod:`app.services.upkeep`)
through the controller's helper tasks (cancelled when the window closes). A request starting
stops the wait and cancels a run; the run's steps are whole transactions, so a cancelled one
leaves a correct index and the next idle spell goes on with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, Final

from PySide6.QtCore import QObject, QTimer

__all__ = ["IDLE_MS", "IdleUpkeep"]

#: How long the window must be idle before housekeeping starts.
IDLE_MS: Final = 5_000

Spawn = Callable[[Coroutine[Any, Any, Any]], "asyncio.Task[Any] | None"]


class IdleUpkeep(QObject):
    """Runs ``job`` once per idle spell (see the module docstring)."""

    def __init__(
        self,
        job: Callable[[], Coroutine[Any, Any, Any]],
        spawn: Spawn,
        parent: QObject | None = None,
        *,
        idle_ms: int = IDLE_MS,
    ) -> None:
        super().__init__(parent)
        self._job = job
        self._spawn = spawn
        self._task: asyncio.Task[Any] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(idle_ms)
        self._timer.timeout.connect(self._start)

    @property
    def running(self) -> bool:
        """Whether a run is under way."""
        return self._task is not None and not self._task.done()

    @property
    def waiting(self) -> bool:
        """Whether an idle spell is being waited for."""
        return self._timer.isActive()

    def set_busy(self, busy: bool) -> None:
        """A request started (stop waiting, cancel a run) or ended (wait for the next spell)."""
        if busy:
            self._timer.stop()
            if self._task is not None:
                self._task.cancel()
                self._task = None
        elif not self.running:
            self._timer.start()

    def _start(self) -> None:
        if not self.running:
            self._task = self._spawn(self._job())
