"""Themes: every text token readable on its background (WCAG AA), tokens mapped onto a real
QPalette, View → Theme switching the real window's colours, remembered across a restart, and
"System" following the desktop's light/dark scheme while a fixed choice ignores it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QMenu, QStyleOptionViewItem

from app import AssistantMessage, UserMessage
from app.settings import Settings, ThemeChoice, load_settings, save_settings, settings_from_data
from tests.ui.helpers import close_window, make_services, open_window, until
from ui.actions import MENUS, THEME_ACTIONS, SubMenu
from ui.appearance import Appearance, effective_scheme, needs_fusion
from ui.theme import (
    DARK,
    DISABLED_MIN_CONTRAST,
    LIGHT,
    MIN_CONTRAST,
    PALETTE_PAIRS,
    TEXT_PAIRS,
    THEME_CHOICES,
    Tokens,
    contrast,
    palette_for,
    resolve_theme,
    token_names,
    tokens_for,
)

OFFLINE = "http://127.0.0.1:9/v1"
Role, Group, Scheme = QPalette.ColorRole, QPalette.ColorGroup, Qt.ColorScheme
THEMES = (LIGHT, DARK)


@pytest.fixture(autouse=True)
def restore_theme(qapp: Any) -> Iterator[None]:
    """The QApplication is shared by the whole session: its palette and scheme come back."""
    saved = QPalette(QApplication.palette())
    yield
    QGuiApplication.styleHints().unsetColorScheme()
    found = qapp.findChild(Appearance, "appearance", Qt.FindChildOption.FindDirectChildrenOnly)
    if found is not None:
        found.discard()
    QApplication.setPalette(saved)


# --- tokens -----------------------------------------------------------------------------------

CONTRAST_CASES = [(t, fg, bg) for t in THEMES for fg, bg in TEXT_PAIRS]


@pytest.mark.parametrize(
    ("tokens", "fg", "bg"),
    CONTRAST_CASES,
    ids=[f"{t.name}-{fg}-on-{bg}" for t, fg, bg in CONTRAST_CASES],
)
def test_every_text_pair_reaches_aa_contrast(tokens: Tokens, fg: str, bg: str) -> None:
    ratio = contrast(getattr(tokens, fg), getattr(tokens, bg))
    assert ratio >= MIN_CONTRAST, f"{tokens.name}: {fg} on {bg} is {ratio:.2f}:1"


TOKEN_CASES = [(t, name) for t in THEMES for name in token_names()]


@pytest.mark.parametrize(
    ("tokens", "name"), TOKEN_CASES, ids=[f"{t.name}-{n}" for t, n in TOKEN_CASES]
)
def test_every_token_is_a_valid_colour(tokens: Tokens, name: str) -> None:
    value = getattr(tokens, name)
    assert re.fullmatch(r"#[0-9a-f]{6}", value), value
    assert QColor(value).isValid()


def test_the_pairs_name_real_tokens_and_cover_every_text_token() -> None:
    names = set(token_names())
    assert {n for pair in TEXT_PAIRS for n in pair} <= names
    text_like = {"text", "muted", "link", "on_accent", "user_text", "code_text", "selection_text"}
    states = {"success", "danger", "warning", "info"}
    assert text_like | states <= {fg for fg, _bg in TEXT_PAIRS}


def test_the_ui_and_the_settings_know_the_same_choices() -> None:
    assert THEME_CHOICES == get_args(ThemeChoice)


@pytest.mark.parametrize(
    ("choice", "scheme", "expected"),
    [
        ("system", Scheme.Dark, DARK),
        ("system", Scheme.Light, LIGHT),
        ("system", Scheme.Unknown, LIGHT),
        ("light", Scheme.Dark, LIGHT),
        ("light", Scheme.Unknown, LIGHT),
        ("dark", Scheme.Light, DARK),
        ("dark", Scheme.Unknown, DARK),
        ("purple", Scheme.Dark, DARK),  # unknown: as "system"
        ("", Scheme.Light, LIGHT),
    ],
)
def test_resolve_theme(choice: str, scheme: Qt.ColorScheme, expected: Tokens) -> None:
    assert resolve_theme(choice, scheme) is expected


# --- palette ----------------------------------------------------------------------------------

ROLE_TOKENS = [
    (Role.Window, "window"),
    (Role.WindowText, "text"),
    (Role.Base, "surface"),
    (Role.AlternateBase, "tool_bg"),
    (Role.Text, "text"),
    (Role.PlaceholderText, "muted"),
    (Role.Link, "link"),
    (Role.Highlight, "selection_bg"),
    (Role.HighlightedText, "selection_text"),
    (Role.Accent, "accent"),
    (Role.ButtonText, "text"),
    (Role.Mid, "border"),
    (Role.ToolTipText, "user_text"),
    (Role.ToolTipBase, "user_bubble"),
]
ROLE_CASES = [(t, role, token) for t in THEMES for role, token in ROLE_TOKENS]


@pytest.mark.parametrize(
    ("tokens", "role", "token"),
    ROLE_CASES,
    ids=[f"{t.name}-{r.name}" for t, r, _ in ROLE_CASES],
)
def test_palette_roles_come_from_the_tokens(
    qapp: Any, tokens: Tokens, role: QPalette.ColorRole, token: str
) -> None:
    palette = palette_for(tokens)
    for group in (Group.Active, Group.Inactive):
        assert palette.color(group, role).name() == getattr(tokens, token)


@pytest.mark.parametrize("tokens", THEMES, ids=[t.name for t in THEMES])
def test_palette_text_is_readable_and_disabled_text_dimmed_but_legible(
    qapp: Any, tokens: Tokens
) -> None:
    palette = palette_for(tokens)
    assert tokens_for(palette) is tokens
    for fg, bg in PALETTE_PAIRS:
        active = contrast(palette.color(Group.Active, fg), palette.color(Group.Active, bg))
        disabled = contrast(palette.color(Group.Disabled, fg), palette.color(Group.Disabled, bg))
        assert active >= MIN_CONTRAST, (fg.name, bg.name, active)
        assert DISABLED_MIN_CONTRAST <= disabled < active, (fg.name, bg.name, disabled)
    # The bevel shades run from light to dark in both themes (Fusion draws frames with them).
    shades = [palette.color(r).lightness() for r in (Role.Light, Role.Mid, Role.Dark, Role.Shadow)]
    assert shades == sorted(shades, reverse=True) and len(set(shades)) == 4


@pytest.mark.parametrize(
    ("style", "fusion"),
    [("windowsvista", True), ("macOS", True), ("Fusion", False), ("Windows", False), ("", False)],
)
def test_styles_that_ignore_palettes_get_fusion(style: str, fusion: bool) -> None:
    assert needs_fusion(style) is fusion


@pytest.mark.parametrize(
    ("reported", "platform_window", "expected"),
    [
        (Scheme.Dark, "#ffffff", Scheme.Dark),
        (Scheme.Light, "#202020", Scheme.Light),
        (Scheme.Unknown, "#202020", Scheme.Dark),  # a dark desktop palette without a scheme
        (Scheme.Unknown, "#efefef", Scheme.Light),
    ],
)
def test_an_unreported_scheme_is_read_from_the_desktop_palette(
    qapp: Any, reported: Qt.ColorScheme, platform_window: str, expected: Qt.ColorScheme
) -> None:
    platform = QPalette()
    platform.setColor(Role.Window, QColor(platform_window))
    assert effective_scheme(reported, platform) == expected


# --- settings ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "system"),
        ("system", "system"),
        ("light", "light"),
        ("dark", "dark"),
        ("Dark", "system"),
        ("purple", "system"),
        (5, "system"),
        (["dark"], "system"),
        ({"dark": True}, "system"),
    ],
)
def test_a_bad_theme_falls_back_to_system_and_keeps_the_rest(value: Any, expected: str) -> None:
    data = {"provider_kind": "simulator", "model": "sim-echo"}
    if value is not None:
        data["theme"] = value
    settings, skipped = settings_from_data(data)
    assert settings.theme == expected
    assert (settings.provider_kind, settings.model, skipped) == ("simulator", "sim-echo", [])


def test_the_theme_is_saved_and_loaded(tmp_path: Path) -> None:
    save_settings(tmp_path, Settings(provider_kind="simulator", theme="dark"))
    assert json.loads((tmp_path / "settings.json").read_text())["theme"] == "dark"
    loaded = load_settings(tmp_path)
    assert loaded.settings.theme == "dark" and loaded.problem is None


def test_a_bad_theme_in_the_file_does_not_set_it_aside(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text(
        json.dumps({"provider_kind": "simulator", "theme": "neon"})
    )
    loaded = load_settings(tmp_path)
    assert loaded.settings.theme == "system" and loaded.settings.provider_kind == "simulator"
    assert loaded.problem is None and (tmp_path / "settings.json").exists()


# --- the menu ---------------------------------------------------------------------------------


def test_view_theme_is_an_exclusive_submenu_of_three_choices() -> None:
    view = dict(MENUS)["&View"]
    (submenu,) = [entry for entry in view if isinstance(entry, SubMenu)]
    assert submenu.title == "&Theme" and submenu.exclusive
    assert [e.name for e in submenu.entries if e is not None] == list(THEME_ACTIONS.values())
    assert list(THEME_ACTIONS) == list(THEME_CHOICES)


# --- the real window --------------------------------------------------------------------------


def _theme_action(window: Any, choice: str) -> QAction:
    action = window.findChild(QAction, THEME_ACTIONS[choice])
    assert isinstance(action, QAction)
    return action


def _window_colour() -> str:
    return QApplication.palette().color(Role.Window).name()


def _viewport_colour(window: Any) -> str:
    """What the transcript really paints where no row is (its bottom-left corner)."""
    viewport = window.transcript.viewport()
    image = viewport.grab().toImage()
    return image.pixelColor(2, image.height() - 3).name()


async def _window_with_a_conversation(data_dir: Path) -> Any:
    services = await make_services(data_dir, OFFLINE)
    session = await services.new_session("Colours")
    store = services.storage.storage
    await store.append(session.id, "r1", UserMessage("Which colour?"))
    await store.append(session.id, "r1", AssistantMessage("See [the docs](https://example.com)."))
    await services.close()
    window = await open_window(data_dir, OFFLINE)
    await until(lambda: window.transcript_model.rowCount() == 2, what="the saved conversation")
    return window


def _render(window: Any, row: int) -> Any:
    option = QStyleOptionViewItem()
    window.transcript.initViewItemOption(option)
    item = window.transcript_model.item(row)
    return window.transcript.delegate.render_for(item, 600.0, option)


def test_the_menu_lists_the_choices_and_checks_the_saved_one(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        window = await open_window(tmp_path, None)
        try:
            actions = {c: _theme_action(window, c) for c in THEME_CHOICES}
            assert [a.text().replace("&", "") for a in actions.values()] == [
                "System",
                "Light",
                "Dark",
            ]
            assert all(a.isCheckable() for a in actions.values())
            assert [a.isChecked() for a in actions.values()] == [True, False, False]
            group = actions["dark"].actionGroup()
            assert group is not None and group.isExclusive()
            menus = [w for w in window.findChildren(QMenu) if w.title() == "&Theme"]
            assert len(menus) == 1 and menus[0].actions() == list(actions.values())
        finally:
            await close_window(window)

    run(scenario())


def test_choosing_dark_repaints_the_transcript_and_survives_a_restart(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> None:
        window = await _window_with_a_conversation(tmp_path)
        try:
            assert _window_colour() == LIGHT.window  # offscreen reports no scheme: light
            light = _render(window, 1)
            assert not light.dark
            uid = window.transcript_model.item(1).uid
            assert window.transcript.delegate._renders.get(uid) is light

            await until(lambda: _viewport_colour(window) == LIGHT.surface, what="a light paint")

            _theme_action(window, "dark").trigger()

            assert _window_colour() == DARK.window
            # Qt posts the palette change to the widgets; once it arrived, the rows baked in
            # light colours are gone.
            await until(
                lambda: window.transcript.palette().color(Role.Base).name() == DARK.surface,
                what="the palette change reaching the transcript",
            )
            assert light not in window.transcript.delegate._renders.values()
            dark = _render(window, 1)
            assert dark.dark
            css = " ".join(doc.defaultStyleSheet() for doc in dark.docs())
            assert DARK.link in css and LIGHT.link not in css
            await until(lambda: _viewport_colour(window) == DARK.surface, what="a dark repaint")
            assert _theme_action(window, "dark").isChecked()
            assert not _theme_action(window, "system").isChecked()
            saved = json.loads((tmp_path / "settings.json").read_text())
            assert saved["theme"] == "dark" and saved["base_url"] == OFFLINE
        finally:
            await close_window(window)

        # A fresh start: nothing of ours on the application, then the saved theme, unasked.
        Appearance.of().discard()
        QApplication.setPalette(palette_for(LIGHT))
        from ui.window import MainWindow

        services = await make_services(tmp_path, None)
        window = MainWindow(services)
        try:
            assert not window.isVisible() and _window_colour() == DARK.window
            assert _theme_action(window, "dark").isChecked()
            window.show()
            await window.start()
            await until(lambda: window.transcript_model.rowCount() == 2, what="the conversation")
            assert _render(window, 1).dark
        finally:
            await close_window(window)

    run(scenario())


def test_system_follows_the_desktop_and_a_fixed_choice_ignores_it(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        window = await open_window(tmp_path, None)
        hints = QGuiApplication.styleHints()

        def desktop_goes(scheme: Qt.ColorScheme) -> None:
            hints.setColorScheme(scheme)
            if hints.colorScheme() != scheme:
                # The offscreen platform has no scheme to switch (nothing is emitted): deliver
                # what a desktop's colorSchemeChanged would.
                window.appearance.system_scheme_changed(scheme)

        try:
            assert window.appearance.choice == "system"
            desktop_goes(Scheme.Dark)
            assert _window_colour() == DARK.window
            assert window.appearance.current_tokens() is DARK
            await until(lambda: _viewport_colour(window) == DARK.surface, what="a dark repaint")

            _theme_action(window, "light").trigger()
            assert _window_colour() == LIGHT.window
            desktop_goes(Scheme.Light)
            desktop_goes(Scheme.Dark)
            assert _window_colour() == LIGHT.window  # fixed: the desktop is not followed
            assert window.appearance.current_tokens() is LIGHT
            assert load_settings(tmp_path).settings.theme == "light"

            _theme_action(window, "system").trigger()
            desktop_goes(Scheme.Light)
            assert _window_colour() == LIGHT.window
            desktop_goes(Scheme.Dark)
            assert _window_colour() == DARK.window
            assert load_settings(tmp_path).settings.theme == "system"
        finally:
            await close_window(window)

    run(scenario())


def test_a_theme_that_cannot_be_saved_still_applies_and_says_so(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        window = await open_window(tmp_path, None)
        try:
            (tmp_path / "settings.json").unlink(missing_ok=True)
            (tmp_path / "settings.json").mkdir()  # the rename over it fails
            _theme_action(window, "dark").trigger()
            assert _window_colour() == DARK.window
            assert _theme_action(window, "dark").isChecked()
            assert "could not be saved" in window.statusBar().currentMessage()
            assert window.services.settings.theme == "system"  # not remembered
        finally:
            await close_window(window)

    run(scenario())


def test_applying_the_theme_in_use_again_changes_nothing(qapp: Any, qtbot: Any) -> None:
    appearance = Appearance.of()
    assert Appearance.of() is appearance  # one per application
    with qtbot.waitSignal(appearance.tokensChanged) as changed:
        appearance.apply("dark")
    assert changed.args == [DARK]
    in_use = QApplication.palette()
    seen: list[object] = []
    appearance.tokensChanged.connect(seen.append)
    appearance.apply("dark")  # a second window opening on the same choice
    assert QApplication.palette().isCopyOf(in_use)  # not set again: no re-render of every row
    assert seen == []
    appearance.apply("no-such-theme")  # treated as "system" (offscreen: light)
    assert appearance.choice == "system" and seen == [LIGHT]
