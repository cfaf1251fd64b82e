"""The qasync event loop, completed with asyncio's async-generator hooks.

qasync's ``run_forever`` runs Qt's loop but, unlike asyncio's own loops, does not install the
async-generator hooks. Without them an async generator that is dropped before it finished (an
httpx stream inside a provider, say) is finalized by the garbage collector with no loop —
"async generator ignored GeneratorExit" — and its connection is not closed properly. With the
hooks, the loop schedules ``aclose()`` as asyncio does.
"""

from __future__ import annotations

import sys
from typing import Any

import qasync

__all__ = ["ContinuumEventLoop"]


# qasync is untyped and makes QEventLoop with type(), so mypy sees Any here.
class ContinuumEventLoop(qasync.QEventLoop):  # type: ignore[misc]
    def run_forever(self) -> Any:
        previous = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(
            firstiter=self._asyncgen_firstiter_hook, finalizer=self._asyncgen_finalizer_hook
        )
        try:
            return super().run_forever()
        finally:
            sys.set_asyncgen_hooks(*previous)
