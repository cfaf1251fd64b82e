"""Batching a provider's stream (app.providers.coalesce): the same step, in fewer pieces only
when pieces arrived while the consumer was busy."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Sequence

import pytest

from app.errors import ProviderConnectionError
from app.messages import StopReason, ToolCall
from app.model import ModelEvent, ReasoningDelta, StepEnd, TextDelta, ToolCallComplete
from app.providers.coalesce import TIME_SLICE, Delivery, coalesced, coalesced_from, merge_deltas
from app.simulator import Reply, Simulator

from .conftest import ModelFactory, collect, request

END = StepEnd(StopReason.END_TURN)
CALL = ToolCallComplete(ToolCall("c1", "read_file", {"path": "a"}))


@pytest.mark.parametrize(
    ("events", "merged"),
    [
        ([], []),
        ([TextDelta("a")], [TextDelta("a")]),
        ([TextDelta("a"), TextDelta("b"), END], [TextDelta("ab"), END]),
        (
            [ReasoningDelta("x"), ReasoningDelta("y"), TextDelta("a"), TextDelta("b")],
            [ReasoningDelta("xy"), TextDelta("ab")],
        ),
        # a call between two texts keeps them apart (the order is the step's)
        ([TextDelta("a"), CALL, TextDelta("b")], [TextDelta("a"), CALL, TextDelta("b")]),
        (
            [TextDelta("a"), ReasoningDelta("x"), TextDelta("b")],
            [TextDelta("a"), ReasoningDelta("x"), TextDelta("b")],
        ),
        ([CALL, END], [CALL, END]),
    ],
)
def test_merge_deltas(events: list[ModelEvent], merged: list[ModelEvent]) -> None:
    assert merge_deltas(events) == merged


class Source:
    """Batches handed out one per ``release()`` (or all at once), recording its own end."""

    def __init__(self, batches: Sequence[Sequence[ModelEvent]], *, gated: bool) -> None:
        self.batches = batches
        self.gated = gated
        self.gate = asyncio.Event()
        self.closed = False
        self.error: BaseException | None = None

    async def run(self) -> AsyncGenerator[Sequence[ModelEvent], None]:
        try:
            for batch in self.batches:
                if self.gated:
                    await self.gate.wait()
                    self.gate.clear()
                yield batch
            if self.error is not None:
                raise self.error
        finally:
            self.closed = True


async def test_a_consumer_that_keeps_up_sees_every_piece() -> None:
    source = Source([[TextDelta("a")], [TextDelta("b")], [END]], gated=True)
    seen: list[ModelEvent] = []
    events = coalesced(source.run())
    for _ in range(3):
        source.gate.set()
        seen.append(await anext(events))
    assert seen == [TextDelta("a"), TextDelta("b"), END]
    with pytest.raises(StopAsyncIteration):
        await anext(events)
    assert source.closed


async def test_pieces_that_arrived_together_are_joined() -> None:
    source = Source([[TextDelta("a")], [], [TextDelta("b"), TextDelta("c")], [END]], gated=False)
    assert [e async for e in coalesced(source.run())] == [TextDelta("abc"), END]


async def test_a_failure_comes_after_the_output_before_it() -> None:
    source = Source([[TextDelta("a")], [TextDelta("b")]], gated=False)
    source.error = ProviderConnectionError("the connection dropped")
    seen: list[ModelEvent] = []
    with pytest.raises(ProviderConnectionError, match="dropped"):
        async for event in coalesced(source.run()):
            seen.append(event)
    assert seen == [TextDelta("ab")]


async def test_closing_the_consumer_closes_the_source() -> None:
    source = Source([[TextDelta("a")], [TextDelta("b")], [END]], gated=True)
    events = coalesced(source.run())
    source.gate.set()
    assert await anext(events) == TextDelta("a")
    await events.aclose()  # the step stopped reading (e.g. Stop)
    assert source.closed


async def test_cancelling_the_consumer_cancels_the_pump() -> None:
    source = Source([[TextDelta("a")], [END]], gated=True)
    first = asyncio.Event()

    async def consume() -> None:
        async for _ in coalesced(source.run()):
            first.set()

    task = asyncio.create_task(consume())
    source.gate.set()
    await first.wait()  # the consumer now waits for more; the source waits at its gate
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert source.closed


async def test_a_fast_stream_reaches_a_busy_consumer_in_fewer_pieces(
    sim: Simulator, make_model: ModelFactory
) -> None:
    """Through the real provider and a real socket: 2,000 tokens at full speed, read by a
    consumer that blocks the loop for a moment per piece, arrive whole and in order, in far
    fewer pieces than tokens."""
    sim.enqueue(Reply(tokens=2_000))
    seen = 0

    async def slow(events: AsyncGenerator[ModelEvent, None]) -> AsyncGenerator[ModelEvent, None]:
        nonlocal seen
        async for event in events:
            seen += 1
            # busy, as a window painting would be (not a sleep: the loop is held)
            _ = sum(range(20_000))
            yield event

    result = await collect(slow(make_model("openai").stream(request())))
    assert result.error is None and result.stop is StopReason.END_TURN
    assert len(result.text.split()) == 2_000
    assert seen < 1_000


async def test_a_long_burst_lets_the_event_loop_run() -> None:
    """Bytes already received parse without a pause; the pump still gives the loop (the
    window's frames) a turn about every TIME_SLICE."""
    ticks = 0
    seen_at_batch: list[int] = []

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    async def busy() -> AsyncGenerator[Sequence[ModelEvent], None]:
        for _ in range(12):
            started = time.perf_counter()
            while time.perf_counter() - started < TIME_SLICE / 3:
                pass  # parsing, as the provider does: no await
            seen_at_batch.append(ticks)
            yield [TextDelta("x")]
        yield [END]

    running = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    try:
        events = [e async for e in coalesced(busy())]
    finally:
        running.cancel()
    assert merge_deltas(events) == [TextDelta("x" * 12), END]
    # the ticker ran between batches, not only before and after the burst
    assert seen_at_batch[-1] > seen_at_batch[0]


async def test_a_source_may_put_its_events_and_yield_others_in_order() -> None:
    """What a source puts into its delivery comes before what it yields next."""

    async def source(delivery: Delivery) -> AsyncGenerator[Sequence[ModelEvent], None]:
        delivery.put([TextDelta("a")])
        yield [TextDelta("b")]
        delivery.put([])  # nothing: no turn for the consumer
        delivery.put([TextDelta("c"), CALL])
        yield []
        yield [END]
        assert delivery.delivered == 5  # (what it yielded counts too)

    assert [e async for e in coalesced_from(source)] == [TextDelta("abc"), CALL, END]


async def test_a_putting_source_keeps_its_output_before_its_failure() -> None:
    async def source(delivery: Delivery) -> AsyncGenerator[Sequence[ModelEvent], None]:
        delivery.put([TextDelta("partial ")])
        yield []
        delivery.put([TextDelta("text")])
        raise ProviderConnectionError("the connection dropped")

    seen: list[ModelEvent] = []
    with pytest.raises(ProviderConnectionError, match="dropped"):
        async for event in coalesced_from(source):
            seen.append(event)
    assert merge_deltas(seen) == [TextDelta("partial text")]


async def test_a_consumer_that_keeps_up_sees_each_put_piece() -> None:
    gate = asyncio.Event()

    async def source(delivery: Delivery) -> AsyncGenerator[Sequence[ModelEvent], None]:
        for piece in ("a", "b"):
            await gate.wait()  # the network: the consumer has its turn meanwhile
            gate.clear()
            delivery.put([TextDelta(piece)])
        yield [END]

    events = coalesced_from(source)
    gate.set()
    assert await anext(events) == TextDelta("a")
    gate.set()
    assert await anext(events) == TextDelta("b")
    assert await anext(events) == END
