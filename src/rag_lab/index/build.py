"""Building an index: extract every corpus file, write a new SQLite file, swap it in atomically.

The new index is written to ``<name>.tmp-<pid>-<random>`` beside the old one, fsynced,
renamed over the old name and the folder fsynced. A build killed at any point leaves
the previous index untouched; the next build (under an exclusive lock) deletes leftover
temporary files. Readers that already opened the old file keep reading it (its inode
lives on until they close); readers that open after the rename see the new one.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rag_lab.data import FileRecord, Progress, iter_records
from rag_lab.data.access import PUBLIC
from rag_lab.data.corpus import check_root
from rag_lab.index.schema import DDL, INDEXES, SCHEMA_VERSION
from rag_lab.index.terms import codes_of, normalise, search_text
from rag_lab.records import DEFAULT_RESERVED_FIELDS, Unit

INDEX_DIR = ".rag_lab"
INDEX_NAME = "index.sqlite"
BM25_K1 = 1.2
BM25_B = 0.75
_UNIT_COLUMNS = (
    "evidence_id source sha256 span line text subject field value modality valid_from valid_to acl"
).split()


@dataclass
class BuildSummary:
    index_path: str
    files: int = 0
    units: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index_path,
            "files": self.files,
            "units": self.units,
            "errors": self.errors,
            "warnings": self.warnings,
            "seconds": round(self.seconds, 3),
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
def _build_lock(path: Path) -> Iterator[None]:
    with open(path.with_name(path.name + ".lock"), "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
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
) -> BuildSummary:
    """Index every file under ``root``; returns what was done. Bad files are reported, not fatal."""
    started = time.perf_counter()
    base = check_root(root)
    path = Path(index_path) if index_path is not None else default_index_path(base)
    path.parent.mkdir(parents=True, exist_ok=True)
    summary = BuildSummary(index_path=str(path))
    with _build_lock(path):
        remove_leftovers(path)
        tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            _write(tmp, list(iter_records(base, progress)), config_for(reserved_fields), summary)
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


def _write(tmp: Path, records: list[FileRecord], config: dict[str, Any], summary: BuildSummary) -> None:
    db = sqlite3.connect(tmp, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        db.executescript(DDL)
        db.execute("BEGIN")
        units = _write_files(db, records, summary)
        units.sort(key=lambda u: u["evidence_id"])
        _write_units(db, units)
        _write_postings(db, units)
        meta = {
            "config": json.dumps(config, ensure_ascii=False, sort_keys=True),
            "units": str(len(units)),
            # Kept here so opening an index and parsing a question never scan whole tables.
            "acls": json.dumps(sorted({r.acl for r in records} | {u.get("acl", PUBLIC) for u in units})),
            "name_lengths": json.dumps(_name_lengths(units)),
        }
        db.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
        for statement in INDEXES.split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute("COMMIT")
        summary.units = len(units)
    finally:
        db.close()


def _name_lengths(units: list[Unit]) -> list[int]:
    """Shortest and longest subject/field name (over all ACLs: it only bounds a lookup)."""
    lengths = [len(u[k]) for u in units for k in ("subject", "field") if u[k] is not None]
    return [min(lengths), max(lengths)] if lengths else [0, 0]


def _write_files(db: sqlite3.Connection, records: list[FileRecord], summary: BuildSummary) -> list[Unit]:
    units: list[Unit] = []
    rows = []
    for rec in records:
        fp = rec.fingerprint
        rows.append(
            (
                rec.path,
                rec.kind,
                fp and fp.size,
                rec.sha256,
                fp and fp.mtime_ns,
                fp and fp.ctime_ns,
                fp and fp.inode,
                rec.error,
                rec.acl,
            )
        )
        if rec.error is not None:
            summary.errors.append({"path": rec.path, "error": rec.error})
        summary.warnings += len(rec.warnings)
        db.executemany(
            "INSERT INTO file_warnings VALUES (?, ?, ?)",
            [(rec.path, line, msg) for line, msg in rec.warnings],
        )
        units.extend(rec.units)
    db.executemany("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    summary.files = len(records)
    return units


def _unit_row(rowid: int, unit: Unit) -> tuple[Any, ...]:
    extra = {k: v for k, v in unit.items() if k not in _UNIT_COLUMNS}
    span = unit["span"] or [None, None]
    return (
        rowid,
        unit["evidence_id"],
        unit["source"],
        unit["sha256"],
        span[0],
        span[1],
        unit["line"],
        unit["text"],
        unit["subject"],
        unit["field"],
        unit["value"],
        unit["modality"],
        unit.get("valid_from"),
        unit.get("valid_to"),
        json.dumps(extra, ensure_ascii=False, sort_keys=True) if extra else None,
        unit.get("acl", PUBLIC),
    )


def _write_units(db: sqlite3.Connection, units: list[Unit]) -> None:
    db.executemany(
        "INSERT INTO units VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (_unit_row(i, u) for i, u in enumerate(units, 1)),
    )
    counts: dict[tuple[str, str, str], int] = {}
    for unit in units:
        for kind in ("subject", "field"):
            if unit[kind] is not None:
                key = (unit[kind], kind, unit.get("acl", PUBLIC))
                counts[key] = counts.get(key, 0) + 1
    db.executemany("INSERT INTO names VALUES (?, ?, ?, ?)", [(*k, c) for k, c in sorted(counts.items())])
    db.executemany(
        "INSERT INTO images VALUES (?, ?, ?, ?, ?)",
        [
            (i, u["color"], u["size"], u["shape"], u.get("acl", PUBLIC))
            for i, u in enumerate(units, 1)
            if u["modality"] == "image"
        ],
    )


def _write_postings(db: sqlite3.Connection, units: list[Unit]) -> None:
    """BM25 postings per (term, ACL): unit ids ascending, raw tf and unit length (int32 each)."""
    if not units:
        return
    texts = [normalise(search_text(u)) for u in units]
    lengths = np.fromiter((len(t) + 1 for t in texts), dtype=np.int64, count=len(texts))
    codes, valid = codes_of("\0".join(texts) + "\0")
    owner = np.repeat(np.arange(1, len(units) + 1, dtype=np.int64), lengths)
    codes, owner = codes[valid], owner[valid]
    doc_len = np.bincount(owner, minlength=len(units) + 1)
    acl_names = sorted({u.get("acl", PUBLIC) for u in units})
    acl_of = np.array([0] + [acl_names.index(u.get("acl", PUBLIC)) for u in units], dtype=np.int64)
    db.executemany(
        "INSERT INTO acl_stats VALUES (?, ?, ?)",
        [
            (name, int((acl_of[1:] == i).sum()), int(doc_len[1:][acl_of[1:] == i].sum()))
            for i, name in enumerate(acl_names)
        ],
    )
    group = acl_of[owner]
    order = np.lexsort((owner, codes, group))
    codes, owner, group = codes[order], owner[order], group[order]
    new_pair = np.ones(codes.size, dtype=bool)
    new_pair[1:] = (codes[1:] != codes[:-1]) | (owner[1:] != owner[:-1])
    starts = np.flatnonzero(new_pair)
    tf = np.diff(np.append(starts, codes.size)).astype(np.int32)
    p_codes, p_owner, p_group = codes[starts], owner[starts], group[starts]
    new_term = np.ones(p_codes.size, dtype=bool)
    new_term[1:] = (p_codes[1:] != p_codes[:-1]) | (p_group[1:] != p_group[:-1])
    bounds = np.append(np.flatnonzero(new_term), p_codes.size)
    ids32, lens32 = p_owner.astype(np.int32), doc_len[p_owner].astype(np.int32)
    db.executemany(
        "INSERT INTO postings VALUES (?, ?, ?, ?, ?, ?)",
        (
            (
                int(p_codes[a]),
                acl_names[int(p_group[a])],
                int(b - a),
                ids32[a:b].tobytes(),
                tf[a:b].tobytes(),
                lens32[a:b].tobytes(),
            )
            for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
        ),
    )
