"""The simulator's HTTP server: a small HTTP/1.1 server on asyncio streams.

It speaks ``POST /v1/chat/completions`` (OpenAI SSE), ``POST /v1/messages`` (Anthropic SSE)
and ``GET /v1/models`` (errors in Anthropic's format for Anthropic clients: an
``anthropic-version`` header; an ``X-Sim-Fault`` response fault applies there too), records
every request it receives (``sim.requests``) and injects the faults of
:mod:`app.simulator.script`. It runs in the caller's event loop
(``async with Simulator() as sim``) or in its own thread (:class:`SimulatorThread`).

This module owns the server's life cycle, connections, routing and the request record. The
HTTP/1.1 framing is :mod:`app.simulator.http`; sending one answer (a paced stream)
:mod:`app.simulator.streaming`, what it contains :mod:`app.simulator.planning`, and applying
faults and the error answers :mod:`app.simulator.faults`.

Bounded on purpose: request heads and bodies have size limits, idle keep-alive connections
and stalls end after a timeout, at most ``max_connections`` are served at once, and the
request record keeps the last ``max_recorded`` requests.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .faults import send_error, send_fault_response
from .http import MAX_HEAD, BadRequest, Request, read_request, send_bytes, send_simple
from .planning import DEFAULT_MODELS
from .script import RESPONSE_FAULTS, Fault, Reply, SpecError, parse_header_spec, parse_spec
from .streaming import answer

__all__ = ["FAULT_HEADER", "RecordedRequest", "Simulator", "SimulatorThread"]

logger = logging.getLogger("app.simulator")

FAULT_HEADER: Final = "x-sim-fault"
_ROUTES: Final = {"/v1/chat/completions": "openai", "/v1/messages": "anthropic"}


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the simulator received it (headers lower-cased)."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes = field(repr=False)

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def __repr__(self) -> str:  # headers may carry a (test) key; keep reprs clean
        return f"RecordedRequest({self.method} {self.path}, {len(self.body)} bytes)"


class Simulator:
    """A loopback model provider for tests, benchmarks and offline use.

    ``tokens_per_second=0`` streams as fast as possible. ``api_key`` (optional) makes the
    simulator refuse requests without it (HTTP 401), to exercise that path.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        tokens_per_second: float = 0.0,
        default: Reply | None = None,
        models: Iterable[str] = DEFAULT_MODELS,
        api_key: str | None = None,
        stall_seconds: float = 60.0,
        idle_seconds: float = 30.0,
        max_body: int = 32 * 1024 * 1024,
        max_connections: int = 64,
        max_recorded: int = 10_000,
    ) -> None:
        if tokens_per_second < 0:
            raise ValueError("tokens_per_second cannot be negative (0 means no limit)")
        self.host = host
        self.port = port
        self.tokens_per_second = tokens_per_second
        self.default = default or Reply()
        self.models = tuple(models)
        self.stall_seconds = stall_seconds
        self.idle_seconds = idle_seconds
        self.max_body = max_body
        self.max_connections = max_connections
        self._api_key = api_key
        self._queue: collections.deque[Reply] = collections.deque()
        self._requests: collections.deque[RecordedRequest] = collections.deque(maxlen=max_recorded)
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._stopping = asyncio.Event()

    # -- public API --

    @property
    def base_url(self) -> str:
        """The API root (Anthropic's ``base_url``); OpenAI's is :attr:`openai_base_url`."""
        if self._server is None:
            raise RuntimeError("the simulator is not running; start it first")
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Requests received so far, oldest first."""
        return list(self._requests)

    def model_requests(self) -> list[RecordedRequest]:
        """Only the completion requests (not model listings)."""
        return [r for r in self._requests if r.method == "POST"]

    def clear_requests(self) -> None:
        self._requests.clear()

    def enqueue(self, *items: Reply | Fault | str) -> None:
        """Queue replies for the next requests that carry no ``X-Sim-Fault`` header.

        A :class:`Fault` is a default reply with that fault; a string is a fault spec.
        """
        for item in items:
            if isinstance(item, Fault):
                item = Reply(fault=item)
            elif isinstance(item, str):
                item = parse_spec(item)
            self._queue.append(item)

    @property
    def pending(self) -> int:
        """Queued replies not yet used."""
        return len(self._queue)

    @property
    def open_connections(self) -> int:
        return len(self._connections)

    async def wait_idle(self) -> None:
        """Wait until every client connection has ended (bound it with a timeout)."""
        while self._connections:
            await asyncio.wait(set(self._connections))

    async def start(self) -> None:
        if self._server is not None:
            return
        self._stopping = asyncio.Event()
        self._server = await asyncio.start_server(
            self._serve_connection, self.host, self.port, limit=MAX_HEAD
        )
        self.port = self._server.sockets[0].getsockname()[1]
        logger.info("simulator listening on %s", self.base_url)

    async def stop(self) -> None:
        """Stop listening and end every open connection (bounded)."""
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()
        server.close()
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5.0)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.wait_closed(), 5.0)

    async def __aenter__(self) -> Simulator:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def serve_forever(self) -> None:
        """Run until cancelled (what ``python -m app.simulator`` does)."""
        await self.start()
        try:
            await self._stopping.wait()
        finally:
            await self.stop()

    # -- connections --

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            if len(self._connections) > self.max_connections:
                await send_simple(
                    writer, 503, b"too many connections to the simulator", keep_alive=False
                )
                return
            while not self._stopping.is_set():
                try:
                    request = await read_request(
                        reader, idle_seconds=self.idle_seconds, max_body=self.max_body
                    )
                except BadRequest as err:
                    if err.path is None:  # not even a request head: plain text
                        await send_simple(writer, err.status, str(err).encode(), False)
                    else:
                        path = err.path.split("?", 1)[0].rstrip("/")
                        protocol = _ROUTES.get(path) or _protocol_of(path, err.headers)
                        await send_error(writer, protocol, err.status, f"{err}.", None,
                                         keep_alive=False)  # fmt: skip
                    return
                if request is None:
                    return
                if not await self._dispatch(request, reader, writer) or not request.keep_alive:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away; nothing to answer
        except asyncio.CancelledError:
            # stop() cancels open connections; the task ends normally then, because nobody
            # awaits it and asyncio would log a cancelled connection task as an error.
            if not self._stopping.is_set():
                raise
        finally:
            self._connections.discard(task)
            writer.close()
            try:
                await asyncio.wait_for(writer.wait_closed(), 1.0)
            except OSError:  # reset, broken pipe, or TimeoutError: the peer is gone anyway
                pass
            except Exception:
                logger.exception("simulator: closing a connection failed")

    # -- routing --

    async def _dispatch(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; False when the connection must not be reused."""
        path = request.path.split("?", 1)[0].rstrip("/") or "/"
        self._requests.append(RecordedRequest(request.method, path, request.headers, request.body))
        protocol = _ROUTES.get(path) or _protocol_of(path, request.headers)
        if path in ("/", "/health"):
            return await send_simple(writer, 200, b"Continuum simulator\n", True)
        if path not in ("/v1/models", "/v1/chat/completions", "/v1/messages"):
            return await send_error(writer, protocol, 404,
                                     f"No route {path!r} on the simulator.", None)  # fmt: skip
        expected_method = "GET" if path == "/v1/models" else "POST"
        if request.method != expected_method:
            message = f"Method not allowed: use {expected_method}."
            return await send_error(writer, protocol, 405, message, None)
        if self._api_key is not None and not self._authorized(request.headers):
            return await send_error(writer, protocol, 401, "Invalid API key (simulated).", None)
        if path == "/v1/models":
            return await self._answer_models(writer, protocol, request.headers)
        assert protocol is not None
        try:
            body = json.loads(request.body) if request.body else {}
            if not isinstance(body, dict):
                raise ValueError("the body must be a JSON object")
            reply = self._reply_for(request.headers)
        except (ValueError, SpecError) as err:
            return await send_error(writer, protocol, 400, f"Bad request: {err}", None)
        return await answer(
            protocol,
            body,
            reply,
            reader,
            writer,
            default_rate=self.tokens_per_second,
            stopping=self._stopping,
            stall_seconds=self.stall_seconds,
        )

    def _authorized(self, headers: Mapping[str, str]) -> bool:
        given = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        return given == self._api_key

    def _reply_for(self, headers: Mapping[str, str]) -> Reply:
        spec = headers.get(FAULT_HEADER)
        if spec:
            return parse_header_spec(spec)
        try:
            return self._queue.popleft()
        except IndexError:
            return self.default

    async def _answer_models(
        self, writer: asyncio.StreamWriter, protocol: str, headers: Mapping[str, str]
    ) -> bool:
        """The model list, or the response fault the request's ``X-Sim-Fault`` names."""
        spec = headers.get(FAULT_HEADER)
        if spec:
            try:
                fault = parse_header_spec(spec).fault
            except SpecError as err:
                return await send_error(writer, protocol, 400, f"Bad request: {err}", None)
            if fault is not None and fault.kind in RESPONSE_FAULTS:
                return await send_fault_response(writer, protocol, fault)
        return await self._send_models(writer)

    async def _send_models(self, writer: asyncio.StreamWriter) -> bool:
        data = [
            {"id": name, "object": "model", "type": "model", "created": 0,
             "owned_by": "continuum-sim", "display_name": name,
             "created_at": "2025-01-01T00:00:00Z"}
            for name in self.models
        ]  # fmt: skip
        payload = {
            "object": "list",
            "data": data,
            "has_more": False,
            "first_id": self.models[0] if self.models else None,
            "last_id": self.models[-1] if self.models else None,
        }
        return await send_bytes(
            writer, 200, json.dumps(payload).encode(), "application/json", [], True
        )


def _protocol_of(path: str, headers: Mapping[str, str]) -> str:
    """Whose error format a request outside the two completion routes gets: Anthropic's for
    its clients (an ``anthropic-version`` header, or a path ending in ``/messages``)."""
    if "anthropic-version" in headers or path.endswith("/messages"):
        return "anthropic"
    return "openai"


class SimulatorThread:
    """A :class:`Simulator` on its own event loop in a daemon thread, for blocking callers::

    with SimulatorThread() as sim:
        sim.enqueue(Fault.drop_after(3))
        requests.post(sim.openai_base_url + "/chat/completions", ...)
    """

    def __init__(self, **options: Any) -> None:
        self.simulator = Simulator(**options)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def start(self, timeout: float = 10.0) -> SimulatorThread:
        if self._thread is not None:
            return self
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self.simulator.start())
            except BaseException as err:  # reported to the starting thread
                failure.append(err)
                started.set()
                loop.close()
                return
            started.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self.simulator.stop())
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=run, name="continuum-sim", daemon=True)
        self._thread.start()
        if not started.wait(timeout):
            raise RuntimeError("the simulator did not start in time")
        if failure:
            self._thread = None
            raise failure[0]
        return self

    def stop(self, timeout: float = 10.0) -> None:
        thread, loop = self._thread, self._loop
        self._thread = self._loop = None
        if thread is None or loop is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)

    def __enter__(self) -> SimulatorThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return self.simulator.base_url

    @property
    def openai_base_url(self) -> str:
        return self.simulator.openai_base_url

    @property
    def requests(self) -> list[RecordedRequest]:
        return self.simulator.requests

    def enqueue(self, *items: Reply | Fault | str) -> None:
        self.simulator.enqueue(*items)  # a deque append is atomic; safe across threads
