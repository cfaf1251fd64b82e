"""The simulator's HTTP server: a small HTTP/1.1 server on asyncio streams.

It speaks ``POST /v1/chat/completions`` (OpenAI SSE), ``POST /v1/messages`` (Anthropic SSE)
and ``GET /v1/models``, records every request it receives (``sim.requests``) and injects the
faults of :mod:`app.simulator.script`. It runs in the caller's event loop
(``async with Simulator() as sim``) or in its own thread (:class:`SimulatorThread`).

Bounded on purpose: request heads and bodies have size limits, idle keep-alive connections
and stalls end after a timeout, at most ``max_connections`` are served at once, and the
request record keeps the last ``max_recorded`` requests.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import http
import json
import logging
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..messages import StopReason
from . import wire
from .script import RESPONSE_FAULTS, Fault, FaultKind, Reply, SpecError, parse_spec

__all__ = ["FAULT_HEADER", "RecordedRequest", "Simulator", "SimulatorThread"]

logger = logging.getLogger("app.simulator")

FAULT_HEADER: Final = "x-sim-fault"
DEFAULT_MODELS: Final = ("sim-echo", "sim-claude")
_MAX_HEAD: Final = 64 * 1024
_FILLER: Final = (
    "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt "
    "ut labore et dolore magna aliqua"
).split()
_YIELD_EVERY: Final = 32  # at full speed, give the event loop a turn this often


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


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(slots=True)
class _Request:
    method: str
    path: str
    version: str
    headers: dict[str, str]
    body: bytes

    @property
    def keep_alive(self) -> bool:
        connection = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return connection == "keep-alive"
        return connection != "close"


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
            self._serve_connection, self.host, self.port, limit=_MAX_HEAD
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
                await self._send_simple(
                    writer, 503, b"too many connections to the simulator", keep_alive=False
                )
                return
            while not self._stopping.is_set():
                try:
                    request = await self._read_request(reader)
                except _BadRequest as err:
                    await self._send_simple(writer, err.status, str(err).encode(), False)
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

    async def _read_request(self, reader: asyncio.StreamReader) -> _Request | None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.idle_seconds)
        except (asyncio.IncompleteReadError, TimeoutError):
            return None
        except asyncio.LimitOverrunError:
            raise _BadRequest(431, "request head too large") from None
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise _BadRequest(400, "not an HTTP/1.x request")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if not line:
                continue
            name, sep, value = line.partition(":")
            if not sep:
                raise _BadRequest(400, "malformed header line")
            headers[name.strip().lower()] = value.strip()
        body = await self._read_body(reader, headers)
        return _Request(parts[0].upper(), parts[1], parts[2], headers, body)

    async def _read_body(self, reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
        if headers.get("transfer-encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            size_total = 0
            while True:
                size_line = await reader.readuntil(b"\r\n")
                try:
                    size = int(size_line.split(b";")[0].strip(), 16)
                except ValueError:
                    raise _BadRequest(400, "malformed chunked body") from None
                if size == 0:
                    await reader.readuntil(b"\r\n")  # no trailers are supported
                    return b"".join(chunks)
                size_total += size
                if size_total > self.max_body:
                    raise _BadRequest(413, "request body too large for the simulator")
                chunks.append(await reader.readexactly(size))
                await reader.readexactly(2)
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            raise _BadRequest(400, "bad Content-Length") from None
        if length < 0 or length > self.max_body:
            raise _BadRequest(413, "request body too large for the simulator")
        return await reader.readexactly(length) if length else b""

    # -- routing --

    async def _dispatch(
        self, request: _Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; False when the connection must not be reused."""
        path = request.path.split("?", 1)[0].rstrip("/") or "/"
        self._requests.append(RecordedRequest(request.method, path, request.headers, request.body))
        protocol = {"/v1/chat/completions": "openai", "/v1/messages": "anthropic"}.get(path)
        if path in ("/", "/health"):
            return await self._send_simple(writer, 200, b"Continuum simulator\n", True)
        if path not in ("/v1/models", "/v1/chat/completions", "/v1/messages"):
            return await self._send_error(writer, protocol or "openai", 404,
                                          f"No route {path!r} on the simulator.", None)  # fmt: skip
        expected_method = "GET" if path == "/v1/models" else "POST"
        if request.method != expected_method:
            return await self._send_simple(writer, 405, b"method not allowed", True)
        if self._api_key is not None and not self._authorized(request.headers):
            return await self._send_error(
                writer, protocol or "openai", 401, "Invalid API key (simulated).", None
            )
        if path == "/v1/models":
            return await self._send_models(writer)
        assert protocol is not None
        try:
            body = json.loads(request.body) if request.body else {}
            if not isinstance(body, dict):
                raise ValueError("the body must be a JSON object")
            reply = self._reply_for(request.headers)
        except (ValueError, SpecError) as err:
            return await self._send_error(writer, protocol, 400, f"Bad request: {err}", None)
        return await self._answer(protocol, body, reply, reader, writer)

    def _authorized(self, headers: Mapping[str, str]) -> bool:
        given = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        return given == self._api_key

    def _reply_for(self, headers: Mapping[str, str]) -> Reply:
        spec = headers.get(FAULT_HEADER)
        if spec:
            return parse_spec(spec)
        try:
            return self._queue.popleft()
        except IndexError:
            return self.default

    # -- answers --

    async def _answer(
        self,
        protocol: str,
        body: dict[str, Any],
        reply: Reply,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        fault = reply.fault
        if fault is not None and fault.kind in RESPONSE_FAULTS:
            return await self._send_fault_response(writer, protocol, fault)
        events: Iterator[bytes]
        if reply.raw is not None:
            events = wire.split_events(reply.raw.encode("utf-8"))
        else:
            plan = _plan(protocol, body, reply)
            events = (
                wire.openai_events(plan) if protocol == "openai" else wire.anthropic_events(plan)
            )
        rate = (
            reply.tokens_per_second if reply.tokens_per_second is not None
            else self.tokens_per_second
        )  # fmt: skip
        return await self._stream(writer, reader, protocol, events, fault, rate)

    async def _stream(
        self,
        writer: asyncio.StreamWriter,
        reader: asyncio.StreamReader,
        protocol: str,
        events: Iterator[bytes],
        fault: Fault | None,
        rate: float,
    ) -> bool:
        writer.write(
            _head(200, [("Content-Type", "text/event-stream; charset=utf-8"),
                        ("Cache-Control", "no-cache"), ("Transfer-Encoding", "chunked")])
        )  # fmt: skip
        loop = asyncio.get_running_loop()
        started = loop.time()
        sent = 0
        for event in events:
            if fault is not None and sent == fault.after:
                return await self._inject(writer, reader, protocol, fault)
            if writer.is_closing() or reader.at_eof():
                return False  # the client hung up
            if rate > 0:
                delay = started + sent / rate - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
            elif sent % _YIELD_EVERY == 0:
                await asyncio.sleep(0)
            writer.write(b"%x\r\n%s\r\n" % (len(event), event))
            await writer.drain()
            sent += 1
        if fault is not None:  # a fault placed past the last event happens at the end
            return await self._inject(writer, reader, protocol, fault)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    async def _inject(
        self,
        writer: asyncio.StreamWriter,
        reader: asyncio.StreamReader,
        protocol: str,
        fault: Fault,
    ) -> bool:
        if fault.kind is FaultKind.DROP:
            await writer.drain()
            writer.transport.abort()
            return False
        if fault.kind is FaultKind.STALL:
            await writer.drain()
            await self._hold(reader)
            writer.transport.abort()
            return False
        if fault.kind is FaultKind.EOF:
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        if fault.kind is FaultKind.MALFORMED:
            event = wire.malformed_event(protocol)
        else:  # ERROR_EVENT
            message = fault.message or _error_message(fault.error_type)
            event = (
                wire.openai_error_event(fault.error_type, message) if protocol == "openai"
                else wire.anthropic_error_event(fault.error_type, message)
            )  # fmt: skip
        writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(event), event))
        await writer.drain()
        return True

    async def _hold(self, reader: asyncio.StreamReader) -> None:
        """Send nothing until the client hangs up, the simulator stops, or the stall limit."""

        async def client_gone() -> None:
            while await reader.read(65536):
                pass

        gone = asyncio.ensure_future(client_gone())
        stopping = asyncio.ensure_future(self._stopping.wait())
        try:
            await asyncio.wait({gone, stopping}, timeout=self.stall_seconds,
                               return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        finally:
            for task in (gone, stopping):
                task.cancel()
            await asyncio.gather(gone, stopping, return_exceptions=True)

    async def _send_fault_response(
        self, writer: asyncio.StreamWriter, protocol: str, fault: Fault
    ) -> bool:
        if fault.kind is FaultKind.HTML:
            page = wire.html_error_page(fault.status, _phrase(fault.status))
            return await self._send_bytes(writer, fault.status, page, "text/html", [], True)
        if fault.kind is FaultKind.CONTEXT_FULL:
            if protocol == "openai":
                message = fault.message or (
                    "This model's maximum context length is 8192 tokens. However, your "
                    "messages resulted in 9001 tokens. Please reduce the length of the messages."
                )
                body = wire.openai_error_body(
                    400, message, "invalid_request_error", "context_length_exceeded"
                )
            else:
                message = fault.message or "prompt is too long: 210000 tokens > 200000 maximum"
                body = wire.anthropic_error_body("invalid_request_error", message)
            return await self._send_bytes(writer, 400, body, "application/json", [], True)
        extra: list[tuple[str, str]] = []
        if fault.retry_after is not None:
            extra.append(("Retry-After", str(max(0, round(fault.retry_after)))))
            extra.append(("Retry-After-Ms", str(int(fault.retry_after * 1000))))
        return await self._send_error(
            writer, protocol, fault.status, fault.message or _error_message(
                wire.error_type_for(fault.status)), extra,
        )  # fmt: skip

    async def _send_error(
        self,
        writer: asyncio.StreamWriter,
        protocol: str,
        status: int,
        message: str,
        extra: list[tuple[str, str]] | None,
    ) -> bool:
        error_type = wire.error_type_for(status)
        if protocol == "anthropic":
            body = wire.anthropic_error_body(error_type, message)
        else:
            code = {429: "rate_limit_exceeded", 401: "invalid_api_key"}.get(status)
            body = wire.openai_error_body(status, message, error_type, code)
        return await self._send_bytes(writer, status, body, "application/json", extra or [], True)

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
        return await self._send_bytes(
            writer, 200, json.dumps(payload).encode(), "application/json", [], True
        )

    async def _send_simple(
        self, writer: asyncio.StreamWriter, status: int, body: bytes, keep_alive: bool
    ) -> bool:
        return await self._send_bytes(writer, status, body, "text/plain", [], keep_alive)

    async def _send_bytes(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        body: bytes,
        content_type: str,
        extra: list[tuple[str, str]],
        keep_alive: bool,
    ) -> bool:
        headers = [("Content-Type", content_type), ("Content-Length", str(len(body))), *extra]
        if not keep_alive:
            headers.append(("Connection", "close"))
        writer.write(_head(status, headers) + body)
        await writer.drain()
        return keep_alive


def _phrase(status: int) -> str:
    if status == 529:
        return "Overloaded"
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _head(status: int, headers: list[tuple[str, str]]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_phrase(status)}", "Server: continuum-sim"]
    lines += [f"{name}: {value}" for name, value in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _error_message(error_type: str) -> str:
    return {
        "overloaded_error": "Overloaded (simulated).",
        "rate_limit_error": "Rate limit reached (simulated).",
        "api_error": "Internal server error (simulated).",
        "authentication_error": "Invalid API key (simulated).",
        "not_found_error": "Not found (simulated).",
        "invalid_request_error": "Invalid request (simulated).",
    }.get(error_type, f"{error_type} (simulated).")


# --- planning ------------------------------------------------------------------------------


def _text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a block list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def last_user_text(messages: Any) -> str:
    """The last non-empty user-turn text of a request (what the echo reply says)."""
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            text = _text_of(message.get("content"))
            if text:
                return text
    return ""


def _plan(protocol: str, body: Mapping[str, Any], reply: Reply) -> wire.Plan:
    if reply.tokens is not None:
        tokens = [f" {_FILLER[i % len(_FILLER)]}" for i in range(reply.tokens)]
    else:
        text = reply.text if reply.text is not None else last_user_text(body.get("messages"))
        tokens = wire.tokenize(text)
    calls = tuple(
        wire.PlannedCall(
            id=call.id or (f"call_{i}_{_short_id()}" if protocol == "openai"
                           else f"toolu_{i}_{_short_id()}"),
            name=call.name,
            arguments=call.arguments_text(),
        )
        for i, call in enumerate(reply.tool_calls)
    )  # fmt: skip
    stop = reply.stop or (StopReason.TOOL_USE if calls else StopReason.END_TURN)
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    if isinstance(limit, int) and limit >= 0 and len(tokens) > limit:
        tokens, calls, stop = tokens[:limit], (), StopReason.MAX_OUTPUT
    stream_options = body.get("stream_options")
    include_usage = protocol == "anthropic" or (
        isinstance(stream_options, dict) and bool(stream_options.get("include_usage"))
    )
    words = len(json.dumps(body.get("messages", [])).split())
    return wire.Plan(
        model=str(body.get("model") or DEFAULT_MODELS[0]),
        tokens=tuple(tokens),
        tool_calls=calls,
        stop=stop,
        argument_chunk=reply.argument_chunk,
        input_tokens=words,
        include_usage=include_usage,
    )


def _short_id() -> str:
    return uuid.uuid4().hex[:16]


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
