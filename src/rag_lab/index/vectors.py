"""Sentence vectors in the index (optional): ``build_index(root, vectors=True)`` / ``rag-lab index --vectors``.

Only prose units (``sentence``, ``table_row``) get a vector: the embedding of what lexical
ranking sees of them (``terms.search_text``: title, innermost heading, text), from the shared
offline model (``rag_lab.neural``, the ``[neural]`` extra). Each vector is stored as one
**float16** blob of ``DIM`` values (768 bytes for 384 dimensions) in the ``vectors`` table,
keyed by unit id; the index config records the model name, dimension and dtype, so a query
is never compared with vectors of another model. Lexical retrieval never needs them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import numpy as np

from rag_lab.index.store import stored_extra, stored_text
from rag_lab.index.terms import search_text
from rag_lab.neural import Embedder, require_embedder

VECTOR_KINDS = ("sentence", "table_row")
DTYPE = "float16"
BATCH = 64


def vector_config(embedder: Embedder) -> dict[str, Any]:
    return {"model": embedder.name, "dim": embedder.dim, "dtype": DTYPE, "kinds": list(VECTOR_KINDS)}


def add_vectors(
    db: sqlite3.Connection,
    embedder: Embedder | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Embed every prose unit of a freshly written ``units`` table; returns the config entry."""
    model = embedder or require_embedder()
    rows = []
    for uid, text, extra, source, start, end in db.execute(
        "SELECT u.id, u.text, x.extra, f.path, u.span_start, u.span_end FROM units u "
        "JOIN extras x ON x.id = u.extra JOIN files f ON f.id = u.file ORDER BY u.id"
    ):
        plain = stored_text(text)  # TEXT or UTF-16 BLOB (schema.py); a prose unit stores its whole text
        span = None if start is None else [start, start + len(plain) if end is None else end]
        rest = stored_extra(extra, source, span)  # a sentence's title and paragraph as stored or derived
        if rest.get("kind") in VECTOR_KINDS:
            rows.append((uid, {"text": plain, **rest}))
    for start in range(0, len(rows), BATCH):
        chunk = rows[start : start + BATCH]
        texts = [search_text(unit) for _id, unit in chunk]
        vectors = model.passages(texts).astype(np.float16)
        db.executemany(
            "INSERT INTO vectors VALUES (?, ?)",
            [(row[0], vec.tobytes()) for row, vec in zip(chunk, vectors, strict=True)],
        )
        if progress is not None:
            progress(start + len(chunk), len(rows))
    return {**vector_config(model), "units": len(rows)}
