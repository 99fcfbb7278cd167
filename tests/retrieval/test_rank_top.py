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
