"""Append messages with large images to a real database until killed (SIGKILL by the test).

Usage: python attachment_child.py DB

Each round prints ``APPEND <i>`` just before the append of a message with a fresh 3 MB image
(its own digest) and ``SAVED <i>`` after it committed, so the parent can kill it while the
message and its blob are being written.
"""

from __future__ import annotations

import asyncio
import hashlib
import sys

from app.messages import UserMessage
from app.parts import ImagePart
from app.storage import SQLiteSessionStore

PNG_HEAD = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x02\x80\x00\x00\x01\xe0"


def image(i: int) -> ImagePart:
    seed = hashlib.sha256(str(i).encode()).digest()
    data = PNG_HEAD + seed * (3 * 1024 * 1024 // len(seed))
    return ImagePart(
        "image/png", hashlib.sha256(data).hexdigest(), f"{i}.png", 640, 480, len(data), data
    )


async def main(db: str) -> None:
    store = SQLiteSessionStore(db)
    await store.open()
    for i in range(10_000):
        message = UserMessage((image(i),))
        print(f"APPEND {i}", flush=True)
        await store.append("s", f"r{i}", message)
        print(f"SAVED {i}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
