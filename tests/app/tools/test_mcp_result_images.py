"""An MCP result's images (real ``mcp.types`` objects, as the client library parses them):
which become image parts, the line each leaves in the text, and the caps per result."""

from __future__ import annotations

import base64
from typing import Any

import mcp.types as types
import pytest

from app.tools.mcp_results import (
    MAX_RESULT_IMAGE_BYTES,
    MAX_RESULT_IMAGES,
    TOOL_IMAGE_MAX_BYTES,
    ResultContent,
    result_content,
)
from tests.app.attachments.images import gif, jpeg, png


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _image(data: bytes, mime: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "data": _b64(data), "mimeType": mime}


def _result(*blocks: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult.model_validate({"content": list(blocks)})


def _content(*blocks: dict[str, Any], limit: int = 100_000) -> ResultContent:
    return result_content(_result(*blocks), server="shots", tool="shot", limit=limit)


def _padded_png(width: int, height: int, size: int) -> bytes:
    """A PNG whose header gives its size, padded to ``size`` bytes (only the header is read)."""
    head = png(width, height)
    return head + b"\0" * (size - len(head))


@pytest.mark.parametrize(
    ("blocks", "text", "kept"),
    [
        # A good image: kept with its bytes, named where it was.
        (
            [{"type": "text", "text": "Here:"}, _image(png(4, 3))],
            "Here:\n[image 1: image/png, 4×3, 73 bytes]",
            [png(4, 3)],
        ),
        # The bytes decide the type, not the server's word.
        ([_image(gif(7, 5), "image/png")], "[image 1: image/gif, 7×5, 14 bytes]", [gif(7, 5)]),
        # An embedded resource whose blob is an image: the same.
        (
            [
                {
                    "type": "resource",
                    "resource": {"uri": "file:///s.jpg", "mimeType": "image/jpeg", "blob": ""},
                }
            ],
            "[image resource file:///s.jpg (image/jpeg, 0 bytes) not used: it is not a PNG, "
            "JPEG, GIF or WebP image]",
            [],
        ),
        (
            [
                {
                    "type": "resource",
                    "resource": {
                        "uri": "file:///s.jpg",
                        "mimeType": "image/jpeg",
                        "blob": _b64(jpeg(640, 480)),
                    },
                }
            ],
            f"[image 1: image/jpeg, 640×480, {len(jpeg(640, 480))} bytes]",
            [jpeg(640, 480)],
        ),
        # What cannot be used stays a line saying why.
        (
            [{"type": "image", "data": "not base64!", "mimeType": "image/png"}],
            "[image (image/png) not used: its data is not valid base64]",
            [],
        ),
        (
            [_image(b"BM\0\0 a bitmap", "image/bmp")],
            "[image (image/bmp, 13 bytes) not used: it is not a PNG, JPEG, GIF or WebP image]",
            [],
        ),
        (
            [_image(b"\x89PNG\r\n\x1a\n0000")],
            "[image (image/png, 12 bytes) not used: its size in pixels cannot be read from it, "
            "so it is probably damaged]",
            [],
        ),
        (
            [_image(png(9000, 2))],
            "[image (image/png, 9000×2) not used: an image from a tool can be at most 8000 "
            "pixels a side]",
            [],
        ),
        (
            [_image(_padded_png(8, 8, TOOL_IMAGE_MAX_BYTES + 1))],
            "[image (image/png, 5.0 MB) not used: an image from a tool can be at most 5.0 MB]",
            [],
        ),
        # Audio is still described, never kept.
        (
            [{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}],
            "[audio content, audio/wav, about 3 bytes, not shown]",
            [],
        ),
    ],
)
def test_image_blocks(blocks: list[dict[str, Any]], text: str, kept: list[bytes]) -> None:
    got = _content(*blocks)
    assert got.text == text
    assert [image.data for image in got.images] == kept
    assert all(image.name == f"shot image {n}" for n, image in enumerate(got.images, 1))


def test_at_most_four_images_per_result_and_the_rest_said() -> None:
    got = _content(*[_image(png(n + 1, 1)) for n in range(MAX_RESULT_IMAGES + 2)])
    assert len(got.images) == MAX_RESULT_IMAGES == 4
    lines = got.text.splitlines()
    assert lines[3] == f"[image 4: image/png, 4×1, {len(png(4, 1))} bytes]"
    assert lines[4:] == [
        f"[image (image/png, {len(png(n, 1))} bytes) not used: one result can carry at most "
        "4 images]"
        for n in (5, 6)
    ]


def test_at_most_10_mb_of_images_per_result() -> None:
    four_mb = 4 * 1024 * 1024
    got = _content(*[_image(_padded_png(8, n + 1, four_mb)) for n in range(3)])
    assert MAX_RESULT_IMAGE_BYTES == 10 * 1024 * 1024
    assert [image.size for image in got.images] == [four_mb, four_mb]
    assert got.text.splitlines()[2] == (
        "[image (image/png, 4.0 MB) not used: one result's images can be at most 10.0 MB together]"
    )


def test_a_cut_text_still_names_its_images() -> None:
    got = _content({"type": "text", "text": "x" * 500}, _image(png(4, 3)), limit=100)
    assert got.text.startswith("x" * 100 + "\n\n[Continuum cut this result")
    assert got.text.endswith("\n[image 1: image/png, 4×3, 73 bytes]")
    assert len(got.images) == 1
