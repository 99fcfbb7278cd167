"""An :class:`Index` that remembers what cannot change while its file is open.

An index file is never modified in place (a rebuild renames a new file over it, and the
connection is opened ``immutable=1``), so for one opened version these are constants:

* ``name_length_range()`` — a scan of the whole ``names`` table in SQLite (≈26 ms at
  100 000 documents), asked once per question by the question parser;
* the postings of the bigrams questions use — common ones (``开放``, ``时间``) are long
  arrays, read and decoded again for every question. Every store keeps them for its open
  version (index/postings.py); the server's cached stores share one ``PostingsBudget``
  (``limits.SERVER_POSTINGS_BYTES`` unless ``rag-lab serve --cache-mib`` says otherwise), so that
  what all its views keep together stays within one bound, however many principals ask.

Both depend on what the caller may see, so the server keeps one :class:`CachedIndex`
per index version *and* principal (see ``state.py``); a rebuild starts with empty caches. The library's own ``Index`` stays uncached: a CLI call
opens it once and asks once.
"""

from __future__ import annotations

from collections.abc import Callable

from rag_lab.data.access import Principal
from rag_lab.index import Index
from rag_lab.index.backend import is_database
from rag_lab.index.pg_store import PgStore
from rag_lab.index.postings import PostingsBudget
from rag_lab.limits import SERVER_POSTINGS_BYTES


class _Memo:
    """The memoized answers of one opened version (see module docstring; the postings are
    kept by the store itself)."""

    def __init__(self) -> None:
        self._lengths: tuple[int, int] | None = None

    def name_length_range(self, fetch: Callable[[], tuple[int, int]]) -> tuple[int, int]:
        if self._lengths is None:
            self._lengths = fetch()
        return self._lengths


class CachedIndex(Index):
    """:class:`Index` with per-version memoization (see module docstring)."""

    def __init__(
        self, path: str, principal: Principal | None = None, cache_bytes: int | PostingsBudget = SERVER_POSTINGS_BYTES
    ) -> None:
        super().__init__(path, principal, postings_cache_bytes=cache_bytes)
        self._memo = _Memo()

    @property
    def location(self) -> str:
        return str(self.path)

    def name_length_range(self) -> tuple[int, int]:
        return self._memo.name_length_range(super().name_length_range)


class CachedPgStore(PgStore):
    """:class:`PgStore` (one pinned generation) with the same memoization."""

    def __init__(
        self,
        location: str,
        principal: Principal | None = None,
        cache_bytes: int | PostingsBudget = SERVER_POSTINGS_BYTES,
    ) -> None:
        super().__init__(location, principal, postings_cache_bytes=cache_bytes)
        self._memo = _Memo()

    def name_length_range(self) -> tuple[int, int]:
        return self._memo.name_length_range(super().name_length_range)


CachedStore = CachedIndex | CachedPgStore


def open_cached(
    location: str, principal: Principal | None = None, budget: int | PostingsBudget = SERVER_POSTINGS_BYTES
) -> CachedStore:
    """The cached view of the index at ``location`` (a file path or a ``postgresql://`` URL);
    ``budget``: its postings cache's bound, or the budget it shares with the server's other views."""
    if is_database(location):
        return CachedPgStore(location, principal, budget)
    return CachedIndex(location, principal, budget)
