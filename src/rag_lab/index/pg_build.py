"""Building an index in PostgreSQL: the same extraction as the SQLite build, a new generation
written and switched to in one transaction.

``build_index(root, "postgresql://…")`` comes here. Under an exclusive advisory lock (one
build at a time per database) the whole build is one transaction: create the schema
``rag_lab_g<N>``, bulk-load (COPY) the files, units, names, images and per-label postings
that :func:`rag_lab.index.build.extract_batches` produces — the very rows the SQLite file
gets — build the indexes, then point ``rag_lab.current`` at ``N`` and commit. A build killed
at any point leaves nothing: PostgreSQL rolls the transaction back when the session dies,
and readers keep the previous generation. After the commit, generations no reader holds are
dropped; one still pinned by a reader is dropped by a later build.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from rag_lab.data import Progress
from rag_lab.data.access import AccessRules
from rag_lab.data.aliases import Alias, general_aliases, read_alias_file
from rag_lab.data.corpus import check_corpus_root, walk
from rag_lab.data.names import fold
from rag_lab.errors import IndexError_
from rag_lab.index.backend import shown_location
from rag_lab.index.build import (
    WARNINGS_KEPT,
    Batch,
    BuildSummary,
    _walk_digest,
    _whole_term_slices,
    config_for,
    extract_batches,
    name_lengths,
    with_progress,
)
from rag_lab.index.field_vectors import write_field_vectors
from rag_lab.index.pg_schema import (
    CATALOGUE,
    CATALOGUE_DDL,
    GENERATION_DDL,
    GENERATION_INDEXES,
    GENERATION_PREFIX,
    LOCK_CLASS,
    PG_LAYOUT_VERSION,
    generation_schema,
)
from rag_lab.index.pg_store import connect, current_generation, require_psycopg
from rag_lab.index.schema import SCHEMA_VERSION
from rag_lab.index.store import stored_extra, stored_text, stored_unit_text
from rag_lab.index.vectors import VECTOR_KINDS, Reuse, add_vectors, prose_texts, same_model, vector_counts
from rag_lab.limits import MAX_FILE_BYTES
from rag_lab.neural import Embedder

if TYPE_CHECKING:
    import psycopg

_UNIT_FIELDS = [
    "evidence_id", "source", "sha256", "span_start", "span_end", "line", "text", "subject",
    "field", "value", "modality", "valid_from", "valid_to", "extra", "acl",
]
_TABLES = [
    "meta", "files", "file_warnings", "warning_lines", "units", "names", "images", "postings",
    "folded_names", "field_vectors", "acl_stats", "vectors",
]


def build_pg_index(
    root: str | os.PathLike[str],
    location: str,
    *,
    progress: Progress | None = None,
    reserved_fields: frozenset[str] | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
    vectors: bool = False,
    embedder: Embedder | None = None,
    embedding_progress: Progress | None = None,
) -> BuildSummary:
    """``build_index`` into the database at ``location`` (see module docstring)."""
    if vectors and embedder is None:
        from rag_lab.neural import require_embedder

        embedder = require_embedder()
    started = time.perf_counter()
    base = check_corpus_root(root)
    summary = BuildSummary(index_path=shown_location(location))
    pg = require_psycopg()
    conn = connect(location)
    try:
        row = conn.execute("SHOW server_encoding").fetchone()
        encoding = row[0].decode() if row is not None and isinstance(row[0], bytes) else row and row[0]
        if encoding != "UTF8":  # (an SQL_ASCII database returns text as bytes)
            raise IndexError_(
                f"the index database {shown_location(location)!r} has encoding {encoding}; "
                "rag_lab needs a UTF8 database (CREATE DATABASE … ENCODING 'UTF8' TEMPLATE template0)"
            )
        conn.execute("SELECT pg_advisory_lock(%s, 0)", (LOCK_CLASS,))  # held until the session ends
        conn.execute(CATALOGUE_DDL)
        drop_unused_generations(conn)
        items = list(walk(base))
        batches = extract_batches(
            base, items, AccessRules.load(base), close_in_workers=[conn.fileno()], max_file_bytes=max_file_bytes
        )
        try:
            with conn.transaction():
                _write_generation(
                    conn,
                    base,
                    with_progress(batches, progress, len(items)),
                    config_for(reserved_fields),
                    summary,
                    aliases=read_alias_file(base)[0],
                    embedder=embedder if vectors else None,
                    embedding_progress=embedding_progress,
                )
        except pg.Error as exc:
            raise IndexError_(
                f"writing the index into {shown_location(location)!r} failed ({exc}); the previous "
                "generation is untouched; fix the cause and rerun `rag-lab index ROOT --store URL`"
            ) from None
        finally:
            batches.close()
        drop_unused_generations(conn)
    finally:
        conn.close()
    summary.seconds = time.perf_counter() - started
    return summary


def drop_unused_generations(conn: psycopg.Connection[Any]) -> list[int]:
    """Drop every generation but the current one that no reader holds; returns those dropped."""
    current = current_generation(conn)
    rows = conn.execute(f"SELECT id FROM {CATALOGUE}.generations ORDER BY id").fetchall()
    dropped = []
    for (generation,) in rows:
        if generation == current:
            continue
        got = conn.execute("SELECT pg_try_advisory_lock(%s, %s)", (LOCK_CLASS, generation)).fetchone()
        if not got or not got[0]:
            continue  # a reader still reads it: a later build drops it
        try:
            with conn.transaction():
                conn.execute(f"DROP SCHEMA IF EXISTS {generation_schema(generation)} CASCADE")
                conn.execute(f"DELETE FROM {CATALOGUE}.generations WHERE id = %s", (generation,))
            dropped.append(int(generation))
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_CLASS, generation))
    return dropped


class _Gathered:
    """What the postings, names and images need of every unit, batch by batch (rows go to COPY)."""

    def __init__(self) -> None:
        self.evidence_ids: list[str] = []
        self.acls: list[str] = []
        self.codes: list[npt.NDArray[np.int64] | None] = []
        self.code_span = 1  # every term code is below this
        self.terms: list[npt.NDArray[np.int64]] = []
        self.images: list[tuple[int, Any, Any, Any, str]] = []
        self.names: dict[tuple[str, str, str], int] = {}
        self.file_acls: set[str] = set()
        self.warnings = 0

    def add(self, batch: Batch, units: list[tuple[Any, ...]], files: list[tuple[Any, ...]]) -> None:
        offset = len(self.evidence_ids)
        self.evidence_ids.extend(row[0] for row in units)
        self.acls.extend(row[-1] for row in units)
        self.codes.append(batch.codes)
        self.terms.append(batch.terms)
        if batch.codes.size:
            self.code_span = max(self.code_span, int(batch.codes.max()) + 1)
        self.images.extend((offset + i, c, s, sh, units[i][-1]) for i, c, s, sh in batch.images)
        for key, count in batch.names.items():
            self.names[key] = self.names.get(key, 0) + count
        self.file_acls.update(row[-1] for row in files)


_EXTRAS_MEMO = 1 << 16  # distinct stored extras _Rows remembers (emptied when full)


class _Rows:
    """The SQLite build's compact batch rows (schema.py: file ids, 12-byte evidence ids,
    UTF-16 texts, values as offsets) turned back into this store's plain columns."""

    def __init__(self) -> None:
        self._files: list[tuple[str, str | None]] = []  # by files-table id - 1: (path, SHA-256 hex)
        self._extras: dict[str | bytes, str] = {}  # stored extra → its text when whole, else ""

    def files(self, batch: Batch) -> list[tuple[Any, ...]]:
        rows = [(*row[:3], None if row[3] is None else row[3].hex(), *row[4:]) for row in batch.files]
        self._files.extend((row[0], row[3]) for row in rows)
        return rows

    def units(self, batch: Batch) -> Iterator[tuple[Any, ...]]:
        for ev, file_id, start, end, line, text, subject, field, value_at, own, image, vf, vt, extra, acl in batch.units:
            source, sha256 = self._files[file_id - 1]
            plain, value = stored_unit_text(text, field, value_at, own)
            if start is not None and end is None:  # the SQLite layout's derived end (schema.py)
                end = start + len(plain)
            modality = "image" if image else "text"
            if extra is not None:
                extra = self._whole_extra(extra, source, start, end)
            yield ("ev_" + ev.hex(), source, sha256, start, end, line, plain, subject, field, value, modality,
                   vf, vt, extra, acl)

    def _whole_extra(self, extra: str | bytes, source: str, start: int | None, end: int | None) -> str:
        """The extra JSON as this store keeps it: whole, with what the SQLite layout leaves out of a
        sentence's (schema 9: its title, its paragraph span) put back by the reader's own rule."""
        known = self._extras.get(extra)
        if known is None:
            if len(self._extras) >= _EXTRAS_MEMO:
                self._extras.clear()
            text = stored_text(extra)
            whole = stored_extra(extra, source, [0, 0]) == json.loads(text)  # nothing left out
            known = self._extras[extra] = text if whole else ""
        if known:
            return known
        span = None if start is None or end is None else [start, end]
        return json.dumps(stored_extra(extra, source, span), ensure_ascii=False, sort_keys=True)


def _copy(conn: psycopg.Connection[Any], table: str, columns: list[str], rows: Any) -> None:
    with conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def _write_generation(
    conn: psycopg.Connection[Any],
    root: Path,
    batches: Iterator[Batch],
    config: dict[str, Any],
    summary: BuildSummary,
    *,
    aliases: list[Alias],
    embedder: Embedder | None,
    embedding_progress: Progress | None = None,
) -> None:
    previous = current_generation(conn)  # what readers use until this build commits
    row = conn.execute(f"SELECT nextval('{CATALOGUE}.generation_ids')").fetchone()
    assert row is not None
    generation = int(row[0])
    schema = generation_schema(generation)
    conn.execute(f"CREATE SCHEMA {schema}")
    conn.execute(f"SET LOCAL search_path TO {schema}")
    conn.execute(GENERATION_DDL)
    staged = ", ".join(f"{c} TEXT COLLATE \"C\"" if c == "evidence_id" else f"{c} {_staged_type(c)}" for c in _UNIT_FIELDS)
    conn.execute(f"CREATE TEMP TABLE staging ({staged}) ON COMMIT DROP")
    gathered, plain = _Gathered(), _Rows()
    recorded: dict[str, tuple[Any, ...]] = {}  # path → fingerprint as read (the walk digest's check)
    for batch in batches:  # in sorted path order
        files = plain.files(batch)
        recorded.update((f[0], (f[2], f[4], f[5], f[6])) for f in files)
        _copy(conn, "files", ["path", "kind", "size", "sha256", "mtime_ns", "ctime_ns", "inode", "error", "acl"], files)
        _copy(
            conn,
            "file_warnings",
            ["path", "line", "message", "ord"],
            ((p, ln, m, gathered.warnings + i) for i, (p, ln, m) in enumerate(batch.warnings)),
        )
        gathered.warnings += len(batch.warnings)
        _copy(
            conn,
            "warning_lines",
            ["path", "line", "text", "name", "subject_line"],
            ((p, ln, t, n, int(s)) for p, ln, t, n, s in batch.warning_lines),
        )
        units = list(plain.units(batch))
        _copy(conn, "pg_temp.staging", _UNIT_FIELDS, units)
        summary.files += len(batch.files)
        summary.errors.extend(batch.errors)
        summary.warnings += len(batch.warnings)
        summary.files_without_units += batch.without_units
        room = WARNINGS_KEPT - len(summary.warning_list)
        summary.warning_list.extend(
            {"path": p, "line": ln, "message": m} for p, ln, m in batch.warnings[: max(room, 0)]
        )
        gathered.add(batch, units, files)
    count = _write_units(conn, gathered)
    field_names = {name for name, kind, _acl in gathered.names if kind == "field"}
    alias_fields = {f for a in [*aliases, *general_aliases()] for f in a.fields}
    vector_model = None
    if embedder is not None:
        reuse = _GenerationReuse(conn, previous)
        entry, reused = _add_vectors(conn, embedder, reuse, embedding_progress)
        config = {**config, "vectors": entry}
        vector_model, names_reused = _add_field_vectors(conn, embedder, field_names | alias_fields, reuse)
        summary.vectors = vector_counts(entry["units"], reused, len(field_names | alias_fields), names_reused)
    meta = {
        "config": json.dumps(config, ensure_ascii=False, sort_keys=True),
        "units": str(count),
        "acls": json.dumps(sorted(gathered.file_acls | set(gathered.acls))),
        "name_lengths": json.dumps(name_lengths(gathered.names)),
        "aliases": json.dumps([[a.phrase, list(a.fields), a.line] for a in aliases], ensure_ascii=False),
        "field_vectors": json.dumps(vector_model),
        # the fast freshness check, as in the SQLite file (index/freshness.py): the digest of
        # the corpus walk as the files were read, or "" when the corpus changed while read
        "walk_digest": _walk_digest(root, recorded),
    }
    del recorded
    _copy(conn, "meta", ["key", "value"], sorted(meta.items()))
    conn.execute(GENERATION_INDEXES)
    for table in _TABLES:
        conn.execute(f"ANALYZE {schema}.{table}")
    conn.execute(
        f"INSERT INTO {CATALOGUE}.generations (id, layout, files, units) VALUES (%s, %s, %s, %s)",
        (generation, PG_LAYOUT_VERSION, summary.files, count),
    )
    # the switch: readers that open after the commit see the new generation, whole
    conn.execute(
        f"INSERT INTO {CATALOGUE}.current (one, generation) VALUES (TRUE, %s) "
        "ON CONFLICT (one) DO UPDATE SET generation = EXCLUDED.generation",
        (generation,),
    )
    summary.units = count


def _staged_type(column: str) -> str:
    return "INTEGER" if column in ("span_start", "span_end", "line") else "TEXT"


def _write_units(conn: psycopg.Connection[Any], gathered: _Gathered) -> int:
    """Units with ids 1.. in evidence_id order (as in the SQLite file), names, images, postings."""
    count = len(gathered.evidence_ids)
    order = sorted(range(count), key=gathered.evidence_ids.__getitem__)
    rowids = np.empty(count, dtype=np.int64)
    rowids[order] = np.arange(1, count + 1, dtype=np.int64)
    del order
    gathered.evidence_ids = []
    columns = ", ".join(_UNIT_FIELDS)
    # "C" collation: byte order of UTF-8, which is Python's code-point order used for rowids
    conn.execute(
        f"INSERT INTO units (id, {columns}) SELECT row_number() OVER (ORDER BY evidence_id), {columns} "
        "FROM pg_temp.staging"
    )
    conn.execute("DROP TABLE pg_temp.staging")
    _copy(conn, "names", ["name", "kind", "acl", "units"], ((*k, c) for k, c in sorted(gathered.names.items())))
    _copy(
        conn,
        "folded_names",
        ["folded", "name", "kind", "acl"],
        sorted((fold(n), n, kind, acl) for n, kind, acl in gathered.names if fold(n) != n),
    )
    _copy(
        conn,
        "images",
        ["id", "color", "size", "shape", "acl"],
        sorted((int(rowids[i]), c, s, sh, acl) for i, c, s, sh, acl in gathered.images),
    )
    if count:
        _write_postings(conn, gathered, rowids)
    return count


def _write_postings(conn: psycopg.Connection[Any], gathered: _Gathered, rowids: npt.NDArray[np.int64]) -> None:
    """Postings rows per (term, label): unit ids ascending, raw tf and unit length (int32 each),
    and the per-label statistics (units, total length) BM25 averages over.

    The occurrences are sorted by :func:`_sorted_postings` (one int64 key per occurrence,
    sorted in place, the batches' codes freed as the keys are written), then turned
    into rows a slice of whole terms at a time, so the temporaries stay bounded by the slice.
    """
    labels = sorted(set(gathered.acls))
    position = {name: i for i, name in enumerate(labels)}
    group = np.fromiter((position[a] for a in gathered.acls), dtype=np.int64, count=rowids.size)
    postings = _sorted_postings(gathered, rowids, group, len(labels))
    del group
    if postings is None:
        return
    _copy(conn, "acl_stats", ["acl", "units", "total_len"], [(labels[g], n, t) for g, n, t in postings.stats])
    doc_len = postings.doc_len

    def rows() -> Iterator[tuple[Any, ...]]:
        for owner_group, codes, owner in postings.slices():
            new_term = np.ones(codes.size, dtype=bool)
            new_term[1:] = (owner_group[1:] != owner_group[:-1]) | (codes[1:] != codes[:-1])
            new_pair = new_term.copy()
            new_pair[1:] |= owner[1:] != owner[:-1]
            starts = np.flatnonzero(new_pair)
            tf = np.diff(np.append(starts, codes.size)).astype("<i4")
            p_group, p_code, p_owner = owner_group[starts], codes[starts], owner[starts]
            bounds = np.append(np.flatnonzero(new_term[starts]), starts.size)
            ids32, lens = p_owner.astype("<i4"), doc_len[p_owner].astype("<i4")
            for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
                yield (
                    int(p_code[a]), labels[int(p_group[a])], b - a,
                    ids32[a:b].tobytes(), tf[a:b].tobytes(), lens[a:b].tobytes(),
                )  # fmt: skip

    _copy(conn, "postings", ["term", "acl", "df", "ids", "tfs", "lens"], rows())


@dataclass
class _SortedPostings:
    """Every term occurrence as one sorted int64 key ``(acl * span + term) * width + unit id``
    (or, when such keys would not fit in 63 bits, three arrays sorted by ``lexsort``)."""

    stats: list[tuple[int, int, int]]  # (ACL position, units, total length) per label
    doc_len: npt.NDArray[np.int32]  # terms per unit id
    keys: npt.NDArray[np.int64]
    width: int
    span: int
    lexsorted: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]] | None = None

    def slices(self) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]]:
        """(ACL index, term, unit id) of the occurrences, a slice of whole terms at a time."""
        if self.lexsorted is not None:  # pragma: no cover - code points beyond any real corpus
            yield self.lexsorted
            return
        for chunk in _whole_term_slices(self.keys, self.width):
            term = chunk // self.width
            yield term // self.span, term % self.span, chunk % self.width


def _sorted_postings(
    gathered: _Gathered, rowids: npt.NDArray[np.int64], group: npt.NDArray[np.int64], n_groups: int
) -> _SortedPostings | None:
    """The occurrences of every term, sorted by (ACL, term, unit id); None without units.

    Keys are written over the batches' code arrays one batch at a time (each batch's codes
    are freed as its keys are written) and sorted in place. (The SQLite build sorts by
    bucket and spills instead, index/build.py; this store's COPY needs one sorted stream.)
    """
    n = rowids.size
    if n == 0:
        return None
    terms = np.concatenate(gathered.terms)
    stats = [(i, int((group == i).sum()), int(terms[group == i].sum())) for i in range(n_groups)]
    doc_len = np.zeros(n + 1, dtype=np.int32)
    doc_len[rowids] = terms
    width, span = n + 1, gathered.code_span
    if n_groups * span * width >= 1 << 63:  # pragma: no cover - code points beyond any real corpus
        codes = np.concatenate([c for c in gathered.codes if c is not None])
        owner, groups = np.repeat(rowids, terms), np.repeat(group, terms)
        order = np.lexsort((owner, codes, groups))
        empty = np.zeros(0, np.int64)
        return _SortedPostings(stats, doc_len, empty, width, span, (groups[order], codes[order], owner[order]))
    keys = np.empty(int(terms.sum()), dtype=np.int64)
    at = first_unit = 0
    for i, part_terms in enumerate(gathered.terms):
        part_codes = gathered.codes[i]
        assert part_codes is not None
        gathered.codes[i] = None
        part = slice(first_unit, first_unit + part_terms.size)
        dest = keys[at : at + part_codes.size]
        np.add(np.repeat(group[part] * span, part_terms), part_codes, out=dest)
        dest *= width
        dest += np.repeat(rowids[part], part_terms)
        at += part_codes.size
        first_unit += part_terms.size
    keys.sort()
    return _SortedPostings(stats, doc_len, keys, width, span)


def _add_vectors(
    conn: psycopg.Connection[Any], embedder: Embedder, reuse: Reuse, progress: Progress | None = None
) -> tuple[dict[str, Any], int]:
    """Sentence vectors through the SQLite build's own function (index/vectors.py), over an
    in-memory copy of the prose units, then copied in: one embedding code path for both stores."""
    rows = conn.execute(
        "SELECT id, text, extra, source, span_start, span_end FROM units "
        "WHERE extra IS NOT NULL AND (extra::json ->> 'kind') = ANY(%s) ORDER BY id",
        (list(VECTOR_KINDS),),
    ).fetchall()
    scratch = sqlite3.connect(":memory:")
    try:
        # the SQLite layout's shape (schema 9): a unit's extra is an id into ``extras``, its file one
        # into ``files`` (this store's extras are whole: nothing is derived from path or span here)
        scratch.execute("CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT NOT NULL)")
        scratch.execute(
            "CREATE TABLE units (id INTEGER PRIMARY KEY, file INTEGER, span_start INTEGER, span_end INTEGER, "
            "text TEXT, extra INTEGER)"
        )
        scratch.execute("CREATE TABLE extras (id INTEGER PRIMARY KEY, extra NOT NULL)")
        scratch.execute("CREATE TABLE vectors (id INTEGER PRIMARY KEY, vec BLOB NOT NULL)")
        files = {source: i for i, source in enumerate(dict.fromkeys(row[3] for row in rows), 1)}
        scratch.executemany("INSERT INTO files VALUES (?, ?)", [(i, source) for source, i in files.items()])
        scratch.executemany(
            "INSERT INTO units VALUES (?, ?, ?, ?, ?, ?)",
            [(uid, files[source], start, end, text, uid) for uid, text, _, source, start, end in rows],
        )
        scratch.executemany("INSERT INTO extras VALUES (?, ?)", [(row[0], row[2]) for row in rows])
        entry = add_vectors(scratch, embedder, progress, reuse)
        _copy(conn, "vectors", ["id", "vec"], scratch.execute("SELECT id, vec FROM vectors ORDER BY id"))
    finally:
        scratch.close()
    return entry


def _add_field_vectors(
    conn: psycopg.Connection[Any], embedder: Embedder, names: set[str], reuse: Reuse
) -> tuple[str, int]:
    """Field-name vectors through index/field_vectors.py (and its cache), copied in."""
    scratch = sqlite3.connect(":memory:")
    try:
        scratch.execute("CREATE TABLE field_vectors (name TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        found = write_field_vectors(scratch, embedder, names, reuse)
        _copy(conn, "field_vectors", ["name", "vector"], scratch.execute("SELECT name, vector FROM field_vectors"))
    finally:
        scratch.close()
    return found


class _GenerationReuse:
    """:class:`~rag_lab.index.vectors.Reuse` from the generation readers use while this build runs
    (the one it replaces), read in the build's transaction: each read is its own savepoint, so a
    generation that cannot be read (another layout, dropped meanwhile) gives nothing and the build
    embeds, instead of failing."""

    def __init__(self, conn: psycopg.Connection[Any], generation: int | None) -> None:
        self.conn, self.generation = conn, generation

    def sentences(self, texts: set[str], embedder: Embedder) -> dict[str, int]:
        def read(schema: str, meta: dict[str, str]) -> dict[str, int]:
            if not same_model(meta, embedder, sentences=True):
                return {}
            found: dict[str, int] = {}
            with self.conn.cursor(name="rag_lab_reuse") as rows:  # streamed, not fetched whole
                rows.execute(
                    f"SELECT u.id, u.text, u.extra, u.source, u.span_start, u.span_end FROM {schema}.units u "
                    f"JOIN {schema}.vectors v ON v.id = u.id WHERE u.extra IS NOT NULL"
                )
                found.update((text, int(row[0])) for row, text in prose_texts(rows) if text in texts)
            return found

        return self._read(read)

    def sentence_vectors(self, ids: list[int]) -> dict[int, bytes]:
        def read(schema: str, _meta: dict[str, str]) -> dict[int, bytes]:
            rows = self.conn.execute(f"SELECT id, vec FROM {schema}.vectors WHERE id = ANY(%s)", (ids,))
            return {int(i): bytes(v) for i, v in rows.fetchall()}

        return self._read(read)

    def field_names(self, names: set[str], embedder: Embedder) -> dict[str, bytes]:
        def read(schema: str, meta: dict[str, str]) -> dict[str, bytes]:
            if not same_model(meta, embedder, sentences=False):
                return {}
            rows = self.conn.execute(f"SELECT name, vector FROM {schema}.field_vectors").fetchall()
            return {name: bytes(vec) for name, vec in rows if name in names}

        return self._read(read)

    def _read(self, read: Callable[[str, dict[str, str]], dict[Any, Any]]) -> dict[Any, Any]:
        if self.generation is None:
            return {}
        pg = require_psycopg()
        schema = generation_schema(self.generation)
        try:
            with self.conn.transaction():  # a savepoint inside the build's transaction
                layout = self.conn.execute(
                    f"SELECT layout FROM {CATALOGUE}.generations WHERE id = %s", (self.generation,)
                ).fetchone()
                if layout is None or layout[0] != PG_LAYOUT_VERSION:
                    return {}
                meta = dict(self.conn.execute(f"SELECT key, value FROM {schema}.meta").fetchall())
                if json.loads(meta["config"]).get("schema_version") != SCHEMA_VERSION:
                    return {}
                return read(schema, meta)
        except (pg.Error, KeyError, ValueError, TypeError, AttributeError):
            return {}


__all__ = ["GENERATION_PREFIX", "build_pg_index", "drop_unused_generations"]
