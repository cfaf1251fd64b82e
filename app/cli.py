"""``continuum-chat``: a small command-line chat on the core, with Stop (Ctrl+C) and /resume.

With no provider options it starts the loopback provider simulator in this process, so it runs
offline on a fresh machine. Conversations are kept in the same database as the desktop app.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from platformdirs import user_data_dir

from . import __version__
from .client import AgentClient
from .errors import ContinuumError
from .events import EventType
from .model import Model
from .resume import ResumePoint
from .storage.sqlite import SQLiteSessionExtension

HELP = "Commands: /resume  /history  /new  /quit   (Ctrl+C stops a running answer)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="continuum-chat", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--data-dir", type=Path, help="where conversations are kept")
    parser.add_argument("--session", default="cli", help="conversation id (default: cli)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--openai", metavar="BASE_URL", help="an OpenAI-compatible /v1 URL")
    source.add_argument("--anthropic", metavar="BASE_URL", help="an Anthropic API root URL")
    parser.add_argument("--model", default="sim-echo", help="model name")
    parser.add_argument(
        "--api-key-env", default="CONTINUUM_API_KEY",
        help="environment variable holding the API key (default: CONTINUUM_API_KEY)",
    )
    return parser


async def _make_model(args: argparse.Namespace, stack: contextlib.AsyncExitStack) -> Model:
    from .providers import AnthropicModel, OpenAICompatibleModel

    key = os.environ.get(args.api_key_env)
    if args.openai:
        model: Model = OpenAICompatibleModel(args.openai, args.model, api_key=key)
    elif args.anthropic:
        model = AnthropicModel(args.anthropic, args.model, api_key=key)
    else:
        from .simulator import Simulator

        sim = await stack.enter_async_context(Simulator(tokens_per_second=200))
        print(f"(offline: answers come from the built-in simulator at {sim.base_url})")
        model = OpenAICompatibleModel(sim.openai_base_url, args.model)
    close = getattr(model, "aclose", None)
    if close is not None:
        stack.push_async_callback(close)
    return model


async def _show(events: object) -> None:
    async for event in events:  # type: ignore[attr-defined]
        if event.type is EventType.TEXT_DELTA:
            print(event.text, end="", flush=True)
        elif event.type is EventType.TOOL_CALL:
            print(f"\n[tool {event.call.name}]", flush=True)
        elif event.type is EventType.MODEL_STOPPED:
            print(f"\n[stopped: {event.stop_reason}]", flush=True)
        elif event.type is EventType.RETRY:
            print(f"\n[retrying in {event.delay:.1f}s: {event.error}]", flush=True)
    print()


async def _run(args: argparse.Namespace) -> int:
    data_dir = args.data_dir or Path(user_data_dir("Continuum", appauthor=False))
    data_dir.mkdir(parents=True, exist_ok=True)
    async with contextlib.AsyncExitStack() as stack:
        storage = SQLiteSessionExtension(data_dir / "continuum.sqlite")
        client = AgentClient(await _make_model(args, stack), extensions=[storage])
        stack.push_async_callback(client.close)
        await client.open()
        session = args.session
        print(HELP)
        status = await client.resume_status(session)
        if isinstance(status, ResumePoint):
            print(f"(this conversation can be resumed: {status.description} Type /resume)")
        loop = asyncio.get_running_loop()
        while True:
            try:
                line = await loop.run_in_executor(None, input, "> ")
            except EOFError:
                return 0
            text = line.strip()
            if not text:
                continue
            if text == "/quit":
                return 0
            if text == "/new":
                session = (await client.create_session()).id
                print(f"(new conversation {session})")
                continue
            if text == "/history":
                for message in await client.history(session):
                    print(f"{type(message).__name__}: {getattr(message, 'content', '')[:200]}")
                continue
            if text == "/resume":
                status = await client.resume_status(session)
                if not isinstance(status, ResumePoint):
                    print(f"(nothing to resume: {status.description})")
                    continue
                events = client.stream_resume(session)
            else:
                events = client.stream(session, text)
            task = asyncio.ensure_future(_show(events))
            try:
                await asyncio.shield(task)
            except KeyboardInterrupt:
                task.cancel()
            except asyncio.CancelledError:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                print("\n(stopped — type /resume to continue)")
            except ContinuumError as err:
                print(f"\n(error: {err} — type /resume to continue)")
            except Exception as err:  # connection errors from the provider, with their text
                print(f"\n(error: {type(err).__name__}: {err} — type /resume to continue)")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return asyncio.run(_run(args))
    except KeyboardInterrupt:
        return 130
    except ContinuumError as err:
        print(f"continuum-chat: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
