"""rank's top-k selection must order exactly as a full sort by (score descending, id ascending)."""

from __future__ import annotations

import numpy as np

from rag_lab.retrieval.rank import _top


def test_top_k_equals_the_full_lexsort_with_ties() -> None:
    rng = np.random.default_rng(18)
    for trial in range(2000):
        n, k = int(rng.integers(0, 400 if trial % 3 else 6000)), int(rng.integers(1, 25))  # large: chunk floors
        ids = rng.permutation(rng.choice(10**6, n, replace=False)).astype(np.int64)
        scores = rng.integers(0, 4, n).astype(np.float64) * (0.1 if trial % 2 else 1.0)  # many ties
        assert np.array_equal(_top(ids, scores, k), np.lexsort((ids, -scores))[:k]), trial


def test_lifted_units_merge_as_a_sorted_union_with_their_scores() -> None:
    """rank's merge of the lifted units into BM25's candidates: the ids of ``np.union1d`` and each
    candidate's score at its id, 0.0 for a lifted unit BM25 did not score."""
    from rag_lab.retrieval.rank import _with_lifted

    rng = np.random.default_rng(18)
    for trial in range(3000):
        ids = np.unique(rng.integers(0, 1000, int(rng.integers(0, 300)))).astype(np.int64)
        scores = rng.random(ids.size)
        extra = rng.choice(ids, min(int(rng.integers(0, 3)), ids.size)) if ids.size else np.zeros(0, np.int64)
        lifted = np.unique(np.concatenate([rng.integers(0, 1000, int(rng.integers(1, 12))), extra])).astype(np.int64)
        if trial % 3 == 0 and ids.size:  # every lifted unit among the candidates: nothing inserted
            lifted = np.unique(rng.choice(ids, int(rng.integers(1, 6)))).astype(np.int64)
        merged, merged_scores = _with_lifted(ids, scores, lifted)
        want = np.union1d(ids, lifted)
        want_scores = np.zeros(want.size)
        want_scores[np.searchsorted(want, ids)] = scores
        assert np.array_equal(merged, want) and merged.dtype == np.int64, trial
        assert np.array_equal(merged_scores, want_scores) and merged_scores.dtype == np.float64, trial
