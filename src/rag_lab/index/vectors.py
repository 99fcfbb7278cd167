"""Sentence vectors in the index (optional): ``build_index(root, vectors=True)`` / ``rag-lab index --vectors``.

Only prose units (``sentence``, ``table_row``) get a vector: the embedding of what lexical
ranking sees of them (``terms.search_text``: title, innermost heading, text), from the shared
offline model (``rag_lab.neural``, the ``[neural]`` extra). Each vector is stored as one
**float16** blob of ``DIM`` values (768 bytes for 384 dimensions) in the ``vectors`` table,
keyed by unit id; the index config records the model name, dimension and dtype, so a query
is never compared with vectors of another model. Lexical retrieval never needs them.

**A rebuild embeds only what is new.** A vector depends on nothing but the model and the text
embedded, so the build takes it from the index it replaces (:class:`Reuse`) wherever that
index embedded the very same text with the same model, dimension and dtype, and embeds the
rest: after a change to a few files only their changed sentences cost model time (the model
is ≈ 10^5 × slower than the rest of a build per unit). An index that cannot be read, of another
schema or another model gives nothing, and the build embeds everything, as a first build does.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from rag_lab.index.schema import SCHEMA_VERSION
from rag_lab.index.store import stored_extra, stored_text
from rag_lab.index.terms import search_text
from rag_lab.neural import Embedder, require_embedder

VECTOR_KINDS = ("sentence", "table_row")
DTYPE = "float16"
BATCH = 64
#: vectors taken or made but not yet written, at most (bounds the build's memory between writes)
PENDING_MAX = 4096
_CHUNK = 900  # ids bound in one statement (SQLite's default limit is 32766)

_SELECT_PROSE = (
    "SELECT u.id, u.text, x.extra, f.path, u.span_start, u.span_end FROM units u "
    "JOIN extras x ON x.id = u.extra JOIN files f ON f.id = u.file{join} ORDER BY u.id"
)


class Reuse(Protocol):
    """Vectors an earlier index of the same store already holds, found by what they embedded."""

    def sentences(self, texts: set[str], embedder: Embedder) -> dict[str, int]:
        """``search_text`` → the id (in the earlier index) of a prose unit whose stored vector
        embedded it with ``embedder``'s model, dimension and dtype, for those of ``texts`` it has."""
        ...

    def sentence_vectors(self, ids: list[int]) -> dict[int, bytes]:
        """The stored float16 vectors of those units (by :meth:`sentences`'s ids)."""
        ...

    def field_names(self, names: set[str], embedder: Embedder) -> dict[str, bytes]:
        """Field name → its stored float32 vector (index/field_vectors.py), likewise."""
        ...


def vector_config(embedder: Embedder) -> dict[str, Any]:
    return {"model": embedder.name, "dim": embedder.dim, "dtype": DTYPE, "kinds": list(VECTOR_KINDS)}


def same_model(meta: dict[str, Any], embedder: Embedder, *, sentences: bool) -> bool:
    """Whether an index's meta says its sentence vectors (``sentences``) or its field-name vectors
    come from ``embedder``'s model (sentences: also its dimension and :data:`DTYPE`)."""
    if not sentences:
        return bool(json.loads(meta.get("field_vectors", "null")) == embedder.name)
    found = json.loads(meta["config"]).get("vectors") or {}
    return bool(found.get("model") == embedder.name and found.get("dim") == embedder.dim and found.get("dtype") == DTYPE)


def vector_counts(units: int, units_reused: int, names: int, names_reused: int) -> dict[str, int]:
    """A build's ``BuildSummary.vectors``: prose units and field names with vectors, and how many
    of each were taken from the index the build replaced rather than embedded."""
    return {"units": units, "units_reused": units_reused, "field_names": names, "field_names_reused": names_reused}


def prose_texts(rows: Iterable[tuple[Any, ...]]) -> Iterator[tuple[tuple[Any, ...], str]]:
    """Each row ``(id, text, extra, path, span_start, span_end, …)`` of a prose unit (SQLite layout,
    schema.py) with what its vector embeds (``search_text``); rows of other units left out."""
    for row in rows:
        _uid, text, extra, source, start, end = row[:6]
        plain = stored_text(text)  # TEXT or UTF-16 BLOB (schema.py); a prose unit stores its whole text
        span = None if start is None else [start, start + len(plain) if end is None else end]
        rest = stored_extra(extra, source, span)  # a sentence's title and paragraph as stored or derived
        if rest.get("kind") in VECTOR_KINDS:
            yield row, search_text({"text": plain, **rest})


def add_vectors(
    db: sqlite3.Connection,
    embedder: Embedder | None = None,
    progress: Callable[[int, int], None] | None = None,
    reuse: Reuse | None = None,
) -> tuple[dict[str, Any], int]:
    """Embed every prose unit of a freshly written ``units`` table, or take its vector from
    ``reuse`` when that holds one of the same text; returns the config entry and how many
    vectors were taken. Rows are written in id order, whichever way each vector came, and at
    most ``PENDING_MAX`` vectors are held between writes."""
    model = embedder or require_embedder()
    units = [(row[0], text) for row, text in prose_texts(db.execute(_SELECT_PROSE.format(join="")))]
    earlier = reuse.sentences({text for _uid, text in units}, model) if reuse is not None and units else {}
    size = model.dim * np.dtype(DTYPE).itemsize
    pending: list[tuple[int, str]] = []
    taken = done = 0

    def flush() -> None:
        nonlocal taken, done
        olds = [earlier[text] for _uid, text in pending if text in earlier]
        stored = {} if reuse is None or not olds else reuse.sentence_vectors(olds)
        kept: dict[str, bytes] = {}
        for _uid, text in pending:
            vec = stored.get(earlier[text]) if text in earlier else None
            if isinstance(vec, bytes) and len(vec) == size:  # a damaged row is embedded again
                kept[text] = vec
        texts = [text for _uid, text in pending if text not in kept]
        made = model.passages(texts).astype(np.float16) if texts else np.zeros((0, model.dim), np.float16)
        rows, at = [], 0
        for uid, text in pending:
            vec = kept.get(text)
            if vec is None:
                vec, at = made[at].tobytes(), at + 1
            rows.append((uid, vec))
        db.executemany("INSERT INTO vectors VALUES (?, ?)", rows)
        taken += len(pending) - len(texts)
        done += len(pending)
        if progress is not None:
            progress(done, len(units))
        pending.clear()

    waiting = 0
    for uid, text in units:
        pending.append((uid, text))
        waiting += text not in earlier
        if waiting == BATCH or len(pending) == PENDING_MAX:
            flush()
            waiting = 0
    flush()
    return {**vector_config(model), "units": len(units)}, taken


class IndexFileReuse:
    """:class:`Reuse` from an SQLite index file (the one a rebuild replaces), read through its own
    read-only connection when asked. A file that is missing, damaged, of another schema version
    or built with another model (or without vectors) gives nothing."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def sentences(self, texts: set[str], embedder: Embedder) -> dict[str, int]:
        def read(db: sqlite3.Connection, meta: dict[str, Any]) -> dict[str, int]:
            if not same_model(meta, embedder, sentences=True):
                return {}
            query = _SELECT_PROSE.format(join=" JOIN vectors v ON v.id = u.id")
            return {text: int(row[0]) for row, text in prose_texts(db.execute(query)) if text in texts}

        return self._read(read)

    def sentence_vectors(self, ids: list[int]) -> dict[int, bytes]:
        def read(db: sqlite3.Connection, _meta: dict[str, Any]) -> dict[int, bytes]:
            found: dict[int, bytes] = {}
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                found.update(db.execute(f"SELECT id, vec FROM vectors WHERE id IN ({marks})", chunk).fetchall())
            return found

        return self._read(read)

    def field_names(self, names: set[str], embedder: Embedder) -> dict[str, bytes]:
        def read(db: sqlite3.Connection, meta: dict[str, Any]) -> dict[str, bytes]:
            if not same_model(meta, embedder, sentences=False):
                return {}
            rows = db.execute("SELECT name, vector FROM field_vectors").fetchall()
            return {name: vec for name, vec in rows if name in names}

        return self._read(read)

    def _read(self, read: Callable[[sqlite3.Connection, dict[str, Any]], dict[Any, Any]]) -> dict[Any, Any]:
        if not self.path.is_file():
            return {}
        try:
            db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
        except sqlite3.Error:
            return {}
        try:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            if json.loads(meta["config"]).get("schema_version") != SCHEMA_VERSION:
                return {}
            return read(db, meta)
        except (sqlite3.Error, KeyError, ValueError, TypeError, AttributeError, UnicodeDecodeError):
            return {}  # not an index this rag_lab reads: embed everything, as a first build does
        finally:
            db.close()
