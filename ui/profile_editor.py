"""Settings → Saved providers → Add…/Edit…: the editor of one saved provider.

Name, provider, server address, model (the server's list fetched in the background with
"List models", failures said in words), API key (kept for the keyring, stored on Save; empty:
unchanged) and key variable. OK checks the provider against the others
(:func:`profile_problem`: a unique name, an address).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Coroutine, Sequence
from typing import Any, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.services import DEFAULT_KEY_ENV, LocalServer, ProviderProfile

from .settings_choices import CHOICES, PROVIDER_CHOICES, choice_for
from .theme import SPACE

__all__ = ["ProfileEditor", "ProfileServices", "profile_problem", "spawn"]

log = logging.getLogger(__name__)


class ProfileServices(Protocol):
    """What the providers list asks of the app (``AppServices`` has both)."""

    async def profile_models(
        self, profile: ProviderProfile, key: str | None = None
    ) -> list[str]: ...

    async def discover_local_servers(self) -> list[LocalServer]: ...


def profile_problem(profile: ProviderProfile, others: Sequence[ProviderProfile]) -> str | None:
    """Why ``profile`` cannot be saved beside ``others`` (``None``: it can)."""
    name = profile.name.strip()
    if not name:
        return "Give the provider a name (for example Work proxy)."
    if any(p.name.strip().casefold() == name.casefold() for p in others if p.id != profile.id):
        return f"There is already a provider named {name!r}; choose another name."
    if profile.kind != "simulator" and not profile.base_url.strip():
        return "Enter the server address (for example http://localhost:11434/v1)."
    return None


class ProfileEditor(QDialog):
    """Add or edit one saved provider (OK checks it against the others)."""

    def __init__(
        self,
        profile: ProviderProfile,
        others: Sequence[ProviderProfile],
        services: ProfileServices | None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("profileEditor")
        self.setWindowTitle("Provider")
        self._profile, self._others, self._services = profile, list(others), services
        self.name = QLineEdit(profile.name)
        self.name.setObjectName("profileName")
        self.name.setPlaceholderText("For example Work proxy")
        self.provider = QComboBox()
        self.provider.setObjectName("profileProvider")
        for choice in PROVIDER_CHOICES:
            self.provider.addItem(choice.label, choice.key)
        self.provider.setCurrentIndex(
            self.provider.findData(choice_for(profile.kind, profile.base_url))
        )
        self.base_url = QLineEdit(profile.base_url)
        self.base_url.setObjectName("profileBaseUrl")
        self.model = QComboBox()
        self.model.setObjectName("profileModel")
        self.model.setEditable(True)
        self.model.setCurrentText(profile.model)
        self.list_models = QPushButton("List models")
        self.list_models.setObjectName("profileListModels")
        self.list_models.setToolTip("Ask the server which models it offers")
        self.list_models.setEnabled(services is not None)
        self.list_models.clicked.connect(self._fetch_models)
        self.api_key = QLineEdit()
        self.api_key.setObjectName("profileApiKey")
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText("Kept in the system keyring; empty: unchanged")
        self.key_env = QLineEdit(profile.api_key_env or "")
        self.key_env.setObjectName("profileKeyEnv")
        self.key_env.setPlaceholderText(DEFAULT_KEY_ENV)
        self.note = QLabel()
        self.note.setObjectName("profileNote")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.hide()
        self.fetch: asyncio.Task[None] | None = None
        self.provider.currentIndexChanged.connect(self._provider_changed)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(self.list_models)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("&Name", self.name)
        form.addRow("&Provider", self.provider)
        form.addRow("Server &address", self.base_url)
        form.addRow("&Model", model_row)
        form.addRow("API &key", self.api_key)
        form.addRow("Key &variable", self.key_env)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACE[4], SPACE[4], SPACE[4], SPACE[3])
        layout.addLayout(form)
        layout.addWidget(self.note)
        layout.addWidget(buttons)
        self._provider_changed()
        self.setMinimumWidth(520)

    def _provider_changed(self) -> None:
        choice = CHOICES[str(self.provider.currentData())]
        simulator = choice.kind == "simulator"
        self.base_url.setEnabled(not simulator)
        self.base_url.setPlaceholderText(choice.url_hint)
        if not simulator and not self.base_url.text().strip():
            self.base_url.setText(choice.default_url)
        self.api_key.setEnabled(choice.key_use != "none")

    def profile(self) -> ProviderProfile:
        """The provider as the fields say."""
        choice = CHOICES[str(self.provider.currentData())]
        entry = self._profile.key_entry or f"profile:{self._profile.id}"
        return dataclasses.replace(
            self._profile,
            name=self.name.text().strip(),
            kind=choice.kind,
            base_url="" if choice.kind == "simulator" else self.base_url.text().strip(),
            model=self.model.currentText().strip(),
            api_key_env=self.key_env.text().strip() or None,
            key_entry=entry,
        )

    def _say(self, text: str) -> None:
        self.note.setText(text)
        self.note.setVisible(bool(text))

    def accept(self) -> None:
        problem = profile_problem(self.profile(), self._others)
        if problem:
            self._say(problem)
            return
        super().accept()

    def _fetch_models(self) -> None:
        if self._services is None or (self.fetch is not None and not self.fetch.done()):
            return
        self._say("Asking the server for its models…")
        self.list_models.setEnabled(False)
        self.fetch = spawn(self._run_fetch(self._services, self.profile()))
        task = self.fetch
        self.destroyed.connect(lambda *_: task is not None and task.cancel())

    async def _run_fetch(self, services: ProfileServices, profile: ProviderProfile) -> None:
        try:
            names = await services.profile_models(profile, self.api_key.text() or None)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # a refused key, a server that is down: say it in words
            log.info("listing the models of %s failed: %s", profile.name, err)
            self._say(f"The models could not be listed: {err}. Check the address and key.")
        else:
            typed = self.model.currentText()
            self.model.clear()
            self.model.addItems(names)
            self.model.setCurrentText(typed or (names[0] if names else ""))
            self._say(f"{len(names)} models found." if names else "The server lists no models.")
        self.list_models.setEnabled(True)


def spawn(coro: Coroutine[Any, Any, None]) -> asyncio.Task[None] | None:
    """Run ``coro`` on the app's event loop (none here: it is closed, nothing runs)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        coro.close()
        return None
    return asyncio.ensure_future(coro)
