"""An API key set through the settings never lands in the database, the JSONL log, log
records, an export or an error — and one round trip through a real Secret Service."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app import EventType
from app.errors import ProviderError
from app.secrets import get_api_key, set_api_key
from app.services import DATABASE_FILE, AppServices
from app.settings import Settings
from app.simulator import Fault, Reply, Simulator
from app.storage.jsonl import JSONLExtension

from .conftest import BOUND, MemoryKeyring

KEY = "sk-live-Continuum-4f2a9c7e1b3d5a68ZZ"


@pytest.fixture
async def keyed_sim() -> AsyncIterator[Simulator]:
    sim = Simulator(api_key=KEY)  # refuses requests that do not carry the key
    await sim.start()
    yield sim
    await sim.stop()


def chain(error: BaseException | None) -> str:
    """Every message and repr along an exception's cause/context chain."""
    parts = []
    while error is not None:
        parts += [str(error), repr(error), repr(error.args)]
        error = error.__cause__ or error.__context__
    return "\n".join(parts)


def folder_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_api_key_never_leaks(
    provider: str,
    tmp_path: Path,
    keyed_sim: Simulator,
    memory_keyring: MemoryKeyring,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger: app, httpx, httpcore, asyncio
    data = tmp_path / "data"
    services = AppServices(data)
    await services.open()
    base_url = keyed_sim.openai_base_url if provider == "openai" else keyed_sim.base_url
    services.save_settings(
        Settings(
            provider_kind=provider,
            base_url=base_url,  # type: ignore[arg-type]
            model="sim-echo",
        )
    )
    set_api_key(services.settings.key_service(), KEY)
    assert KEY in memory_keyring.passwords.values()  # in the keyring, and only there
    assert get_api_key(services.settings.key_service()) == KEY
    await services.configure_model()
    jsonl = tmp_path / "turns.jsonl"
    services.client.extensions = (*services.client.extensions, JSONLExtension(jsonl))
    errors: list[BaseException] = []
    try:
        async with asyncio.timeout(BOUND):
            session = await services.new_session("secret test")
            events = [e async for e in services.stream(session.id, "hello with a key")]
            assert events[-1].type is EventType.RUN_COMPLETED  # the key was sent and accepted
            sent = keyed_sim.model_requests()[-1].headers
            assert KEY in (sent.get("authorization", "") + sent.get("x-api-key", ""))

            # Failures, including a provider that echoes the key back in its error text.
            keyed_sim.enqueue(
                Fault.http_status(401, message=f"Incorrect API key provided: {KEY}."),
                Reply(text="one two three four five six", fault=Fault.drop_after(4)),
                Fault.html(502),
                Fault.html(502),
                Fault.html(502),
            )
            for text in ("first failure", "second failure", "third failure"):
                with pytest.raises(ProviderError) as caught:
                    [e async for e in services.stream(session.id, text)]
                errors.append(caught.value)
            stop = await services.resume_info(session.id)
            exports = await services.export_markdown(session.id) + await services.export_json(
                session.id
            )
            stored = folder_bytes(data)  # the database with its -wal and -shm, settings, locks
            assert (data / f"{DATABASE_FILE}-wal").exists()
    finally:
        await services.close()

    assert KEY not in chain(errors[0]) and "[redacted]" in str(errors[0])
    for error in errors:
        assert KEY not in chain(error)
    assert stop.stop is not None and KEY not in stop.stop.message
    assert KEY not in exports
    assert KEY.encode() not in stored and KEY.encode() not in folder_bytes(data)
    assert KEY.encode() not in jsonl.read_bytes() and jsonl.read_bytes()
    assert KEY not in repr(services.client.model) and KEY not in str(vars(services.client.model))
    logged = "\n".join(f"{r.getMessage()} {r.args!r} {r.exc_text or ''}" for r in caplog.records)
    assert caplog.records and KEY not in logged and KEY not in caplog.text


REAL_KEYRING_SCRIPT = textwrap.dedent("""
    import json, sys
    import keyring
    from keyring.backends import SecretService
    from app.secrets import delete_api_key, get_api_key, keyring_available, set_api_key

    key, service = sys.argv[1], "openai:http://127.0.0.1:1/v1"
    result = {"backend": type(keyring.get_keyring()).__module__, "available": keyring_available()}
    set_api_key(service, key)
    result["read_back"] = get_api_key(service, env_var=None)
    # Straight from the Secret Service, not through our code:
    result["in_secret_service"] = SecretService.Keyring().get_password("Continuum", service)
    delete_api_key(service)
    result["after_delete"] = get_api_key(service, env_var=None)
    print(json.dumps(result))
""")


@pytest.mark.timeout(90)
def test_round_trip_through_a_real_secret_service(tmp_path: Path) -> None:
    """gnome-keyring in a private D-Bus session (never the user's own keyring)."""
    for tool in ("dbus-run-session", "gnome-keyring-daemon"):
        assert shutil.which(tool), (
            f"{tool} is missing: install it (apt-get install gnome-keyring dbus-x11 dbus)"
        )
    script = tmp_path / "keyring_round_trip.py"
    script.write_text(REAL_KEYRING_SCRIPT)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_RUNTIME_DIR": str(runtime),
        "XDG_DATA_HOME": str(tmp_path / "share"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PY": sys.executable,
        "SCRIPT": str(script),
        "KEY": KEY,
    }
    done = subprocess.run(
        [
            "dbus-run-session",
            "--",
            "sh",
            "-c",
            "echo -n continuum-test | gnome-keyring-daemon --unlock --components=secrets "
            '>/dev/null && exec "$PY" "$SCRIPT" "$KEY"',
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {
        "backend": "keyring.backends.SecretService",
        "available": True,
        "read_back": KEY,
        "in_secret_service": KEY,
        "after_delete": None,
    }
    keyrings = tmp_path / "share" / "keyrings"
    assert keyrings.is_dir()  # the test's own keyring folder was used, not the user's
    assert KEY.encode() not in folder_bytes(keyrings)  # stored encrypted, not in clear
