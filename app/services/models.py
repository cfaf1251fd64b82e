"""Settings → the provider model: building it (API key from the env var or keyring, the
request parameters to its constructor), the models of conversations whose setup differs from
the defaults (:meth:`Models.for_setup`, kept while their settings stay the same), the
in-process simulator behind "try it offline", and :class:`NoModel`, the stand-in that tells the
person to set a provider up."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from ..errors import ProviderConnectionError
from ..model import Model
from ..profiles import Parameters
from ..secrets import DEFAULT_KEY_ENV, get_api_key
from ..settings import Settings
from .failures import close_logged

if TYPE_CHECKING:
    from ..providers import HTTPModel

__all__ = ["Models", "NoModel", "provider_model", "simulator_settings"]


def provider_model(
    settings: Settings,
    key: str | None,
    *,
    timeout: Any = None,
    model: str | None = None,
    options: Parameters | None = None,
) -> HTTPModel:
    """The provider model ``settings`` describe (one place for chats and Test connection).

    ``timeout`` overrides the provider's default; ``model`` overrides the model name;
    ``options`` are the sampling parameters sent with each request (none: none sent).
    """
    from ..providers import AnthropicModel, OpenAICompatibleModel

    name = model if model is not None else settings.model
    extra: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    if settings.provider_kind == "anthropic":
        return AnthropicModel(settings.base_url, name, api_key=key, options=options, **extra)
    return OpenAICompatibleModel(
        settings.base_url,
        name or "default",
        api_key=key,
        stream_options=settings.stream_options,
        options=options,
        **extra,
    )


class Models:
    """Builds provider models from settings and runs the offline simulator."""

    def __init__(self, model_factory: Callable[[Settings], Model] | None = None) -> None:
        self._model_factory = model_factory
        self.simulator: Any = None
        #: Conversations' own models by the settings they were built from.
        self._built: dict[tuple[Any, ...], Model] = {}

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

    def for_setup(self, settings: Settings) -> Model:
        """The model for one conversation's provider ``settings`` (see
        :func:`app.services.setup.provider_settings`): built once, then reused while they
        stay the same."""
        key = (settings.default, settings.model, settings.parameters, settings.stream_options)
        model = self._built.get(key)
        if model is None:
            model = self._built[key] = self.build(settings)
        return model

    async def forget_built(self) -> None:
        """Close the conversations' models (the settings changed, or the app closes)."""
        built, self._built = self._built, {}
        for model in built.values():
            close = getattr(model, "aclose", None)
            if close is not None:
                await close_logged("a conversation's provider model", close)

    def build(self, settings: Settings, key: str | None = None) -> Model:
        """The provider model for ``settings`` (``key``, else the API key from the env var or
        keyring)."""
        if self._model_factory is not None:
            return self._model_factory(settings)
        key = key or get_api_key(settings.key_service(), settings.api_key_env or DEFAULT_KEY_ENV)
        return provider_model(settings, key, options=settings.parameters)


def simulator_settings(settings: Settings, base_url: str) -> Settings:
    """``settings`` with the simulator at ``base_url`` as the default provider (its profile,
    added if there is none; the other profiles, prompt, folder, MCP and theme kept)."""
    return dataclasses.replace(
        settings,
        provider_kind="simulator",
        base_url=base_url,
        model=settings.model or "sim-echo",
        api_key_env=None,
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
