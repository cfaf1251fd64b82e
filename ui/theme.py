"""The app's colours: a small set of named tokens per theme, and the contrast they must keep.

Every colour the transcript (and, later, the window around it) paints comes from a
:class:`Tokens`; :data:`LIGHT` and :data:`DARK` are the two themes. :func:`tokens_for` picks the
theme matching a palette (so a row painted with a dark palette gets dark tokens without knowing
who chose it). :data:`TEXT_PAIRS` lists every text/link/state token with the background it is
read on; each pair must reach WCAG AA (4.5:1), which a test computes.

:func:`resolve_theme` turns the person's View → Theme choice and the desktop's colour scheme
into tokens; :func:`palette_for` maps tokens onto a ``QPalette`` (what widgets and the
transcript paint with). :mod:`ui.appearance` applies that palette to the running application.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NamedTuple

from PySide6.QtGui import QColor, QFont, QPalette

if TYPE_CHECKING:
    from PySide6.QtCore import Qt

__all__ = [
    "DARK",
    "DISABLED_MIN_CONTRAST",
    "LIGHT",
    "MIN_CONTRAST",
    "PALETTE_PAIRS",
    "SPACE",
    "TEXT_PAIRS",
    "THEME_CHOICES",
    "TYPE_SCALE",
    "ThemeChoice",
    "Tokens",
    "contrast",
    "needs_fusion",
    "small_font",
    "palette_for",
    "resolve_theme",
    "token_names",
    "tokens_for",
]

#: WCAG AA for body text.
MIN_CONTRAST = 4.5
#: Disabled text is dimmed, but stays at least this readable (WCAG's floor for large text).
DISABLED_MIN_CONTRAST = 3.0

#: View → Theme (the same values as ``app.settings.ThemeChoice``; a test keeps them equal).
ThemeChoice = Literal["system", "light", "dark"]
THEME_CHOICES: tuple[ThemeChoice, ...] = ("system", "light", "dark")

#: The spacing scale (px): every gap and padding in the transcript is one of these.
SPACE = (4, 8, 12, 16, 24)

#: The type scale: font sizes relative to the body font.
TYPE_SCALE = {"small": 0.85, "body": 1.0, "h3": 1.15, "h2": 1.3, "h1": 1.55}


class Tokens(NamedTuple):
    """One theme's named colours (``#rrggbb``). A named tuple, not a dataclass: the start window
    uses this module, and loading :mod:`dataclasses` and making the class cost ~4 ms there."""

    name: str
    dark: bool
    window: str  # the window around the transcript
    surface: str  # the transcript's background (answers are drawn straight on it)
    text: str
    muted: str  # headers, footers, reasoning, notes
    link: str
    accent: str  # primary buttons, focus rings
    on_accent: str  # text on the accent
    user_bubble: str  # the person's messages
    user_text: str
    code_bg: str
    code_header: str  # the strip above a code block (language, Copy)
    code_text: str
    border: str  # card and bubble outlines
    rule: str  # table rules
    selection_bg: str
    selection_text: str
    tool_bg: str  # a tool card
    draft_bg: str  # an interrupted draft (not saved)
    draft_border: str
    success: str
    danger: str
    warning: str
    info: str
    diff_add_bg: str  # an added line in a diff
    diff_del_bg: str  # a removed line
    diff_add_text: str  # the + sign (and strong text) on diff_add_bg
    diff_del_text: str  # the − sign on diff_del_bg

    def color(self, name: str) -> QColor:
        return QColor(getattr(self, name))


LIGHT = Tokens(
    name="light",
    dark=False,
    window="#f3f4f6",
    surface="#ffffff",
    text="#1f2328",
    muted="#59636e",
    link="#0a5cc2",
    accent="#2458c6",
    on_accent="#ffffff",
    user_bubble="#eef1f6",
    user_text="#1f2328",
    code_bg="#f6f8fa",
    code_header="#e9edf1",
    code_text="#1f2328",
    border="#d8dde3",
    rule="#c9d1d9",
    selection_bg="#b6d3ff",
    selection_text="#1f2328",
    tool_bg="#f7f8fa",
    draft_bg="#fff7e6",
    draft_border="#d48806",
    success="#1a7f37",
    danger="#b42318",
    warning="#8a5a00",
    info="#0a5cc2",
    diff_add_bg="#dcf5e3",
    diff_del_bg="#fde4e1",
    diff_add_text="#116329",
    diff_del_text="#a0111f",
)

DARK = Tokens(
    name="dark",
    dark=True,
    window="#18191c",
    surface="#212226",
    text="#e6e7ea",
    muted="#a3a8b0",
    link="#7db4ff",
    accent="#2f66cc",
    on_accent="#ffffff",
    user_bubble="#2e3138",
    user_text="#e6e7ea",
    code_bg="#17181b",
    code_header="#2a2c31",
    code_text="#e6e7ea",
    border="#3a3d44",
    rule="#4a4e57",
    selection_bg="#2f5a8f",
    selection_text="#ffffff",
    tool_bg="#26282d",
    draft_bg="#33291a",
    draft_border="#d99a3a",
    success="#6fd08c",
    danger="#ff8f87",
    warning="#f0c05a",
    info="#7db4ff",
    diff_add_bg="#1d3a27",
    diff_del_bg="#46242a",
    diff_add_text="#7ee2a0",
    diff_del_text="#ffa8a0",
)

#: (foreground token, background token): every text that must be readable where it is drawn.
TEXT_PAIRS: tuple[tuple[str, str], ...] = (
    ("text", "surface"),
    ("muted", "surface"),
    ("link", "surface"),
    ("text", "window"),
    ("muted", "window"),
    ("user_text", "user_bubble"),
    ("link", "user_bubble"),
    ("muted", "user_bubble"),
    ("code_text", "code_bg"),
    ("code_text", "code_header"),
    ("link", "code_header"),
    ("muted", "code_header"),
    ("on_accent", "accent"),
    ("selection_text", "selection_bg"),
    ("text", "tool_bg"),
    ("muted", "tool_bg"),
    ("link", "tool_bg"),
    ("success", "tool_bg"),
    ("danger", "tool_bg"),
    ("warning", "tool_bg"),
    ("info", "tool_bg"),
    ("success", "surface"),
    ("danger", "surface"),
    ("warning", "surface"),
    ("info", "surface"),
    ("text", "draft_bg"),
    ("muted", "draft_bg"),
    ("muted", "code_bg"),
    ("code_text", "diff_add_bg"),
    ("code_text", "diff_del_bg"),
    ("muted", "diff_add_bg"),
    ("muted", "diff_del_bg"),
    ("diff_add_text", "diff_add_bg"),
    ("diff_del_text", "diff_del_bg"),
)


def _luminance(color: QColor) -> float:
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(color.redF())
        + 0.7152 * channel(color.greenF())
        + 0.0722 * channel(color.blueF())
    )


def _as_color(value: QColor | str) -> QColor:
    return value if isinstance(value, QColor) else QColor(value)


def contrast(a: QColor | str, b: QColor | str) -> float:
    """The WCAG contrast ratio of two colours (1 to 21)."""
    # Not QColor(a) for a colour: resolving that overload makes the Qt namespace's enum classes
    # (QColor(Qt.GlobalColor) is a candidate), ~15 ms the start window must not spend.
    la, lb = sorted((_luminance(_as_color(a)), _luminance(_as_color(b))), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def small_font(font: QFont, *, bold: bool = False) -> QFont:
    """``font`` at the small step of :data:`TYPE_SCALE` (a point or pixel size), demi-bold
    with ``bold``: the sidebar's snippets, headers and badge."""
    small = QFont(font)
    if font.pointSizeF() > 0:
        small.setPointSizeF(max(font.pointSizeF() * TYPE_SCALE["small"], 6.0))
    else:
        small.setPixelSize(max(round(font.pixelSize() * TYPE_SCALE["small"]), 8))
    if bold:
        small.setWeight(QFont.Weight.DemiBold)
    return small


#: Styles that draw with the platform's theme engine and ignore an application palette (Qt's
#: QPalette documentation names these two); under them the themes would not show. (Here, not
#: in ui.appearance, which names the Qt namespace: the start window asks too.)
PALETTE_BLIND_STYLES = frozenset({"windowsvista", "macos"})


def needs_fusion(style_name: str) -> bool:
    """Whether the style ``style_name`` ignores palettes (so Fusion must draw instead)."""
    return style_name.lower() in PALETTE_BLIND_STYLES


def tokens_for(palette: QPalette) -> Tokens:
    """The theme matching ``palette`` (dark when its window colour is dark)."""
    return DARK if palette.color(QPalette.ColorRole.Window).lightness() < 128 else LIGHT


def token_names() -> list[str]:
    """Every colour token's name (tests check each is a valid colour)."""
    return [name for name in Tokens._fields if name not in ("name", "dark")]


def resolve_theme(choice: str, system_scheme: Qt.ColorScheme) -> Tokens:
    """The tokens for a View → Theme ``choice``: ``"system"`` follows ``system_scheme`` (an
    unknown scheme is light); an unknown choice is treated as ``"system"``."""
    if choice == "light":
        return LIGHT
    if choice == "dark":
        return DARK
    # Imported here: the start window uses this module, and importing the Qt namespace makes
    # Python enum classes of all its enums (~15-25 ms of a cold start; ui.start_window).
    from PySide6.QtCore import Qt

    return DARK if system_scheme == Qt.ColorScheme.Dark else LIGHT


_Role = QPalette.ColorRole
_Group = QPalette.ColorGroup

#: (foreground role, background role): text a widget draws on a palette background; in the
#: Active/Inactive groups each must reach MIN_CONTRAST, in the Disabled one DISABLED_MIN_CONTRAST.
PALETTE_PAIRS: tuple[tuple[QPalette.ColorRole, QPalette.ColorRole], ...] = (
    (_Role.WindowText, _Role.Window),
    (_Role.Text, _Role.Base),
    (_Role.Text, _Role.AlternateBase),
    (_Role.PlaceholderText, _Role.Base),
    (_Role.Link, _Role.Base),
    (_Role.LinkVisited, _Role.Base),
    (_Role.ButtonText, _Role.Button),
    (_Role.HighlightedText, _Role.Highlight),
    (_Role.ToolTipText, _Role.ToolTipBase),
)


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    """``a`` moved a fraction ``t`` of the way to ``b`` (rounded to 8-bit channels)."""
    return QColor(
        round(a.red() + (b.red() - a.red()) * t),
        round(a.green() + (b.green() - a.green()) * t),
        round(a.blue() + (b.blue() - a.blue()) * t),
    )


def _dimmed(foreground: QColor, backgrounds: list[QColor]) -> QColor:
    """``foreground`` faded toward ``backgrounds[0]`` (at most half way) while it still reaches
    :data:`DISABLED_MIN_CONTRAST` on every one of ``backgrounds``."""
    best = foreground
    for step in range(1, 11):
        candidate = _mix(foreground, backgrounds[0], step / 20)
        if min(contrast(candidate, b) for b in backgrounds) < DISABLED_MIN_CONTRAST:
            break
        best = candidate
    return best


def palette_for(tokens: Tokens) -> QPalette:
    """The ``QPalette`` painting with ``tokens``: every role set in every colour group."""
    c = tokens.color
    border = c("border")
    roles = {
        _Role.Window: c("window"),
        _Role.WindowText: c("text"),
        _Role.Base: c("surface"),
        _Role.AlternateBase: c("tool_bg"),
        _Role.Text: c("text"),
        _Role.PlaceholderText: c("muted"),
        _Role.Link: c("link"),
        _Role.LinkVisited: c("link"),
        _Role.Highlight: c("selection_bg"),
        _Role.HighlightedText: c("selection_text"),
        _Role.Accent: c("accent"),
        _Role.Button: c("code_header"),
        _Role.ButtonText: c("text"),
        _Role.BrightText: c("on_accent"),
        _Role.ToolTipBase: c("user_bubble"),
        _Role.ToolTipText: c("user_text"),
        # The bevel shades around frames and buttons, all from the outline colour.
        _Role.Light: border.lighter(130) if tokens.dark else c("surface"),
        _Role.Midlight: border.lighter(115) if tokens.dark else border.lighter(106),
        _Role.Mid: border,
        _Role.Dark: border.darker(150),
        _Role.Shadow: border.darker(300),
    }
    palette = QPalette()
    for group in (_Group.Active, _Group.Inactive, _Group.Disabled):
        for role, colour in roles.items():
            palette.setColor(group, role, colour)
    read_on: dict[QPalette.ColorRole, list[QColor]] = {}
    for foreground, background in PALETTE_PAIRS:
        read_on.setdefault(foreground, []).append(roles[background])
    for foreground, backgrounds in read_on.items():
        palette.setColor(_Group.Disabled, foreground, _dimmed(roles[foreground], backgrounds))
    return palette
