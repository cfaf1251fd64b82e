"""``continuum-chat``: a small command-line chat on the core, with Stop (Ctrl+C) and /resume.

With no provider options it starts the loopback provider simulator in this process, so it runs
offline on a fresh machine. Conversations are kept in the same database as the desktop app, and
each request claims its conversation the same way the app does (:mod:`app.locks`): a
conversation the app has open, or another ``continuum-chat`` is answering, is refused with a
message instead of being answered twice. At the prompt Ctrl+C clears the line (like a shell);
Ctrl+D or ``/quit`` exits with status 0.
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
from .errors import (
    ContinuumError,
    ProviderContextLengthError,
    SessionBusyError,
)
from .events import EventType
from .model import Model
from .resume import ResumePoint
from .storage.sqlite import SQLiteSessionExtension

HELP = (
    "Commands: /resume  /history  /new  /quit   (Ctrl+C stops a running answer or clears "
    "the line; Ctrl+D quits)"
)


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
        "--api-key-env",
        default="CONTINUUM_API_KEY",
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


def _data_dir_problem(data_dir: Path) -> str | None:
    """Why ``data_dir`` cannot hold the conversations (created if missing), or ``None``."""
    if data_dir.exists() and not data_dir.is_dir():
        return (
            f"cannot use {data_dir} as the data folder: it is a file, not a folder. "
            "Choose another with --data-dir."
        )
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        reason = err.strerror or type(err).__name__
        return (
            f"cannot create the data folder {data_dir} ({reason}). Choose another with --data-dir."
        )
    if not os.access(data_dir, os.W_OK | os.X_OK):
        return (
            f"cannot write in the data folder {data_dir}. Make it writable or choose "
            "another with --data-dir."
        )
    return None


def dead_end(error: BaseException) -> str | None:
    """What to do instead of ``/resume`` when resending would fail the same way, else None."""
    if isinstance(error, ProviderContextLengthError):
        return (
            "the conversation no longer fits this model's context; start a new one with /new "
            "(perhaps with a summary), or use a model with a larger context"
        )
    return None


class _Chat:
    """The REPL. Lines are read in the main thread between requests, so Ctrl+C at the prompt
    is an ordinary ``KeyboardInterrupt`` there; during a request the event loop's SIGINT
    handler cancels the request, which is a Stop."""

    def __init__(self, args: argparse.Namespace, data_dir: Path) -> None:
        self.args = args
        self.data_dir = data_dir
        self.session: str = args.session
        self.client: AgentClient | None = None
        self._stack = contextlib.AsyncExitStack()

    async def open(self) -> None:
        storage = SQLiteSessionExtension(self.data_dir / "continuum.sqlite")
        model = await _make_model(self.args, self._stack)
        client = AgentClient(model, extensions=[storage])
        self._stack.push_async_callback(client.close)
        self.client = client
        await client.open()
        print(HELP)
        status = await client.resume_status(self.session)
        if isinstance(status, ResumePoint):
            print(f"(this conversation can be resumed: {status.description} Type /resume)")

    async def close(self) -> None:
        await self._stack.aclose()

    def repl(self, runner: asyncio.Runner) -> int:
        while True:
            try:
                line = input("> ")
            except EOFError:  # Ctrl+D or the end of piped input
                print()
                return 0
            except KeyboardInterrupt:  # Ctrl+C at the prompt: drop the line, prompt again
                print()
                continue
            text = line.strip()
            if text == "/quit":
                return 0
            if text:
                runner.run(self.command(text))

    async def command(self, text: str) -> None:
        client = self.client
        assert client is not None
        if text == "/new":
            self.session = (await client.create_session()).id
            print(f"(new conversation {self.session})")
            return
        if text == "/history":
            for message in await client.history(self.session):
                print(f"{type(message).__name__}: {getattr(message, 'content', '')[:200]}")
            return
        if text == "/resume":
            status = await client.resume_status(self.session)
            if not isinstance(status, ResumePoint):
                print(f"(nothing to resume: {status.description})")
                return
            events = client.stream_resume(self.session)
        else:
            events = client.stream(self.session, text)
        try:
            async with contextlib.aclosing(events):  # type: ignore[type-var]
                await _show(events)
        except asyncio.CancelledError:  # Ctrl+C during the answer: a Stop, the chat goes on
            print("\n(stopped — type /resume to continue)")
        except SessionBusyError as err:
            print(f"\n({err})")
        except ContinuumError as err:
            print(f"\n(error: {err} — {dead_end(err) or 'type /resume to continue'})")
        except Exception as err:  # connection errors from the provider, with their text
            print(f"\n(error: {type(err).__name__}: {err} — type /resume to continue)")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    data_dir = args.data_dir or Path(user_data_dir("Continuum", appauthor=False))
    problem = _data_dir_problem(data_dir)
    if problem is not None:
        print(f"continuum-chat: {problem}", file=sys.stderr)
        return 1
    chat = _Chat(args, data_dir)
    with asyncio.Runner() as runner:
        try:
            runner.run(chat.open())
            return chat.repl(runner)
        except KeyboardInterrupt:  # Ctrl+C while starting, or twice during an answer
            return 130
        except ContinuumError as err:
            print(f"continuum-chat: {err}", file=sys.stderr)
            return 1
        finally:
            with contextlib.suppress(KeyboardInterrupt):
                runner.run(chat.close())


if __name__ == "__main__":
    sys.exit(main())
