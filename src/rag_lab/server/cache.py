"""An :class:`Index` that remembers what cannot change while its file is open.

An index file is never modified in place (a rebuild renames a new file over it, and the
connection is opened ``immutable=1``), so for one opened version these are constants:

* ``name_length_range()`` — a scan of the whole ``names`` table in SQLite (≈26 ms at
  100 000 documents), asked once per question by the question parser;
* the postings of the bigrams questions use — common ones (``开放``, ``时间``) are long
  arrays, read and decoded again for every question. They are kept in an LRU bounded by
  ``POSTINGS_CACHE_BYTES``.

Both depend on what the caller may see, so the server keeps one :class:`CachedIndex`
per index version *and* principal (see ``state.py``); a rebuild starts with empty caches. The library's own ``Index`` stays uncached: a CLI call
opens it once and asks once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from rag_lab.data.access import Principal
from rag_lab.index import Index
from rag_lab.index.backend import is_database
from rag_lab.index.pg_store import PgStore

POSTINGS_CACHE_BYTES = 256 * 1024 * 1024

Posting = tuple[int, npt.NDArray[np.int32], npt.NDArray[np.float64]]


class _Memo:
    """The memoized answers of one opened version (see module docstring)."""

    def __init__(self, cache_bytes: int) -> None:
        self._lengths: tuple[int, int] | None = None
        self._postings: OrderedDict[int, Posting] = OrderedDict()
        self._cached_bytes = 0
        self._limit = cache_bytes
        self._cache_lock = threading.Lock()

    def name_length_range(self, fetch: Callable[[], tuple[int, int]]) -> tuple[int, int]:
        if self._lengths is None:
            self._lengths = fetch()
        return self._lengths

    def postings(self, terms: Sequence[int], fetch: Callable[[Sequence[int]], dict[int, Posting]]) -> dict[int, Posting]:
        found: dict[int, Posting] = {}
        missing: list[int] = []
        with self._cache_lock:
            for term in terms:
                hit = self._postings.get(term)
                if hit is None:
                    missing.append(term)
                else:
                    self._postings.move_to_end(term)
                    found[term] = hit
        if not missing:
            return found
        fetched = fetch(missing)
        found.update(fetched)
        with self._cache_lock:
            for term, posting in fetched.items():
                size = posting[1].nbytes + posting[2].nbytes
                if term in self._postings or size > self._limit:
                    continue
                self._postings[term] = posting
                self._cached_bytes += size
            while self._cached_bytes > self._limit:
                _, (_, ids, weights) = self._postings.popitem(last=False)
                self._cached_bytes -= ids.nbytes + weights.nbytes
        return found


class CachedIndex(Index):
    """:class:`Index` with per-version memoization (see module docstring)."""

    def __init__(
        self, path: str, principal: Principal | None = None, cache_bytes: int = POSTINGS_CACHE_BYTES
    ) -> None:
        super().__init__(path, principal)
        self._memo = _Memo(cache_bytes)

    @property
    def location(self) -> str:
        return str(self.path)

    def name_length_range(self) -> tuple[int, int]:
        return self._memo.name_length_range(super().name_length_range)

    def postings(self, terms: Sequence[int]) -> dict[int, Posting]:
        return self._memo.postings(terms, super().postings)


class CachedPgStore(PgStore):
    """:class:`PgStore` (one pinned generation) with the same memoization."""

    def __init__(
        self, location: str, principal: Principal | None = None, cache_bytes: int = POSTINGS_CACHE_BYTES
    ) -> None:
        super().__init__(location, principal)
        self._memo = _Memo(cache_bytes)

    def name_length_range(self) -> tuple[int, int]:
        return self._memo.name_length_range(super().name_length_range)

    def postings(self, terms: Sequence[int]) -> dict[int, Posting]:
        return self._memo.postings(terms, super().postings)


CachedStore = CachedIndex | CachedPgStore


def open_cached(location: str, principal: Principal | None = None) -> CachedStore:
    """The cached view of the index at ``location`` (a file path or a ``postgresql://`` URL)."""
    if is_database(location):
        return CachedPgStore(location, principal)
    return CachedIndex(location, principal)
