"""Attachments end to end through ``AppServices`` and the real simulator, in both protocols:
the image's bytes reach the provider (the simulator names what it decoded), a file's text
reaches it, a model known not to read images refuses before anything is saved or sent, and a
server that refuses an image is explained."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.events import AgentEvent, RunCompletedEvent
from app.messages import UserMessage
from app.parts import ImagePart, ImagesNotReadError
from app.providers.anthropic import AnthropicModel
from app.services import AppServices, pasted_image, read_attachment

from .images import pdf, png


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[AppServices]:
    svc = AppServices(tmp_path / "data")
    await svc.open()
    await svc.start_simulator(tokens_per_second=0)
    await svc.configure_model()
    yield svc
    await svc.close()


async def _reply(events: AsyncIterator[AgentEvent]) -> str:
    last = [e async for e in events][-1]
    assert isinstance(last, RunCompletedEvent), last
    return last.reply.content


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
async def test_an_image_reaches_the_simulator(
    services: AppServices, protocol: str, tmp_path: Path
) -> None:
    if protocol == "anthropic":
        services.client.model = AnthropicModel(services._simulator.base_url, "sim-claude")
    path = tmp_path / "photo.png"
    path.write_bytes(png(640, 480))
    image = read_attachment(path)
    session = await services.new_session()
    reply = await _reply(services.stream(session.id, "what is it?", attachments=[image]))
    assert reply == "(1 image: 640×480 PNG) what is it?"
    body = services._simulator.model_requests()[-1].json()
    assert "image_url" in str(body) if protocol == "openai" else "'base64'" in str(body)
    # Saved with its bytes: the next request sends the image again, from the database.
    again = await _reply(services.stream(session.id, "and now?"))
    assert again == "and now?"
    assert str(body["messages"][0]["content"]) in str(
        services._simulator.model_requests()[-1].json()
    )
    history = await services.history(session.id)
    first = history[0]
    assert isinstance(first, UserMessage) and isinstance(first.content, tuple)
    assert isinstance(first.content[0], ImagePart) and first.content[0].data == png(640, 480)


async def test_a_files_text_and_a_pdfs_text_reach_the_model(
    services: AppServices, tmp_path: Path
) -> None:
    (tmp_path / "notes.md").write_text("# Plan\nship it")
    (tmp_path / "report.pdf").write_bytes(pdf("Revenue grew"))
    parts = [read_attachment(tmp_path / "notes.md"), read_attachment(tmp_path / "report.pdf")]
    session = await services.new_session()
    reply = await _reply(services.stream(session.id, "Summarise", attachments=parts))
    assert '<file name="notes.md" type="text/markdown">\n# Plan\nship it\n</file>' in reply
    assert '<file name="report.pdf" type="application/pdf">\nRevenue grew\n</file>' in reply
    assert reply.endswith("Summarise")


async def test_a_model_that_cannot_read_images_refuses_before_anything_is_sent(
    services: AppServices,
) -> None:
    services.save_settings(dataclasses.replace(services.settings, model="llama3.1:8b"))
    await services.configure_model()
    image = pasted_image(png(8, 8))
    session = await services.new_session()
    problem = await services.attachment_problem(session.id, [image])
    assert problem is not None and "'llama3.1:8b' cannot read images" in problem
    assert "your message and its attachments are kept" in problem
    assert await services.attachment_problem(session.id, []) is None
    services._simulator.clear_requests()
    # The core API refuses too (the provider checks before sending): no request went out.
    with pytest.raises(ImagesNotReadError):
        await _reply(services.stream(session.id, "look", attachments=[image]))
    assert services._simulator.model_requests() == []


async def test_a_server_that_refuses_the_image_is_explained(services: AppServices) -> None:
    services.save_settings(dataclasses.replace(services.settings, model="sim-text"))
    await services.configure_model()
    session = await services.new_session()
    assert await services.attachment_problem(session.id, [pasted_image(png())]) is None  # unknown
    with pytest.raises(ImagesNotReadError) as raised:
        await _reply(services.stream(session.id, "look", attachments=[pasted_image(png())]))
    assert "refused the image for model 'sim-text'" in str(raised.value)
    assert "does not support image input" in str(raised.value)
    info = await services.resume_info(session.id)  # the message was saved: nothing is lost
    assert info.stop is not None and "refused the image" in info.stop.message
    history = await services.history(session.id)
    assert isinstance(history[0], UserMessage) and isinstance(history[0].content, tuple)
