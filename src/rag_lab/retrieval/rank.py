"""Ranking: BM25 over character bigrams, read from the index's postings.

Cost per question is bounded by the rarer terms: terms whose document frequency is at
most ``POOL_MAX_DF`` contribute candidates; more common terms (时间, 开放) only add
their score to candidates already found (binary search in their sorted postings). When
every term is common, the rarest one alone proposes candidates. Ties are broken by
evidence_id (unit ids are assigned in evidence_id order at build time).
"""

from __future__ import annotations

import math

import numpy as np

from rag_lab.errors import ConfigError
from rag_lab.index.store import Index
from rag_lab.index.terms import query_terms
from rag_lab.records import Candidate

POOL_MAX_DF = 5000


def check_top_k(top_k: int) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ConfigError(f"top_k must be a whole number ≥ 1, got {top_k!r}")
    return top_k


def retrieve(question: str, index: Index, top_k: int = 5) -> list[Candidate]:
    """The top ``top_k`` units for ``question`` as ``{"evidence": unit, "score": float}``."""
    check_top_k(top_k)
    postings = index.postings(query_terms(question))
    if not postings:
        return []
    total = index.unit_count
    by_df = sorted(postings.items(), key=lambda item: (item[1][0], item[0]))
    pool = [item for item in by_df if item[1][0] <= POOL_MAX_DF] or by_df[:1]
    rest = by_df[len(pool) :]

    def idf(df: int) -> float:
        return math.log(1.0 + (total - df + 0.5) / (df + 0.5))

    ids = np.concatenate([p[1] for _, p in pool])
    weights = np.concatenate([p[2] * idf(p[0]) for _, p in pool])
    unique, inverse = np.unique(ids, return_inverse=True)
    scores = np.bincount(inverse, weights=weights)
    for _, (df, term_ids, term_weights) in rest:
        pos = np.searchsorted(term_ids, unique)
        pos_in = np.minimum(pos, term_ids.size - 1)
        hit = term_ids[pos_in] == unique
        scores[hit] += term_weights[pos_in[hit]] * idf(df)
    order = np.lexsort((unique, -scores))[:top_k]
    chosen = [int(unique[i]) for i in order]
    units = index.units_by_ids(chosen)
    return [
        {"evidence": units[uid], "score": round(float(scores[i]), 6)}
        for uid, i in zip(chosen, order.tolist(), strict=True)
    ]
