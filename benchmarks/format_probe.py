"""Format probe: candidate layouts for postings, units and the same-key map, measured on one index.

    python benchmarks/format_probe.py [--docs 100000] [--questions 100] [--out benchmarks/out] [--json FILE]

A prototype only: nothing here is read by rag_lab. It loads the rows of an index that
``rag-lab index`` built (``OUT/corpus_<N>/.rag_lab/index.sqlite``; ``bench_index.py``'s
cached corpus) into memory and writes each candidate layout into a fresh SQLite file the
way the build writes (journal off, one transaction), timing encode + insert + CREATE INDEX
per part, and measuring the bytes per table and index with ``dbstat``. Then, per layout,
the query-time cost of what one question reads: the postings of the question's terms
(decoded to unit ids, term frequencies and unit lengths, as ``Index.postings`` does), the
top 5 units as unit dicts, and one same-key lookup with its units.

Layouts (every file also holds the snapshot ``files`` table, ``names``, ``meta``, ``acl_stats``):

* **today** — schema 3 as built: ``units`` with every column (evidence id, source, file sha256,
  subject, field, value and text per unit) + UNIQUE(evidence_id) + ``units_key(subject, field)``
  + ``units_source(source)``; postings rows ``(term, acl) → ids, tfs, lens`` as int32 blobs.
* **u32** — compact units (below); postings ``(term, acl) → ids uint32, tfs uint8`` blobs;
  unit lengths stored once (``unit_lengths``, uint16), not once per posting.
* **varint** — compact units; postings ids delta-encoded + LEB128 varint, tfs varint (1 byte
  each while tf < 128); unit lengths once.
* **tantivy** — compact units in SQLite; postings in a tantivy index beside it (``ngram(2,2)``,
  frequencies, no positions, the unit id as a fast field); its query cost is a top-200 BM25
  search (tantivy scores inside; rag_lab's per-label statistics cannot be applied, see README).

Compact units: ``units_c(id, file → files_c.id, line, span_start, span_end, subject → names_c.id,
field → names_c.id, value_at, text, extra)`` — no evidence id (recomputed from source, span and
the file's sha256; a UNIQUE 64-bit prefix of it is kept for lookups by id), no source or sha256
(the file row has them), no subject/field/value strings (ids into ``names_c``; the value is
``text[value_at:]``), modality and ACL from the file row. Same-key map: ``keymap(subject id,
field id, acl) → unit ids`` (uint32 blob), one row per key, instead of an index over two text columns.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sqlite3
import statistics
import sys
import time
from array import array
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_index import code_state, ensure_corpus, require_schema  # noqa: E402

K1, B = 1.2, 0.75
U32 = npt.NDArray[np.uint32]


# -- varint (LEB128), vectorised --------------------------------------------------------------------


def varint_encode(values: npt.NDArray[Any]) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """All ``values`` (< 2^35) as LEB128 bytes; and the byte offset where each value starts."""
    v = values.astype(np.uint64)
    nbytes = np.ones(v.size, np.int64)
    for k in range(1, 5):
        nbytes += v >= np.uint64(1 << (7 * k))
    starts = np.cumsum(nbytes) - nbytes
    out = np.empty(int(nbytes.sum()), np.uint8)
    for k in range(5):
        mask = nbytes > k
        byte = ((v[mask] >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        byte[nbytes[mask] > k + 1] |= 0x80
        out[starts[mask] + k] = byte
    return out, starts


def varint_decode(blob: bytes) -> npt.NDArray[np.int64]:
    b = np.frombuffer(blob, np.uint8)
    ends = np.flatnonzero(b < 0x80)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    shift = (np.arange(b.size) - np.repeat(starts, ends - starts + 1)) * 7
    return np.add.reduceat((b & 0x7F).astype(np.int64) << shift, starts)


# -- what the probe starts from: today's index, in memory -------------------------------------------


def load(index: Path) -> dict[str, Any]:
    db = sqlite3.connect(f"{index.resolve().as_uri()}?mode=ro", uri=True)
    try:
        units = db.execute("SELECT * FROM units ORDER BY id").fetchall()
        files = db.execute("SELECT * FROM files ORDER BY path").fetchall()
        names = db.execute("SELECT * FROM names").fetchall()
        meta = db.execute("SELECT * FROM meta").fetchall()
        stats = db.execute("SELECT * FROM acl_stats").fetchall()
        terms, acls, id_parts, tf_parts = [], [], [], []
        for term, acl, _df, ids, tfs, _lens in db.execute("SELECT * FROM postings ORDER BY term, acl"):
            terms.append(term)
            acls.append(acl)
            id_parts.append(np.frombuffer(ids, np.int32))
            tf_parts.append(np.frombuffer(tfs, np.int32))
        warnings = db.execute("SELECT * FROM file_warnings").fetchall()
    finally:
        db.close()
    counts = np.fromiter((p.size for p in id_parts), np.int64, len(id_parts))
    ids = np.concatenate(id_parts)
    tfs = np.concatenate(tf_parts)
    doc_len = np.zeros(len(units) + 1, np.int64)
    np.add.at(doc_len, ids, tfs)
    return {
        "units": units, "files": files, "names": names, "meta": meta, "stats": stats, "warnings": warnings,
        "terms": terms, "acls": acls, "counts": counts, "ids": ids, "tfs": tfs, "doc_len": doc_len,
    }


class Writer:
    """A fresh SQLite file written like the build writes; times each named part."""

    def __init__(self, path: Path) -> None:
        path.unlink(missing_ok=True)
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode = OFF")
        self.db.execute("PRAGMA synchronous = OFF")
        self.db.execute("BEGIN")
        self.seconds: dict[str, float] = {}
        self.prep_seconds = 0.0
        self.cpu: dict[str, float] = {}  # CPU seconds per part: steadier than wall time on a shared machine

    def part(self, name: str, func: Any) -> None:
        began, cpu = time.perf_counter(), time.process_time()
        func(self.db)
        self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - began
        self.cpu[name] = self.cpu.get(name, 0.0) + time.process_time() - cpu

    def finish(self) -> dict[str, Any]:
        began = time.perf_counter()
        self.db.execute("COMMIT")
        self.db.close()
        fd = os.open(self.path, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        self.seconds["commit + fsync"] = time.perf_counter() - began
        db = sqlite3.connect(self.path)
        objects = dict(db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall())
        db.close()
        return {"file_bytes": self.path.stat().st_size, "objects": objects, "seconds": self.seconds,
                "cpu_seconds": self.cpu, "row_prep_s": self.prep_seconds}


def common_tables(w: Writer, data: dict[str, Any], compact_files: bool) -> None:
    def files(db: sqlite3.Connection) -> None:
        if compact_files:  # integer id for units to point at; path stays unique for the snapshot
            db.execute(
                "CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, "
                "size INTEGER, sha256 TEXT, mtime_ns INTEGER, ctime_ns INTEGER, inode INTEGER, error TEXT, "
                "acl TEXT NOT NULL)"
            )
            db.executemany("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           [(i, *row) for i, row in enumerate(data["files"], 1)])
        else:
            db.execute(
                "CREATE TABLE files (path TEXT PRIMARY KEY, kind TEXT NOT NULL, size INTEGER, sha256 TEXT, "
                "mtime_ns INTEGER, ctime_ns INTEGER, inode INTEGER, error TEXT, acl TEXT NOT NULL) WITHOUT ROWID"
            )
            db.executemany("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", data["files"])
        db.execute("CREATE TABLE file_warnings (path TEXT NOT NULL, line INTEGER NOT NULL, message TEXT NOT NULL)")
        db.executemany("INSERT INTO file_warnings VALUES (?, ?, ?)", data["warnings"])

    def small(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
        db.executemany("INSERT INTO meta VALUES (?, ?)", data["meta"])
        db.execute("CREATE TABLE acl_stats (acl TEXT PRIMARY KEY, units INTEGER NOT NULL, total_len INTEGER NOT NULL) WITHOUT ROWID")
        db.executemany("INSERT INTO acl_stats VALUES (?, ?, ?)", data["stats"])
        db.execute(
            "CREATE TABLE names (name TEXT NOT NULL, kind TEXT NOT NULL, acl TEXT NOT NULL, units INTEGER NOT NULL, "
            "PRIMARY KEY (name, kind, acl)) WITHOUT ROWID"
        )
        db.executemany("INSERT INTO names VALUES (?, ?, ?, ?)", data["names"])

    w.part("files + warnings (snapshot)", files)
    w.part("meta, acl_stats, names", small)


# -- units ---------------------------------------------------------------------------------------------------


def units_today(w: Writer, data: dict[str, Any]) -> None:
    def rows(db: sqlite3.Connection) -> None:
        db.execute(
            "CREATE TABLE units (id INTEGER PRIMARY KEY, evidence_id TEXT NOT NULL UNIQUE, source TEXT NOT NULL, "
            "sha256 TEXT NOT NULL, span_start INTEGER, span_end INTEGER, line INTEGER, text TEXT NOT NULL, "
            "subject TEXT, field TEXT, value TEXT NOT NULL, modality TEXT NOT NULL, valid_from TEXT, valid_to TEXT, "
            "extra TEXT, acl TEXT NOT NULL)"
        )
        db.executemany(f"INSERT INTO units VALUES ({','.join('?' * 16)})", data["units"])

    w.part("units rows", rows)
    w.part("same-key map", lambda db: db.execute("CREATE INDEX units_key ON units (subject, field)"))
    w.part("units by source", lambda db: db.execute("CREATE INDEX units_source ON units (source)"))


def compact_rows(data: dict[str, Any], keep_text: bool = True) -> tuple[list[tuple[Any, ...]], dict[tuple[str, str], int], dict[tuple[int, int, str], list[int]]]:
    """units_c rows, the name ids, and the same-key map (subject id, field id, acl) → unit ids."""
    file_id = {row[0]: i for i, row in enumerate(data["files"], 1)}
    name_id: dict[tuple[str, str], int] = {}
    keymap: dict[tuple[int, int, str], list[int]] = {}
    rows = []
    for u in data["units"]:
        (uid, ev, source, _sha, start, end, line, text, subject, field, value, _mod, vf, vt, extra, acl) = u
        sid = None if subject is None else name_id.setdefault((subject, "subject"), len(name_id) + 1)
        fid = None if field is None else name_id.setdefault((field, "field"), len(name_id) + 1)
        at = text.rfind(value) if value else len(text)
        rest: dict[str, Any] = json.loads(extra) if extra else {}
        if at < 0 or text[at:] != value:
            at, rest["value"] = None, value
        if vf is not None:
            rest["valid_from"] = vf
        if vt is not None:
            rest["valid_to"] = vt
        if field is not None and not text.startswith(field):
            rest["field_text"] = field
        ev_key = int(ev[3:19], 16) - (1 << 63)  # first 64 bits of the evidence id's hash, signed
        rows.append((uid, file_id[source], line, start, end, sid, fid, at, text if keep_text else None,
                     json.dumps(rest, ensure_ascii=False, sort_keys=True) if rest else None, ev_key))
        if sid is not None and fid is not None:
            keymap.setdefault((sid, fid, acl), []).append(uid)
    return rows, name_id, keymap


def units_compact(w: Writer, data: dict[str, Any], keep_text: bool = True) -> None:
    cpu = time.process_time()
    rows, name_id, keymap = compact_rows(data, keep_text)
    # Python that the build's workers would do while parsing: reported apart, not in the write time (CPU s)
    w.prep_seconds = time.process_time() - cpu

    def write(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE names_c (id INTEGER PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL)")
        db.executemany("INSERT INTO names_c VALUES (?, ?, ?)", [(i, n, k) for (n, k), i in name_id.items()])
        db.execute("CREATE UNIQUE INDEX names_c_name ON names_c (name, kind)")
        db.execute(
            "CREATE TABLE units_c (id INTEGER PRIMARY KEY, file INTEGER NOT NULL, line INTEGER, span_start INTEGER, "
            "span_end INTEGER, subject INTEGER, field INTEGER, value_at INTEGER, text TEXT, extra TEXT, "
            "ev_key INTEGER NOT NULL)"
        )
        db.executemany(f"INSERT INTO units_c VALUES ({','.join('?' * 11)})", rows)
        db.execute("CREATE UNIQUE INDEX units_ev ON units_c (ev_key)")

    def keys(db: sqlite3.Connection) -> None:
        db.execute(
            "CREATE TABLE keymap (subject INTEGER NOT NULL, field INTEGER NOT NULL, acl TEXT NOT NULL, "
            "ids BLOB NOT NULL, PRIMARY KEY (subject, field, acl)) WITHOUT ROWID"
        )
        db.executemany(
            "INSERT INTO keymap VALUES (?, ?, ?, ?)",
            ((s, f, a, array("I", ids).tobytes()) for (s, f, a), ids in sorted(keymap.items())),
        )

    w.part("units rows", write)
    if keep_text:
        w.part("same-key map", keys)
    else:  # lean: an index over the two integer name ids (most keys have one unit: no blob per key)
        w.part("same-key map", lambda db: db.execute("CREATE INDEX units_c_key ON units_c (subject, field)"))
    w.part("units by source", lambda db: db.execute("CREATE INDEX units_file ON units_c (file)"))


# -- postings ---------------------------------------------------------------------------------------------


def postings_today(w: Writer, data: dict[str, Any]) -> None:
    def write(db: sqlite3.Connection) -> None:
        db.execute(
            "CREATE TABLE postings (term INTEGER NOT NULL, acl TEXT NOT NULL, df INTEGER NOT NULL, ids BLOB NOT NULL, "
            "tfs BLOB NOT NULL, lens BLOB NOT NULL, PRIMARY KEY (term, acl)) WITHOUT ROWID"
        )
        bounds = np.concatenate([[0], np.cumsum(data["counts"])]).tolist()
        ids32, tfs32 = data["ids"].astype(np.int32), data["tfs"].astype(np.int32)
        lens32 = data["doc_len"].astype(np.int32)[data["ids"]]
        db.executemany(
            "INSERT INTO postings VALUES (?, ?, ?, ?, ?, ?)",
            ((t, a, b - s, ids32[s:b].tobytes(), tfs32[s:b].tobytes(), lens32[s:b].tobytes())
             for t, a, s, b in zip(data["terms"], data["acls"], bounds[:-1], bounds[1:], strict=True)),
        )

    w.part("postings", write)


def _unit_lengths(db: sqlite3.Connection, data: dict[str, Any]) -> None:
    db.execute("CREATE TABLE unit_lengths (part INTEGER PRIMARY KEY, lens BLOB NOT NULL)")
    lens = np.minimum(data["doc_len"], 65535).astype(np.uint16)  # a longer unit: clamp (BM25 barely moves)
    step = 1 << 16
    db.executemany("INSERT INTO unit_lengths VALUES (?, ?)",
                   [(i // step, lens[i : i + step].tobytes()) for i in range(0, lens.size, step)])


def postings_u32(w: Writer, data: dict[str, Any]) -> None:
    def write(db: sqlite3.Connection) -> None:
        db.execute(
            "CREATE TABLE postings (term INTEGER NOT NULL, acl TEXT NOT NULL, df INTEGER NOT NULL, ids BLOB NOT NULL, "
            "tfs BLOB NOT NULL, PRIMARY KEY (term, acl)) WITHOUT ROWID"
        )
        bounds = np.concatenate([[0], np.cumsum(data["counts"])]).tolist()
        ids = data["ids"].astype(np.uint32)
        tfs = np.minimum(data["tfs"], 255).astype(np.uint8)  # prototype: a real format keeps a wider tf escape
        db.executemany(
            "INSERT INTO postings VALUES (?, ?, ?, ?, ?)",
            ((t, a, b - s, ids[s:b].tobytes(), tfs[s:b].tobytes())
             for t, a, s, b in zip(data["terms"], data["acls"], bounds[:-1], bounds[1:], strict=True)),
        )
        _unit_lengths(db, data)

    w.part("postings", write)


def postings_varint(w: Writer, data: dict[str, Any]) -> None:
    def write(db: sqlite3.Connection) -> None:
        db.execute(
            "CREATE TABLE postings (term INTEGER NOT NULL, acl TEXT NOT NULL, df INTEGER NOT NULL, ids BLOB NOT NULL, "
            "tfs BLOB NOT NULL, PRIMARY KEY (term, acl)) WITHOUT ROWID"
        )
        counts = data["counts"]
        bounds = np.concatenate([[0], np.cumsum(counts)])
        ids = data["ids"].astype(np.int64)
        gaps = np.diff(ids, prepend=0)
        gaps[bounds[:-1]] = ids[bounds[:-1]]  # each term's first id is absolute
        id_bytes, id_at = varint_encode(gaps)
        tf_bytes, tf_at = varint_encode(data["tfs"])
        id_cut = np.append(id_at, id_bytes.size)[bounds].tolist()
        tf_cut = np.append(tf_at, tf_bytes.size)[bounds].tolist()
        rows = []
        for i, (t, a) in enumerate(zip(data["terms"], data["acls"], strict=True)):
            rows.append((t, a, int(counts[i]), id_bytes[id_cut[i] : id_cut[i + 1]].tobytes(),
                         tf_bytes[tf_cut[i] : tf_cut[i + 1]].tobytes()))
        db.executemany("INSERT INTO postings VALUES (?, ?, ?, ?, ?)", rows)
        _unit_lengths(db, data)

    w.part("postings", write)


def postings_lean(w: Writer, data: dict[str, Any]) -> None:
    """Delta + varint ids; term frequencies only where tf > 1, as varint (position, tf) pairs."""

    def write(db: sqlite3.Connection) -> None:
        db.execute(
            "CREATE TABLE postings (term INTEGER NOT NULL, acl TEXT NOT NULL, df INTEGER NOT NULL, ids BLOB NOT NULL, "
            "tfs BLOB, PRIMARY KEY (term, acl)) WITHOUT ROWID"
        )
        counts = data["counts"]
        bounds = np.concatenate([[0], np.cumsum(counts)])
        ids = data["ids"].astype(np.int64)
        gaps = np.diff(ids, prepend=0)
        gaps[bounds[:-1]] = ids[bounds[:-1]]
        id_bytes, id_at = varint_encode(gaps)
        id_cut = np.append(id_at, id_bytes.size)[bounds].tolist()
        tfs = data["tfs"]
        where = np.flatnonzero(tfs > 1)
        owner = np.searchsorted(bounds, where, side="right") - 1  # which term each tf > 1 belongs to
        pairs = np.empty(where.size * 2, np.int64)
        pairs[0::2] = where - bounds[owner]
        pairs[1::2] = tfs[where]
        ex_bytes, ex_at = varint_encode(pairs)
        ex_at = np.append(ex_at[0::2], ex_bytes.size)
        ex_cut = np.searchsorted(owner, np.arange(len(counts) + 1)).tolist()
        rows = []
        for i, (t, a) in enumerate(zip(data["terms"], data["acls"], strict=True)):
            lo, hi = ex_cut[i], ex_cut[i + 1]
            tf_blob = ex_bytes[ex_at[lo] : ex_at[hi]].tobytes() if hi > lo else None
            rows.append((t, a, int(counts[i]), id_bytes[id_cut[i] : id_cut[i + 1]].tobytes(), tf_blob))
        db.executemany("INSERT INTO postings VALUES (?, ?, ?, ?, ?)", rows)
        _unit_lengths(db, data)

    w.part("postings", write)


def tantivy_postings(data: dict[str, Any], folder: Path) -> dict[str, Any] | None:
    try:
        import tantivy
    except ImportError:
        return None
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    texts = [f"{u[8]} {u[7]}" if u[8] else u[7] for u in data["units"]]
    began, cpu = time.perf_counter(), time.process_time()
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("text", stored=False, tokenizer_name="bigram", index_option="freq")
    sb.add_unsigned_field("uid", stored=True, fast=True, indexed=False)
    schema = sb.build()
    analyzer = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.ngram(2, 2, False)).filter(tantivy.Filter.lowercase()).build()
    index = tantivy.Index(schema, path=str(folder))
    index.register_tokenizer("bigram", analyzer)
    writer = index.writer(heap_size=256_000_000)
    for u, text in zip(data["units"], texts, strict=True):
        doc = tantivy.Document()
        doc.add_text("text", text)
        doc.add_unsigned("uid", u[0])
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    seconds, cpu = time.perf_counter() - began, time.process_time() - cpu  # CPU of every tantivy thread
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    index = tantivy.Index.open(str(folder))
    index.register_tokenizer("bigram", analyzer)
    index.reload()
    searcher = index.searcher()

    def search(question: str) -> None:
        low = question.lower()
        grams = dict.fromkeys(low[i : i + 2] for i in range(len(low) - 1))
        q = tantivy.Query.boolean_query([(tantivy.Occur.Should, tantivy.Query.term_query(schema, "text", g)) for g in grams])
        hits = searcher.search(q, 200, count=False).hits
        for _score, address in hits[:5]:
            searcher.doc(address)["uid"]

    return {"seconds": seconds, "cpu": cpu, "bytes": size, "search": search, "files": len(list(folder.rglob("*")))}


# -- query-time costs ---------------------------------------------------------------------------------------


class Reader:
    """What one question reads from a layout (a read-only connection opened like Index opens)."""

    def __init__(self, path: Path, layout: str, root: Path) -> None:
        self.root = root
        self.db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
        self.layout = layout
        began = time.perf_counter()
        self.total, total_len = self.db.execute("SELECT sum(units), sum(total_len) FROM acl_stats").fetchone()
        self.avg = max(total_len / max(self.total, 1), 1.0)
        if layout in ("u32", "varint", "lean"):
            self.lens = np.concatenate(
                [np.frombuffer(b, np.uint16) for (b,) in self.db.execute("SELECT lens FROM unit_lengths ORDER BY part")]
            ).astype(np.float64)
        self.open_s = time.perf_counter() - began

    def postings(self, terms: list[int], acls: list[str]) -> tuple[int, int, float]:
        """(entries, sum of unit ids, sum of BM25 tf weights) of the terms' postings: a checksum."""
        marks, amarks = ",".join("?" * len(terms)), ",".join("?" * len(acls))
        cols = "ids, tfs, lens" if self.layout == "today" else "ids, tfs"
        n = id_sum = 0
        w_sum = 0.0
        for row in self.db.execute(f"SELECT {cols} FROM postings WHERE term IN ({marks}) AND acl IN ({amarks})",
                                   [*terms, *acls]):
            if self.layout == "today":
                ids = np.frombuffer(row[0], np.int32)
                tf = np.frombuffer(row[1], np.int32).astype(np.float64)
                dl = np.frombuffer(row[2], np.int32).astype(np.float64)
            elif self.layout == "u32":
                ids = np.frombuffer(row[0], np.uint32)
                tf = np.frombuffer(row[1], np.uint8).astype(np.float64)
                dl = self.lens[ids]
            elif self.layout == "varint":
                ids = np.cumsum(varint_decode(row[0]))
                tf = varint_decode(row[1]).astype(np.float64)
                dl = self.lens[ids]
            else:
                ids = np.cumsum(varint_decode(row[0]))
                tf = np.ones(ids.size)
                if row[1] is not None:
                    pairs = varint_decode(row[1])
                    tf[pairs[0::2]] = pairs[1::2]
                dl = self.lens[ids]
            weight = tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / self.avg))
            n += int(weight.size)
            id_sum += int(ids.sum())
            w_sum += float(weight.sum())
        return n, id_sum, round(w_sum, 6)

    def units(self, ids: list[int]) -> list[dict[str, Any]]:
        marks = ",".join("?" * len(ids))
        if self.layout == "today":
            rows = self.db.execute(
                "SELECT id, evidence_id, source, sha256, span_start, span_end, line, text, subject, field, value, "
                f"modality, valid_from, valid_to, extra FROM units WHERE id IN ({marks})", ids).fetchall()
            return [{"evidence_id": r[1], "source": r[2], "sha256": r[3], "span": [r[4], r[5]], "line": r[6],
                     "text": r[7], "subject": r[8], "field": r[9], "value": r[10], "modality": r[11]} for r in rows]
        rows = self.db.execute(
            "SELECT u.id, f.path, f.sha256, u.span_start, u.span_end, u.line, u.text, s.name, fl.name, u.value_at, "
            "f.kind, u.extra FROM units_c u JOIN files f ON f.id = u.file LEFT JOIN names_c s ON s.id = u.subject "
            f"LEFT JOIN names_c fl ON fl.id = u.field WHERE u.id IN ({marks})", ids).fetchall()
        out = []
        for r in rows:
            if r[6] is None:  # lean: the line is read from its file (verification reads it anyway)
                with open(self.root / r[1], "rb") as handle:
                    r = (*r[:6], handle.read().decode("utf-8")[r[3] : r[4]], *r[7:])
            where = f"{r[3]}:{r[4]}"
            ev = "ev_" + hashlib.sha256(f"{r[1]}\0{where}\0{r[2]}".encode()).hexdigest()[:24]
            unit = {"evidence_id": ev, "source": r[1], "sha256": r[2], "span": [r[3], r[4]], "line": r[5],
                    "text": r[6], "subject": r[7], "field": r[8], "value": None if r[9] is None else r[6][r[9]:],
                    "modality": "text" if r[10] == "document" else "image"}
            if r[11]:
                unit.update(json.loads(r[11]))
            out.append(unit)
        return out

    def same_key(self, subject: str, field: str, acls: list[str]) -> list[dict[str, Any]]:
        amarks = ",".join("?" * len(acls))
        if self.layout == "today":
            ids = [r[0] for r in self.db.execute(
                f"SELECT id FROM units WHERE subject = ? AND field = ? AND acl IN ({amarks}) ORDER BY id",
                [subject, field, *acls])]
        elif self.layout == "lean":
            ids = [r[0] for r in self.db.execute(
                "SELECT u.id FROM units_c u JOIN files f ON f.id = u.file "
                "WHERE u.subject = (SELECT id FROM names_c WHERE name = ? AND kind = 'subject') "
                "AND u.field = (SELECT id FROM names_c WHERE name = ? AND kind = 'field') "
                f"AND f.acl IN ({amarks}) ORDER BY u.id", [subject, field, *acls])]
        else:
            ids = sorted(int(i) for (blob,) in self.db.execute(
                "SELECT k.ids FROM keymap k JOIN names_c s ON s.id = k.subject JOIN names_c f ON f.id = k.field "
                f"WHERE s.name = ? AND s.kind = 'subject' AND f.name = ? AND f.kind = 'field' AND k.acl IN ({amarks})",
                [subject, field, *acls]) for i in np.frombuffer(blob, np.uint32))
        return self.units(ids) if ids else []


def query_costs(path: Path, layout: str, qs: list[tuple[str, str, str]], acls: list[str], root: Path) -> dict[str, Any]:
    from rag_lab.index.terms import query_terms

    reader = Reader(path, layout, root)
    post, fetch, key = [], [], []
    cpu: dict[str, list[float]] = {}
    sample_ids = [[1 + (hash((q, i)) % reader.total) for i in range(5)] for q, _, _ in qs]
    for _ in range(2):  # the first pass warms the page cache; the second is timed
        post, fetch, key = [], [], []
        cpu = {"postings": [], "units5": [], "same_key": []}
        for (question, subject, field), ids in zip(qs, sample_ids, strict=True):
            terms = query_terms(question)
            if layout != "tantivy":  # tantivy's postings are read by its own search (timed apart)
                began, c = time.perf_counter(), time.process_time()
                reader.postings(terms, acls)
                post.append(time.perf_counter() - began)
                cpu["postings"].append(time.process_time() - c)
            began, c = time.perf_counter(), time.process_time()
            reader.units(ids)
            fetch.append(time.perf_counter() - began)
            cpu["units5"].append(time.process_time() - c)
            began, c = time.perf_counter(), time.process_time()
            reader.same_key(subject, field, acls)
            key.append(time.perf_counter() - began)
            cpu["same_key"].append(time.process_time() - c)
    reader.db.close()

    def p(v: list[float], q: float) -> float:
        return sorted(v)[min(len(v) - 1, int(round(q * (len(v) - 1))))] * 1e3

    return {
        "open_ms": reader.open_s * 1e3,
        **({"postings_p50_ms": statistics.median(post) * 1e3, "postings_p95_ms": p(post, 0.95)} if post else {}),
        "units5_p50_ms": statistics.median(fetch) * 1e3, "units5_p95_ms": p(fetch, 0.95),
        "same_key_p50_ms": statistics.median(key) * 1e3, "same_key_p95_ms": p(key, 0.95),
        # CPU time: steadier than wall time on a shared machine
        **{f"{k}_cpu_p50_ms": statistics.median(v) * 1e3 for k, v in cpu.items() if v},
        **{f"{k}_cpu_p95_ms": p(v, 0.95) for k, v in cpu.items() if v},
    }


def check_same_answers(paths: dict[str, Path], qs: list[tuple[str, str, str]], acls: list[str], root: Path) -> bool:
    """The compact layouts give back the same units (evidence ids, values, spans, text) and the
    same postings (unit ids, term frequencies, unit lengths) as today's."""
    from rag_lab.index.terms import query_terms

    readers = {k: Reader(p, k, root) for k, p in paths.items()}
    for question, _, _ in qs[:50]:
        want = readers["today"].postings(query_terms(question), acls)
        for name, r in readers.items():
            if name != "tantivy" and r.postings(query_terms(question), acls) != want:
                print(f"MISMATCH postings {name}: {question}")
                return False
    try:
        for _question, subject, field in qs[:50]:
            want = [(u["evidence_id"], u["value"], u["span"], u["field"], u["subject"], u["text"])
                    for u in readers["today"].same_key(subject, field, acls)]
            for name, r in readers.items():
                got = [(u["evidence_id"], u["value"], u["span"], u["field"], u["subject"], u["text"])
                       for u in r.same_key(subject, field, acls)]
                if got != want:
                    print(f"MISMATCH {name} {subject} {field}: {got} != {want}")
                    return False
    finally:
        for r in readers.values():
            r.db.close()
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=100000)
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    root = ensure_corpus(args.out, args.docs)
    index = root / ".rag_lab" / "index.sqlite"
    if not index.exists():
        raise SystemExit(f"no index at {index}: run `rag-lab index {root}` (or bench_index.py) first")
    require_schema(index, (3, 4), "format_probe.py")
    corpus = sum(p.stat().st_size for p in (root / "documents").rglob("*.md"))
    load_avg = os.getloadavg()[0]
    began = time.perf_counter()
    data = load(index)
    print(f"loaded {index} ({index.stat().st_size / 1e6:.1f} MB, {len(data['units'])} units, "
          f"{data['ids'].size} postings) in {time.perf_counter() - began:.1f} s; load {load_avg:.1f}", flush=True)
    acls = sorted({a for a in data["acls"]})
    manifest = json.loads((args.out / f"corpus_{args.docs}.manifest.json").read_text())
    qs = [(f"{k['subject']}的{k['field']}是什么？", k["subject"], k["field"])
          for k in manifest["single_source_sample"][: args.questions]]
    work = args.out / "format_probe"
    work.mkdir(parents=True, exist_ok=True)
    layouts = {
        "today": (units_today, postings_today, False),
        "u32": (units_compact, postings_u32, True),
        "varint": (units_compact, postings_varint, True),
        "lean": (lambda w, d: units_compact(w, d, keep_text=False), postings_lean, True),
        "tantivy": (units_compact, None, True),
    }
    results: dict[str, Any] = {}
    paths: dict[str, Path] = {}
    for name, (units, postings, compact) in layouts.items():
        w = Writer(work / f"{name}.sqlite")
        common_tables(w, data, compact)
        units(w, data)
        if postings is not None:
            postings(w, data)
        res = w.finish()
        if name == "tantivy":
            tv = tantivy_postings(data, work / "tantivy")
            if tv is None:
                print("tantivy: not installed (pip install -r benchmarks/requirements.txt), layout skipped")
                continue
            res["seconds"]["postings (tantivy, from unit texts)"] = tv["seconds"]
            res["cpu_seconds"]["postings (tantivy, from unit texts)"] = tv["cpu"]
            res["tantivy_bytes"] = tv["bytes"]
            res["tantivy_files"] = tv["files"]
            search = tv["search"]
            for question, _, _ in qs[:5]:
                search(question)
            times, cpus = [], []
            for question, _, _ in qs:
                t0, c0 = time.perf_counter(), time.process_time()
                search(question)
                times.append(time.perf_counter() - t0)
                cpus.append(time.process_time() - c0)
            res["tantivy_top200_cpu_p50_ms"] = statistics.median(cpus) * 1e3
            res["tantivy_top200_cpu_p95_ms"] = sorted(cpus)[int(0.95 * (len(cpus) - 1))] * 1e3
            res["tantivy_top200_p50_ms"] = statistics.median(times) * 1e3
            res["tantivy_top200_p95_ms"] = sorted(times)[int(0.95 * (len(times) - 1))] * 1e3
        paths[name] = w.path
        res["query"] = query_costs(w.path, name, qs, acls, root)
        results[name] = res
        total = res["file_bytes"] + res.get("tantivy_bytes", 0)
        print(f"{name:8} file {res['file_bytes'] / 1e6:7.1f} MB (+ tantivy {res.get('tantivy_bytes', 0) / 1e6:.1f}) "
              f"= {total / corpus:.2f}× corpus; write {sum(res['seconds'].values()):.2f} s {res['seconds']}", flush=True)
    same = check_same_answers(paths, qs, acls, root)
    print(f"same units from every layout (50 same-key lookups): {same}")
    report = {"docs": args.docs, "corpus_bytes": corpus, "code": code_state(), "loadavg_before": load_avg,
              "loadavg_end": os.getloadavg()[0], "same_units": same, "layouts": results}
    print("\n| layout | file MB | ÷ corpus | units + same-key MB | postings MB | write s (CPU s) | row prep CPU s "
          "| postings read p50 / p95 ms (CPU p50) | 5 units p50 ms (CPU) | same-key p50 ms (CPU) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, res in results.items():
        o = res["objects"]
        units_mb = sum(v for k, v in o.items() if k.startswith(("units", "sqlite_autoindex_units", "keymap", "names_c"))) / 1e6
        post_mb = (sum(v for k, v in o.items() if k.startswith(("postings", "sqlite_autoindex_postings", "unit_lengths")))
                   + res.get("tantivy_bytes", 0)) / 1e6
        total = res["file_bytes"] + res.get("tantivy_bytes", 0)
        q = res["query"]
        read = (f"{q['postings_p50_ms']:.2f} / {q['postings_p95_ms']:.2f} ({q['postings_cpu_p50_ms']:.2f})"
                if "postings_p50_ms" in q else
                f"(top-200 search) {res['tantivy_top200_p50_ms']:.2f} / {res['tantivy_top200_p95_ms']:.2f} "
                f"({res['tantivy_top200_cpu_p50_ms']:.2f})")
        print(f"| {name} | {total / 1e6:.1f} | {total / corpus:.2f}× | {units_mb:.1f} | {post_mb:.1f} | "
              f"{sum(res['seconds'].values()):.2f} ({sum(res['cpu_seconds'].values()):.2f}) | {res['row_prep_s']:.2f} | {read} | {q['units5_p50_ms']:.2f} ({q['units5_cpu_p50_ms']:.2f}) | "
              f"{q['same_key_p50_ms']:.2f} ({q['same_key_cpu_p50_ms']:.2f}) |")
    for name, res in results.items():
        print(f"\n{name}: " + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sorted(res["objects"].items(), key=lambda kv: -kv[1])))
    path = args.json or args.out / f"format_probe_{args.docs}.json"
    path.write_text(json.dumps(report, ensure_ascii=False, indent=2, default=str))
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
