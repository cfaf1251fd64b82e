"""Settings → Saved providers: the list of providers a conversation can use, and its editor.

The list shows every saved provider (:class:`~app.services.ProviderProfile`), the default one
marked; the Provider fields above it in the dialog edit that default one. Add… and Edit… open
:class:`ProfileEditor` (name, provider, address, model with the server's list fetched in the
background, API key, key variable); Remove takes one out (never the last; its keyring entry
goes on Save); Make default puts one in the fields above; Detect local servers looks for
Ollama, llama.cpp and LM Studio on this computer and offers each as a new provider.

Keys typed here go to the OS keyring on Save (each provider has its own entry), never into
the settings file. The rules — a name is unique, an address is needed, what a row says, which
provider becomes the default after a removal — are the pure functions at the top.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.services import (
    DEFAULT_KEY_ENV,
    LocalServer,
    ProviderProfile,
    Settings,
    delete_api_key,
    new_profile_id,
    set_api_key,
)

from .profile_editor import ProfileEditor, ProfileServices, profile_problem, spawn
from .settings_choices import CHOICES, choice_for

__all__ = [
    "ProfileEditor",
    "ProfileServices",
    "ProfilesBox",
    "after_removal",
    "profile_from_server",
    "profile_problem",
    "row_text",
    "store_profile_keys",
]

log = logging.getLogger(__name__)


# --- the rules (pure) -------------------------------------------------------------------------


def row_text(profile: ProviderProfile, default: bool) -> str:
    """What the list says for ``profile``: its name, provider and model (and "default")."""
    choice = CHOICES[choice_for(profile.kind, profile.base_url)]
    where = choice.label if profile.kind == "simulator" else profile.base_url.rstrip("/")
    model = f" · {profile.model}" if profile.model else ""
    mark = "  (default: the fields above)" if default else ""
    return f"{profile.name} — {where}{model}{mark}"


def after_removal(
    profiles: Sequence[ProviderProfile], default: str, removed: str
) -> tuple[list[ProviderProfile], str] | str:
    """The profiles and default once ``removed`` goes, or why it cannot (the last one)."""
    left = [p for p in profiles if p.id != removed]
    if not left:
        return "Keep at least one provider: change this one in the fields above instead."
    return left, default if default != removed else left[0].id


def profile_from_server(server: LocalServer, taken: Sequence[ProviderProfile]) -> ProviderProfile:
    """A new provider for a server found on this computer (named after it, uniquely)."""
    names = {p.name.casefold() for p in taken}
    name, number = server.name, 2
    while name.casefold() in names:
        name, number = f"{server.name} ({number})", number + 1
    profile_id = new_profile_id()
    return ProviderProfile(
        profile_id,
        name,
        "openai",
        server.base_url,
        server.models[0] if server.models else "",
        key_entry=f"profile:{profile_id}",
    )


# --- the list ---------------------------------------------------------------------------------


class ProfilesBox(QGroupBox):
    """Settings' list of saved providers (see the module docstring)."""

    #: A profile was made the default (or the default changed): the dialog's fields show it.
    defaultChosen = Signal(object)

    def __init__(
        self,
        profiles: Sequence[ProviderProfile],
        default: str,
        services: ProfileServices | None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("Saved providers (each conversation can use any of them)", parent)
        self.setObjectName("profilesBox")
        self.profiles = list(profiles)
        self.default = default
        self.keys: dict[str, str] = {}  # profile id -> a key typed here, stored on Save
        self.removed: list[ProviderProfile] = []
        self._services = services
        #: Opens the editor (tests put their own answer here: a profile, or None to cancel).
        self.edit_profile: Callable[[ProviderProfile, list[ProviderProfile]], Any] = self._ask
        self.list = QListWidget()
        self.list.setObjectName("profileList")
        self.list.setAccessibleName("Saved providers")
        self.list.setMaximumHeight(110)
        self.list.itemDoubleClicked.connect(lambda _item: self.edit_selected())
        self.add_button = QPushButton("Add…")
        self.add_button.setObjectName("profileAdd")
        self.edit_button = QPushButton("Edit…")
        self.edit_button.setObjectName("profileEdit")
        self.remove_button = QPushButton("Remove")
        self.remove_button.setObjectName("profileRemove")
        self.default_button = QPushButton("Make default")
        self.default_button.setObjectName("profileMakeDefault")
        self.detect_button = QPushButton("Detect local servers")
        self.detect_button.setObjectName("detectServers")
        self.detect_button.setEnabled(services is not None)
        self.detect_button.setToolTip("Look for Ollama, llama.cpp and LM Studio on this computer")
        self.status = QLabel()
        self.status.setObjectName("profileStatus")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.hide()
        self.detection: asyncio.Task[None] | None = None
        self.add_button.clicked.connect(self.add)
        self.edit_button.clicked.connect(self.edit_selected)
        self.remove_button.clicked.connect(self.remove_selected)
        self.default_button.clicked.connect(self.make_selected_default)
        self.detect_button.clicked.connect(self.detect)
        buttons = QHBoxLayout()
        for button in (self.add_button, self.edit_button, self.remove_button):
            buttons.addWidget(button)
        buttons.addWidget(self.default_button)
        buttons.addStretch(1)
        buttons.addWidget(self.detect_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.list)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        self._show()

    def _show(self) -> None:
        row = max(self.list.currentRow(), 0)
        self.list.clear()
        for profile in self.profiles:
            item = QListWidgetItem(row_text(profile, profile.id == self.default))
            item.setData(Qt.ItemDataRole.UserRole, profile.id)
            self.list.addItem(item)
        self.list.setCurrentRow(min(row, self.list.count() - 1))

    def say(self, text: str) -> None:
        self.status.setText(text)
        self.status.setVisible(bool(text))

    def selected(self) -> ProviderProfile | None:
        row = self.list.currentRow()
        return self.profiles[row] if 0 <= row < len(self.profiles) else None

    def _ask(self, profile: ProviderProfile, others: list[ProviderProfile]) -> Any:
        editor = ProfileEditor(profile, others, self._services, self)
        if editor.exec() != QDialog.DialogCode.Accepted:
            return None
        return editor.profile(), editor.api_key.text()

    def _edit(self, profile: ProviderProfile) -> bool:
        answer = self.edit_profile(profile, self.profiles)
        if answer is None:
            return False
        edited, key = answer if isinstance(answer, tuple) else (answer, "")
        problem = profile_problem(edited, self.profiles)
        if problem:
            self.say(problem)
            return False
        if key:
            self.keys[edited.id] = key
        ids = [p.id for p in self.profiles]
        if edited.id in ids:
            self.profiles[ids.index(edited.id)] = edited
        else:
            self.profiles.append(edited)
            self.list.setCurrentRow(len(self.profiles) - 1)
        self.say("")
        self._show()
        if edited.id == self.default:
            self.defaultChosen.emit(edited)
        return True

    def add(self) -> None:
        profile_id = new_profile_id()
        fresh = ProviderProfile(profile_id, "", "openai", key_entry=f"profile:{profile_id}")
        if self._edit(fresh):
            self.list.setCurrentRow(len(self.profiles) - 1)

    def edit_selected(self) -> None:
        profile = self.selected()
        if profile is not None:
            self._edit(profile)

    def remove_selected(self) -> None:
        profile = self.selected()
        if profile is None:
            return
        outcome = after_removal(self.profiles, self.default, profile.id)
        if isinstance(outcome, str):
            self.say(outcome)
            return
        was_default = profile.id == self.default
        self.profiles, self.default = outcome
        self.removed.append(profile)
        self.keys.pop(profile.id, None)
        self.say(f"{profile.name} is removed when you save (its key leaves the keyring).")
        self._show()
        if was_default:
            self.defaultChosen.emit(self.profiles[0])

    def make_selected_default(self) -> None:
        profile = self.selected()
        if profile is not None and profile.id != self.default:
            self.default = profile.id
            self._show()
            self.defaultChosen.emit(profile)

    def update_default(self, profile: ProviderProfile) -> None:
        """The fields above changed the default provider (Save reconciles them)."""
        self.profiles = [profile if p.id == profile.id else p for p in self.profiles]
        self._show()

    def detect(self) -> None:
        if self._services is None or (self.detection is not None and not self.detection.done()):
            return
        self.say("Looking for servers on this computer…")
        self.detect_button.setEnabled(False)
        self.detection = spawn(self._run_detect(self._services))

    async def _run_detect(self, services: ProfileServices) -> None:
        try:
            found = await services.discover_local_servers()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("detecting local servers failed")
            self.say("Detecting servers failed unexpectedly; the details are in the log.")
            found = None
        if found is not None:
            known = {p.base_url.rstrip("/") for p in self.profiles}
            new = [s for s in found if s.base_url.rstrip("/") not in known]
            for server in new:
                self.profiles.append(profile_from_server(server, self.profiles))
            if new:
                names = ", ".join(s.name for s in new)
                self.say(f"Added {names}. Make one the default, or pick it per conversation.")
            elif found:
                self.say("The servers running here are already in the list.")
            else:
                self.say(
                    "No server found on this computer. Start Ollama, llama.cpp or LM Studio, "
                    "then try again."
                )
            self._show()
        self.detect_button.setEnabled(True)


def store_profile_keys(box: ProfilesBox, settings: Settings) -> None:
    """On Save: the keys typed for providers go to the keyring (each under its own entry);
    removed providers' entries are deleted (unless a kept provider shares the entry, as two
    providers saved before profiles existed may). :class:`NoKeyringError` when none exists."""
    kept = {p.id: p for p in settings.profiles}
    for profile_id, key in box.keys.items():
        profile = kept.get(profile_id)
        if profile is not None:
            set_api_key(profile.key_service(), key, env_var=profile.api_key_env or DEFAULT_KEY_ENV)
    box.keys.clear()
    entries = {p.key_service() for p in kept.values()}
    for profile in box.removed:
        if profile.id not in kept and profile.key_service() not in entries:
            delete_api_key(profile.key_service())
