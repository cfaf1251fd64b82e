"""Find local model servers on their default loopback ports (Ollama, LM Studio, llama.cpp)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx

__all__ = ["KNOWN_LOCAL_SERVERS", "LocalServer", "discover_local_servers"]

KNOWN_LOCAL_SERVERS: tuple[tuple[str, int], ...] = (
    ("Ollama", 11434),
    ("LM Studio", 1234),
    ("llama.cpp server", 8080),
)


@dataclass(frozen=True, slots=True)
class LocalServer:
    name: str
    base_url: str
    models: list[str]


async def _probe(client: httpx.AsyncClient, name: str, port: int, host: str) -> LocalServer | None:
    base_url = f"http://{host}:{port}/v1"
    try:
        response = await client.get(f"{base_url}/models")
        if response.status_code != 200:
            return None
        data = response.json().get("data", [])
        models = [str(item["id"]) for item in data if isinstance(item, dict) and "id" in item]
    except (httpx.HTTPError, ValueError, AttributeError, TypeError):
        return None
    return LocalServer(name, base_url, models)


async def discover_local_servers(
    servers: tuple[tuple[str, int], ...] = KNOWN_LOCAL_SERVERS,
    *,
    host: str = "127.0.0.1",
    probe_timeout: float = 0.5,
) -> list[LocalServer]:
    """The servers that answer an OpenAI-style model listing, probed concurrently."""
    async with httpx.AsyncClient(timeout=probe_timeout, trust_env=False) as client:
        found = await asyncio.gather(*(_probe(client, n, p, host) for n, p in servers))
    return [server for server in found if server is not None]
