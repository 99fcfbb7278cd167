"""The storage seam: what retrieval and answering read from an index, and where it lives.

Two stores satisfy :class:`Store`: the embedded SQLite file (:class:`rag_lab.index.store.Index`,
the default, ``ROOT/.rag_lab/index.sqlite``) and a PostgreSQL database
(:class:`rag_lab.index.pg_store.PgStore`, a ``postgresql://`` location; the ``[postgresql]``
extra). A *location* is either a file path or such a URL; :func:`open_store` opens the right
one, so every caller (``query_once``, replay, evidence, the MCP server, the CLI) takes
``index_path`` as either. Both stores answer every method from one immutable version of the
index (an open file, or one pinned generation), filtered to the caller's visibility labels
inside the store, before anything is ranked (docs/stores.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from rag_lab.data.access import Principal
from rag_lab.data.aliases import Alias
from rag_lab.index.postings import PostingsBudget, TermPostings
from rag_lab.records import Unit

DATABASE_SCHEMES = ("postgresql://", "postgres://")

Location = str | os.PathLike[str]


@runtime_checkable
class Store(Protocol):
    """One immutable version of an index as one caller (``principal``) may see it."""

    principal: Principal | None
    config: dict[str, Any]
    visible: list[str]
    unit_count: int
    total_len: int

    @property
    def path(self) -> Path | str: ...
    @property
    def reserved_fields(self) -> frozenset[str]: ...
    def close(self) -> None: ...
    def __enter__(self) -> Store: ...
    def __exit__(self, *exc: object) -> None: ...
    def may_see(self, unit: Unit) -> bool: ...
    # units and the same-key map
    def units_for_key(self, subject: str, field: str) -> list[Unit]: ...
    def unit_ids_for_key(self, subject: str, field: str) -> list[int]: ...
    def units_by_ids(self, ids: Sequence[int]) -> dict[int, Unit]: ...
    def units_of_source(self, source: str) -> list[Unit]: ...
    def units_of_source_spanning(self, source: str, start: int, end: int) -> list[Unit]: ...
    def ids_of(self, evidence_ids: Sequence[str]) -> list[int]: ...
    def unit_by_evidence_id(self, evidence_id: str) -> Unit | None: ...
    def fields_of(self, subject: str) -> list[str]: ...
    def images_matching(self, attrs: dict[str, str]) -> list[Unit]: ...
    # names
    def name_kinds(self, candidates: Iterable[str]) -> dict[str, set[str]]: ...
    def folded_name_kinds(self, candidates: Iterable[str]) -> dict[str, set[tuple[str, str]]]: ...
    def has_key(self, subject: str, field: str) -> bool: ...
    def subjects_with_field(self, field: str, limit: int) -> list[str]: ...
    def name_length_range(self) -> tuple[int, int]: ...
    # field matching
    def user_aliases(self) -> list[Alias]: ...
    def field_vector_model(self) -> str | None: ...
    def field_vectors(self, names: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]: ...
    # the snapshot
    def snapshot(self) -> dict[str, tuple[Any, ...]]: ...
    def fingerprints(self) -> dict[str, tuple[int, int, int, int] | None]: ...
    def snapshot_of(self, path: str) -> tuple[Any, ...] | None: ...
    def file_problems(self) -> list[dict[str, Any]]: ...
    def warned_lines_naming(
        self, names: Iterable[str], subjects: Iterable[str], limit: int
    ) -> list[tuple[str, int, str, str]]: ...
    # ranking structures (statistics of the caller's visibility labels only)
    def vectors(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float16]]: ...
    def postings(
        self, terms: Sequence[int]
    ) -> dict[int, tuple[int, npt.NDArray[np.int32], npt.NDArray[np.float64]]]: ...
    def term_postings(self, terms: Sequence[int]) -> dict[int, TermPostings]: ...


def is_database(location: Location | None) -> bool:
    """Is ``location`` a PostgreSQL URL (rather than an index file path)?"""
    return isinstance(location, str) and location.startswith(DATABASE_SCHEMES)


def resolve_location(root: Location, index_path: Location | None) -> Path | str:
    """``index_path`` as given (a URL stays a string), or the default file under ``root``."""
    from rag_lab.index import build  # looked up at call time: the default may be a database

    location: Location = index_path if index_path is not None else build.default_index_path(root)
    if isinstance(location, str) and is_database(location):
        return location
    return Path(location)


def store_exists(location: Path | str) -> bool:
    """Is there an index to open at ``location``? (A database: does it hold a generation.)"""
    if isinstance(location, str) and is_database(location):
        from rag_lab.index.pg_store import has_generation

        return has_generation(location)
    return Path(location).exists()


def open_store(
    location: Path | str, principal: Principal | None = None, *, postings: int | PostingsBudget | None = None
) -> Store:
    """Open the index at ``location`` (a file path or a ``postgresql://`` URL) for ``principal``;
    ``postings``: its postings cache's bound in bytes, or a budget shared with other stores
    (default: the store's own ``POSTINGS_CACHE_BYTES``)."""
    bound = {} if postings is None else {"postings_cache_bytes": postings}
    if isinstance(location, str) and is_database(location):
        from rag_lab.index.pg_store import PgStore

        return PgStore(location, principal, **bound)
    from rag_lab.index.store import Index

    return Index(location, principal, **bound)


def shown_location(location: Location) -> str:
    """``location`` fit to print: a database URL without its password."""
    text = os.fspath(location)
    if not is_database(text):
        return text
    scheme, rest = text.split("://", 1)
    if "@" in rest.split("/", 1)[0]:
        userinfo, host = rest.split("@", 1)
        user = userinfo.split(":", 1)[0]
        return f"{scheme}://{user}@{host}" if user else f"{scheme}://{host}"
    return text


__all__ = [
    "DATABASE_SCHEMES",
    "Location",
    "Store",
    "is_database",
    "open_store",
    "resolve_location",
    "shown_location",
    "store_exists",
]
