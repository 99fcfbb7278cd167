"""Field-name vectors for the neural step of field matching, written at build time.

With the ``[neural]`` extra installed, every distinct field name of the corpus and every
field name of the alias tables (the decoys of rag_lab/retrieval/fields.py) is embedded
once as a passage and stored in the ``field_vectors`` table; the index meta records the
model (``field_vectors`` = ``rag_lab.neural.MODEL_NAME``) so vectors of another model are
never mixed with this one's question vectors. Without the extra nothing is stored and the
meta value is ``null``: field matching then stops before its embedding step.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

import numpy as np

from rag_lab import neural

BATCH = 64


def write_field_vectors(db: sqlite3.Connection, names: Iterable[str]) -> str | None:
    """Embed and store ``names``; returns the model name, or None without the extra."""
    embedder = neural.load_embedder()
    if embedder is None:
        return None
    wanted = sorted(set(names))
    for start in range(0, len(wanted), BATCH):
        chunk = wanted[start : start + BATCH]
        vectors = embedder.passages(chunk)
        db.executemany(
            "INSERT INTO field_vectors VALUES (?, ?)",
            [(n, np.asarray(v, "<f4").tobytes()) for n, v in zip(chunk, vectors, strict=True)],
        )
    return embedder.name


def vector_from_blob(blob: bytes) -> neural.Vectors:
    return np.frombuffer(blob, "<f4").astype(np.float32)


__all__ = ["BATCH", "vector_from_blob", "write_field_vectors"]
