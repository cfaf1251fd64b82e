"""API keys: read from an environment variable the person chose, else the OS keyring.

Keys are never written to the database, the settings file, logs or exports. Where no keyring
backend exists (a headless Linux without a Secret Service), saving raises
:class:`NoKeyringError` with a message naming the environment variable to use instead.
``keyrings.alt`` (a plain-file "keyring") is deliberately not used.
"""

from __future__ import annotations

import logging
import os

from .errors import NoKeyringError

__all__ = [
    "DEFAULT_KEY_ENV",
    "KEYRING_SERVICE",
    "NoKeyringError",
    "delete_api_key",
    "get_api_key",
    "keyring_available",
    "set_api_key",
]

log = logging.getLogger(__name__)

KEYRING_SERVICE = "Continuum"
DEFAULT_KEY_ENV = "CONTINUUM_API_KEY"


def _backend() -> object | None:
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return None
    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 0) <= 0:
        return None
    return backend


def keyring_available() -> bool:
    """Whether keys can be stored in an OS keyring on this machine."""
    return _backend() is not None


def get_api_key(service: str, env_var: str | None = DEFAULT_KEY_ENV) -> str | None:
    """The key for ``service``: the environment variable first (if named and set), else keyring."""
    if env_var:
        value = os.environ.get(env_var)
        if value:
            return value
    if _backend() is None:
        return None
    import keyring
    from keyring.errors import KeyringError

    try:
        return keyring.get_password(KEYRING_SERVICE, service)
    except (KeyringError, RuntimeError) as err:
        log.warning("could not read the API key from the keyring: %s", type(err).__name__)
        return None


def set_api_key(service: str, key: str, *, env_var: str = DEFAULT_KEY_ENV) -> None:
    """Store ``key`` in the OS keyring; raises :class:`NoKeyringError` where there is none."""
    if _backend() is None:
        raise NoKeyringError(
            "This system has no keyring to keep the API key safely, so it was not saved. "
            f"Set the environment variable {env_var} to the key before starting Continuum."
        )
    import keyring
    from keyring.errors import KeyringError

    try:
        keyring.set_password(KEYRING_SERVICE, service, key)
    except (KeyringError, RuntimeError) as err:
        raise NoKeyringError(
            f"The keyring refused to store the API key ({type(err).__name__}); it was not "
            f"saved. Unlock the keyring and try again, or set {env_var} instead."
        ) from None


def delete_api_key(service: str) -> None:
    if _backend() is None:
        return
    import keyring
    from keyring.errors import KeyringError, PasswordDeleteError

    try:
        keyring.delete_password(KEYRING_SERVICE, service)
    except (PasswordDeleteError, KeyringError, RuntimeError):
        pass
