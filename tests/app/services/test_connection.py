"""Settings → "Test connection": the words for each outcome (a table over the pure decision),
and the real probes over HTTP on 127.0.0.1 against the simulator (all well, a refused key, an
unknown model, a dead port, a stall, a server that refuses tools)."""

from __future__ import annotations

import socket

import httpx
import pytest

from app.errors import (
    ProviderAuthError,
    ProviderBadRequestError,
    ProviderConnectionError,
    ProviderContextLengthError,
    ProviderNotFoundError,
    ProviderRateLimitError,
    ProviderServerError,
    ProviderStreamError,
    ProviderTimeoutError,
)
from app.services import ConnectionReport, connection
from app.services.connection import Failure, Outcome, Probes, outcome_of, report_from
from app.settings import Settings
from app.simulator import Simulator

KEY = "sk-test-connection-0123456789"
OK = Outcome()
LISTED = Outcome(models=("sim-echo", "sim-claude"))


def probes(
    listing: Outcome = LISTED,
    stream: Outcome | None = OK,
    tools: Outcome | None = OK,
    *,
    model: str = "sim-echo",
    has_key: bool = True,
) -> Probes:
    return Probes(
        base_url="http://127.0.0.1:1/v1",
        model=model,
        has_key=has_key,
        listing=listing,
        stream=stream,
        tools=tools,
    )


def fail(kind: Failure, message: str = "It went wrong.") -> Outcome:
    return Outcome(failure=kind, message=message)


def marks(report: ConnectionReport) -> str:
    return "".join(check.mark for check in report.checks)


# (probes, marks for Server/API key/Model/Streaming/Tools, a phrase each of those rows says)
TABLE = [
    pytest.param(
        probes(),
        "✓✓✓✓✓",
        ["Reached", "accepted", "offers model 'sim-echo'", "streamed", "accepted a request"],
        id="all-well",
    ),
    pytest.param(
        probes(tools=Outcome(called_tool=True)),
        "✓✓✓✓✓",
        ["Reached", "accepted", "offers", "streamed", "called it"],
        id="all-well-tool-called",
    ),
    pytest.param(
        probes(has_key=False),
        "✓✓✓✓✓",
        ["Reached", "without a key", "offers", "streamed", "accepted"],
        id="no-key-needed",
    ),
    pytest.param(
        probes(fail(Failure.UNREACHABLE), None, None),
        "✗––––",
        ["Could not reach", "Not tried", "Not tried", "Not tried", "Not tried"],
        id="dead-port",
    ),
    pytest.param(
        probes(fail(Failure.TIMEOUT, "No answer within 20 s."), None, None),
        "✗––––",
        ["No answer within 20 s", "not reached", "not reached", "not reached", "not reached"],
        id="listing-timeout",
    ),
    pytest.param(
        probes(fail(Failure.BAD_SETTING, "Base URL 'x' must start with http://."), None, None),
        "✗––––",
        ["must start with http://", "Not tried", "Not tried", "Not tried", "Not tried"],
        id="bad-base-url",
    ),
    pytest.param(
        probes(fail(Failure.KEY_REFUSED, "HTTP 401: Invalid API key."), None, None),
        "✓✗–––",
        ["Reached", "refused the key", "key was refused", "key was refused", "key was refused"],
        id="listing-401",
    ),
    pytest.param(
        probes(fail(Failure.KEY_REFUSED, "HTTP 401."), None, None, has_key=False),
        "✓✗–––",
        ["Reached", "no key is set", "Not tried", "Not tried", "Not tried"],
        id="listing-401-no-key",
    ),
    pytest.param(
        probes(LISTED, fail(Failure.KEY_REFUSED, "HTTP 401."), None),
        "✓✗✓––",
        ["Reached", "refused the key", "offers", "key was refused", "key was refused"],
        id="public-listing-then-401",  # OpenRouter lists models without a key
    ),
    pytest.param(
        probes(LISTED, fail(Failure.NOT_FOUND, "HTTP 404: no model 'nope'."), None, model="nope"),
        "✓✓✗––",
        ["Reached", "accepted", "no model 'nope'", "model was not found", "model was not found"],
        id="unknown-model",
    ),
    pytest.param(
        probes(LISTED, fail(Failure.NOT_FOUND, "HTTP 404."), None, model="nope"),
        "✓✓✗––",
        ["Reached", "accepted", "It offers: sim-echo, sim-claude", "Not tried", "Not tried"],
        id="unknown-model-names-the-offered-ones",
    ),
    pytest.param(
        probes(LISTED, OK, OK, model="llama3"),
        "✓✓✓✓✓",
        ["Reached", "accepted", "answered to 'llama3'", "streamed", "accepted"],
        id="unlisted-alias-answers",  # Ollama answers to "llama3" but lists "llama3:latest"
    ),
    pytest.param(
        probes(LISTED, fail(Failure.BROKEN, "Cut."), None, model="llama3"),
        "✓✓✗✗–",
        ["Reached", "accepted", "does not list model 'llama3'", "Cut.", "streaming failed"],
        id="unlisted-and-stream-broken",
    ),
    pytest.param(
        probes(LISTED, fail(Failure.NOT_FOUND, "HTTP 404 at /chat/completions."), None),
        "✓✓✓✗–",
        ["Reached", "accepted", "offers", "HTTP 404 at /chat/completions", "streaming failed"],
        id="listed-model-but-404-on-the-stream",
    ),
    pytest.param(
        probes(fail(Failure.REFUSED, "HTTP 404: no route."), OK, OK),
        "✓✓✓✓✓",
        ["Reached", "accepted", "does not list its models", "streamed", "accepted"],
        id="no-model-listing",  # some servers have no /models
    ),
    pytest.param(
        probes(fail(Failure.REFUSED, "HTTP 404: no route."), fail(Failure.BROKEN, "HTML."), None),
        "✓––✗–",
        ["Reached", "Could not tell", "Could not tell", "HTML.", "streaming failed"],
        id="wrong-path-entirely",
    ),
    pytest.param(
        probes(LISTED, fail(Failure.REFUSED, "Unsupported parameter."), None),
        "✓✓✓✗–",
        ["Reached", "accepted", "offers", "Unsupported parameter.", "Not tried"],
        id="stream-refused",
    ),
    pytest.param(
        probes(LISTED, fail(Failure.TIMEOUT, "No answer within 20 s."), None),
        "✓✓✓✗–",
        ["Reached", "accepted", "offers", "No answer within 20 s.", "Not tried"],
        id="stream-timeout",
    ),
    pytest.param(
        probes(LISTED, OK, fail(Failure.REFUSED, "does not support tools")),
        "✓✓✓✓✗",
        ["Reached", "accepted", "offers", "streamed", "refused a request that offers a tool"],
        id="tools-refused",
    ),
    pytest.param(
        probes(LISTED, OK, fail(Failure.BROKEN, "arguments not valid JSON")),
        "✓✓✓✓✗",
        ["Reached", "accepted", "offers", "streamed", "arguments not valid JSON"],
        id="tools-broken",
    ),
    pytest.param(
        probes(LISTED, None, None, model=""),
        "✓✓✗––",
        ["Reached", "accepted", "No model is chosen", "no model is chosen", "no model is chosen"],
        id="no-model-chosen",
    ),
]


@pytest.mark.parametrize(("given", "expected", "phrases"), TABLE)
def test_the_words_for_each_outcome(given: Probes, expected: str, phrases: list[str]) -> None:
    report = report_from(given)
    assert [c.name for c in report.checks] == ["Server", "API key", "Model", "Streaming", "Tools"]
    assert marks(report) == expected, report.text()
    for check, phrase in zip(report.checks, phrases, strict=True):
        assert phrase.lower() in check.words.lower(), (check, phrase)
    assert report.ok is (expected == "✓✓✓✓✓")
    assert report.text().splitlines()[0] == f"{report.checks[0].mark} Server: " + (
        report.checks[0].words
    )


async def test_the_simulator_needs_no_test() -> None:
    report = await connection.test_connection(Settings(provider_kind="simulator"))
    assert marks(report) == "✓"
    assert "inside Continuum" in report.text()


# --- real HTTP against the simulator -------------------------------------------------------


def settings_for(sim: Simulator, *, kind: str = "openai", model: str = "sim-echo") -> Settings:
    url = sim.openai_base_url if kind == "openai" else sim.base_url
    return Settings(provider_kind=kind, base_url=url, model=model)  # type: ignore[arg-type]


async def test_all_checks_pass_on_the_simulator() -> None:
    async with Simulator() as sim:
        report = await connection.test_connection(settings_for(sim), KEY)
        assert marks(report) == "✓✓✓✓✓", report.text()
        assert report.ok
        sent = sim.model_requests()
        assert len(sent) == 2  # one streamed request, one offering a tool
        assert all(r.json()["stream"] is True for r in sent)
        assert "tools" not in sent[0].json()
        assert [t["function"]["name"] for t in sent[1].json()["tools"]] == ["ping"]
        assert sent[0].headers["authorization"] == f"Bearer {KEY}"  # the key it was given


async def test_all_checks_pass_on_the_simulators_anthropic_route() -> None:
    async with Simulator() as sim:
        report = await connection.test_connection(
            settings_for(sim, kind="anthropic", model="sim-claude"), KEY
        )
        assert marks(report) == "✓✓✓✓✓", report.text()
        sent = sim.model_requests()
        assert [r.path for r in sent] == ["/v1/messages", "/v1/messages"]
        assert sent[0].json()["max_tokens"] == 1  # a one-token request
        assert sent[0].headers["x-api-key"] == KEY


async def test_a_refused_key_stops_the_later_steps_and_never_shows_the_key() -> None:
    async with Simulator(api_key="sk-the-right-one-987654") as sim:
        report = await connection.test_connection(settings_for(sim), KEY)
        assert marks(report) == "✓✗–––", report.text()
        assert "refused the key" in report.checks[1].words
        assert "HTTP 401" in report.checks[1].words
        assert sim.model_requests() == []  # nothing more was sent once the key was refused
        assert KEY not in report.text() and "sk-the-right-one" not in report.text()


async def test_a_key_refused_only_on_the_stream_when_the_list_is_public() -> None:
    async with Simulator() as sim:
        # The server echoes the key in its refusal, as some do; the words never show it.
        sim.enqueue(f"status=401;message=Incorrect API key provided: {KEY}")
        report = await connection.test_connection(settings_for(sim), KEY)
        assert marks(report) == "✓✗✓––", report.text()
        assert KEY not in report.text()
        assert KEY[:12] not in report.text()


async def test_the_stored_key_is_used_when_none_is_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    async with Simulator(api_key=KEY) as sim:
        monkeypatch.setenv("CONTINUUM_TEST_KEY", KEY)
        settings = Settings(
            provider_kind="openai",
            base_url=sim.openai_base_url,
            model="sim-echo",
            api_key_env="CONTINUUM_TEST_KEY",
        )
        report = await connection.test_connection(settings)
        assert marks(report) == "✓✓✓✓✓", report.text()


async def test_an_unknown_model() -> None:
    async with Simulator() as sim:
        # What OpenAI answers for a model it does not have (the simulator answers any name).
        sim.enqueue("status=404;message=The model `nope` does not exist.")
        report = await connection.test_connection(settings_for(sim, model="nope"), KEY)
        assert marks(report) == "✓✓✗––", report.text()
        assert "no model 'nope'" in report.checks[2].words
        assert "It offers: sim-echo, sim-claude." in report.checks[2].words
        assert len(sim.model_requests()) == 1  # the tool request was not sent


async def test_a_dead_port_could_not_be_reached() -> None:
    with socket.socket() as sock:  # a port nothing listens on (bound, never listening)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        settings = Settings(
            provider_kind="openai", base_url=f"http://127.0.0.1:{port}/v1", model="m"
        )
        report = await connection.test_connection(settings, KEY)
    assert marks(report) == "✗––––", report.text()
    assert report.checks[0].words.startswith(f"Could not reach http://127.0.0.1:{port}/v1")
    assert all(check.words.startswith("Not tried") for check in report.checks[1:])


async def test_a_base_url_without_a_scheme_says_so() -> None:
    settings = Settings(provider_kind="openai", base_url="localhost:11434/v1", model="m")
    report = await connection.test_connection(settings, KEY)
    assert marks(report) == "✗––––", report.text()
    assert "http://" in report.checks[0].words


async def test_a_stalled_stream_times_out_in_words() -> None:
    async with Simulator() as sim:
        sim.enqueue("stall_after=0")
        report = await connection.test_connection(settings_for(sim), KEY, seconds=0.5)
        assert marks(report) == "✓✓✓✗–", report.text()
        assert "within 0.5 s" in report.checks[3].words


async def test_a_server_that_refuses_tools() -> None:
    async with Simulator() as sim:
        sim.enqueue(
            "text=OK",
            "status=400;message=registry.ollama.ai/library/gemma:2b does not support tools",
        )
        report = await connection.test_connection(settings_for(sim), KEY)
        assert marks(report) == "✓✓✓✓✗", report.text()
        assert "does not support tools" in report.checks[4].words


async def test_a_called_tool_is_reported() -> None:
    async with Simulator() as sim:
        sim.enqueue("text=OK", "tool=ping;args={}")
        report = await connection.test_connection(settings_for(sim), KEY)
        assert marks(report) == "✓✓✓✓✓", report.text()
        assert "called it" in report.checks[4].words


def _caused(err: Exception, cause: Exception) -> Exception:
    err.__cause__ = cause
    return err


@pytest.mark.parametrize(
    ("err", "kind"),
    [
        (TimeoutError(), Failure.TIMEOUT),
        (
            _caused(ProviderConnectionError("no"), httpx.ConnectError("refused")),
            Failure.UNREACHABLE,
        ),
        (_caused(ProviderTimeoutError("slow"), httpx.ConnectTimeout("t")), Failure.UNREACHABLE),
        (_caused(ProviderTimeoutError("slow"), httpx.ReadTimeout("t")), Failure.TIMEOUT),
        (ProviderConnectionError("bad URL", retryable=False), Failure.BAD_SETTING),
        (_caused(ProviderConnectionError("cut"), httpx.RemoteProtocolError("x")), Failure.BROKEN),
        (ProviderAuthError(f"refused {KEY}"), Failure.KEY_REFUSED),
        (ProviderNotFoundError("404"), Failure.NOT_FOUND),
        (ProviderBadRequestError("400"), Failure.REFUSED),
        (ProviderContextLengthError("full"), Failure.REFUSED),
        (ProviderRateLimitError("429"), Failure.BUSY),
        (ProviderServerError("503"), Failure.BUSY),
        (ProviderStreamError("cut"), Failure.BROKEN),
        (KeyError("bug"), Failure.BROKEN),
    ],
)
def test_what_each_error_counts_as(err: Exception, kind: Failure) -> None:
    outcome = outcome_of(err, seconds=20, secrets=(KEY,))
    assert outcome.failure is kind
    assert KEY not in outcome.message
    if kind is Failure.TIMEOUT:
        assert outcome.message == "No answer within 20 s."
    if isinstance(err, KeyError):
        assert outcome.message.startswith("The test failed unexpectedly (KeyError)")


async def test_the_test_sends_what_chats_send_including_stream_options() -> None:
    """Test connection builds its model like the chats do (one function): a person who
    switched ``stream_options`` off is tested without it, not with the default."""
    import dataclasses

    async with Simulator() as sim:
        off = dataclasses.replace(settings_for(sim), stream_options=False)
        assert marks(await connection.test_connection(off, KEY)) == "✓✓✓✓✓"
        assert all("stream_options" not in r.json() for r in sim.model_requests())
        before = len(sim.model_requests())
        await connection.test_connection(settings_for(sim), KEY)
        assert all("stream_options" in r.json() for r in sim.model_requests()[before:])
