"""Applies the View → Theme choice to the running application: its palette, kept in step.

One :class:`Appearance` per ``QApplication`` (:meth:`Appearance.of`) owns the choice. ``apply``
sets the application palette from :func:`ui.theme.palette_for`; every widget then gets an
``ApplicationPaletteChange`` (the window re-renders its transcript rows on it). While the choice
is ``"system"`` it follows ``QStyleHints.colorSchemeChanged``. Widgets that need a colour the
palette has no role for ask :meth:`Appearance.current_tokens`.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from .theme import THEME_CHOICES, ThemeChoice, Tokens, needs_fusion, palette_for, resolve_theme

__all__ = ["Appearance", "effective_scheme", "needs_fusion"]

log = logging.getLogger(__name__)


def effective_scheme(reported: Qt.ColorScheme, platform: QPalette) -> Qt.ColorScheme:
    """The desktop's scheme: as reported, else (unknown) read from the palette it gave us."""
    if reported != Qt.ColorScheme.Unknown:
        return reported
    dark = platform.color(QPalette.ColorRole.Window).lightness() < 128
    return Qt.ColorScheme.Dark if dark else Qt.ColorScheme.Light


def _as_choice(choice: str) -> ThemeChoice:
    for known in THEME_CHOICES:
        if choice == known:
            return known
    log.warning("unknown theme %s, following the system", repr(choice)[:80])
    return "system"


class Appearance(QObject):
    """The application's theme: the choice, the tokens in use, the palette set from them."""

    #: The tokens now in use, after they changed.
    tokensChanged = Signal(object)

    def __init__(self, app: QGuiApplication) -> None:
        super().__init__(app)
        self.setObjectName("appearance")
        self._app = app
        # What the desktop gave, before any palette of ours: its lightness stands in for a
        # colour scheme the platform does not report.
        self._platform = QPalette(QGuiApplication.palette())
        self._choice: ThemeChoice = "system"
        self._tokens: Tokens | None = None
        QGuiApplication.styleHints().colorSchemeChanged.connect(self.system_scheme_changed)

    @classmethod
    def of(cls, app: QGuiApplication | None = None) -> Appearance:
        """The application's one :class:`Appearance` (made on first use)."""
        app = app or QGuiApplication.instance()  # type: ignore[assignment]
        if not isinstance(app, QGuiApplication):
            raise RuntimeError("Appearance needs a running QGuiApplication")
        found = app.findChild(Appearance, "appearance", Qt.FindChildOption.FindDirectChildrenOnly)
        return found if isinstance(found, Appearance) else cls(app)

    @property
    def choice(self) -> ThemeChoice:
        return self._choice

    def current_tokens(self) -> Tokens:
        """The tokens the application paints with now."""
        if self._tokens is None:
            return resolve_theme(self._choice, self.system_scheme())
        return self._tokens

    def system_scheme(self) -> Qt.ColorScheme:
        return effective_scheme(QGuiApplication.styleHints().colorScheme(), self._platform)

    def apply(self, choice: str) -> Tokens:
        """Use ``choice`` (``"system"``, ``"light"`` or ``"dark"``; anything else is
        ``"system"``) and set the application palette to match; returns the tokens."""
        self._choice = _as_choice(choice)
        self._use_fusion_if_needed()
        return self._refresh(self.system_scheme())

    def system_scheme_changed(self, scheme: Qt.ColorScheme) -> None:
        """The desktop switched light/dark: followed only while the choice is ``"system"``."""
        if self._choice == "system":
            self._refresh(effective_scheme(scheme, self._platform))

    def discard(self) -> None:
        """Stop theming: the application palette goes back to the desktop's (tests use it)."""
        QGuiApplication.styleHints().colorSchemeChanged.disconnect(self.system_scheme_changed)
        self._set_palette(self._platform)
        self.setParent(None)
        self.deleteLater()

    def _refresh(self, scheme: Qt.ColorScheme) -> Tokens:
        tokens = resolve_theme(self._choice, scheme)
        wanted = palette_for(tokens)
        # Unchanged colours would still re-render every row: set the palette only if it differs.
        if QGuiApplication.palette() != wanted:
            self._set_palette(wanted)
        if tokens != self._tokens:
            self._tokens = tokens
            self.tokensChanged.emit(tokens)
        return tokens

    def _set_palette(self, palette: QPalette) -> None:
        if isinstance(self._app, QApplication):
            QApplication.setPalette(palette)  # widgets get ApplicationPaletteChange
        else:
            QGuiApplication.setPalette(palette)

    def _use_fusion_if_needed(self) -> None:
        if not isinstance(self._app, QApplication):
            return  # no widgets, no style
        style = self._app.style()
        if style is not None and needs_fusion(style.name()):
            log.info("style %s ignores palettes: using Fusion for the themes", style.name())
            self._app.setStyle("Fusion")
