"""Message parts: sniffing, limits, the JSON form, plain text, and per-provider conversion."""

from __future__ import annotations

import base64
import json

import pytest

from app.messages import (
    AssistantMessage,
    InternalMessage,
    UserMessage,
    content_text,
    message_from_json,
    message_to_json,
)
from app.parts import (
    IMAGE_MAX_BYTES,
    TEXT_MAX_BYTES,
    AttachmentError,
    FilePart,
    ImagePart,
    ImagesNotReadError,
    TextPart,
    attachment_from_bytes,
    digest_of,
    index_text,
    sniff_image,
    with_text,
)
from app.providers.convert import anthropic_messages, openai_messages
from app.providers.vision import check_images, reads_images, refused_images

from .images import gif, jpeg, pdf, png, webp

# --- sniffing: the bytes decide, never the name ----------------------------------------------


@pytest.mark.parametrize(
    ("data", "media_type", "size"),
    [
        (png(640, 480), "image/png", (640, 480)),
        (jpeg(800, 600), "image/jpeg", (800, 600)),
        (gif(10, 20), "image/gif", (10, 20)),
        (webp(300, 200), "image/webp", (300, 200)),
        (b"\x89PNG\r\n\x1a\n", "image/png", (None, None)),  # too short for its size
    ],
)
def test_sniffing_reads_type_and_size(data: bytes, media_type: str, size: tuple) -> None:
    info = sniff_image(data)
    assert info is not None
    assert (info.media_type, (info.width, info.height)) == (media_type, size)


@pytest.mark.parametrize("data", [b"", b"hello", b"%PDF-1.4", b"BM\x00\x00", b"GIF8"])
def test_sniffing_refuses_what_is_not_a_taken_image(data: bytes) -> None:
    assert sniff_image(data) is None


def test_a_png_named_txt_is_an_image_and_text_named_png_is_text() -> None:
    image = attachment_from_bytes(png(2, 2), "notes.txt")
    assert isinstance(image, ImagePart) and image.media_type == "image/png"
    text = attachment_from_bytes(b"print('hi')\n", "photo.png")
    assert isinstance(text, FilePart) and text.text == "print('hi')\n"


# --- limits, each with what to do instead ---------------------------------------------------


@pytest.mark.parametrize(
    ("data", "name", "words"),
    [
        (png(1, 1) + b"\x00" * IMAGE_MAX_BYTES, "big.png", "at most 20.0 MB"),
        (b"a" * (TEXT_MAX_BYTES + 1), "huge.log", "Attach the part that matters"),
        (b"\x00\x01\x02binary", "blob.bin", r"not text \(UTF-8\)"),
        (b"\xff\xfe\x00bad utf", "latin.txt", "Save it as UTF-8"),
        (b"BM" + b"\x00" * 60, "scan.bmp", "BMP image"),
        (b"II*\x00" + b"\x00" * 20, "scan.tiff", "TIFF image"),
        (b"%PDF-1.4\nnot really", "broken.pdf", "could not be read as a PDF"),
    ],
)
def test_refused_attachments_say_why_and_what_to_do(data: bytes, name: str, words: str) -> None:
    with pytest.raises(AttachmentError, match=words) as info:
        attachment_from_bytes(data, name)
    assert name in str(info.value)


def test_the_largest_allowed_files_are_taken() -> None:
    image = png(1, 1)
    assert isinstance(
        attachment_from_bytes(image + b"\x00" * (IMAGE_MAX_BYTES - len(image)), "x"), ImagePart
    )
    assert isinstance(attachment_from_bytes(b"a" * TEXT_MAX_BYTES, "max.txt"), FilePart)


def test_pdf_text_is_extracted() -> None:
    part = attachment_from_bytes(pdf("Quarterly report"), "report.pdf")
    assert isinstance(part, FilePart)
    assert (part.media_type, part.text) == ("application/pdf", "Quarterly report")


def test_a_code_file_keeps_its_type_and_text() -> None:
    part = attachment_from_bytes("# ünïcode\nx = 1\n".encode(), "script.py")
    assert isinstance(part, FilePart)
    assert part.media_type == "text/x-python"
    assert part.text == "# ünïcode\nx = 1\n"
    assert part.digest == digest_of("# ünïcode\nx = 1\n".encode())


# --- the message form ---------------------------------------------------------------------


def _image(width: int = 4, height: int = 3) -> ImagePart:
    part = attachment_from_bytes(png(width, height), "cat.png")
    assert isinstance(part, ImagePart)
    return part


def test_parts_round_trip_through_json_without_their_bytes() -> None:
    image = _image()
    file = attachment_from_bytes(b"a,b\n1,2\n", "data.csv")
    message = UserMessage(with_text("What is in these?", [image, file]))
    text = message_to_json(message)
    assert "base64" not in text and image.data is not None and "data" not in json.loads(text)
    again = message_from_json(text)
    assert again == message  # equality ignores the bytes
    assert isinstance(again, UserMessage) and isinstance(again.content, tuple)
    loaded = again.content[0]
    assert isinstance(loaded, ImagePart) and loaded.data is None
    assert (loaded.width, loaded.height, loaded.size) == (4, 3, len(png(4, 3)))
    assert message_to_json(again) == text


def test_plain_strings_stay_plain_everywhere() -> None:
    assert with_text("hi", []) == "hi"
    assert message_to_json(UserMessage("hi")) == '{"v":1,"type":"user","content":"hi"}'
    assert message_from_json('{"v":1,"type":"user","content":"hi"}') == UserMessage("hi")
    assert UserMessage([TextPart("a")]).content == (TextPart("a"),)  # a list becomes a tuple


@pytest.mark.parametrize(
    "content",
    [
        [{"type": "image", "digest": "d"}],  # no media type
        [{"type": "video", "digest": "d"}],
        ["just a string"],
        [{"type": "image", "media_type": "image/png", "digest": "d", "width": -1}],
        {"type": "text", "text": "an object, not a list"},
    ],
)
def test_unreadable_parts_are_refused(content: object) -> None:
    from app.errors import MessageFormatError

    with pytest.raises(MessageFormatError):
        message_from_json(json.dumps({"v": 1, "type": "user", "content": content}))


def test_content_text_and_index_text() -> None:
    image, file = _image(), attachment_from_bytes(b"secret body", "notes.md")
    message = UserMessage(with_text("Compare them", [image, file]))
    assert content_text(message) == "Compare them"
    assert content_text(InternalMessage("go")) == "go"
    assert content_text(AssistantMessage("answer")) == "answer"
    assert index_text(message.content) == "cat.png\nnotes.md\nCompare them"


# --- conversion per provider ------------------------------------------------------------------


def test_openai_gets_image_url_data_urls_and_file_text() -> None:
    image = _image()
    file = attachment_from_bytes(b"x = 1\n", "a.py")
    sent = openai_messages([UserMessage(with_text("Look", [image, file]))], None)
    assert sent == [
        {
            "role": "user",
            "content": [
                {
                    "type": "image_url",
                    "image_url": {
                        "url": "data:image/png;base64," + base64.b64encode(png(4, 3)).decode()
                    },
                },
                {
                    "type": "text",
                    "text": '<file name="a.py" type="text/x-python">\nx = 1\n\n</file>',
                },
                {"type": "text", "text": "Look"},
            ],
        }
    ]


def test_openai_without_images_sends_one_string() -> None:
    file = attachment_from_bytes(b"hello", "a.txt")
    sent = openai_messages([UserMessage(with_text("Summarise", [file]))], None)
    assert sent == [
        {
            "role": "user",
            "content": '<file name="a.txt" type="text/plain">\nhello\n</file>\n\nSummarise',
        }
    ]


def test_anthropic_gets_base64_image_blocks_and_file_text() -> None:
    image = _image()
    file = attachment_from_bytes(b"hello", "a.txt")
    sent = anthropic_messages(
        [UserMessage(with_text("Look", [image, file])), AssistantMessage("ok")]
    )
    assert sent[0] == {
        "role": "user",
        "content": [
            {
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": "image/png",
                    "data": base64.b64encode(png(4, 3)).decode(),
                },
            },
            {"type": "text", "text": '<file name="a.txt" type="text/plain">\nhello\n</file>'},
            {"type": "text", "text": "Look"},
        ],
    }


def test_an_image_without_its_bytes_is_refused_before_sending() -> None:
    image = message_from_json(message_to_json(UserMessage(with_text("x", [_image()]))))
    for convert in (lambda m: openai_messages(m, None), anthropic_messages):
        with pytest.raises(AttachmentError, match="missing from this conversation's database"):
            convert([image])


# --- which models read images ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "override", "reads"),
    [
        ("gpt-4o", None, True),
        ("gpt-4o-mini", None, True),
        ("gpt-3.5-turbo", None, False),
        ("o3-mini", None, False),
        ("claude-sonnet-4-5", None, True),
        ("claude-2.1", None, False),
        ("llava:13b", None, True),
        ("llama3.2-vision:11b", None, True),
        ("llama3.1:8b", None, False),
        ("meta-llama/Llama-3.1-8B-Instruct", None, False),
        ("Qwen/Qwen2.5-VL-7B-Instruct", None, True),
        ("qwen2.5-coder:7b", None, False),
        ("gemma3:4b", None, True),
        ("deepseek-chat", None, False),
        ("sim-echo", None, None),  # unknown: sent, and a refusal is explained
        ("llama3.1:8b", True, True),  # the person's choice wins
        ("gpt-4o", False, False),
    ],
)
def test_reads_images_table(model: str, override: bool | None, reads: bool | None) -> None:
    assert reads_images(model, override) is reads


def test_a_known_text_model_refuses_images_before_sending() -> None:
    messages = [UserMessage(with_text("what is this", [_image()]))]
    with pytest.raises(ImagesNotReadError, match="cannot read images, so nothing was sent"):
        check_images(messages, "llama3.1:8b", "Ollama")
    check_images(messages, "gpt-4o", "OpenAI")  # no error
    check_images([UserMessage("no image")], "llama3.1:8b", "Ollama")


@pytest.mark.parametrize(
    ("message", "about_images"),
    [
        ("This model does not support image input", True),
        (
            "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
            True,
        ),
        # A list of parts is only sent with an image: a server that wants a string refuses it.
        ("messages[0].content: Input should be a valid string (got list)", True),
        ("temperature must be at most 2", False),
        ("Invalid 'messages[0].content': expected a string, got an array", True),
        ("max_tokens is too large", False),
    ],
)
def test_refusals_about_images_are_recognised(message: str, about_images: bool) -> None:
    assert refused_images(message) is about_images
