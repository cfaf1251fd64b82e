"""A child process running the app's services against its own simulator, killed mid-stream.

Usage: python app_child.py DATA_DIR — prints ``STREAMING`` once on-screen text exists (and so
its draft has been saved), then waits to be killed.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from app.events import EventType
from app.services import AppServices
from app.simulator import Fault, FaultKind, Reply


async def main(data_dir: str) -> None:
    services = AppServices(Path(data_dir))
    await services.open()
    await services.start_simulator()
    await services.configure_model()
    simulator = services._simulator
    simulator.enqueue(
        Reply(text="The first words of an answer that never", fault=Fault(FaultKind.STALL, after=4))
    )
    session = await services.new_session("crash test")
    print(session.id, flush=True)
    async for event in services.stream(session.id, "Tell me a story"):
        if event.type is EventType.TEXT_DELTA:
            print("STREAMING", flush=True)
            break_point = asyncio.Event()
            await break_point.wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
