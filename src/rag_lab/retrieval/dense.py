"""Dense retrieval: the seed's neural branch over sentence vectors stored in the index.

The question is embedded with the same offline model that embedded the index's prose units
(``rag_lab.neural``; the index config names it, and a different model is refused rather than
compared). Scores are cosine similarities (float16 vectors, float32 arithmetic); they rank,
they are never a probability of being right. Ties are broken by unit id (= evidence_id order).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from rag_lab.errors import ConfigError
from rag_lab.index.backend import Store
from rag_lab.neural import Embedder, require_embedder
from rag_lab.records import Candidate


def check_vectors(index: Store, embedder: Embedder) -> None:
    info = index.config.get("vectors")
    if not info:
        raise ConfigError(
            f"index {str(index.path)!r} has no sentence vectors; rebuild it with `rag-lab index ROOT --vectors`"
        )
    if info.get("model") != embedder.name:
        raise ConfigError(
            f"index vectors come from {info.get('model')!r}, this rag_lab embeds with {embedder.name!r}; "
            "rebuild with `rag-lab index ROOT --vectors`"
        )


def dense_scores(
    question: str, index: Store, embedder: Embedder | None = None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Unit ids (ascending) of every visible prose unit with a vector, and its similarity."""
    model = embedder or require_embedder()
    check_vectors(index, model)
    ids, matrix = index.vectors()
    if ids.size == 0:
        return ids, np.zeros(0, np.float32)
    query = model.queries([question])[0].astype(np.float32)
    return ids, matrix.astype(np.float32) @ query


def dense_order(question: str, index: Store, limit: int, embedder: Embedder | None = None) -> list[int]:
    """The ``limit`` most similar unit ids, best first, ties by id."""
    ids, scores = dense_scores(question, index, embedder)
    order = np.lexsort((ids, -scores))[:limit]
    return [int(ids[i]) for i in order]


def dense_retrieve(
    question: str, index: Store, top_k: int = 5, embedder: Embedder | None = None
) -> list[Candidate]:
    """The top ``top_k`` prose units by similarity, as ``{"evidence": unit, "score": float}``."""
    ids, scores = dense_scores(question, index, embedder)
    order = np.lexsort((ids, -scores))[:top_k]
    units = index.units_by_ids([int(ids[i]) for i in order])
    return [{"evidence": units[int(ids[i])], "score": round(float(scores[i]), 6)} for i in order]
