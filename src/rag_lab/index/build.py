"""Building an index: extract every corpus file, write a new SQLite file, swap it in atomically.

The new index is written to ``<name>.tmp-<pid>-<random>`` beside the old one, fsynced,
renamed over the old name and the folder fsynced. A build killed at any point leaves
the previous index untouched; the next build (under an exclusive lock) deletes leftover
temporary files. Readers that already opened the old file keep reading it (its inode
lives on until they close); readers that open after the rename see the new one.
"""

from __future__ import annotations

import ctypes
import fcntl
import functools
import json
import operator
import os
import pickle
import re
import secrets
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import numpy.typing as npt

from rag_lab.data import FileRecord, Progress, labelled, parsed_record, read_bytes, read_record
from rag_lab.data.access import PUBLIC, AccessRules
from rag_lab.data.aliases import Alias, general_aliases, read_alias_file
from rag_lab.data.corpus import CorpusFile, check_corpus_root
from rag_lab.data.documents import headless_field_warning, warned_name
from rag_lab.data.names import fold
from rag_lab.data.prose import SENTENCE
from rag_lab.errors import IndexError_
from rag_lab.index.field_vectors import write_field_vectors
from rag_lab.index.freshness import FINGERPRINT, build_walk, digest_of, fast_walk
from rag_lab.index.rows import batch_terms, compact_text, fast_rows
from rag_lab.index.schema import DDL, FILE_KINDS, INDEXES, LENGTHS_CHUNK, SCHEMA_VERSION, document_name
from rag_lab.index.spill import ROW_COLUMNS, RowFile, SpillFile, merged, whole_terms
from rag_lab.index.terms import search_text
from rag_lab.index.vectors import IndexFileReuse, Reuse, add_vectors, vector_counts
from rag_lab.index.warned import HEADLESS, derived_texts, message_code, pack
from rag_lab.limits import MAX_FILE_BYTES
from rag_lab.neural import Embedder
from rag_lab.records import DEFAULT_RESERVED_FIELDS, FULLWIDTH_COLON, Unit

INDEX_DIR = ".rag_lab"
INDEX_NAME = "index.sqlite"
BM25_K1 = 1.2
BM25_B = 0.75
_UNIT_COLUMNS = frozenset(
    [
        "evidence_id", "source", "sha256", "span", "line", "text", "subject", "field", "value",
        "modality", "valid_from", "valid_to", "acl",
    ]
)
BATCH_FILES = 500  # files per batch: a worker's unit of work, and the parent's unit of progress
PARALLEL_MIN_FILES = 2000  # below this, reading in-process is faster than forking workers
MAX_WORKERS = 2
POSTINGS_SLICE = 1 << 18  # term occurrences turned into postings rows at a time (bounds the temporaries)
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
TERMS_SLICE = 20_000  # unit texts turned into term codes at a time
WARNINGS_KEPT = 1000  # warnings listed in a build summary (all are counted, and all stored in the index)


@dataclass
class BuildSummary:
    index_path: str
    files: int = 0
    units: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: int = 0
    seconds: float = 0.0
    #: the first WARNINGS_KEPT warnings: {"path", "line", "message"} (line 0: about the whole file)
    warning_list: list[dict[str, Any]] = field(default_factory=list)
    #: files read without an error that gave no evidence unit
    files_without_units: int = 0
    #: built with vectors: how many were embedded and how many taken from the index it replaced
    #: (index/vectors.py), for prose units and field names; None without vectors
    vectors: dict[str, int] | None = None

    def empty_reason(self) -> str | None:
        """Why the index holds no evidence unit (None when it holds some)."""
        if self.units:
            return None
        if not self.files:
            return (
                "the index holds 0 evidence units: the corpus has no documents/**/*.md or *.txt "
                "and no images/**/*.png"
            )
        why = []
        if self.files_without_units:
            why.append(
                f"{self.files_without_units} file(s) had no `字段：值` line (field, full-width colon U+FF1A, "
                "value) under a `主题：…` line, no prose sentence and no table"
            )
        if self.errors:
            why.append(f"{len(self.errors)} file(s) failed")
        if self.warnings:
            why.append(f"{self.warnings} line(s) were warned about")
        return "the index holds 0 evidence units: " + "; ".join(why) + " (docs/corpus-format.md)"

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index_path,
            "files": self.files,
            "units": self.units,
            "errors": self.errors,
            "warnings": self.warnings,
            "seconds": round(self.seconds, 3),
            **({} if self.vectors is None else {"vectors": self.vectors}),
        }


def default_index_path(root: str | os.PathLike[str]) -> Path:
    return Path(root) / INDEX_DIR / INDEX_NAME


def config_for(reserved_fields: frozenset[str] | None = None) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "reserved_fields": sorted(reserved_fields or DEFAULT_RESERVED_FIELDS),
        "ranking": {"terms": "nfkc-casefold character bigrams", "k1": BM25_K1, "b": BM25_B},
    }


@contextmanager
def _build_lock(path: Path) -> Iterator[int]:
    """Hold the exclusive build lock; yields the lock file's descriptor."""
    with open(path.with_name(path.name + ".lock"), "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield handle.fileno()
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def remove_leftovers(path: Path) -> list[str]:
    """Delete temporary files of builds that died (call only under the build lock)."""
    removed = []
    for leftover in sorted(path.parent.glob(path.name + ".tmp-*")):
        leftover.unlink(missing_ok=True)
        removed.append(leftover.name)
    return removed


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def build_index(
    root: str | os.PathLike[str],
    index_path: str | os.PathLike[str] | None = None,
    *,
    progress: Progress | None = None,
    reserved_fields: frozenset[str] | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
    vectors: bool = False,
    embedder: Embedder | None = None,
    embedding_progress: Progress | None = None,
) -> BuildSummary:
    """Index every file under ``root``; returns what was done. Bad files are reported, not fatal.

    ``root`` must hold ``documents/`` or ``images/`` (:class:`CorpusError` otherwise, before
    anything is created); a file over ``max_file_bytes`` is a per-file error, never read.
    ``vectors``: also embed every prose unit (index/vectors.py) and every field name
    (index/field_vectors.py, the neural step of field matching); needs the ``[neural]`` extra;
    ``embedder``: the model for that (default: the shared one, ``rag_lab.neural``);
    ``embedding_progress(units done, prose units)`` is called as their vectors are written (most of
    such a build's time; ``progress`` counts the files read).
    """
    if vectors and embedder is None:
        from rag_lab.neural import require_embedder

        embedder = require_embedder()  # fail before any work when the extra is missing
    started = time.perf_counter()
    base = check_corpus_root(root)
    location = index_path if index_path is not None else default_index_path(base)
    if isinstance(location, str) and location.startswith(("postgresql://", "postgres://")):
        from rag_lab.index.pg_build import build_pg_index  # the PostgreSQL store (index/backend.py)

        return build_pg_index(
            base, location, progress=progress, reserved_fields=reserved_fields,
            max_file_bytes=max_file_bytes, vectors=vectors, embedder=embedder,
            embedding_progress=embedding_progress,
        )
    path = Path(location)
    path.parent.mkdir(parents=True, exist_ok=True)
    summary = BuildSummary(index_path=str(path))
    with _build_lock(path) as lock_fd:
        remove_leftovers(path)
        tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            items, walk_digest = build_walk(base)  # one walk: the digest describes the stats recorded
            files_total = len(items)
            # workers are forked before the new index is opened: they never hold its connection
            batches = extract_batches(
                base, items, AccessRules.load(base), close_in_workers=[lock_fd], max_file_bytes=max_file_bytes,
                rows_at=tmp,
            )
            del items  # the workers (or the in-process batches) hold what they need of it
            try:
                _write(
                    tmp,
                    with_progress(batches, progress, files_total),
                    config_for(reserved_fields),
                    summary,
                    aliases=read_alias_file(base)[0],  # invalid: [] here, its error in the files table
                    embedder=embedder if vectors else None,
                    root=base,
                    files_total=files_total,
                    row_files=batches.row_files,
                    walk_digest=walk_digest,
                    reuse=IndexFileReuse(path) if vectors else None,
                    embedding_progress=embedding_progress,
                )
            finally:
                batches.close()
                for row_file in batches.row_files:  # parked unit rows (index/spill.py RowFile)
                    row_file.unlink(missing_ok=True)
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
            _fsync_dir(path.parent)
        finally:
            tmp.unlink(missing_ok=True)
    summary.seconds = time.perf_counter() - started
    return summary


def with_progress(batches: Iterator[Batch], progress: Progress | None, total: int) -> Iterator[Batch]:
    """``batches`` as they are, calling ``progress(files done, total)`` after each (both stores' builds)."""
    done = 0
    for batch in batches:
        yield batch
        done += len(batch.files)
        if progress is not None:
            progress(done, total)


def _write_warnings(db: sqlite3.Connection, batch: Batch, first_file: int, messages: dict[str, int]) -> None:
    """``batch``'s warnings and warned lines as schema 8 stores them (schema.py, index/warned.py);
    ``first_file``: the id of ``batch.files[0]``; ``messages``: the ids given so far, added to."""
    ids = {row[0]: number for number, row in enumerate(batch.files, first_file)}
    per_file: dict[str, tuple[list[int], list[int]]] = {}
    new: list[tuple[int, str]] = []
    for path, line, message in batch.warnings:
        if message == headless_field_warning(line):  # warned.message_code, inline
            code = HEADLESS
        else:
            code, first = message_code(line, message, messages)
            if first:
                new.append((code, message))
        found = per_file.get(path)
        if found is None:
            per_file[path] = ([line], [code])
        else:
            found[0].append(line)
            found[1].append(code)
    if new:
        db.executemany("INSERT INTO warning_messages VALUES (?, ?)", new)
    db.executemany(
        "INSERT INTO file_warnings VALUES (?, ?, ?, ?)",
        [(ids[path], len(lines), pack(lines), pack(codes)) for path, (lines, codes) in per_file.items()],
    )
    lines_rows = [
        (name, ids[p], line, None if derived else compact_text(text), subject_line)
        for (p, line, text, name, subject_line), derived in zip(batch.warning_lines, batch.warning_derived, strict=True)
    ]
    lines_rows.sort(key=_KEY)  # in key order: each page of the table is filled once
    db.executemany("INSERT INTO warning_lines VALUES (?, ?, ?, ?, ?)", lines_rows)


def _write(
    tmp: Path,
    batches: Iterable[Batch],
    config: dict[str, Any],
    summary: BuildSummary,
    *,
    aliases: Sequence[Alias] = (),
    embedder: Embedder | None = None,
    root: Path,
    files_total: int = 0,
    row_files: Sequence[Path] = (),
    walk_digest: str | None = None,
    reuse: Reuse | None = None,
    embedding_progress: Progress | None = None,
) -> None:
    # check_same_thread off: the copy of the unit rows runs in a second thread (_write_units)
    db = sqlite3.connect(tmp, isolation_level=None, check_same_thread=False)
    units = _Units(tmp, files_total)
    try:
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        for i, row_file in enumerate(row_files):  # ATTACH cannot run inside a transaction
            db.execute(f"ATTACH DATABASE ? AS rows{i}", (str(row_file),))
        db.executescript(DDL)
        db.execute("BEGIN")
        acls: set[str] = set()
        messages: dict[str, int] = {}  # warning_messages: message → id
        for batch in batches:  # in sorted path order: file ids 1.. as extract_batches numbered them
            db.executemany(
                "INSERT INTO files (path, kind, size, sha256, mtime_ns, ctime_ns, inode, error, acl) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                _coded_kinds(batch.files),
            )
            if batch.warnings:
                _write_warnings(db, batch, summary.files + 1, messages)
            summary.files += len(batch.files)
            summary.errors.extend(batch.errors)
            summary.warnings += len(batch.warnings)
            summary.files_without_units += batch.without_units
            room = WARNINGS_KEPT - len(summary.warning_list)
            summary.warning_list.extend(
                {"path": p, "line": ln, "message": m} for p, ln, m in batch.warnings[: max(room, 0)]
            )
            acls.update(row[-1] for row in batch.files)
            units.add(batch, len(batch.files))
        acls.update(units.acl_names)
        count = _write_units(db, units, sorted(acls), row_files)
        units.close()
        field_names = {name for name, kind, _acl in units.names if kind == "field"}
        alias_fields = {f for a in [*aliases, *general_aliases()] for f in a.fields}
        vector_model = None
        if embedder is not None:
            entry, reused = add_vectors(db, embedder, embedding_progress, reuse)
            config = {**config, "vectors": entry}
            vector_model, names_reused = write_field_vectors(db, embedder, field_names | alias_fields, reuse)
            summary.vectors = vector_counts(entry["units"], reused, len(field_names | alias_fields), names_reused)
        meta = {
            "config": json.dumps(config, ensure_ascii=False, sort_keys=True),
            "units": str(count),
            # Kept here so opening an index and parsing a question never scan whole tables.
            "acls": json.dumps(sorted(acls)),
            "name_lengths": json.dumps(name_lengths(units.names)),
            # the owner's ROOT/aliases.tsv as read (empty when absent or invalid) and the
            # model of the stored field vectors (null: built without vectors)
            "aliases": json.dumps([[a.phrase, list(a.fields), a.line] for a in aliases], ensure_ascii=False),
            "field_vectors": json.dumps(vector_model),
            # the fast freshness check (index/freshness.py): the digest of the walk whose stats
            # are the snapshot's fingerprints (build_walk), or of a second walk (callers of _write
            # that pass none), "" when fast_walk cannot describe the corpus
            "walk_digest": _walk_digest(root, _recorded(db)) if walk_digest is None else walk_digest,
        }
        db.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
        for statement in INDEXES.split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute("COMMIT")
        summary.units = count
    finally:
        units.close()
        db.close()


_KIND_CODE = {kind: code for code, kind in enumerate(FILE_KINDS)}


def _coded_kinds(files: list[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
    """Batch file rows with the kind (their second column) as its position in FILE_KINDS (schema 7)."""
    code = _KIND_CODE
    for path, kind, *rest in files:
        yield (path, code[kind], *rest)


def _recorded(db: sqlite3.Connection) -> dict[str, tuple[Any, ...]]:
    """path → fingerprint of every file as it was read (read back from the files table, so that
    the batches need not keep them)."""
    return {p: (size, mtime, ctime, inode) for p, size, mtime, ctime, inode in db.execute(
        "SELECT path, size, mtime_ns, ctime_ns, inode FROM files"
    )}  # fmt: skip


def _walk_digest(root: Path, recorded: dict[str, tuple[Any, ...]]) -> str:
    """The digest of a fresh walk of ``root`` when every file's stat equals its fingerprint as
    read (and no file came or went); "" otherwise (the fast freshness check then never applies).
    The PostgreSQL build's way (index/pg_build.py); this build takes ``build_walk``'s digest."""
    walked = fast_walk(root)
    if walked is None or len(walked[0]) != len(recorded):
        return ""
    paths, stats = walked
    for path, fingerprint in zip(paths, FINGERPRINT.iter_unpack(stats), strict=True):
        if recorded.get(path) != fingerprint:
            return ""
    return digest_of(paths, stats)


# names made only of these fold to themselves (CJK unified ideographs have no compatibility
# decomposition and no case; nor have ASCII lower-case letters, digits, space and punctuation)
_FOLDS_TO_ITSELF = re.compile(r"[\u4e00-\u9fff\x20-\x40\x5b-\x7e]*")


def _fold(name: str) -> str:
    """``fold(name)`` (data/names.py), without its per-code-point work for the usual names."""
    return name if _FOLDS_TO_ITSELF.fullmatch(name) else fold(name)


def name_lengths(names: dict[tuple[str, str, str], int]) -> list[int]:
    """Shortest and longest subject/field name, verbatim or folded (over all ACLs: it only bounds a lookup)."""
    lengths = [n for name, _kind, _acl in names for n in {len(name), len(_fold(name))}]
    return [min(lengths), max(lengths)] if lengths else [0, 0]


# -- reading the corpus, in batches of files (forked workers for large corpora) -------------


@dataclass
class Batch:
    """What a run of consecutive corpus files (in path order) adds to the index.

    Units are rows without their id (that comes from the evidence_id order over the whole
    corpus); ``codes`` holds every unit's term codes in unit order, ``terms`` how many
    each unit has; ``images`` are (unit position in this batch, color, size, shape).
    """

    files: list[tuple[Any, ...]] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, int, str]] = field(default_factory=list)
    warning_lines: list[tuple[str, int, str, str, bool]] = field(default_factory=list)  # see schema.py
    #: per warning_lines entry: its text is its units' texts joined (index/warned.py; stored NULL)
    warning_derived: list[bool] = field(default_factory=list)
    units: list[tuple[Any, ...]] = field(default_factory=list)
    images: list[tuple[int, Any, Any, Any]] = field(default_factory=list)
    names: dict[tuple[str, str, str], int] = field(default_factory=dict)
    codes: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    terms: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    without_units: int = 0  # files read without error that gave no unit
    #: when the rows went to a RowFile (``units`` is then empty): each unit's 12 digest bytes, joined,
    #: and its ACL label — what the parent needs of a unit besides its terms
    eids: bytes = b""
    unit_acls: list[str] = field(default_factory=list)

    @property
    def unit_count(self) -> int:
        return len(self.units) if self.units else len(self.unit_acls)


def extract_batch(
    root: Path,
    items: list[CorpusFile],
    rules: AccessRules,
    max_file_bytes: int = MAX_FILE_BYTES,
    first_file: int = 1,
    *,
    fast: bool = True,
    sink: RowFile | None = None,
) -> Batch:
    """Read, hash and parse ``items`` (see :class:`Batch`); ``first_file``: the files-table id
    of ``items[0]`` (ids are 1.. in path order, one per corpus file). ``fast``: documents of
    field lines and blank lines only, or of headings, prose and blank lines only, become rows
    directly (index/rows.py; same batch as without).
    ``sink``: the unit rows go there (index/spill.py), the batch keeps their digests and labels."""
    batch = Batch()
    texts: list[str] = []
    names = batch.names
    for number, item in enumerate(items, first_file):
        if item.kind != "document":
            _add_record(batch, texts, read_record(root, item, rules, max_file_bytes), number)
            continue
        rec, data = read_bytes(root, item, max_file_bytes)
        sha, found = rec.sha256, None
        if data is not None and sha is not None and fast:
            acl, problem = rules.label(rec.path, [])
            found = fast_rows(rec.path, data, sha, number, acl)
        if found is None or sha is None:
            _add_record(batch, texts, labelled(rec if data is None else parsed_record(rec, data), rules), number)
            continue
        rows, unit_texts, named, warned = found
        if not rows:
            batch.without_units += 1
        fp = rec.fingerprint
        batch.files.append(
            (
                rec.path, "document", fp and fp.size, bytes.fromhex(sha), fp and fp.mtime_ns,
                fp and fp.ctime_ns, fp and fp.inode, None, acl,
            )
        )  # fmt: skip
        for line, message, _text in warned:  # parse_document's warnings first, the label's after (labelled)
            batch.warnings.append((rec.path, line, message))
        if problem is not None:
            batch.warnings.append((rec.path, 0, f"access: {problem}"))
        listed = len(batch.warning_lines)
        for line, _message, text in warned:  # _add_record's warning_lines
            about = warned_name(text)
            if about is not None:
                batch.warning_lines.append((rec.path, line, text, *about))
        _derive(batch, listed, rows)
        for row in rows if named else ():  # field lines name a subject and a field; sentences neither
            key = (row[6], "subject", acl)
            names[key] = names.get(key, 0) + 1
            key = (row[7], "field", acl)
            names[key] = names.get(key, 0) + 1
        batch.units.extend(rows)
        texts.extend(unit_texts)
    batch.codes, batch.terms = _terms_in_slices(texts)
    if sink is not None:
        units = batch.units
        sink.put(units)
        batch.eids = b"".join(map(_FIRST, units))
        batch.unit_acls = list(map(_LAST, units))
        batch.units = []
    return batch


def _add_record(batch: Batch, texts: list[str], rec: FileRecord, number: int) -> None:
    """One file's record (read and parsed the full way) added to ``batch``; its search texts to ``texts``."""
    names = batch.names
    if rec.error is None and not rec.units and rec.kind != "access":
        batch.without_units += 1
    fp = rec.fingerprint
    batch.files.append(
        (
            rec.path,
            rec.kind,
            fp and fp.size,
            None if rec.sha256 is None else bytes.fromhex(rec.sha256),
            fp and fp.mtime_ns,
            fp and fp.ctime_ns,
            fp and fp.inode,
            rec.error,
            rec.acl,
        )
    )
    if rec.error is not None:
        batch.errors.append({"path": rec.path, "error": rec.error})
    batch.warnings.extend((rec.path, line, msg) for line, msg in rec.warnings)
    listed = len(batch.warning_lines)
    for line_number, text in sorted(rec.warning_lines.items()):
        about = warned_name(text)
        if about is not None:
            batch.warning_lines.append((rec.path, line_number, text, *about))
    first = len(batch.units)
    pending, rec.units = rec.units[::-1], []  # popped in order: each unit dict is freed once it is a row
    extras: dict[str, str | bytes] = {}  # this file's extra JSONs (_unit_row)
    while pending:
        unit = pending.pop()
        acl = unit.get("acl", PUBLIC)
        if unit["modality"] == "image":
            batch.images.append((len(batch.units), unit["color"], unit["size"], unit["shape"]))
        batch.units.append(_unit_row(unit, number, acl, extras))
        texts.append(search_text(unit))
        for kind in ("subject", "field"):
            if unit[kind] is not None:
                key = (unit[kind], kind, acl)
                names[key] = names.get(key, 0) + 1
    _derive(batch, listed, batch.units[first:] if len(batch.warning_lines) > listed else ())


def _derive(batch: Batch, listed: int, rows: Sequence[tuple[Any, ...]]) -> None:
    """``batch.warning_derived`` for the entries ``batch.warning_lines[listed:]`` (one file's),
    ``rows``: that file's unit rows: whether each text is its units' texts joined (index/warned.py)."""
    entries = batch.warning_lines[listed:]
    if not entries:
        return
    wanted = {line: text for _path, line, text, *_about in entries}
    derived = derived_texts(rows, wanted)
    batch.warning_derived.extend(line in derived and wanted[line] == text for _path, line, text, *_about in entries)


def _terms_in_slices(texts: list[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """``unit_terms(texts)`` (as ``batch_terms``), TERMS_SLICE texts at a time (bounds the numpy temporaries)."""
    if len(texts) <= TERMS_SLICE:
        return batch_terms(texts)
    parts = [batch_terms(texts[i : i + TERMS_SLICE]) for i in range(0, len(texts), TERMS_SLICE)]
    return np.concatenate([c for c, _ in parts]), np.concatenate([t for _, t in parts])


def _unit_row(unit: Unit, file_id: int, acl: str, extras: dict[str, str | bytes] | None = None) -> tuple[Any, ...]:
    """A unit as the parent stages it: the units table's columns after ``id`` (schema.py), with
    subject, field and ACL still as strings (the parent turns them into ids). ``extras``: the
    stored extra JSON by the ``repr`` of its keys, kept across the units of one file — every
    sentence of a paragraph has the same extra keys, so their JSON is made once. (Values that
    JSON can hold — str, int, float, bool, None, lists and dicts of them — with equal ``repr``
    have equal JSON; ``True`` and ``1``, or ``1`` and ``1.0``, differ in both.)"""
    extra = None
    if not unit.keys() <= _UNIT_COLUMNS:
        rest = {k: v for k, v in unit.items() if k not in _UNIT_COLUMNS}
        if rest.get("kind") == SENTENCE:
            _leave_out_derived(rest, unit)
        key = repr(rest) if extras is not None else ""
        extra = extras.get(key) if extras is not None else None
        if extra is None:
            extra = compact_text(json.dumps(rest, ensure_ascii=False, sort_keys=True))
            if extras is not None:
                extras[key] = extra
    span = unit["span"] or (None, None)
    text, value, name = unit["text"], unit["value"], unit["field"]
    at = len(text) - len(value)
    value_at: int | None = at
    own_value, stored = None, text
    if at < 0 or not text.endswith(value):  # not a suffix of the text: stored as is
        value_at, own_value = 0, value
    elif name is not None and at == len(name) + 1 and text.startswith(name) and text[len(name)] == FULLWIDTH_COLON:
        stored, value_at = value, None  # schema 7: ``field：value`` — the value alone is stored
    evidence = unit["evidence_id"]
    if len(evidence) != 27 or not evidence.startswith("ev_"):
        raise IndexError_(f"unit of {unit['source']!r} has a malformed evidence id {evidence!r}")
    start, end = span
    if (start is None) != (end is None):
        raise IndexError_(f"unit of {unit['source']!r} has a malformed span {unit['span']!r}")
    if start is not None and end == start + len(text):
        end = None  # schema 7: the span's end is derived from its start and the text
    return (
        bytes.fromhex(evidence[3:]),
        file_id,
        start,
        end,
        unit["line"],
        compact_text(stored),
        unit["subject"],
        name,
        value_at,
        own_value,
        1 if unit["modality"] == "image" else 0,
        unit.get("valid_from"),
        unit.get("valid_to"),
        extra,
        acl,
    )


_document_name = functools.lru_cache(maxsize=256)(document_name)


def _is_int_pair(value: Any) -> bool:
    return type(value) is list and len(value) == 2 and type(value[0]) is int and type(value[1]) is int


def _leave_out_derived(rest: dict[str, Any], unit: Unit) -> None:
    """Schema 9: ``rest`` (a sentence's extra keys) without what the reader derives
    (store.stored_extra): a ``title`` that is the document name of the unit's file, a
    ``parent_span`` that is the unit's own span (both exactly: a str, two ints). Every sentence
    data/prose.py makes has both keys; one without either would be read back with it, so it is
    refused."""
    if "title" not in rest or "parent_span" not in rest:
        raise IndexError_(f"sentence unit of {unit['source']!r} has no title or no parent_span")
    title = rest["title"]
    if type(title) is str and title == _document_name(unit["source"]):
        del rest["title"]
    span = unit["span"]
    if _is_int_pair(span) and _is_int_pair(rest["parent_span"]) and rest["parent_span"] == span:
        del rest["parent_span"]


class _Batches(Iterator[Batch]):
    """Batches in path order; from forked workers when the corpus is large, else in-process."""

    def __init__(
        self, inner: Iterator[Batch], close: Callable[[], None] = lambda: None, row_files: Sequence[Path] = ()
    ) -> None:
        self._inner, self._close = inner, close
        #: where the unit rows were parked (``extract_batches(rows_at=…)``); the caller removes them
        self.row_files = list(row_files)

    def __next__(self) -> Batch:
        return next(self._inner)

    def close(self) -> None:
        self._close()


def extract_batches(
    root: Path,
    items: list[CorpusFile],
    rules: AccessRules,
    *,
    close_in_workers: Iterable[int] = (),
    max_file_bytes: int = MAX_FILE_BYTES,
    rows_at: Path | None = None,
) -> _Batches:
    """Batches of ``items`` in path order. ``rows_at``: the unit rows go to RowFiles named
    ``<rows_at>-rows<worker>`` (one per process that reads), not into the batches."""
    chunks = [(i + 1, items[i : i + BATCH_FILES]) for i in range(0, len(items), BATCH_FILES)]
    workers = _worker_count(len(items))
    paths = [] if rows_at is None else [rows_at.with_name(f"{rows_at.name}-rows{w}") for w in range(max(workers, 1))]
    sinks = [RowFile.create(p) for p in paths]  # each worker writes its own, opened there on its first rows
    readers = max(workers, 1)  # worker w reads chunks w, w + readers, … (_ForkPool)
    lasts = {chunks[w::readers][-1][0] for w in range(readers) if chunks[w::readers]}

    def work(job: tuple[int, list[CorpusFile]], worker: int = 0) -> Batch:
        if not sinks:
            return extract_batch(root, job[1], rules, max_file_bytes, job[0])
        batch = extract_batch(root, job[1], rules, max_file_bytes, job[0], sink=sinks[worker])
        if job[0] in lasts:  # this process's last chunk: its rows in digest order before it is sent
            sinks[worker].finish()
        return batch

    def close_sinks() -> None:
        for sink in sinks:
            sink.close()

    if workers < 2:
        return _Batches((work(chunk) for chunk in chunks), close_sinks, paths)
    pool = _ForkPool(workers, work, list(close_in_workers))
    return _Batches(pool.start(chunks), pool.close, paths)


def _worker_count(files: int) -> int:
    """Worker processes for ``files`` files: none for small corpora or inside a threaded process
    (forking one is unsafe), otherwise one per CPU this process may use, at most MAX_WORKERS."""
    if files < PARALLEL_MIN_FILES or threading.active_count() > 1 or not hasattr(os, "fork"):
        return 0
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return min(cpus, MAX_WORKERS)


class _ForkPool:
    """Forked workers; worker ``w`` handles chunks ``w, w + n, w + 2n, …`` and writes each
    result, pickled, to its own pipe; the parent reads them back in chunk order.

    A worker dies with its parent (``PR_SET_PDEATHSIG`` where available, and a write to a
    pipe nobody reads fails), never touches the index file and exits with ``os._exit``.
    """

    def __init__(self, workers: int, work: Callable[[Any, int], Any], close_in_workers: list[int]) -> None:
        self._workers = workers
        self._work = work
        self._close_in_workers = close_in_workers
        self._pids: list[int] = []
        self._pipes: list[Any] = []

    def start(self, chunks: list[Any]) -> Iterator[Any]:
        """Fork the workers now; returns the results in chunk order."""
        parent = os.getpid()
        try:
            for w in range(self._workers):
                read_fd, write_fd = os.pipe()
                pid = os.fork()
                if pid == 0:  # pragma: no cover - runs in the worker
                    os.close(read_fd)
                    self._run_worker(parent, write_fd, chunks[w :: self._workers], w)
                os.close(write_fd)
                self._pids.append(pid)
                self._pipes.append(os.fdopen(read_fd, "rb"))
        except BaseException:
            self.close()
            raise
        return self._results(len(chunks))

    def _results(self, count: int) -> Iterator[Any]:
        for i in range(count):
            try:
                status, value = pickle.load(self._pipes[i % self._workers])
            except (EOFError, pickle.UnpicklingError):
                raise IndexError_(
                    f"index build worker {self._pids[i % self._workers]} died before sending its files "
                    "(killed, or out of memory?); the previous index is untouched, rerun `rag-lab index ROOT`"
                ) from None
            if status == "error":
                raise value
            yield value

    def _run_worker(self, parent: int, write_fd: int, chunks: list[Any], worker: int) -> NoReturn:  # pragma: no cover
        code = 1
        try:
            _die_with_parent(parent)
            for fd in self._close_in_workers + [p.fileno() for p in self._pipes]:
                os.close(fd)
            with open(write_fd, "wb") as out:
                for chunk in chunks:
                    failed = True
                    try:
                        data = pickle.dumps(("ok", self._work(chunk, worker)), protocol=pickle.HIGHEST_PROTOCOL)
                        failed = False
                    except Exception as exc:  # handed to the parent, which raises it
                        try:
                            data = pickle.dumps(("error", exc))
                        except Exception:  # an exception that cannot be pickled: keep its text
                            data = pickle.dumps(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
                    out.write(data)
                    out.flush()
                    if failed:
                        break
            code = 0
        finally:
            os._exit(code)

    def close(self) -> None:
        """Stop and reap every worker (they may still be running when the parent failed)."""
        for pipe in self._pipes:
            pipe.close()
        for pid in self._pids:
            with suppress(ProcessLookupError):  # a finished worker is a zombie until reaped
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        self._pids, self._pipes = [], []


def _die_with_parent(parent: int) -> None:  # pragma: no cover - runs in the worker
    """Ask Linux to SIGKILL this process when its parent dies; exit if it already has."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # elsewhere a dead parent still ends the worker: its next write fails
    if os.getppid() != parent:
        os._exit(1)


# -- units, names, images and postings -------------------------------------------------------


FLUSH_UNITS = 1 << 16  # units held in memory; past that, every unit goes to the spill file
BUCKET_UNITS = 1 << 16  # units per bucket read back at a time (aimed at, from an estimate)
KEY_BITS = 63  # a postings key (ACL, term, unit id) must fit in an int64

#: a run of units: their digests (12 bytes each, joined), ACL labels, term codes, terms per unit, images
_Piece = tuple[bytes, list[str], npt.NDArray[np.int64], npt.NDArray[np.int64], list[tuple[int, Any, Any, Any]]]


class _Units:
    """Every unit of the corpus, gathered batch by batch: evidence digests, ACL labels, term
    codes, images and name counts. The rows themselves are in the batches' RowFiles
    (index/spill.py), copied into ``units`` by SQLite (:func:`_copy_units`).

    Up to FLUSH_UNITS units stay in memory. Past that, all of them go to a spill file beside
    the new index (index/spill.py), in buckets by the top bits of their evidence digest, so
    that :meth:`buckets` gives them back one bucket at a time in evidence-id order and the
    build's memory does not grow with the corpus. ``tmp``: the new index's path (None: never spill).
    """

    def __init__(self, tmp: Path | None = None, files_total: int = 0) -> None:
        self.names: dict[tuple[str, str, str], int] = {}
        self.acl_names: set[str] = set()
        self.code_span = 1  # every term code is below this
        self.count = 0
        self.spill: SpillFile | None = None
        self._tmp = tmp
        self._files_total = files_total
        self._files_seen = 0
        self._held: list[_Piece] = []
        self._held_units = 0
        self._bits = 0
        self._chunks: list[list[tuple[int, int]]] = []

    def add(self, batch: Batch, files: int = 0) -> None:
        if batch.units:
            raise ValueError("_Units takes batches whose rows went to a RowFile (extract_batches rows_at=…)")
        n = len(batch.unit_acls)
        self.count += n
        self._files_seen += files
        if batch.codes.size:
            self.code_span = max(self.code_span, int(batch.codes.max()) + 1)
        for key, count in batch.names.items():
            self.names[key] = self.names.get(key, 0) + count
        self.acl_names.update(batch.unit_acls)
        self._held.append((batch.eids, batch.unit_acls, batch.codes, batch.terms, batch.images))
        self._held_units += n
        if self._held_units >= FLUSH_UNITS and self._tmp is not None:
            self._flush()

    def buckets(self) -> Iterator[_Piece]:
        """Every unit, one bucket at a time: buckets in evidence-id order, units unordered within one."""
        if self.spill is None:
            if self._held:
                yield _joined(self._held)
            return
        self._flush()
        for chunks in self._chunks:
            if chunks:
                yield _joined([pickle.loads(self.spill.get(*chunk)) for chunk in chunks])

    def close(self) -> None:
        self._held = []
        if self.spill is not None:
            self.spill.close()

    def _flush(self) -> None:
        if not self._held:
            return
        if self.spill is None:
            assert self._tmp is not None
            self.spill = SpillFile(self._tmp.parent, self._tmp.name + "-spill-")
            # twice the units expected from the files read so far (a later file may be denser)
            expected = 2 * self.count * max(self._files_total, self._files_seen) / max(self._files_seen, 1)
            buckets = 1
            while buckets < 1 << 16 and buckets * BUCKET_UNITS < expected:
                buckets *= 2
            self._bits = buckets.bit_length() - 1
            self._chunks = [[] for _ in range(buckets)]
        eids, acls, codes, terms, images = _joined(self._held)
        self._held, self._held_units = [], 0
        n, buckets = len(acls), len(self._chunks)
        digests = _digests(eids)
        bucket = _top_bits(digests, self._bits)
        narrow = bucket.astype(np.uint16)  # < 1 << 16 buckets: a stable argsort of uint16 is a radix sort
        order = np.argsort(narrow, kind="stable")
        counts = np.bincount(bucket, minlength=buckets)
        starts = np.cumsum(counts) - counts
        code_order = np.argsort(np.repeat(narrow, terms), kind="stable")
        code_counts = np.bincount(bucket, weights=terms, minlength=buckets).astype(np.int64)
        codes = codes[code_order]
        del code_order
        at = np.empty(n, dtype=np.int64)  # position within its bucket
        at[order] = np.arange(n) - np.repeat(starts, counts)
        images_of: dict[int, list[tuple[int, Any, Any, Any]]] = {}
        for i, c, s, sh in images:
            images_of.setdefault(int(bucket[i]), []).append((int(at[i]), c, s, sh))
        first = first_code = 0
        for b, (size, code_size) in enumerate(zip(counts.tolist(), code_counts.tolist(), strict=True)):
            if size:
                where = order[first : first + size]
                piece = (
                    digests[where].tobytes(), _picked(acls, where.tolist()),
                    codes[first_code : first_code + code_size], terms[where], images_of.get(b, []),
                )  # fmt: skip
                self._chunks[b].append(self.spill.put(pickle.dumps(piece, protocol=pickle.HIGHEST_PROTOCOL)))
            first += size
            first_code += code_size


def _joined(pieces: list[_Piece]) -> _Piece:
    if len(pieces) == 1:
        return pieces[0]
    acls: list[str] = []
    images: list[tuple[int, Any, Any, Any]] = []
    for _eids, part, _codes, _terms, part_images in pieces:
        images.extend((len(acls) + i, c, s, sh) for i, c, s, sh in part_images)
        acls.extend(part)
    eids = b"".join(p[0] for p in pieces)
    codes = np.concatenate([p[2] for p in pieces]) if pieces else np.zeros(0, np.int64)
    terms = np.concatenate([p[3] for p in pieces]) if pieces else np.zeros(0, np.int64)
    return eids, acls, codes, terms, images


_FIRST, _LAST = operator.itemgetter(0), operator.itemgetter(-1)
_KEY = operator.itemgetter(0, 1, 2)


def _picked(rows: list[Any], where: list[int]) -> list[Any]:
    """``[rows[i] for i in where]``, gathered in C."""
    return [rows[where[0]]] if len(where) == 1 else list(operator.itemgetter(*where)(rows))


def _digests(eids: bytes) -> npt.NDArray[np.uint8]:
    """Joined 12-byte evidence digests as an (n, 12) array."""
    return np.frombuffer(eids, dtype=np.uint8).reshape(len(eids) // 12, 12)


def _top_bits(digests: npt.NDArray[np.uint8], bits: int) -> npt.NDArray[np.intp]:
    """The bucket of each unit: the top ``bits`` bits of its evidence digest."""
    if bits == 0:
        return np.zeros(len(digests), dtype=np.intp)
    high = digests[:, :2].copy().view(">u2").ravel()
    return (high >> (16 - bits)).astype(np.intp)


def _evidence_order(digests: npt.NDArray[np.uint8]) -> npt.NDArray[np.intp]:
    """Positions of the units in evidence_id order (the ids' hex digits order like their bytes;
    a stable sort: equal digests keep their order, as the RowFiles' ``seq`` does)."""
    high = digests[:, :8].copy().view(">u8").ravel()
    low = digests[:, 8:].copy().view(">u4").ravel()
    return np.lexsort((low, high))


def _write_units(db: sqlite3.Connection, units: _Units, acls: list[str], row_files: Sequence[Path] = ()) -> int:
    """Insert units with ids 1.. in evidence_id order, names, images and postings; returns the unit count.

    ``acls``: every ACL label, sorted (a unit's ``acl`` column is its position here). The rows
    are copied from ``row_files`` by SQLite (:func:`_copy_units`), in a second thread while
    this one walks the units one bucket at a time (:class:`_Units`): each bucket's ids (its
    evidence-id order, numbered on from the previous bucket — the order the copy gives),
    lengths and postings keys, parked as a sorted run that the postings merge reads back when
    the units were spilled.
    """
    count, n_groups = units.count, len(acls)
    code_of = {name: i for i, name in enumerate(acls)}
    strings = sorted({name for name, _kind, _acl in units.names})
    string_id = {name: i for i, name in enumerate(strings, 1)}
    db.executemany("INSERT INTO strings VALUES (?, ?)", enumerate(strings, 1))
    width, span, vocab = count + 1, units.code_span, None
    if n_groups * span * width >= 1 << KEY_BITS:  # rare code points: number the terms densely
        vocab = _vocabulary(units)
        span = max(int(vocab.size), 1)
    doc_len = np.zeros(count + 1, dtype=np.int32)
    stats = np.zeros((n_groups, 2), dtype=np.int64)
    runs: list[tuple[int, int]] = []
    kept: npt.NDArray[np.int64] | None = None
    first = 1
    image_rows: list[tuple[Any, ...]] = []
    with ThreadPoolExecutor(max_workers=1) as pool:
        copied = pool.submit(_copy_units, db, row_files, acls)  # SQLite releases the GIL
        for eids, unit_acls, codes, terms, images in units.buckets():
            n = len(unit_acls)
            rowids = np.empty(n, dtype=np.int64)
            rowids[_evidence_order(_digests(eids))] = np.arange(first, first + n, dtype=np.int64)
            group = np.fromiter(map(code_of.__getitem__, unit_acls), dtype=np.int64, count=n)
            doc_len[rowids] = terms
            stats[:, 0] += np.bincount(group, minlength=n_groups)
            stats[:, 1] += np.bincount(group, weights=terms, minlength=n_groups).astype(np.int64)
            keys = _bucket_keys(codes, terms, rowids, group, span, width, vocab)
            image_rows.extend((int(rowids[i]), c, s, sh, code_of[unit_acls[i]]) for i, c, s, sh in images)
            del eids, codes
            if units.spill is not None:
                runs.append(units.spill.put(keys))
            else:
                kept = keys
            first += n
        if copied.result() != count:
            raise IndexError_(
                f"the build parked {count} units but copied {copied.result()} into the index; "
                "rerun `rag-lab index ROOT` (the previous index is untouched)"
            )
    db.executemany("INSERT INTO images VALUES (?, ?, ?, ?, ?)", sorted(image_rows))
    kinds = {"subject": 0, "field": 1}
    db.executemany(
        "INSERT INTO names VALUES (?, ?, ?, ?)",
        sorted((string_id[n], kinds[k], code_of[a], c) for (n, k, a), c in units.names.items()),
    )
    db.executemany(  # only names that folding changes (data/names.py)
        "INSERT INTO folded_names VALUES (?, ?)",
        sorted((f, i) for n, i in string_id.items() if (f := _fold(n)) != n),
    )
    if count:
        db.executemany(
            "INSERT INTO acl_stats VALUES (?, ?, ?)",
            [(acls[g], n, t) for g, (n, t) in enumerate(stats.tolist()) if n],
        )
        db.executemany("INSERT INTO unit_lengths VALUES (?, ?)", _length_rows(doc_len))
        del doc_len
        if units.spill is not None:
            sorted_keys = whole_terms(merged(units.spill, runs), width, POSTINGS_SLICE)
        else:
            assert kept is not None
            sorted_keys = _whole_term_slices(kept, width)
        for group_of, code, owner in _key_slices(sorted_keys, width, span, vocab):
            db.executemany(
                "INSERT INTO postings VALUES (?, ?, ?, ?, ?)", _postings_rows(group_of, code, owner, n_groups)
            )
    return count


def _vocabulary(units: _Units) -> npt.NDArray[np.int64]:
    """Every term code of the corpus, sorted (its positions are the dense term numbers)."""
    found = np.zeros(0, np.int64)
    for _eids, _acls, codes, _terms, _images in units.buckets():
        found = np.union1d(found, codes)
    return found


def _bucket_keys(
    codes: npt.NDArray[np.int64],
    terms: npt.NDArray[np.int64],
    rowids: npt.NDArray[np.int64],
    group: npt.NDArray[np.int64],
    span: int,
    width: int,
    vocab: npt.NDArray[np.int64] | None,
) -> npt.NDArray[np.int64]:
    """A bucket's term occurrences as sorted int64 keys ``(acl * span + term) * width + unit id``."""
    keys = np.repeat(group * span, terms)
    keys += codes if vocab is None else np.searchsorted(vocab, codes)
    keys *= width
    keys += np.repeat(rowids, terms)
    keys.sort()
    return keys


def _key_slices(
    slices: Iterator[npt.NDArray[np.int64]], width: int, span: int, vocab: npt.NDArray[np.int64] | None
) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]]:
    """(ACL index, term code, unit id) of sorted key slices."""
    for chunk in slices:
        term = chunk // width
        code = term % span
        yield term // span, code if vocab is None else vocab[code], chunk % width


def _copy_units(db: sqlite3.Connection, row_files: Sequence[Path], acls: list[str]) -> int:
    """Copy every unit row of ``row_files`` (index/spill.py ``RowFile``, attached as ``rows0``…
    by :func:`_write`) into ``units``, ids 1.. in evidence-id order, names and ACL labels turned
    into their ids by SQLite; returns the rows copied.

    Each file's table is keyed by (digest, seq), so ``ORDER BY`` merges the files as they are
    (no sort); ``strings`` must be filled."""
    if not row_files:
        return 0
    db.execute("CREATE TEMP TABLE acl_position (name TEXT PRIMARY KEY, position INTEGER NOT NULL) WITHOUT ROWID")
    db.executemany("INSERT INTO temp.acl_position VALUES (?, ?)", [(a, i) for i, a in enumerate(acls)])
    # each distinct extra once (schema 6), ids in the order of the values; the units refer to them.
    # A row file holds each of its batches' distinct extras once, in ``x`` (index/spill.py), and its
    # rows their id there: ``extra_map<i>`` turns those ids into the ids of ``extras``
    every = " UNION ALL ".join(f"SELECT extra FROM rows{i}.x" for i in range(len(row_files)))
    db.execute(f"INSERT INTO main.extras (extra) SELECT DISTINCT extra FROM ({every}) ORDER BY 1")
    db.execute("CREATE TEMP TABLE extra_id (extra PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID")
    db.execute("INSERT INTO temp.extra_id SELECT extra, id FROM main.extras")
    for i in range(len(row_files)):
        db.execute(f"CREATE TEMP TABLE extra_map{i} (local INTEGER PRIMARY KEY, id INTEGER NOT NULL)")
        db.execute(
            f"INSERT INTO temp.extra_map{i} SELECT x.id, e.id FROM rows{i}.x AS x "
            "JOIN temp.extra_id AS e ON e.extra = x.extra ORDER BY x.id"
        )
    arms = [
        "SELECT u.eid, u.file, u.span_start, u.span_end, u.line, u.text, s.id, f.id, u.value_at, u.value, "
        "u.modality, u.valid_from, u.valid_to, x.id, a.position "
        f"FROM rows{i}.s AS u LEFT JOIN main.strings AS s ON s.name = u.subject "
        "LEFT JOIN main.strings AS f ON f.name = u.field JOIN temp.acl_position AS a ON a.name = u.acl "
        f"LEFT JOIN temp.extra_map{i} AS x ON x.local = u.extra"
        for i in range(len(row_files))
    ]
    db.execute(f"INSERT INTO main.units ({ROW_COLUMNS}) {' UNION ALL '.join(arms)} ORDER BY 1")
    copied: int = db.execute("SELECT count(*) FROM main.units").fetchone()[0]
    db.execute("DROP TABLE temp.acl_position")
    db.execute("DROP TABLE temp.extra_id")
    for i in range(len(row_files)):
        db.execute(f"DROP TABLE temp.extra_map{i}")
    return copied


def _length_rows(doc_len: npt.NDArray[np.int32]) -> Iterator[tuple[int, bytes]]:
    """unit_lengths rows: LENGTHS_CHUNK unit ids each (id 0, never used, has length 0)."""
    for chunk, start in enumerate(range(0, doc_len.size, LENGTHS_CHUNK)):
        part = doc_len[start : start + LENGTHS_CHUNK]
        yield chunk, part.astype(_narrowest(int(part.max()))).tobytes()


def _narrowest(largest: int) -> str:
    return "<u1" if largest < 1 << 8 else "<u2" if largest < 1 << 16 else "<u4"


def _whole_term_slices(keys: npt.NDArray[np.int64], width: int) -> Iterator[npt.NDArray[np.int64]]:
    """Consecutive slices of sorted keys, about POSTINGS_SLICE long, never splitting a term."""
    start = 0
    while start < keys.size:
        stop = min(start + POSTINGS_SLICE, keys.size)
        if stop < keys.size:
            first = int(keys[stop]) // width * width
            stop = int(np.searchsorted(keys, first, side="left"))
            if stop <= start:  # one term longer than a slice: take all of it
                stop = int(np.searchsorted(keys, first + width, side="left"))
        yield keys[start:stop]
        start = stop


def _postings_rows(
    group: npt.NDArray[np.int64], code: npt.NDArray[np.int64], owner: npt.NDArray[np.int64], acl_span: int
) -> Iterator[tuple[Any, ...]]:
    """Postings rows (schema.py) of occurrences sorted by (ACL, term, unit id), holding whole
    terms: the first id, the other ids as deltas of the narrowest width, tfs other than 1."""
    new_term = np.ones(code.size, dtype=bool)
    new_term[1:] = (group[1:] != group[:-1]) | (code[1:] != code[:-1])
    new_pair = new_term.copy()
    new_pair[1:] |= owner[1:] != owner[:-1]
    starts = np.flatnonzero(new_pair)
    tf = np.diff(np.append(starts, code.size))
    p_group, p_code, p_owner = group[starts], code[starts], owner[starts]
    bounds = np.append(np.flatnonzero(new_term[starts]), starts.size)
    gaps = np.diff(p_owner)  # across a term boundary: negative or meaningless, never used
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        deltas = gaps[a : b - 1]
        width = _narrowest(int(deltas.max())) if deltas.size else "<u1"
        term_tf = tf[a:b]
        others = np.flatnonzero(term_tf != 1)
        tfs = None
        if others.size:
            tfs = np.column_stack((others, term_tf[others])).astype("<i4").tobytes()
        key = int(p_code[a]) * acl_span + int(p_group[a])
        yield (key, b - a, int(p_owner[a]), deltas.astype(width).tobytes(), tfs)
