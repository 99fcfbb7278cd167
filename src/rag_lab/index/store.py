"""Reading an index: units by key or id, name lookups, the snapshot, BM25 postings.

An :class:`Index` holds one read-only connection to one index file. The file is never
modified in place (a rebuild renames a new file over it), so an open Index keeps
seeing the version it opened, whole, until it is closed.
"""

from __future__ import annotations

import json
import operator
import os
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rag_lab.data.access import PUBLIC, Principal, visible_acls
from rag_lab.data.aliases import Alias
from rag_lab.data.prose import SENTENCE
from rag_lab.errors import IndexError_
from rag_lab.index.field_vectors import vector_from_blob
from rag_lab.index.postings import (
    PER_TERM_BYTES,
    PostingsBudget,
    PostingsCache,
    TermPostings,
    TfWeights,
    WeightOf,
    merge_pieces,
)
from rag_lab.index.schema import LENGTHS_CHUNK, SCHEMA_VERSION, document_name
from rag_lab.index.warned import decoded, joined_text
from rag_lab.records import FULLWIDTH_COLON, Unit

_LINE = operator.itemgetter(0)

_SELECT_UNIT = (
    "SELECT u.id, u.eid, f.path, f.sha256, u.span_start, u.span_end, u.line, u.text, s.name, n.name, "
    "u.value_at, u.value, u.modality, u.valid_from, u.valid_to, x.extra FROM units u "
    "JOIN files f ON f.id = u.file LEFT JOIN strings s ON s.id = u.subject LEFT JOIN strings n ON n.id = u.field "
    "LEFT JOIN extras x ON x.id = u.extra"
)
_NAME_ID = "(SELECT id FROM strings WHERE name = ?)"
_KINDS = ("subject", "field")
_WIDTHS: dict[int, np.dtype[Any]] = {1: np.dtype("<u1"), 2: np.dtype("<u2"), 4: np.dtype("<u4")}
# SQLite's default limit on bound variables is 32766; stay well below it.
_CHUNK = 900
_SQLITE_HEADER = b"SQLite format 3\x00"
POSTINGS_CACHE_BYTES = 64 * 1024 * 1024
"""What an open Index keeps of the postings it read (index/postings.py; the server's: more)."""
MEMO_ENTRIES = 1 << 17
_UNSEEN = object()
"""Names, keys and files' labels an open Index remembers (each memo is emptied when full)."""
MEMO_ROWS = 1 << 14
"""Unit rows an open Index remembers (by id, and by key), each memo emptied past this many rows."""


def stored_text(value: str | bytes) -> str:
    """A text as the build stored it (build.compact_text): UTF-8 TEXT or a UTF-16-LE BLOB."""
    return value if isinstance(value, str) else value.decode("utf-16-le")


def stored_unit_text(text: str | bytes, field: str | None, value_at: int | None, value: str | None) -> tuple[str, str]:
    """A unit's (text, value) from its stored columns (schema.py): ``value_at`` NULL means the text
    is ``field：value`` and only the value was stored; else value = text[value_at:] unless stored."""
    stored = stored_text(text)
    if value_at is None:
        return f"{field}{FULLWIDTH_COLON}{stored}", stored
    return stored, stored[value_at:] if value is None else value


def _row_to_unit(row: Sequence[Any]) -> Unit:
    text, value = stored_unit_text(row[7], row[9], row[10], row[11])
    start = row[4]
    unit: Unit = {
        "evidence_id": "ev_" + row[1].hex(),
        "source": row[2],
        "sha256": row[3].hex(),
        # a NULL end (schema 7): the span ends where the text does
        "span": None if start is None else [start, start + len(text) if row[5] is None else row[5]],
        "line": row[6],
        "text": text,
        "subject": row[8],
        "field": row[9],
        "value": value,
        "modality": "image" if row[12] else "text",
    }
    if row[13] is not None:
        unit["valid_from"] = row[13]
    if row[14] is not None:
        unit["valid_to"] = row[14]
    if row[15] is not None:
        unit.update(stored_extra(row[15], row[2], unit["span"]))
    return unit


def stored_extra(extra: str | bytes, source: str, span: list[int] | None) -> dict[str, Any]:
    """A unit's extra keys from its stored JSON (schema.py): a sentence stores no ``title``
    when it is its file's document name (:func:`~rag_lab.index.schema.document_name` of
    ``source``, the file row's path) and no ``parent_span`` when its paragraph is its own span;
    both come back here, the keys in the sorted order the JSON was written in."""
    rest: dict[str, Any] = json.loads(stored_text(extra))
    if rest.get("kind") == SENTENCE and ("title" not in rest or "parent_span" not in rest):
        if "parent_span" not in rest and span is not None:
            rest["parent_span"] = [span[0], span[1]]
        if "title" not in rest:
            rest["title"] = document_name(source)
        rest = dict(sorted(rest.items()))
    return rest


class _RowMemo:
    """Unit rows by a lookup key, emptied before it would hold more than MEMO_ROWS rows."""

    __slots__ = ("count", "rows")

    def __init__(self) -> None:
        self.rows: dict[Any, tuple[tuple[Any, ...], ...]] = {}
        self.count = 0

    def put(self, key: Any, rows: tuple[tuple[Any, ...], ...]) -> None:
        if self.count + len(rows) > MEMO_ROWS:
            self.rows.clear()
            self.count = 0
        self.rows[key] = rows
        self.count += len(rows)


def _eid(evidence_id: object) -> bytes | None:
    """The 12 stored bytes of an evidence id (None: not of the form ``ev_`` + 24 hex digits)."""
    if not isinstance(evidence_id, str) or len(evidence_id) != 27 or not evidence_id.startswith("ev_"):
        return None
    try:
        raw = bytes.fromhex(evidence_id[3:])
    except ValueError:
        return None
    return raw if "ev_" + raw.hex() == evidence_id else None  # lower-case hex only, as built


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _chunks(items: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


class _OtherVersion(Exception):
    """The file is an index of another schema version (its other meta keys may not exist)."""


class Index:
    """A read-only view of one index file."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        principal: Principal | None = None,
        postings_cache_bytes: int | PostingsBudget = POSTINGS_CACHE_BYTES,
    ) -> None:
        self.path = Path(path)
        self.principal = principal
        self._postings_cache = PostingsCache(postings_cache_bytes)
        # lookups remembered for this open version, as PgStore does (each emptied when full)
        self._acl_of: dict[Any, str | None] = {}
        self._kinds: dict[str, set[str]] = {}  # name → kinds (names only)
        self._no_names: set[str] = set()  # looked up, and no name of the caller's
        self._keys: dict[tuple[str, str], bool] = {}
        self._absent_terms: set[int] = set()  # terms with no visible postings row
        self._rows: dict[int, tuple[Any, ...]] = {}  # unit id → its _SELECT_UNIT row
        self._id_of_eid: dict[bytes, int] = {}  # the stored evidence id → unit id of each row in _rows
        self._key_rows = _RowMemo()  # (subject, field) → its units' rows
        self._source_rows = _RowMemo()  # file path → its units' rows
        self._fields: dict[str, list[str]] = {}
        self._folded: dict[str, set[tuple[str, str]]] = {}  # folded text → its (name, kind) pairs
        self._no_folded: set[str] = set()  # folded texts no name folds to
        self._warned: dict[tuple[Any, ...], list[tuple[str, int, str, str]]] = {}
        self._any_warned_line: bool | None = None  # does this version hold a warned line at all?
        self._messages: dict[int, str] | None = None  # warning_messages, read once
        self._vectors: tuple[npt.NDArray[np.int64], npt.NDArray[np.float16]] | None = None  # read once
        self._db = self._open(self.path)
        try:
            meta = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
            self.config: dict[str, Any] = json.loads(meta["config"])
            if self.config.get("schema_version") != SCHEMA_VERSION:
                raise _OtherVersion
            acls = json.loads(meta["acls"])
            shortest, longest = json.loads(meta["name_lengths"])
            self._name_lengths = (int(shortest), int(longest))
            self._aliases = [Alias(p, tuple(f), int(n)) for p, f, n in json.loads(meta["aliases"])]
            self._vector_model: str | None = json.loads(meta["field_vectors"])
            self._walk_digest = meta["walk_digest"]
            self._all_units = int(meta["units"])
            self.visible = visible_acls(acls, principal)
            # units, names and images hold an ACL's position in meta "acls": the caller's filter
            self._acl_codes = [acls.index(a) for a in self.visible]
            self._acl_span = len(acls)  # postings keys: term * len(acls) + ACL position
            self._acl_filter = f"acl IN ({','.join(map(str, self._acl_codes))})"
            self._length_of_id: tuple[npt.NDArray[Any], npt.NDArray[np.float64]] | None = None
            self._tf1 = self._tf1_weight  # one object: every term's TfWeights.base (add_common shares it)
            stats = self._db.execute("SELECT acl, units, total_len FROM acl_stats").fetchall()
            self.unit_count = sum(n for acl, n, _ in stats if acl in self.visible)
            self.total_len = sum(t for acl, _, t in stats if acl in self.visible)
        except _OtherVersion:
            pass  # refused below, with the versions
        except (sqlite3.DatabaseError, KeyError, ValueError) as exc:
            self._db.close()
            raise IndexError_(
                f"index {str(self.path)!r} is corrupt or incomplete ({exc}); "
                "rebuild it with `rag-lab index ROOT`"
            ) from None
        if self.config.get("schema_version") != SCHEMA_VERSION:
            self._db.close()
            raise IndexError_(
                f"index {str(self.path)!r} has schema version {self.config.get('schema_version')}, "
                f"this rag_lab reads version {SCHEMA_VERSION}; rebuild it with `rag-lab index ROOT`"
            )

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        try:
            with open(path, "rb") as handle:
                header = handle.read(100)
                size = os.fstat(handle.fileno()).st_size
        except FileNotFoundError:
            raise IndexError_(f"no index at {str(path)!r}; build it with `rag-lab index ROOT`") from None
        if not header.startswith(_SQLITE_HEADER) or len(header) < 100:
            raise IndexError_(f"{str(path)!r} is not an rag_lab index (not an SQLite file); rebuild it")
        raw_page_size = int.from_bytes(header[16:18], "big")
        page_size = 65536 if raw_page_size == 1 else raw_page_size  # SQLite stores 65536 as 1
        pages = int.from_bytes(header[28:32], "big")
        if size != page_size * pages:
            raise IndexError_(
                f"index {str(path)!r} is truncated or damaged: {size} bytes on disk, the header "
                f"says {page_size * pages}; rebuild it with `rag-lab index ROOT`"
            )
        # immutable=1: the file is never changed in place, only replaced by rename.
        uri = f"{path.resolve().as_uri()}?mode=ro&immutable=1"
        return sqlite3.connect(uri, uri=True, check_same_thread=False)

    def close(self) -> None:
        self._db.close()
        self._postings_cache.clear()  # a shared budget's room goes back to the other stores

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Run ``sql``; ``{visible}`` becomes the caller's filter on an ACL position column
        (units, names, images), ``{labels}`` the one on an ACL label column (files)."""
        sql = sql.replace("{visible}", self._acl_filter)
        if "{labels}" in sql:
            before = sql[: sql.index("{labels}")].count("?")
            sql = sql.replace("{labels}", f"acl IN ({','.join('?' * len(self.visible))})")
            params = [*params[:before], *self.visible, *params[before:]]
        try:
            try:
                return self._db.execute(sql, params).fetchall()
            except UnicodeEncodeError:  # a lone surrogate (from a question) equals no stored text
                params = [None if isinstance(p, str) and not _encodable(p) else p for p in params]
                return self._db.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise IndexError_(
                f"index {str(self.path)!r} cannot be read ({exc}); rebuild it with `rag-lab index ROOT`"
            ) from None

    def _remembered(self, memo: dict[Any, Any]) -> dict[Any, Any]:
        """A lookup memo of this open version (the file never changes), emptied when full."""
        if len(memo) >= MEMO_ENTRIES:
            memo.clear()
        return memo

    def may_see(self, unit: Unit) -> bool:
        """By the index's record of the unit's file, never by the unit dict's own claim."""
        source = unit.get("source")
        memo = self._remembered(self._acl_of)
        known = memo.get(source, _UNSEEN)
        if known is _UNSEEN:
            rows = self._query("SELECT acl FROM files WHERE path = ? AND error IS NULL", (source,))
            known = memo[source] = rows[0][0] if rows else None
        acl = known if known is not None else unit.get("acl", PUBLIC)  # unknown paths: verification decides
        return acl in self.visible and unit.get("acl", PUBLIC) in self.visible

    @property
    def reserved_fields(self) -> frozenset[str]:
        return frozenset(self.config["reserved_fields"])

    # -- units ---------------------------------------------------------------------------
    def _rows_of_key(self, subject: str, field: str) -> tuple[tuple[Any, ...], ...]:
        """The rows of every visible unit of ``(subject, field)``, ascending ids; remembered for
        this open version (ranking asks for a key's ids, the audit then for its units)."""
        return self._kept_rows(
            self._key_rows,
            (subject, field),
            _SELECT_UNIT + f" WHERE u.subject = {_NAME_ID} AND u.field = {_NAME_ID} AND u.{{visible}} ORDER BY u.id",
        )

    def _kept_rows(self, memo: _RowMemo, key: Any, sql: str) -> tuple[tuple[Any, ...], ...]:
        """The rows ``sql`` selects with ``key`` as its parameters (a tuple) or its one parameter,
        remembered in ``memo`` for this open version."""
        rows = memo.rows.get(key)
        if rows is None:
            rows = tuple(map(tuple, self._query(sql, key if isinstance(key, tuple) else (key,))))
            memo.put(key, rows)
        return rows

    def units_for_key(self, subject: str, field: str) -> list[Unit]:
        """Every unit of ``(subject, field)`` in the whole corpus, in evidence_id order."""
        return [_row_to_unit(r) for r in self._rows_of_key(subject, field)]

    def unit_ids_for_key(self, subject: str, field: str) -> list[int]:
        """The ids (not the rows) of every visible unit of ``(subject, field)``, ascending."""
        return [r[0] for r in self._rows_of_key(subject, field)]

    def units_by_ids(self, ids: Sequence[int]) -> dict[int, Unit]:
        """Visible units by id (absent or invisible ids left out), each a new dict; the rows
        are remembered for this open version."""
        memo = self._rows
        get = memo.get
        rows = {i: get(i) for i in sorted(set(ids))}  # ascending, as SQLite returns an IN list of ids
        missing = [i for i, row in rows.items() if row is None]
        if missing:
            fetched: dict[int, tuple[Any, ...]] = {}
            for chunk in _chunks(missing):
                marks = ",".join("?" * len(chunk))
                for row in self._query(_SELECT_UNIT + f" WHERE u.id IN ({marks}) AND u.{{visible}}", chunk):
                    fetched[row[0]] = tuple(row)
            if len(memo) + len(fetched) > MEMO_ROWS:
                memo.clear()
                self._id_of_eid.clear()
            memo.update(fetched)
            self._id_of_eid.update((row[1], uid) for uid, row in fetched.items())
            rows.update(fetched)
        return {uid: _row_to_unit(row) for uid, row in rows.items() if row is not None}

    def units_of_source(self, source: str) -> list[Unit]:
        """Every visible unit of one file, in span order; the rows are remembered for this open
        version (a prose request asks for the files of its kept sentences and of their previous
        sentences), new dicts handed out each call."""
        return [_row_to_unit(r) for r in self._rows_of_source(source)]

    def units_of_source_spanning(self, source: str, start: int, end: int) -> list[Unit]:
        """The visible units of one file whose span starts in ``[start, end)``, in span order:
        ``units_of_source`` filtered by ``span[0]``, without making the file's other units (parent
        expansion and the previous sentence ask for one paragraph, its ``parent_span``)."""
        return [_row_to_unit(r) for r in self._rows_of_source(source) if r[4] is not None and start <= r[4] < end]

    def _rows_of_source(self, source: str) -> tuple[tuple[Any, ...], ...]:
        return self._kept_rows(
            self._source_rows,
            source,
            _SELECT_UNIT + " WHERE u.file = (SELECT id FROM files WHERE path = ?) AND u.{visible} "
            "ORDER BY u.span_start, u.id",
        )

    def _id_of(self, evidence_id: str) -> int | None:
        """The id of the visible unit with ``evidence_id``: ids follow evidence ids, so a binary
        search over ids finds it (about 20 point reads at a million units; no index stored)."""
        raw = _eid(evidence_id)
        if raw is None:
            return None
        known = self._id_of_eid.get(raw)  # a visible row this open version read already (units_by_ids)
        if known is not None:
            return known
        lo, hi = 1, self._all_units
        while lo <= hi:
            mid = (lo + hi) // 2
            rows = self._query("SELECT eid, acl FROM units WHERE id = ?", (mid,))
            if not rows:  # pragma: no cover - ids are 1..units without gaps
                return None
            eid, acl = rows[0]
            if eid == raw:
                return mid if acl in self._acl_codes else None
            lo, hi = (mid + 1, hi) if eid < raw else (lo, mid - 1)
        return None

    def ids_of(self, evidence_ids: Sequence[str]) -> list[int]:
        """Unit ids of ``evidence_ids`` (same order; each must be in the index and visible)."""
        found = [self._id_of(e) for e in evidence_ids]
        missing = [e for e, uid in zip(evidence_ids, found, strict=True) if uid is None]
        if missing:
            raise KeyError(missing[0])
        return [uid for uid in found if uid is not None]

    def unit_by_evidence_id(self, evidence_id: str) -> Unit | None:
        uid = self._id_of(evidence_id)
        return None if uid is None else self.units_by_ids([uid]).get(uid)

    def fields_of(self, subject: str) -> list[str]:
        memo = self._remembered(self._fields)
        found = memo.get(subject)
        if found is None:
            rows = self._query(
                "SELECT n.name FROM strings n WHERE n.id IN "
                f"(SELECT field FROM units WHERE subject = {_NAME_ID} AND {{visible}}) ORDER BY n.id",
                (subject,),
            )
            found = memo[subject] = [r[0] for r in rows]
        return list(found)

    def images_matching(self, attrs: dict[str, str]) -> list[Unit]:
        """Every image unit whose measured colour/size/shape equal all of ``attrs``."""
        where = " AND ".join(f"{k} = ?" for k in sorted(attrs)) or "1"
        ids = [
            r[0]
            for r in self._query(
                f"SELECT id FROM images WHERE {where} AND {{visible}} ORDER BY id",
                [attrs[k] for k in sorted(attrs)],
            )
        ]
        units = self.units_by_ids(ids)
        return [units[i] for i in ids]

    # -- names ---------------------------------------------------------------------------
    def name_kinds(self, candidates: Iterable[str]) -> dict[str, set[str]]:
        """Which of ``candidates`` are names in the corpus, and of what ("subject", "field")."""
        memo = self._remembered(self._kinds)
        absent = self._no_names
        if len(absent) >= MEMO_ENTRIES:
            absent.clear()
        get = memo.get
        # most candidates (every substring of a question) are no name, and known to be: a set
        # difference drops them in C before the rest is looked up one by one
        known = {n: get(n) for n in set(candidates) - absent}
        fetched: dict[str, set[str]] = {n: set() for n in sorted(n for n, k in known.items() if k is None)}  # absent: empty
        for chunk in _chunks(list(fetched)):
            marks = ",".join("?" * len(chunk))
            for name, kind in self._query(
                f"SELECT s.name, n.kind FROM strings s JOIN names n ON n.name = s.id "
                f"WHERE s.name IN ({marks}) AND n.{{visible}}",
                chunk,
            ):
                fetched[name].add(_KINDS[kind])
        memo.update((n, kinds) for n, kinds in fetched.items() if kinds)  # others may read meanwhile
        absent.update(n for n, kinds in fetched.items() if not kinds)  # only once its lookup is done
        known.update(fetched)
        hits = {n: kinds for n, kinds in known.items() if kinds}
        return {n: set(hits[n]) for n in sorted(hits)}  # in name order

    def folded_name_kinds(self, candidates: Iterable[str]) -> dict[str, set[tuple[str, str]]]:
        """folded text → {(name, kind)} of the names that fold to it (itself included)."""
        wanted = set(candidates)
        found: dict[str, set[tuple[str, str]]] = {}
        for name, kinds in self.name_kinds(wanted).items():
            found.setdefault(name, set()).update((name, k) for k in kinds)
        memo = self._remembered(self._folded)  # folded text → the names folding to it
        absent = self._no_folded
        if len(absent) >= MEMO_ENTRIES:
            absent.clear()
        get = memo.get
        known = {n: get(n) for n in sorted(wanted - absent)}
        fetched: dict[str, set[tuple[str, str]]] = {n: set() for n, pairs in known.items() if pairs is None}
        for chunk in _chunks(list(fetched)):
            marks = ",".join("?" * len(chunk))
            for folded, name, kind in self._query(
                "SELECT f.folded, s.name, n.kind FROM folded_names f JOIN strings s ON s.id = f.name "
                f"JOIN names n ON n.name = f.name WHERE f.folded IN ({marks}) AND n.{{visible}}",
                chunk,
            ):
                fetched[folded].add((name, _KINDS[kind]))
        memo.update((n, pairs) for n, pairs in fetched.items() if pairs)
        absent.update(n for n, pairs in fetched.items() if not pairs)
        known.update(fetched)
        for folded, pairs in known.items():
            if pairs:
                found.setdefault(folded, set()).update(pairs)
        return found

    def has_key(self, subject: str, field: str) -> bool:
        memo = self._remembered(self._keys)
        found = memo.get((subject, field))
        if found is None:
            rows = self._query(
                f"SELECT 1 FROM units WHERE subject = {_NAME_ID} AND field = {_NAME_ID} AND {{visible}} LIMIT 1",
                (subject, field),
            )
            found = memo[(subject, field)] = bool(rows)
        return found

    def subjects_with_field(self, field: str, limit: int) -> list[str]:
        rows = self._query(
            "SELECT s.name FROM strings s WHERE s.id IN "
            f"(SELECT subject FROM units WHERE field = {_NAME_ID} AND {{visible}}) ORDER BY s.id LIMIT ?",
            (field, limit),
        )
        return [r[0] for r in rows]

    def name_length_range(self) -> tuple[int, int]:
        """Bounds for the substring lookup (stored at build time; over every ACL, which only
        widens the lookup and never changes what a caller can match)."""
        return self._name_lengths

    # -- field matching ------------------------------------------------------------------
    def user_aliases(self) -> list[Alias]:
        """The owner's ``ROOT/aliases.tsv`` as read at build time (empty: absent or invalid)."""
        return list(self._aliases)

    def field_vector_model(self) -> str | None:
        """The model of the stored field-name vectors; None when built without vectors."""
        return self._vector_model

    def field_vectors(self, names: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """name → stored vector, for those of ``names`` that have one."""
        found: dict[str, npt.NDArray[np.float32]] = {}
        for chunk in _chunks(sorted(set(names))):
            marks = ",".join("?" * len(chunk))
            for name, blob in self._query(f"SELECT name, vector FROM field_vectors WHERE name IN ({marks})", chunk):
                found[name] = vector_from_blob(blob)
        return found

    # -- snapshot ------------------------------------------------------------------------
    def snapshot(self) -> dict[str, tuple[Any, ...]]:
        """path → (size, mtime_ns, ctime_ns, inode, sha256, error, acl) of every indexed file."""
        rows = self._query("SELECT path, size, mtime_ns, ctime_ns, inode, sha256, error, acl FROM files")
        return {r[0]: (*r[1:5], None if r[5] is None else r[5].hex(), *r[6:]) for r in rows}

    def fingerprints(self) -> dict[str, tuple[int, int, int, int] | None]:
        """path → (size, mtime_ns, ctime_ns, inode) of every indexed file (None: it could not be stat'ed)."""
        rows = self._query("SELECT path, size, mtime_ns, ctime_ns, inode FROM files")
        return {p: None if size is None else (size, m, c, i) for p, size, m, c, i in rows}

    def walk_digest(self) -> str:
        """The build's digest of the corpus walk (index/freshness.py's fast path; "" for none)."""
        return str(self._walk_digest)

    def snapshot_of(self, path: str) -> tuple[Any, ...] | None:
        rows = self._query(
            "SELECT size, mtime_ns, ctime_ns, inode, sha256, error, acl FROM files WHERE path = ?",
            (path,),
        )
        if not rows:
            return None
        r = rows[0]
        return (*r[:4], None if r[4] is None else r[4].hex(), *r[5:])

    def file_problems(self) -> list[dict[str, Any]]:
        errors = self._query(
            "SELECT path, error FROM files WHERE error IS NOT NULL AND (acl = '!' OR {labels}) ORDER BY path"
        )
        rows = self._query(
            "SELECT f.path, w.n, w.lines, w.codes FROM file_warnings w JOIN files f ON f.id = w.file "
            "WHERE f.acl = '!' OR f.{labels} ORDER BY f.path"
        )
        messages = self._warning_messages() if rows else {}
        # by line, ties in the parser's order (schema 7's ORDER BY path, line over its rows)
        warnings = [
            {"path": p, "line": ln, "severity": "warning", "message": m}
            for p, n, lines, codes in rows
            for ln, m in (
                decoded(n, lines, codes, messages) if n == 1 else sorted(decoded(n, lines, codes, messages), key=_LINE)
            )
        ]
        return [{"path": p, "line": None, "severity": "error", "message": e} for p, e in errors] + warnings

    def _warning_messages(self) -> dict[int, str]:
        """id → message of ``warning_messages`` (each distinct message but the 主题 one, index/warned.py)."""
        if self._messages is None:
            self._messages = dict(self._query("SELECT id, message FROM warning_messages"))
        return self._messages

    def _warnings_of(self, file: int) -> list[tuple[int, str]]:
        """(line, message) of the warnings of file id ``file``, in the parser's order."""
        rows = self._query("SELECT n, lines, codes FROM file_warnings WHERE file = ?", (file,))
        return [w for n, lines, codes in rows for w in decoded(n, lines, codes, self._warning_messages())]

    def _line_text(self, file: int, line: int, stored: str | bytes | None) -> str:
        """A warned line's text: stored, or (NULL) its units' texts joined (index/warned.py)."""
        if stored is not None:
            return stored_text(stored)
        rows = self._query("SELECT text FROM units WHERE file = ? AND line = ? ORDER BY span_start", (file, line))
        return joined_text(stored_text(t) for (t,) in rows)

    def warned_lines_naming(
        self, names: Iterable[str], subjects: Iterable[str], limit: int
    ) -> list[tuple[str, int, str, str]]:
        """(path, line, text, message) of warned lines about one of ``names`` in files the caller
        may see: a broken subject line naming it, or a would-be field line of it in a file that
        holds a visible unit of one of ``subjects``. By path and line, at most ``limit`` per
        chunk of names (notes on refusals, rag_lab.retrieval.notes)."""
        if self._any_warned_line is None:  # once per open version: most corpora warn about nothing
            self._any_warned_line = bool(self._query("SELECT 1 FROM warning_lines LIMIT 1"))
        if not self._any_warned_line:
            return []
        wanted, about = sorted(set(names)), sorted(set(subjects))
        memo = self._remembered(self._warned)
        asked = (tuple(wanted), tuple(about), limit)
        if asked in memo:
            return list(memo[asked])
        visible = list(self.visible)
        acl = ",".join("?" * len(visible))
        found: set[tuple[str, int, str, str]] = set()
        for chunk in _chunks(wanted):
            sql = (
                "SELECT f.path, l.line, l.text, l.file FROM warning_lines l "
                f"JOIN files f ON f.id = l.file WHERE l.name IN ({','.join('?' * len(chunk))}) "
                f"AND f.acl IN ({acl}) AND (l.subject_line = 1 OR EXISTS (SELECT 1 FROM units u "
                f"JOIN strings s ON s.id = u.subject WHERE u.file = f.id AND s.name IN ({','.join('?' * len(about))}) "
                f"AND u.{self._acl_filter})) ORDER BY f.path, l.line LIMIT ?"
            )
            # each line has at least one warning: ``limit`` lines give at least ``limit`` rows of
            # schema 7's join with its warnings, which are cut to ``limit`` here as its LIMIT did
            joined: list[tuple[str, int, str, str]] = []
            for path, line, stored, file in self._query(sql, [*chunk, *visible, *about, limit]):
                text = self._line_text(file, line, stored)
                joined.extend((path, line, text, m) for ln, m in self._warnings_of(file) if ln == line)
            found.update(joined[:limit])
        memo[asked] = lines = sorted(found)
        return list(lines)

    # -- vectors (index/vectors.py) --------------------------------------------------------
    def vectors(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float16]]:
        """``(unit ids ascending, float16 rows)`` of the caller's prose units that have vectors, read
        once for this open version (the file never changes; every fused question scores them all:
        reading them again cost ≈ 140 ms a question at 75,000 units), read-only arrays."""
        if self._vectors is None:
            dim = int((self.config.get("vectors") or {}).get("dim", 0))
            rows = self._query(
                "SELECT v.id, v.vec FROM vectors v JOIN units u ON u.id = v.id WHERE u.{visible} ORDER BY v.id"
            )
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float16).reshape(len(rows), dim)
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
        kept for this open version in a cache of ``postings_cache_bytes`` (bytes, or a
        ``PostingsBudget`` shared with other stores)."""
        absent = self._absent_terms
        wanted = [t for t in map(int, dict.fromkeys(terms)) if t not in absent]
        found, missing = self._postings_cache.get(wanted)
        if not missing:
            return found
        rows: dict[int, list[tuple[int, int, bytes | None, bytes | None]]] = {}
        span = self._acl_span
        keys = [t * span + a for t in missing for a in self._acl_codes]
        for chunk in _chunks(keys):
            marks = ",".join("?" * len(chunk))
            for key, df, first, deltas, tfs in self._query(
                f"SELECT key, df, first, deltas, tfs FROM postings WHERE key IN ({marks}) ORDER BY key", chunk
            ):
                rows.setdefault(key // span, []).append((df, first, deltas, tfs))
        fetched = {term: self._term_postings(pieces) for term, pieces in rows.items()}
        self._postings_cache.put(fetched)
        if len(absent) >= MEMO_ENTRIES:
            absent.clear()
        absent.update(t for t in missing if t not in rows)  # the open version never gains a term
        found.update(fetched)
        return found

    def _term_postings(self, pieces: list[tuple[int, int, bytes | None, bytes | None]]) -> TermPostings:
        df = sum(p[0] for p in pieces)
        raw = sum(len(p[2] or b"") + len(p[3] or b"") for p in pieces)

        def decode() -> tuple[npt.NDArray[np.int32], WeightOf]:
            decoded = []
            for count, first, deltas, tfs in pieces:
                ids = np.empty(count, np.int32)
                ids[0] = first
                if count > 1 and deltas is not None:
                    gaps = np.frombuffer(deltas, _WIDTHS[len(deltas) // (count - 1)])
                    np.cumsum(gaps, out=ids[1:], dtype=np.int32)
                    ids[1:] += first
                at, tf = (np.zeros(0, np.int32),) * 2
                if tfs is not None:
                    at, tf = np.frombuffer(tfs, "<i4").reshape(-1, 2).T
                decoded.append((ids, at, tf))
            ids, order = merge_pieces([(d[0], None) for d in decoded])
            at, tf = decoded[0][1], decoded[0][2]
            if order is not None:  # tf exceptions by their position in the merged list
                where = np.empty(order.size, np.intp)
                where[order] = np.arange(order.size)
                offsets = np.cumsum([0] + [d[0].size for d in decoded[:-1]])
                at = np.concatenate([where[o + d[1]] for o, d in zip(offsets, decoded, strict=True)])
                tf = np.concatenate([d[2] for d in decoded])
                by_at = np.argsort(at, kind="stable")
                at, tf = at[by_at], tf[by_at]
            lengths, _ = self._unit_lengths()
            more_ids = ids[at]  # the units with tf > 1, ascending (as their positions), and their weights
            more_weights = self._weight(tf.astype(np.float64), lengths[more_ids].astype(np.float64))
            return ids, TfWeights(self._tf1, more_ids, more_weights)

        # held once decoded: the ids and the tf > 1 exceptions' ids and weights (the stored bytes,
        # kept by decode, are let go with it); whole weights and bit sets are counted when made
        exceptions = sum(len(p[3] or b"") for p in pieces) // 8
        estimate = raw + 4 * df + 12 * exceptions + PER_TERM_BYTES
        return TermPostings(df, estimate, decode, self._all_units + 1, stored=raw)

    def _weight(self, tf: npt.NDArray[np.float64], dl: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """BM25's tf weight for the caller's statistics (average length over its units)."""
        k1, b = self.config["ranking"]["k1"], self.config["ranking"]["b"]
        avg_len = max(self.total_len / self.unit_count, 1.0) if self.unit_count else 1.0
        weight: npt.NDArray[np.float64] = tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avg_len))
        return weight

    def _tf1_weight(self, units: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
        """The weight of tf = 1 at each of ``units``, by its length (TfWeights.base)."""
        lengths, by_length = self._unit_lengths()
        weight: npt.NDArray[np.float64] = by_length[lengths[units]]
        return weight

    def _unit_lengths(self) -> tuple[npt.NDArray[Any], npt.NDArray[np.float64]]:
        """Every unit's length (terms) indexed by unit id, and the tf = 1 weight of every length
        up to the longest; read and computed once per Index (one byte per unit for typical
        corpora, so a question reads no per-posting lengths)."""
        if self._length_of_id is None:
            parts = []
            for number, blob in self._query("SELECT chunk, lengths FROM unit_lengths ORDER BY chunk"):
                size = min(LENGTHS_CHUNK, self._all_units + 1 - number * LENGTHS_CHUNK)
                parts.append(np.frombuffer(blob, _WIDTHS[len(blob) // size]))
            lengths = np.concatenate(parts) if parts else np.zeros(1, np.uint8)
            every = np.arange(int(lengths.max()) + 1, dtype=np.float64)
            self._length_of_id = (lengths, self._weight(np.ones(every.size), every))
        return self._length_of_id
