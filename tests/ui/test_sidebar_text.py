"""What the sidebar says: plain titles, date groups, search spans (pure functions, tables)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

import pytest

from ui.sidebar_text import (
    UNTITLED,
    accessible_text,
    date_group,
    display_title,
    group_labels,
    match_spans,
    ms_until_tomorrow,
    no_match_text,
    plain_title,
    query_terms,
    section_labels,
    section_starts,
    snippet_spans,
    title_matches,
)

IMAGE_MARKUP = '<img src="file:///tmp/pytest-of-me/test_title_markup0/big.png"> <b>bold</b>'


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        ("# Release checklist Here is what **must*", "Release checklist Here is what must"),
        ("## Title ##", "Title"),
        (
            "**bold** and *italic* and _under_ and __strong__",
            "bold and italic and under and strong",
        ),
        ("~~gone~~ still", "gone still"),
        ("Run `pytest -q` now", "Run pytest -q now"),
        ("``a `b` c``", "a `b` c".replace("`", "")),
        ("See [the docs](https://example.com/x_y) first", "See the docs first"),
        ("![a chart](chart.png) of sales", "a chart of sales"),
        ("<https://example.com> is the site", "https://example.com is the site"),
        ("- first item\n- second item", "first item second item"),
        ("1. Install\n2. Run", "Install Run"),
        ("> quoted\n> > twice", "quoted twice"),
        ("```python\nprint(1)\n```", "print(1)"),
        ("above\n\n---\nbelow", "above below"),
        ("  lots   of\n\n space\t here ", "lots of space here"),
        (r"not \*emphasis\* and \# kept", "not *emphasis* and # kept"),
        ("snake_case and __init__ file", "snake_case and init file"),
        ("2*3 and a * b", "2*3 and a * b"),
        ("C# and F# are languages", "C# and F# are languages"),
        ("#hashtag stays", "#hashtag stays"),
        (IMAGE_MARKUP, IMAGE_MARKUP),  # not Markdown: shown literally, never as markup
        ("x < y > z", "x < y > z"),
        ("**", "**"),  # a run touching no word is text
        ("", ""),
        (None, ""),
    ],
)
def test_plain_title(raw: str | None, plain: str) -> None:
    assert plain_title(raw) == plain


@pytest.mark.parametrize(
    "raw",
    [
        "Plan the trip to Lisbon",
        "  lots   of\n\n space\t here ",
        "Why? Because (it said so), 100 % — ok.",
        "Café, naïve, 東京, emoji 🎉 and tabs\tinside",
        "year 2026 plans",
        "a line\n 3 starts with a digit",
        "1) numbered",
        "x = y; z / w",
        "private \ue000 use \ue07f chars",
        "- a dash",
        "see [x](y)",
    ],
)
def test_the_plain_shortcut_agrees_with_every_rule(raw: str) -> None:
    """Titles with no Markdown character skip the regular expressions (a cold start compiles
    none for them): the answer is the one all the rules give."""
    from ui.sidebar_text import _has_no_markdown, _without_markdown

    assert plain_title(raw) == _without_markdown(raw)
    plainly = _has_no_markdown(raw)
    assert plainly is (raw.startswith(("Plan", "  lots", "Why", "Café", "year", "x =")))


@pytest.mark.parametrize(
    ("raw", "shown"), [(None, UNTITLED), ("", UNTITLED), ("# ", UNTITLED), ("# Hi", "Hi")]
)
def test_display_title(raw: str | None, shown: str) -> None:
    assert display_title(raw) == shown


PLUS_TEN = timezone(timedelta(hours=10))


def _at(
    tz: timezone, year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> float:
    return datetime(year, month, day, hour, minute, second, tzinfo=tz).timestamp()


@pytest.mark.parametrize(
    ("now", "when", "group"),
    [
        # Midnight: one second apart, two days.
        (datetime(2026, 12, 3, 0, 0, 30, tzinfo=UTC), _at(UTC, 2026, 12, 3, 0, 0, 0), "Today"),
        (
            datetime(2026, 12, 3, 0, 0, 30, tzinfo=UTC),
            _at(UTC, 2026, 12, 2, 23, 59, 59),
            "Yesterday",
        ),
        (datetime(2026, 12, 3, 23, 59, 59, tzinfo=UTC), _at(UTC, 2026, 12, 3, 0, 0, 0), "Today"),
        (
            datetime(2026, 12, 3, 23, 59, 59, tzinfo=UTC),
            _at(UTC, 2026, 12, 2, 0, 0, 0),
            "Yesterday",
        ),
        # A clock set back: a time after now is still today.
        (datetime(2026, 12, 3, 9, 0, tzinfo=UTC), _at(UTC, 2026, 12, 4, 9, 0), "Today"),
        # Two to seven calendar days, eight to thirty.
        (datetime(2026, 12, 10, 1, 0, tzinfo=UTC), _at(UTC, 2026, 12, 8, 23, 0), "Previous 7 days"),
        (datetime(2026, 12, 10, 1, 0, tzinfo=UTC), _at(UTC, 2026, 12, 3, 0, 0), "Previous 7 days"),
        (
            datetime(2026, 12, 10, 1, 0, tzinfo=UTC),
            _at(UTC, 2026, 12, 2, 23, 59),
            "Previous 30 days",
        ),
        (datetime(2026, 12, 31, 1, 0, tzinfo=UTC), _at(UTC, 2026, 12, 1, 0, 0), "Previous 30 days"),
        (datetime(2026, 12, 31, 1, 0, tzinfo=UTC), _at(UTC, 2026, 11, 30, 23, 59), "November 2026"),
        # Month and year edges.
        (datetime(2026, 3, 1, 8, 0, tzinfo=UTC), _at(UTC, 2026, 2, 28, 22, 0), "Yesterday"),
        (datetime(2026, 3, 1, 8, 0, tzinfo=UTC), _at(UTC, 2026, 1, 31, 12, 0), "Previous 30 days"),
        (datetime(2026, 3, 1, 8, 0, tzinfo=UTC), _at(UTC, 2026, 1, 29, 12, 0), "January 2026"),
        (datetime(2027, 1, 1, 0, 5, tzinfo=UTC), _at(UTC, 2026, 12, 31, 23, 55), "Yesterday"),
        (datetime(2027, 1, 15, 9, 0, tzinfo=UTC), _at(UTC, 2026, 12, 1, 9, 0), "December 2026"),
        (datetime(2027, 1, 15, 9, 0, tzinfo=UTC), _at(UTC, 2025, 1, 20, 9, 0), "January 2025"),
        # Calendar days in now's zone: 23:30 UTC is already tomorrow at +10.
        (datetime(2026, 12, 4, 9, 0, tzinfo=PLUS_TEN), _at(UTC, 2026, 12, 3, 23, 30), "Today"),
        (datetime(2026, 12, 4, 9, 0, tzinfo=UTC), _at(UTC, 2026, 12, 3, 23, 30), "Yesterday"),
    ],
)
def test_date_group(now: datetime, when: float, group: str) -> None:
    assert date_group(when, now) == group


def test_group_labels_head_each_group_once() -> None:
    now = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
    hours = [1, 2, 30, 50, 60, 24 * 20, 24 * 40, 24 * 41, 24 * 80]
    times = [(now - timedelta(hours=h)).timestamp() for h in hours]
    assert group_labels(times, now) == [
        "Today",
        None,
        "Yesterday",
        "Previous 7 days",
        None,
        "Previous 30 days",
        "October 2026",
        None,
        "September 2026",
    ]
    assert group_labels([], now) == []


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("penguins", ["penguins"]),
        ("  Penguins   SOUTH ", ["penguins", "south"]),
        ('"emperor penguin" OR king', ["emperor", "penguin", "king"]),
        ("don't stop", ["don't", "stop"]),
        ("a-b_c", ["a", "b", "c"]),
        ("***", []),
        ("", []),
    ],
)
def test_query_terms(query: str, terms: list[str]) -> None:
    assert query_terms(query) == terms


@pytest.mark.parametrize(
    ("text", "terms", "spans"),
    [
        (
            "Penguins of the south",
            ["south", "penguin"],
            [("Penguins", True), (" of the ", False), ("south", True)],
        ),
        ("Ice", ["penguin"], [("Ice", False)]),
        ("Aplenty", ["plen"], [("Aplenty", False)]),  # words start with the term, as FTS does
        ("No terms", [], [("No terms", False)]),
        ("", ["x"], []),
        ("STRASSE straße", ["straße"], [("STRASSE ", False), ("straße", True)]),
        ("İzmir", ["izmir"], [("İzmir", False)]),  # no safe offsets: not highlighted
    ],
)
def test_match_spans(text: str, terms: list[str], spans: list[tuple[str, bool]]) -> None:
    assert match_spans(text, terms) == spans


@pytest.mark.parametrize(
    ("snippet", "spans"),
    [
        (
            "…the [penguins] live\nin the [south]…",
            [
                ("…the ", False),
                ("penguins", True),
                (" live in the ", False),
                ("south", True),
                ("…", False),
            ],
        ),
        ("[Start] of it", [("Start", True), (" of it", False)]),
        (
            "# Release [checklist] here",
            [("Release ", False), ("checklist", True), (" here", False)],
        ),
        ("…tail # not a heading [x]", [("…tail # not a heading ", False), ("x", True)]),
        ("…1. cut [here]", [("…1. cut ", False), ("here", True)]),
        ("a [link](https://x) here", [("a link here", False)]),
        ("**[bold]** and `[code]`", [("bold", True), (" and ", False), ("code", True)]),
        ("[snake]_case and 2*3", [("snake", True), ("_case and 2*3", False)]),
        (
            "…end of line\n## [Heading] next\n- item",
            [("…end of line ", False), ("Heading", True), (" next item", False)],
        ),
        ("empty [] and [  ] brackets", [("empty [] and [ ] brackets", False)]),
        ("plain", [("plain", False)]),
    ],
)
def test_snippet_spans(snippet: str, spans: list[tuple[str, bool]]) -> None:
    assert snippet_spans(snippet) == spans


def test_no_match_text_and_accessible_text() -> None:
    assert no_match_text("  zebra \n crossing ") == "No conversations match “zebra crossing”"
    assert accessible_text("Plans", True) == "Plans — can be resumed"
    assert accessible_text("Plans", False) == "Plans"


@pytest.mark.parametrize(
    ("now", "ms"),
    [
        (datetime(2026, 12, 3, 23, 59, 59, 500000, tzinfo=UTC), 1500),
        (datetime(2026, 12, 3, 0, 0, tzinfo=UTC), 86_400_000 + 1000),
        (datetime(2026, 12, 31, 12, 0, tzinfo=PLUS_TEN), 43_200_000 + 1000),  # into a new year
        (datetime(2026, 2, 28, 18, 0, tzinfo=UTC), 21_600_000 + 1000),  # into March
    ],
)
def test_ms_until_tomorrow(now: datetime, ms: int) -> None:
    assert ms_until_tomorrow(now) == ms


@pytest.mark.parametrize(
    "now",
    [
        datetime(2026, 12, 3, 15, 0, tzinfo=UTC),
        datetime(2026, 3, 1, 0, 30, tzinfo=timezone(timedelta(hours=-5))),
        datetime(2027, 1, 1, 23, 59, 59, tzinfo=timezone(timedelta(hours=9))),
        datetime(2026, 12, 3, 12, 0),  # naive: the machine's own zone
    ],
)
@pytest.mark.parametrize("seed", range(40))
def test_section_starts_agree_with_the_labels_row_by_row(now: datetime, seed: int) -> None:
    rng = random.Random(seed)
    pinned = rng.choice([0, 0, 1, 3])
    ages = [rng.choice([0, 0.5, 20, 30, 40, 200, 800, 3000]) * rng.random() for _ in range(60)]
    ages += [-2.0, 24.0, 24.0 * 7, 24.0 * 30, 24.0 * 31]  # a clock set back; group edges
    times = sorted((now.timestamp() - hours * 3600 for hours in ages), reverse=True)
    times = times[: rng.randint(0, len(times))]
    rows = [(0.0, True)] * pinned + [(t, False) for t in times]
    expected = [(row, label) for row, label in enumerate(section_labels(rows, now)) if label]
    assert section_starts(pinned, times, now) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", []),
        ("deploy", ["a", "b"]),
        ("DEPLOY retr", ["a"]),  # every word, each as the start of a word
        ("ploy", []),  # not inside a word
        ("calendar deploy", ["b"]),
        ("café", ["c"]),
        ("and", []),  # an operator word is not a search word
    ],
)
def test_title_matches(query: str, expected: list[str]) -> None:
    titles = [
        ("a", "Deploying the retry service"),
        ("b", "Deploy calendar"),
        ("c", "Notes from the Café"),
    ]
    assert title_matches(titles, query_terms(query)) == expected
