"""Field-name vectors for the neural step of field matching, written at build time.

An index built with vectors (``rag-lab index --vectors``, which needs the ``[neural]`` extra)
embeds every distinct field name of the corpus and every field name of the alias tables
(the decoys of rag_lab/retrieval/fields.py) once as a passage and stores them in the
``field_vectors`` table; the index meta records the model (``field_vectors`` =
``rag_lab.neural.MODEL_NAME``) so vectors of another model are never mixed with this one's
question vectors. Built without vectors nothing is stored and the meta value is ``null``:
field matching then stops before its embedding step. Opt-in because embedding every name
costs far more than the rest of a build (7× → over 1,000× the read+hash floor on a small corpus);
a rebuild takes the vectors of the names its previous index embedded with the same model from
there (index/vectors.py, ``Reuse``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from rag_lab import neural

if TYPE_CHECKING:
    from rag_lab.index.vectors import Reuse

BATCH = 64
CACHE_LIMIT = 200_000  # names whose vectors a process keeps between builds (≈ 1.5 KiB each)
_cache: dict[tuple[str, str], bytes] = {}


def write_field_vectors(
    db: sqlite3.Connection, embedder: neural.Embedder, names: Iterable[str], reuse: Reuse | None = None
) -> tuple[str, int]:
    """Embed and store ``names``; returns the model name and how many vectors were taken from
    ``reuse`` (the index a rebuild replaces, index/vectors.py) instead of embedded.

    A name's vector depends only on the name and the model, so a process that builds many
    indexes (a server rebuilding, the test suite) embeds each name once, and a rebuild takes
    the names its previous index embedded with the same model from there.
    """
    wanted = sorted(set(names))
    size = embedder.dim * 4
    known = reuse.field_names(set(wanted), embedder) if reuse is not None and wanted else {}
    known = {n: v for n, v in known.items() if isinstance(v, bytes) and len(v) == size}
    missing = [n for n in wanted if n not in known and (embedder.name, n) not in _cache]
    for start in range(0, len(missing), BATCH):
        chunk = missing[start : start + BATCH]
        if len(_cache) + len(chunk) > CACHE_LIMIT:
            _cache.clear()
        for n, v in zip(chunk, embedder.passages(chunk), strict=True):
            _cache[(embedder.name, n)] = np.asarray(v, "<f4").tobytes()
    rows = [(n, known[n]) for n in wanted if n in known]
    rows += [(n, _cache[(embedder.name, n)]) for n in wanted if n not in known and (embedder.name, n) in _cache]
    if len(rows) != len(wanted):  # the cache was cleared mid-way: embed the rest directly
        done = {n for n, _ in rows}
        rest = [n for n in wanted if n not in done]
        rows += [(n, np.asarray(v, "<f4").tobytes()) for n, v in zip(rest, embedder.passages(rest), strict=True)]
    db.executemany("INSERT INTO field_vectors VALUES (?, ?)", sorted(rows))
    return embedder.name, len(known)


def vector_from_blob(blob: bytes) -> neural.Vectors:
    return np.frombuffer(blob, "<f4").astype(np.float32)


__all__ = ["BATCH", "vector_from_blob", "write_field_vectors"]
