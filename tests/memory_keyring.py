"""The one in-memory keyring of the tests: API keys set by a test stay in this process, so no
test touches the user's real keyring. The UI and hardening conftests install it (autouse)."""

from __future__ import annotations

from keyring.backend import KeyringBackend

__all__ = ["MemoryKeyring"]


class MemoryKeyring(KeyringBackend):
    """A keyring backend that keeps passwords in a dict, keyed by (service, username)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.passwords.pop((service, username), None)
