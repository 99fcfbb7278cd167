"""Fusion of lexical and dense rankings by reciprocal rank (``retrieval="fused"``).

``score(u) = Σ_r 1 / (RRF_K + rank_r(u))`` over the lexical ranking (BM25 with the named-key
lift, rank.py) and the dense ranking (dense.py), each cut at ``POOL`` units; a unit missing
from one ranking gets nothing from it. Ties are broken by unit id. Reciprocal rank needs no
calibration between BM25 and cosine scores, which are not comparable.

A question that names (subject, field) slots keeps the lexical order unchanged: its answer is
the key's value, and the lift already puts every named key first.
"""

from __future__ import annotations

from typing import Any

from rag_lab.index.backend import Store
from rag_lab.limits import check_top_k
from rag_lab.neural import Embedder
from rag_lab.records import Candidate
from rag_lab.retrieval.dense import dense_order
from rag_lab.retrieval.question import ParsedQuestion, parse_text_question
from rag_lab.retrieval.rank import rank

RRF_K = 60
POOL = 50


def reciprocal_rank(rankings: list[list[int]], k: int = RRF_K) -> list[tuple[int, float]]:
    """``(unit id, fused score)`` best first, ties by id."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for position, uid in enumerate(ranking, 1):
            scores[uid] = scores.get(uid, 0.0) + 1.0 / (k + position)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def fused_rank(
    question: str,
    index: Store,
    top_k: int = 5,
    *,
    parsed: ParsedQuestion | None = None,
    embedder: Embedder | None = None,
) -> tuple[list[Candidate], dict[str, Any]]:
    """Like ``rank.rank``; the trace info says which rankings were fused."""
    check_top_k(top_k)
    parsed = parsed or parse_text_question(question, index)
    lexical, info = rank(question, index, max(top_k, POOL), parsed=parsed)
    if parsed.slots:
        return lexical[:top_k], {**info, "fusion": "lexical only (the question names a key)"}
    by_id = {c["evidence"]["evidence_id"]: c["evidence"] for c in lexical}
    lexical_ids = index.ids_of(list(by_id))
    dense_ids = dense_order(question, index, POOL, embedder)
    fused = reciprocal_rank([lexical_ids, dense_ids])[:top_k]
    missing = [uid for uid, _ in fused if uid not in lexical_ids]
    units = index.units_by_ids(missing)
    id_to_unit = {**{uid: by_id[eid] for uid, eid in zip(lexical_ids, by_id, strict=True)}, **units}
    candidates: list[Candidate] = [
        {"evidence": id_to_unit[uid], "score": round(score, 6)} for uid, score in fused
    ]
    return candidates, {**info, "fusion": f"reciprocal rank (k={RRF_K}) of lexical and dense top {POOL}"}
