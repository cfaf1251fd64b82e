"""The sidebar's search a page at a time (ui.search_pages), over a real store: the first page
while typing, the next ones as the list is scrolled, together exactly the store's one search."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from app import UserMessage
from app.services import SEARCH_PAGE, SearchCursor, SearchPage
from app.storage import SQLiteSessionStore
from tests.ui.helpers import until
from ui.search_pages import SearchPages
from ui.sidebar import Sidebar


async def _shown_sidebar(qtbot: Any, store: SQLiteSessionStore) -> Sidebar:
    """A real sidebar on screen, listing the store's conversations."""
    side = Sidebar()
    qtbot.addWidget(side)
    side.resize(260, 500)
    side.show()
    qtbot.waitExposed(side)
    side.set_sessions(await store.list_sessions(), set())
    return side


def test_the_first_page_then_the_next_as_the_list_is_scrolled(
    qtbot: Any, run: Any, tmp_path: Path
) -> None:
    async def scenario() -> None:
        store = SQLiteSessionStore(tmp_path / "c.sqlite")
        tasks: list[asyncio.Task[Any]] = []
        asked: list[tuple[str, int, bool]] = []

        async def fetch(query: str, limit: int, after: SearchCursor | None) -> SearchPage:
            asked.append((query, limit, after is not None))
            return await store.search_page(query, limit=limit, after=after)

        try:
            for n in range(40):
                await store.append(f"s{n:02d}", "r", UserMessage(f"needle {n} and hay"))
            await store.append("hay", "r", UserMessage("only hay"))
            side = await _shown_sidebar(qtbot, store)
            pages = SearchPages(side, fetch, lambda coro: tasks.append(asyncio.ensure_future(coro)))
            whole = [h.session_id for h in await store.search("needle", limit=100)]
            assert len(whole) == 40

            side.search.setText("needle")
            await pages.search("needle")
            first = pages.first_page()
            assert first >= SEARCH_PAGE and first < 40
            assert side.session_ids() == whole[:first] and pages.has_more
            await asyncio.sleep(0.05)  # not scrolled: nothing more is asked
            assert asked == [("needle", first, False)]

            bar = side.list.verticalScrollBar()
            while pages.has_more:
                shown = len(side.session_ids())
                bar.setValue(bar.maximum())
                await until(lambda n=shown: len(side.session_ids()) > n or not pages.has_more)
            assert side.session_ids() == whole  # the pages together: the one search
            assert all(more for _q, _n, more in asked[1:]) and len(asked) >= 3

            # A page arriving after the search changed is dropped.
            await pages.search("needle")
            stale = asyncio.ensure_future(pages.next_page())
            await asyncio.sleep(0)  # it has asked the store for needle's second page
            await pages.search("hay")
            await stale
            assert asked[-2:] == [("needle", SEARCH_PAGE, True), ("hay", first, False)]
            hay = [h.session_id for h in await store.search("hay", limit=100)]
            assert side.session_ids() == hay[: pages.first_page()]
            await pages.search("")
            assert len(side.session_ids()) == 41
            assert not pages.has_more
        finally:
            await asyncio.gather(*tasks, return_exceptions=True)
            await store.close()

    run(scenario())


def test_a_title_is_found_as_well_as_a_message(qtbot: Any, run: Any, tmp_path: Path) -> None:
    """A conversation whose title has the words is listed first even when no message has them
    (the store's search reads messages); one whose message has them follows, with its
    snippet; a titled one with a matching message too gets that message's snippet."""

    async def scenario() -> None:
        store = SQLiteSessionStore(tmp_path / "c.sqlite")
        tasks: list[asyncio.Task[Any]] = []
        try:
            await store.append("titled", "r", UserMessage("configure the retries"))
            await store.rename_session("titled", "Deploying the retry service")
            await store.append("both", "r", UserMessage("we deploy on Fridays"))
            await store.rename_session("both", "Deploy calendar")
            await store.append("message", "r", UserMessage("how to deploy a wheel"))
            await store.append("other", "r", UserMessage("nothing to see"))
            side = await _shown_sidebar(qtbot, store)
            pages = SearchPages(
                side,
                lambda q, n, after: store.search_page(q, limit=n, after=after),
                lambda coro: tasks.append(asyncio.ensure_future(coro)),
            )
            side.search.setText("deploy")
            await pages.search("deploy")
            shown = side.session_ids()
            assert set(shown[:2]) == {"titled", "both"} and shown[2:] == ["message"]
            snippets = {sid: side.model.row(side._row_of(sid)).snippet for sid in shown}
            assert snippets["titled"] == ""  # found by its title alone
            assert "[deploy]" in (snippets["both"] or "") and "[deploy]" in (
                snippets["message"] or ""
            )
            side.search.setText("deploy retry")  # every word, in the title
            await pages.search("deploy retry")
            assert side.session_ids() == ["titled"]
        finally:
            await asyncio.gather(*tasks, return_exceptions=True)
            await store.close()

    run(scenario())
