"""The sidebar's search, a page at a time.

While the person types, a search asks only for the first page of conversations (as many as
the list shows and one, at least ``SEARCH_PAGE``), so its results come quickly however long
the history; the next page is asked once the list is scrolled to within a screen of its end,
or when the results leave room below them. Each page continues the same search in the store
(``AppServices.search_page``): the rows shown are exactly those of one long search. A search
overtaken by newer text, or a page arriving after the search changed, is dropped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from PySide6.QtCore import QEvent, QObject, QTimer

from app.services import SEARCH_PAGE, SearchCursor, SearchPage

from .sidebar import Sidebar
from .sidebar_rows import row_height

__all__ = ["Fetch", "SearchPages"]

#: ``fetch(query, limit, after)``: a page of the store's search.
Fetch = Callable[[str, int, SearchCursor | None], Awaitable[SearchPage]]


class SearchPages(QObject):
    """Shows ``sidebar``'s search results, fetched with ``fetch``; ``spawn`` runs the fetch of
    a next page (the window's helper-task runner)."""

    def __init__(
        self,
        sidebar: Sidebar,
        fetch: Fetch,
        spawn: Callable[[Coroutine[Any, Any, Any]], object],
    ) -> None:
        super().__init__(sidebar)
        self._sidebar = sidebar
        self._fetch = fetch
        self._spawn = spawn
        self._query = ""
        self._hits: list[tuple[str, str]] = []
        self._more: SearchCursor | None = None
        self._fetching = False
        bar = sidebar.list.verticalScrollBar()
        bar.valueChanged.connect(self._check)
        bar.rangeChanged.connect(self._check)
        sidebar.list.installEventFilter(self)

    @property
    def has_more(self) -> bool:
        """Whether the search shown may have more conversations than it shows."""
        return self._more is not None

    def first_page(self) -> int:
        """How many conversations the first page asks: what the list's height shows, and one."""
        rows = self._sidebar.list.height() // row_height(self._sidebar.list.font(), snippet=True)
        return max(SEARCH_PAGE, rows + 1)

    async def search(self, query: str) -> None:
        """Show the first page of ``query`` (all conversations when it is empty)."""
        self._query, self._hits, self._more = query, [], None
        if not query:
            self._sidebar.show_all()
            return
        page = await self._fetch(query, self.first_page(), None)
        if query != self._query:  # newer text was searched meanwhile
            return
        self._show(page)
        self._sidebar.list.scrollToTop()  # new results are read from the top

    async def next_page(self) -> None:
        """Show the next page of the search shown (nothing when there is none)."""
        cursor, query = self._more, self._query
        if cursor is None or self._fetching:
            return
        self._fetching = True
        try:
            page = await self._fetch(query, SEARCH_PAGE, cursor)
        finally:
            self._fetching = False
        if cursor is self._more:  # (else another search started meanwhile)
            self._show(page)

    def _show(self, page: SearchPage) -> None:
        self._hits += [(hit.session_id, hit.snippet) for hit in page.hits]
        self._more = page.more
        self._sidebar.set_search_results(self._hits, self._query)
        QTimer.singleShot(0, self._check)  # once the list has laid the rows out

    def _check(self, *_args: object) -> None:
        """Ask the next page when the list has room below its rows, or has been scrolled to
        within a screen of its end (not before it is scrolled: a search as the person types
        asks one page)."""
        if self._more is None or self._fetching or not self._sidebar.list.isVisible():
            return
        bar = self._sidebar.list.verticalScrollBar()
        if bar.maximum() == 0 or (
            bar.value() > 0 and bar.maximum() - bar.value() <= bar.pageStep()
        ):
            self._spawn(self.next_page())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._sidebar.list and event.type() == QEvent.Type.Show:
            QTimer.singleShot(0, self._check)  # a list shown again may have room
        return super().eventFilter(watched, event)
