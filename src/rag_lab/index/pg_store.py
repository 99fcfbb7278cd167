"""Reading an index from PostgreSQL: the same answers as :class:`rag_lab.index.store.Index`.

A :class:`PgStore` pins one generation when it opens (a shared advisory lock on it, checked
against the catalogue after it is taken) and reads only that generation's schema until it is
closed: a rebuild that switches ``current`` meanwhile does not change what it sees, and the
builder never drops a generation whose lock a reader holds. Every query filters on the
caller's visibility labels (``acl = ANY(%s)``) in the database, so no row the caller may not
see is read, ranked or counted; BM25 statistics come from the per-label ``acl_stats`` rows.
Needs the ``[postgresql]`` extra (psycopg 3).

Round trips: the connection comes from a small per-process pool (index/pg_pool.py) and goes
back, lock released, on :meth:`PgStore.close`; pinning is one pipelined round trip; units come
with their file's visibility label (so :meth:`PgStore.may_see` asks nothing more for them);
name and key lookups are remembered for the store's life — the generation never changes.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from rag_lab.data.access import PUBLIC, Principal, visible_acls
from rag_lab.data.aliases import Alias
from rag_lab.errors import ConfigError, IndexError_
from rag_lab.index.backend import shown_location
from rag_lab.index.field_vectors import vector_from_blob
from rag_lab.index.pg_pool import pool_for
from rag_lab.index.pg_schema import CATALOGUE, GENERATION_PREFIX, LOCK_CLASS, PG_LAYOUT_VERSION
from rag_lab.index.postings import (
    PER_TERM_BYTES,
    PostingsBudget,
    PostingsCache,
    TermPostings,
    WeightOf,
    merge_pieces,
)
from rag_lab.records import Unit

if TYPE_CHECKING:
    import psycopg

_UNIT_COLUMNS = (
    "id, evidence_id, source, sha256, span_start, span_end, line, text, subject, field, "
    "value, modality, valid_from, valid_to, extra"
)
# every unit with its file's label as the index records it (what may_see decides by)
_SELECT_UNIT = (
    "SELECT u.id, u.evidence_id, u.source, u.sha256, u.span_start, u.span_end, u.line, u.text, u.subject, "
    "u.field, u.value, u.modality, u.valid_from, u.valid_to, u.extra, "
    "(SELECT f.acl FROM files f WHERE f.path = u.source AND f.error IS NULL) FROM units u"
)
_PIN_ATTEMPTS = 20
POSTINGS_CACHE_BYTES = 64 * 1024 * 1024  # as index/store.py's
INSTALL_HINT = "install the PostgreSQL store with: pip install 'rag-lab[postgresql]'"


def require_psycopg() -> Any:
    """The psycopg module, or a ConfigError saying how to install it (like every missing extra)."""
    try:
        import psycopg
    except ImportError:
        raise ConfigError(f"a postgresql:// index needs psycopg 3; {INSTALL_HINT}") from None
    return psycopg


def connect(location: str, *, autocommit: bool = True) -> psycopg.Connection[Any]:
    pg = require_psycopg()
    try:
        conn: psycopg.Connection[Any] = pg.connect(location, autocommit=autocommit, connect_timeout=10)
    except pg.Error as exc:
        raise IndexError_(
            f"cannot connect to the index database {shown_location(location)!r} "
            f"({str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}); "
            "start the server or fix the URL given to --store"
        ) from None
    return conn


def current_generation(conn: psycopg.Connection[Any]) -> int | None:
    """The generation readers open now; None when the database holds no index yet."""
    pg = require_psycopg()
    exists = conn.execute("SELECT to_regclass(%s)", (f"{CATALOGUE}.current",)).fetchone()
    if exists is None or exists[0] is None:
        return None
    try:
        row = conn.execute(f"SELECT generation FROM {CATALOGUE}.current").fetchone()
    except pg.Error:
        return None
    return None if row is None else int(row[0])


def has_generation(location: str) -> bool:
    conn = connect(location)
    try:
        return current_generation(conn) is not None
    finally:
        conn.close()


def _row_to_unit(row: Sequence[Any]) -> Unit:
    unit: Unit = {
        "evidence_id": row[1],
        "source": row[2],
        "sha256": row[3],
        "span": None if row[4] is None else [row[4], row[5]],
        "line": row[6],
        "text": row[7],
        "subject": row[8],
        "field": row[9],
        "value": row[10],
        "modality": row[11],
    }
    if row[12] is not None:
        unit["valid_from"] = row[12]
    if row[13] is not None:
        unit["valid_to"] = row[13]
    if row[14] is not None:
        unit.update(json.loads(row[14]))
    return unit


class PgStore:
    """A read-only view of one generation of a PostgreSQL index (see module docstring)."""

    def __init__(
        self,
        location: str,
        principal: Principal | None = None,
        postings_cache_bytes: int | PostingsBudget = POSTINGS_CACHE_BYTES,
    ) -> None:
        self.location = location
        self.principal = principal
        self._postings_cache = PostingsCache(postings_cache_bytes)
        self._psycopg = require_psycopg()
        self._pool = pool_for(location)
        self._closed = False
        self.generation, meta, stats = self._borrow_pinned()
        try:
            self.config: dict[str, Any] = json.loads(meta["config"])
            acls = json.loads(meta["acls"])
            shortest, longest = json.loads(meta["name_lengths"])
            self._name_lengths = (int(shortest), int(longest))
            self._aliases = [Alias(p, tuple(f), int(n)) for p, f, n in json.loads(meta["aliases"])]
            self._vector_model: str | None = json.loads(meta["field_vectors"])
            self._walk_digest = meta.get("walk_digest", "")  # absent in generations built before it
            self.visible = visible_acls(acls, principal)
            self.unit_count = sum(int(n) for acl, n, _ in stats if acl in self.visible)
            self._all_units = sum(int(n) for _, n, _ in stats)  # unit ids are 1..this, as in SQLite
            self.total_len = sum(int(t) for acl, _, t in stats if acl in self.visible)
        except (self._psycopg.Error, KeyError, ValueError, TypeError) as exc:
            self._pool.discard(self._db)
            raise IndexError_(
                f"index database {shown_location(location)!r} is incomplete or unreadable ({exc}); "
                f"rebuild it with `rag-lab index ROOT --store {shown_location(location)}`"
            ) from None
        except BaseException:
            self._pool.discard(self._db)
            raise
        # a store dropped without close(): its connection is closed, not kept (its lock goes with it)
        self._lost = weakref.finalize(self, self._pool.discard, self._db)
        self._acl_of: dict[str, str | None] = {}
        self._kinds: dict[str, set[str]] = {}  # name → kinds (absent names: empty), as looked up
        self._keys: dict[tuple[str, str], bool] = {}
        self._vectors: tuple[npt.NDArray[np.int64], npt.NDArray[np.float16]] | None = None  # read once

    def _borrow_pinned(self) -> tuple[int, dict[str, str], list[Any]]:
        """A connection from the pool with the current generation pinned on it (``self._db``).
        A kept connection that the server closed meanwhile (restart, terminated) is replaced."""
        conn, reused = self._pool.borrow()
        while True:
            self._db = conn
            try:
                return self._pin()
            except self._psycopg.Error as exc:
                self._pool.discard(conn)
                if reused and isinstance(exc, self._psycopg.OperationalError):
                    conn, reused = self._pool.borrow()
                    continue
                raise IndexError_(
                    f"index database {shown_location(self.location)!r} is incomplete or unreadable ({exc}); "
                    f"rebuild it with `rag-lab index ROOT --store {shown_location(self.location)}`"
                ) from None
            except BaseException:
                self._pool.discard(conn)
                raise

    def _pin(self) -> tuple[int, dict[str, str], list[Any]]:
        """Take the shared lock of the current generation and read its meta: two statements in
        one pipelined round trip (the second sees the catalogue as of after the lock was taken:
        read committed takes a snapshot per statement); retried when a rebuild dropped that
        generation between the two."""
        pg = self._psycopg
        for _ in range(_PIN_ATTEMPTS):
            try:
                with self._db.pipeline():
                    pinned = self._db.execute(
                        f"SELECT generation, pg_advisory_lock_shared(%s, generation::int4), "
                        f"set_config('search_path', '{GENERATION_PREFIX}' || generation, false), "
                        f"set_config('rag_lab.generation', generation::text, false) FROM {CATALOGUE}.current",
                        (LOCK_CLASS,),
                    )
                    read = self._db.execute(
                        "SELECT (SELECT json_object_agg(key, value) FROM meta), "
                        "(SELECT json_agg(json_build_array(acl, units, total_len)) FROM acl_stats), "
                        f"(SELECT layout FROM {CATALOGUE}.generations "
                        "WHERE id = current_setting('rag_lab.generation')::bigint)"
                    )
                row, found = pinned.fetchone(), read.fetchone()
            except pg.errors.UndefinedTable:
                if current_generation(self._db) is None:  # no catalogue: nothing was ever built here
                    row, found = None, None
                else:  # the generation was dropped by a rebuild before the lock was taken
                    self._db.execute("SELECT pg_advisory_unlock_all()")
                    continue
            except pg.errors.UndefinedObject:  # no current row: rag_lab.generation was never set
                row, found = None, None
            if row is None:
                raise IndexError_(
                    f"no index in the database {shown_location(self.location)!r}; build it with "
                    f"`rag-lab index ROOT --store {shown_location(self.location)}`"
                )
            generation = int(row[0])
            if found is None or found[2] is None:
                self._db.execute("SELECT pg_advisory_unlock_all()")
                continue
            if found[2] != PG_LAYOUT_VERSION:
                raise IndexError_(
                    f"the index in {shown_location(self.location)!r} has layout version {found[2]}, "
                    f"this rag_lab reads version {PG_LAYOUT_VERSION}; rebuild it with "
                    f"`rag-lab index ROOT --store {shown_location(self.location)}`"
                )
            return generation, dict(found[0]), list(found[1] or [])
        raise IndexError_(
            f"the index in {shown_location(self.location)!r} was replaced {_PIN_ATTEMPTS} times while "
            "opening it; try again"
        )

    @property
    def path(self) -> str:
        return shown_location(self.location)

    def close(self) -> None:
        """Give the connection back to the pool, its generation lock released (or close it)."""
        if self._closed:
            return
        self._closed = True
        self._lost.detach()
        self._pool.give_back(self._db)
        self._postings_cache.clear()

    def __enter__(self) -> PgStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        if self._closed:
            raise IndexError_(f"the index {shown_location(self.location)!r} was read after it was closed")
        try:
            return self._db.execute(sql, params).fetchall()
        except self._psycopg.Error as exc:
            raise IndexError_(
                f"index database {shown_location(self.location)!r} cannot be read ({exc}); "
                f"rebuild it with `rag-lab index ROOT --store {shown_location(self.location)}`"
            ) from None

    def may_see(self, unit: Unit) -> bool:
        """By the index's record of the unit's file, never by the unit dict's own claim."""
        source = str(unit.get("source"))
        if source not in self._acl_of:  # the generation never changes: remember each file's label
            rows = self._query("SELECT acl FROM files WHERE path = %s AND error IS NULL", (source,))
            self._acl_of[source] = rows[0][0] if rows else None
        known = self._acl_of[source]
        acl = known if known is not None else unit.get("acl", PUBLIC)
        return acl in self.visible and unit.get("acl", PUBLIC) in self.visible

    @property
    def reserved_fields(self) -> frozenset[str]:
        return frozenset(self.config["reserved_fields"])

    # -- units ---------------------------------------------------------------------------
    def _units(self, rows: list[Any]) -> list[Unit]:
        """Units of ``_SELECT_UNIT`` rows; their files' labels are remembered for may_see."""
        for row in rows:
            self._acl_of.setdefault(row[2], row[15])
        return [_row_to_unit(r) for r in rows]

    def units_for_key(self, subject: str, field: str) -> list[Unit]:
        rows = self._query(
            _SELECT_UNIT + " WHERE u.subject = %s AND u.field = %s AND u.acl = ANY(%s) ORDER BY u.id",
            (subject, field, self.visible),
        )
        return self._units(rows)

    def unit_ids_for_key(self, subject: str, field: str) -> list[int]:
        rows = self._query(
            "SELECT id FROM units WHERE subject = %s AND field = %s AND acl = ANY(%s) ORDER BY id",
            (subject, field, self.visible),
        )
        return [int(r[0]) for r in rows]

    def units_by_ids(self, ids: Sequence[int]) -> dict[int, Unit]:
        wanted = [int(i) for i in ids]
        rows = self._query(_SELECT_UNIT + " WHERE u.id = ANY(%s) AND u.acl = ANY(%s)", (wanted, self.visible))
        return {int(r[0]): unit for r, unit in zip(rows, self._units(rows), strict=True)}

    def units_of_source(self, source: str) -> list[Unit]:
        rows = self._query(
            _SELECT_UNIT + " WHERE u.source = %s AND u.acl = ANY(%s) ORDER BY u.span_start, u.id",
            (source, self.visible),
        )
        return self._units(rows)

    def units_of_source_spanning(self, source: str, start: int, end: int) -> list[Unit]:
        """``units_of_source`` of the units whose span starts in ``[start, end)`` (index/store.py)."""
        rows = self._query(
            _SELECT_UNIT + " WHERE u.source = %s AND u.acl = ANY(%s) AND u.span_start >= %s AND u.span_start < %s "
            "ORDER BY u.span_start, u.id",
            (source, self.visible, start, end),
        )
        return self._units(rows)

    def ids_of(self, evidence_ids: Sequence[str]) -> list[int]:
        rows = self._query(
            "SELECT id, evidence_id FROM units WHERE evidence_id = ANY(%s) AND acl = ANY(%s)",
            (list(evidence_ids), self.visible),
        )
        found = {eid: int(uid) for uid, eid in rows}
        return [found[e] for e in evidence_ids]

    def unit_by_evidence_id(self, evidence_id: str) -> Unit | None:
        rows = self._query(
            _SELECT_UNIT + " WHERE u.evidence_id = %s AND u.acl = ANY(%s)", (evidence_id, self.visible)
        )
        return self._units(rows)[0] if rows else None

    def fields_of(self, subject: str) -> list[str]:
        rows = self._query(
            "SELECT DISTINCT field FROM units WHERE subject = %s AND acl = ANY(%s) ORDER BY field",
            (subject, self.visible),
        )
        return [r[0] for r in rows]

    def images_matching(self, attrs: dict[str, str]) -> list[Unit]:
        allowed = ("color", "size", "shape")
        where = " AND ".join(f"{k} = %s" for k in sorted(attrs) if k in allowed) or "TRUE"
        if any(k not in allowed for k in attrs):
            return []
        rows = self._query(
            f"SELECT id FROM images WHERE {where} AND acl = ANY(%s) ORDER BY id",
            [*(attrs[k] for k in sorted(attrs)), self.visible],
        )
        ids = [int(r[0]) for r in rows]
        units = self.units_by_ids(ids)
        return [units[i] for i in ids]

    # -- names ---------------------------------------------------------------------------
    _NAMES = "SELECT 0, name, name, kind FROM names WHERE name = ANY(%s) AND acl = ANY(%s)"

    def _remember_kinds(self, asked: list[str], rows: Iterable[Sequence[Any]]) -> None:
        for name in asked:
            self._kinds.setdefault(name, set())
        for _, name, _, kind in rows:
            self._kinds[name].add(kind)

    def _known_kinds(self, names: Iterable[str]) -> dict[str, set[str]]:
        return {n: set(self._kinds[n]) for n in names if self._kinds[n]}

    def name_kinds(self, candidates: Iterable[str]) -> dict[str, set[str]]:
        wanted = sorted(set(candidates))
        missing = [n for n in wanted if n not in self._kinds]
        if missing:
            self._remember_kinds(missing, self._query(self._NAMES, (missing, self.visible)))
        return self._known_kinds(wanted)

    def folded_name_kinds(self, candidates: Iterable[str]) -> dict[str, set[tuple[str, str]]]:
        """Exact names and folded ones in one statement (names not looked up before only)."""
        wanted = sorted(set(candidates))
        missing = [n for n in wanted if n not in self._kinds]
        rows = self._query(
            self._NAMES + " UNION ALL SELECT 1, folded, name, kind FROM folded_names "
            "WHERE folded = ANY(%s) AND acl = ANY(%s)",
            (missing, self.visible, wanted, self.visible),
        )
        self._remember_kinds(missing, [r for r in rows if r[0] == 0])
        found: dict[str, set[tuple[str, str]]] = {}
        for name, kinds in self._known_kinds(wanted).items():
            found.setdefault(name, set()).update((name, k) for k in kinds)
        for _, folded, name, kind in (r for r in rows if r[0] == 1):
            found.setdefault(folded, set()).add((name, kind))
        return found

    def has_key(self, subject: str, field: str) -> bool:
        if (subject, field) not in self._keys:
            rows = self._query(
                "SELECT 1 FROM units WHERE subject = %s AND field = %s AND acl = ANY(%s) LIMIT 1",
                (subject, field, self.visible),
            )
            self._keys[(subject, field)] = bool(rows)
        return self._keys[(subject, field)]

    def subjects_with_field(self, field: str, limit: int) -> list[str]:
        rows = self._query(
            "SELECT DISTINCT subject FROM units WHERE field = %s AND acl = ANY(%s) ORDER BY subject LIMIT %s",
            (field, self.visible, limit),
        )
        return [r[0] for r in rows]

    def name_length_range(self) -> tuple[int, int]:
        return self._name_lengths

    # -- field matching ------------------------------------------------------------------
    def user_aliases(self) -> list[Alias]:
        return list(self._aliases)

    def field_vector_model(self) -> str | None:
        return self._vector_model

    def field_vectors(self, names: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        rows = self._query("SELECT name, vector FROM field_vectors WHERE name = ANY(%s)", (sorted(set(names)),))
        return {name: vector_from_blob(bytes(blob)) for name, blob in rows}

    # -- snapshot ------------------------------------------------------------------------
    def walk_digest(self) -> str:
        """The digest of the corpus walk as the build read it ("" when unknown): freshness's fast path."""
        return str(self._walk_digest)

    def snapshot(self) -> dict[str, tuple[Any, ...]]:
        rows = self._query("SELECT path, size, mtime_ns, ctime_ns, inode, sha256, error, acl FROM files ORDER BY path")
        return {r[0]: tuple(r[1:]) for r in rows}

    def fingerprints(self) -> dict[str, tuple[int, int, int, int] | None]:
        rows = self._query("SELECT path, size, mtime_ns, ctime_ns, inode FROM files ORDER BY path")
        return {p: None if size is None else (size, m, c, i) for p, size, m, c, i in rows}

    def snapshot_of(self, path: str) -> tuple[Any, ...] | None:
        rows = self._query(
            "SELECT size, mtime_ns, ctime_ns, inode, sha256, error, acl FROM files WHERE path = %s", (path,)
        )
        return tuple(rows[0]) if rows else None

    def file_problems(self) -> list[dict[str, Any]]:
        errors = self._query(
            "SELECT path, error FROM files WHERE error IS NOT NULL AND (acl = '!' OR acl = ANY(%s)) ORDER BY path",
            (self.visible,),
        )
        warnings = self._query(
            "SELECT w.path, w.line, w.message FROM file_warnings w JOIN files f ON f.path = w.path "
            "WHERE f.acl = '!' OR f.acl = ANY(%s) ORDER BY w.path, w.line, w.ord",
            (self.visible,),
        )
        return [{"path": p, "line": None, "severity": "error", "message": e} for p, e in errors] + [
            {"path": p, "line": ln, "severity": "warning", "message": m} for p, ln, m in warnings
        ]

    def warned_lines_naming(
        self, names: Iterable[str], subjects: Iterable[str], limit: int
    ) -> list[tuple[str, int, str, str]]:
        """(path, line, text, message) of warned lines about one of ``names`` (see Index)."""
        wanted, about = sorted(set(names)), sorted(set(subjects))
        rows = self._query(
            "SELECT l.path, l.line, l.text, w.message FROM warning_lines l "
            "JOIN file_warnings w ON w.path = l.path AND w.line = l.line "
            "JOIN files f ON f.path = l.path WHERE l.name = ANY(%s) AND f.acl = ANY(%s) "
            "AND (l.subject_line = 1 OR EXISTS (SELECT 1 FROM units u WHERE u.source = l.path "
            "AND u.subject = ANY(%s) AND u.acl = ANY(%s))) ORDER BY l.path, l.line, w.ord LIMIT %s",
            (wanted, self.visible, about, self.visible, limit),
        )
        return sorted({(p, int(ln), t, m) for p, ln, t, m in rows})

    # -- vectors -------------------------------------------------------------------------
    def vectors(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float16]]:
        """As the SQLite store's: read once for the pinned generation."""
        if self._vectors is None:
            dim = int((self.config.get("vectors") or {}).get("dim", 0))
            rows = self._query(
                "SELECT v.id, v.vec FROM vectors v JOIN units u ON u.id = v.id WHERE u.acl = ANY(%s) ORDER BY v.id",
                (self.visible,),
            )
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            matrix = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype=np.float16).reshape(len(rows), dim)
            ids.flags.writeable = False
            self._vectors = ids, matrix
        return self._vectors

    # -- postings ------------------------------------------------------------------------
    def postings(
        self, terms: Sequence[int]
    ) -> dict[int, tuple[int, npt.NDArray[np.int32], npt.NDArray[np.float64]]]:
        """term → (visible df, unit ids ascending, BM25 tf weights) over the caller's units only."""
        return {term: (p.df, *p.whole()) for term, p in self.term_postings(terms).items()}

    def term_postings(self, terms: Sequence[int]) -> dict[int, TermPostings]:
        """term → its visible postings, decoded only as far as asked (index/postings.py);
        kept for the pinned generation in a cache of ``postings_cache_bytes``."""
        wanted = [int(t) for t in dict.fromkeys(terms)]
        found, missing = self._postings_cache.get(wanted)
        if not missing:
            return found
        parts: dict[int, list[tuple[bytes, bytes, bytes]]] = {}
        for term, ids, tfs, lens in self._query(
            "SELECT term, ids, tfs, lens FROM postings WHERE term = ANY(%s) AND acl = ANY(%s) ORDER BY term, acl",
            (missing, self.visible),
        ):
            parts.setdefault(int(term), []).append((bytes(ids), bytes(tfs), bytes(lens)))
        fetched = {term: self._term_postings(blobs) for term, blobs in parts.items()}
        self._postings_cache.put(fetched)
        found.update(fetched)
        return found

    def _term_postings(self, blobs: list[tuple[bytes, bytes, bytes]]) -> TermPostings:
        df = sum(len(i) // 4 for i, _, _ in blobs)
        k1, b = self.config["ranking"]["k1"], self.config["ranking"]["b"]
        avg_len = max(self.total_len / self.unit_count, 1.0) if self.unit_count else 1.0

        def decode() -> tuple[npt.NDArray[np.int32], WeightOf]:
            ids, order = merge_pieces([(np.frombuffer(i, "<i4").astype(np.int32), None) for i, _, _ in blobs])
            tf = np.concatenate([np.frombuffer(t, "<i4") for _, t, _ in blobs])
            dl = np.concatenate([np.frombuffer(n, "<i4") for _, _, n in blobs])
            if order is not None:
                tf, dl = tf[order], dl[order]
            tf_, dl_ = tf.astype(np.float64), dl.astype(np.float64)  # every weight: the rows hold tf and length
            weights: npt.NDArray[np.float64] = tf_ * (k1 + 1) / (tf_ + k1 * (1 - b + b * dl_ / avg_len))

            def weight_of(pos: npt.NDArray[np.intp] | None, units: npt.NDArray[np.int32]) -> npt.NDArray[np.float64]:
                found: npt.NDArray[np.float64] = weights[np.searchsorted(ids, units) if pos is None else pos]
                return found

            return ids, weight_of

        raw = sum(len(i) + len(t) + len(n) for i, t, n in blobs)
        # held once decoded: the ids and every posting's weight (the rows' bytes, kept by decode,
        # are let go with it); whole weights and bit sets are counted when made (postings.TermPostings)
        return TermPostings(df, raw + 12 * df + PER_TERM_BYTES, decode, self._all_units + 1, stored=raw)
