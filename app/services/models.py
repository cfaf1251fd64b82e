"""Settings → the provider model: building it (API key from the env var or keyring), the
in-process simulator behind "try it offline", and :class:`NoModel`, the stand-in that tells the
person to set a provider up."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from ..errors import ProviderConnectionError
from ..model import Model
from ..secrets import DEFAULT_KEY_ENV, get_api_key
from ..settings import Settings
from .failures import close_logged

if TYPE_CHECKING:
    from ..providers import HTTPModel

__all__ = ["Models", "NoModel", "provider_model", "simulator_settings"]


def provider_model(
    settings: Settings, key: str | None, *, timeout: Any = None, model: str | None = None
) -> HTTPModel:
    """The provider model ``settings`` describe (one place for chats and Test connection).

    ``timeout`` overrides the provider's default; ``model`` overrides the model name.
    """
    from ..providers import AnthropicModel, OpenAICompatibleModel

    name = model if model is not None else settings.model
    extra: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    if settings.provider_kind == "anthropic":
        return AnthropicModel(settings.base_url, name, api_key=key, **extra)
    return OpenAICompatibleModel(
        settings.base_url,
        name or "default",
        api_key=key,
        stream_options=settings.stream_options,
        **extra,
    )


class Models:
    """Builds provider models from settings and runs the offline simulator."""

    def __init__(self, model_factory: Callable[[Settings], Model] | None = None) -> None:
        self._model_factory = model_factory
        self.simulator: Any = None

    async def start_simulator(self, *, tokens_per_second: float) -> str:
        """Start the offline provider simulator on a free loopback port; returns its base URL."""
        if self.simulator is None:
            from ..simulator import Simulator

            simulator = Simulator(tokens_per_second=tokens_per_second)
            await simulator.start()
            self.simulator = simulator
        base_url: str = self.simulator.openai_base_url
        return base_url

    async def stop_simulator(self) -> None:
        if self.simulator is not None:
            simulator, self.simulator = self.simulator, None
            await close_logged(
                "the offline simulator", lambda: asyncio.wait_for(simulator.stop(), 5)
            )

    def build(self, settings: Settings) -> Model:
        """The provider model for ``settings`` (the API key from the env var or keyring)."""
        if self._model_factory is not None:
            return self._model_factory(settings)
        key = get_api_key(settings.key_service(), settings.api_key_env or DEFAULT_KEY_ENV)
        return provider_model(settings, key)


def simulator_settings(settings: Settings, base_url: str) -> Settings:
    """``settings`` switched to the simulator at ``base_url`` (prompt, folder, MCP, theme kept)."""
    return Settings(
        provider_kind="simulator",
        base_url=base_url,
        model=settings.model or "sim-echo",
        system_prompt=settings.system_prompt,
        workspace=settings.workspace,
        mcp_servers=settings.mcp_servers,
        theme=settings.theme,
    )


async def list_models(model: Model) -> list[str]:
    """The model names ``model``'s provider offers (none if it cannot list them)."""
    lister = getattr(model, "list_models", None)
    if lister is None:
        return []
    models: list[str] = await lister()
    return models


class NoModel:
    """Stands in until a provider is configured: a request says what to do."""

    name = "none"

    def stream(self, request: Any) -> AsyncIterator[Any]:
        return self

    def __aiter__(self) -> AsyncIterator[Any]:
        return self

    async def __anext__(self) -> Any:
        raise ProviderConnectionError(
            "No model provider is set up yet. Open Settings to choose one, or pick "
            "“Try it offline” to use the built-in simulator.",
            retryable=False,
        )
