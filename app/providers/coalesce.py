"""Batching a provider's stream: what arrived while the consumer was busy reaches it as one piece.

A server streams one event per token, and a fast one (or a slow consumer) delivers hundreds of
them per network read. Passed up one by one, every token would climb every layer above the
provider (the step, the agent, the app's journal, the window) on its own. :func:`coalesced`
runs the provider's parse loop in a small pump task that reads as far as the bytes already
received allow, and hands the consumer everything gathered since its last turn, with adjacent
text (and adjacent thinking) pieces joined by :func:`merge_deltas`. A slow stream is not delayed
at all: each piece is passed on as soon as it is parsed, so a consumer that keeps up sees every
piece on its own. Parsing a large read never holds the event loop for more than about
:data:`TIME_SLICE` at a time.

A provider's SSE loop hands its events over directly (:func:`coalesced_from` gives it a
:class:`Delivery`): a token then climbs no generator layer at all on its way to the consumer's
buffer, and the loop yields only now and then, so the pump can keep to its time slice.

What the consumer sees is the same step: the same text, calls, reasoning and end, in the same
order. A failure of the source is raised to the consumer after the events that preceded it (so
a cut stream still keeps its partial text); closing or cancelling the consumer cancels the pump,
which closes the provider's response.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import Final

from ..model import ModelEvent, ReasoningDelta, TextDelta

__all__ = ["TIME_SLICE", "Delivery", "coalesced", "coalesced_from", "merge_deltas"]

#: Seconds of parsing after which the pump lets the event loop run (half a 60 Hz frame).
TIME_SLICE: Final = 0.008


def merge_deltas(events: Sequence[ModelEvent]) -> list[ModelEvent]:
    """``events`` with each run of adjacent ``TextDelta``s (or ``ReasoningDelta``s) joined
    into one; every other event, and the order, unchanged. Pure."""
    out: list[ModelEvent] = []
    run: list[str] = []
    kind: type[TextDelta] | type[ReasoningDelta] | None = None
    for event in events:
        event_kind = type(event)
        if event_kind is TextDelta or event_kind is ReasoningDelta:
            if event_kind is not kind and run:
                out.append(_joined(kind, run))
                run = []
            kind = event_kind
            run.append(event.text)  # type: ignore[union-attr]
            continue
        if run:
            out.append(_joined(kind, run))
            run, kind = [], None
        out.append(event)
    if run:
        out.append(_joined(kind, run))
    return out


def _joined(kind: type[TextDelta] | type[ReasoningDelta] | None, texts: list[str]) -> ModelEvent:
    assert kind is not None
    return kind(texts[0] if len(texts) == 1 else "".join(texts))


class Delivery:
    """Where a source puts its events for the consumer of :func:`coalesced_from` as it parses
    them (they are passed on at the consumer's next turn)."""

    __slots__ = ("_buffer", "_wake", "taken")

    def __init__(self, buffer: list[ModelEvent], wake: asyncio.Event) -> None:
        self._buffer = buffer
        self._wake = wake
        self.taken = 0  # events the consumer took from the buffer so far

    @property
    def delivered(self) -> int:
        """Events put so far."""
        return self.taken + len(self._buffer)

    def put(self, events: Sequence[ModelEvent]) -> None:
        if events:
            buffer = self._buffer
            if not buffer:  # (the consumer takes all at once: woken once per turn)
                self._wake.set()
            buffer.extend(events)


def coalesced(
    batches: AsyncIterator[Sequence[ModelEvent]],
) -> AsyncGenerator[ModelEvent, None]:
    """The events of ``batches`` (lists of events, e.g. one per network chunk), merged per
    consumer turn; see the module docstring."""
    return coalesced_from(lambda _delivery: batches)


async def coalesced_from(
    source: Callable[[Delivery], AsyncIterator[Sequence[ModelEvent]]],
) -> AsyncGenerator[ModelEvent, None]:
    """:func:`coalesced` of ``source(delivery)``, which may put events into ``delivery`` as
    well as (or instead of) yielding them: what it puts comes before what it yields next. A
    source that only puts should still yield (an empty list) every few milliseconds of
    parsing, which is when the pump lets the event loop run."""
    buffer: list[ModelEvent] = []
    failure: list[BaseException] = []
    ended = False
    wake = asyncio.Event()
    delivery = Delivery(buffer, wake)
    batches = source(delivery)

    async def pump() -> None:
        nonlocal ended
        clock = time.perf_counter
        turn = clock()
        try:
            async for batch in batches:
                if batch:
                    delivery.put(batch)
                if clock() - turn > TIME_SLICE:
                    # Bytes already received parse without a pause, so a large read would
                    # hold the loop (and the window's frames) for its whole length. (If the
                    # pump waited for the network meanwhile, this turn is merely redundant.)
                    await asyncio.sleep(0)
                    turn = clock()
        except asyncio.CancelledError:
            raise  # the consumer left: nothing more is wanted
        except BaseException as err:  # handed to the consumer, in order
            failure.append(err)
        finally:
            ended = True
            wake.set()
            close = getattr(batches, "aclose", None)
            if close is not None:
                await close()

    task = asyncio.get_running_loop().create_task(pump())
    try:
        while True:
            if buffer:
                ready = merge_deltas(buffer)
                delivery.taken += len(buffer)
                buffer.clear()
                for event in ready:
                    yield event
                continue  # more may have arrived while those were consumed
            if ended:
                break
            wake.clear()
            await wake.wait()
        if failure:
            raise failure[0]
    finally:
        if not task.done():
            task.cancel()
        # The pump's own cleanup (closing the response) finishes before the consumer goes on.
        await asyncio.gather(task, return_exceptions=True)
