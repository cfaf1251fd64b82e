"""The conversation panel: one conversation's system prompt, provider, model and parameters.

Every field may stay empty: it then follows the default of Settings, shown as its placeholder
(the conversation stores only what the person set, so a later change of a default still
applies). "Reset to defaults" empties them all. The model box offers the names the chosen
provider lists (fetched in the background when the provider changes); only the parameters the
chosen provider uses are shown (reasoning effort: OpenAI-compatible; thinking budget:
Anthropic). :func:`panel_setup` turns what the fields hold into the :class:`Setup` (pure).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.services import Parameters, ProviderProfile, Settings, Setup

from .parameter_fields import ParameterFields
from .theme import SPACE, tokens_for

__all__ = ["ConversationPanel", "panel_setup"]

log = logging.getLogger(__name__)

ListModels = Callable[[ProviderProfile], Awaitable[list[str]]]


def panel_setup(
    base: Setup, prompt: str, profile: str | None, model: str, params: Parameters
) -> Setup:
    """The setup the panel's fields describe (empty text: the default). ``base``'s unknown
    keys are kept. Pure."""
    return Setup(
        system_prompt=prompt if prompt.strip() else None,
        profile=profile or None,
        model=model.strip() or None,
        parameters=params,
        extra=dict(base.extra),
    )


class ConversationPanel(QDialog):
    #: The model list for the chosen provider was shown (tests wait for it).
    modelsListed = Signal(list)

    def __init__(
        self,
        setup: Setup,
        settings: Settings,
        parent: QWidget | None = None,
        *,
        list_models: ListModels | None = None,
        title: str = "",
    ) -> None:
        super().__init__(parent)
        self.setObjectName("conversationPanel")
        self.setWindowTitle("Conversation settings")
        self.setAccessibleName("Conversation settings")
        self._setup = setup
        self._settings = settings
        self._list_models = list_models
        self._listing: asyncio.Task[None] | None = None
        default = settings.default

        self.about = QLabel(
            (f"“{title}”: " if title else "")
            + "what this conversation uses. Empty fields follow the defaults in Settings."
        )
        self.about.setObjectName("conversationAbout")
        self.about.setWordWrap(True)
        self.about.setTextFormat(Qt.TextFormat.PlainText)
        self.system_prompt = QPlainTextEdit(setup.system_prompt or "")
        self.system_prompt.setObjectName("conversationSystemPrompt")
        self.system_prompt.setAccessibleName("System prompt")
        self.system_prompt.setTabChangesFocus(True)
        shown = settings.system_prompt.strip()
        self.system_prompt.setPlaceholderText(
            f"Default: {shown[:200]}"
            if shown
            else "Default: none. Instructions for this conversation"
        )
        self.provider = QComboBox()
        self.provider.setObjectName("conversationProvider")
        self.provider.setAccessibleName("Provider")
        self.provider.addItem(f"Default ({default.name})" if default else "Default", None)
        for profile in settings.profiles:
            self.provider.addItem(profile.name, profile.id)
        chosen = self.provider.findData(setup.profile) if setup.profile else 0
        if setup.profile and chosen < 0:  # a provider removed since: say so, keep the choice
            self.provider.addItem(f"{setup.profile} (removed: the default is used)", setup.profile)
            chosen = self.provider.count() - 1
        self.provider.setCurrentIndex(max(chosen, 0))
        self.model = QComboBox()
        self.model.setObjectName("conversationModel")
        self.model.setAccessibleName("Model")
        self.model.setEditable(True)
        self.model.setCurrentText(setup.model or "")
        self.error = QLabel()
        self.error.setObjectName("conversationError")
        self.error.setWordWrap(True)
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        self.error.hide()
        self.reset_button = QPushButton("Reset to defaults")
        self.reset_button.setObjectName("conversationReset")
        self.reset_button.setAccessibleName("Reset to defaults")
        self.reset_button.setToolTip("Empty every field: this conversation follows Settings again")
        self.reset_button.clicked.connect(self.reset)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        form.addRow("&System prompt", self.system_prompt)
        form.addRow("&Provider", self.provider)
        form.addRow("&Model", self.model)
        self.parameters = ParameterFields(form, self, "conversation")
        self.parameters.set_defaults(settings.parameters)
        self.parameters.set_values(setup.parameters)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.addButton(self.reset_button, QDialogButtonBox.ButtonRole.ResetRole)
        for button in buttons.buttons():
            button.setIcon(QIcon())
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACE[4], SPACE[4], SPACE[4], SPACE[3])
        layout.setSpacing(SPACE[2])
        layout.addWidget(self.about)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        tokens = tokens_for(self.palette())
        self.about.setStyleSheet(f"color: {tokens.muted};")
        self.error.setStyleSheet(f"color: {tokens.danger};")
        self.provider.currentIndexChanged.connect(self._provider_changed)
        self._provider_changed()
        self.resize(max(self.sizeHint().width(), 520), self.sizeHint().height())

    # --- the provider and its models -------------------------------------------------------

    def profile(self) -> ProviderProfile | None:
        """The provider the chosen entry means (the default one for "Default")."""
        chosen = self._settings.profile(self.provider.currentData())
        return chosen or self._settings.default

    def _provider_changed(self) -> None:
        profile = self.profile()
        default_model = (
            profile.model
            if profile is not None
            and self.provider.currentData() not in (None, self._settings.default_profile)
            else self._settings.model
        )
        if edit := self.model.lineEdit():
            edit.setPlaceholderText(f"Default: {default_model}" if default_model else "Model name")
        self.parameters.show_for(profile.kind if profile else None)
        self._fetch_models(profile)

    def _fetch_models(self, profile: ProviderProfile | None) -> None:
        if self._list_models is None or profile is None:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._listing is not None:
            self._listing.cancel()
        task = asyncio.ensure_future(self._show_models(profile))
        self._listing = task
        self.destroyed.connect(lambda *_: task.cancel())

    async def _show_models(self, profile: ProviderProfile) -> None:
        assert self._list_models is not None
        try:
            names = await self._list_models(profile)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # a convenience: the name can still be typed
            log.info("the conversation panel could not list models: %s", type(err).__name__)
            names = []
        typed = self.model.currentText()
        self.model.clear()
        self.model.addItems(names)
        self.model.setCurrentText(typed)
        self.modelsListed.emit(names)

    # --- the result --------------------------------------------------------------------------

    def reset(self) -> None:
        """Every field empty: the conversation follows the defaults."""
        self.system_prompt.clear()
        self.provider.setCurrentIndex(0)
        self.model.setCurrentText("")
        self.parameters.clear()
        self.error.hide()

    def result_setup(self) -> Setup | None:
        """The setup the fields describe; ``None`` (and the problem shown) when one is wrong."""
        params, problem = self.parameters.values()
        if params is None:
            self.error.setText(problem or "")
            self.error.show()
            return None
        profile = self.provider.currentData()
        return panel_setup(
            self._setup,
            self.system_prompt.toPlainText(),
            profile if isinstance(profile, str) else None,
            self.model.currentText(),
            params,
        )

    def accept(self) -> None:
        if self.result_setup() is None:
            return
        super().accept()

    def done(self, result: int) -> None:
        if self._listing is not None and not self._listing.done():
            self._listing.cancel()
        super().done(result)
