"""Ranking: BM25 over character bigrams, read from the index's postings, then key matches first.

Cost per question is bounded by the rarer terms: terms whose document frequency is at
most ``POOL_MAX_DF`` contribute candidates; more common terms (时间, 开放) only add
their score to candidates already found (binary search in their sorted postings). When
every term is common, the rarest one alone proposes candidates.

Key matches: when the question names (subject, field) slots (the parser of SPEC §3.5),
the units of exactly those keys are the most relevant units there are. Each slot's best
unit (by BM25, then id) is lifted above every other unit, then the slots' other units,
then everything else, so one top k covers every slot before it holds a second source of
any. The lift is a multiple of the question's BM25 ceiling (no unit can score more
without it), so scores stay a plain descending order. Ties are broken by evidence_id
(unit ids are assigned in evidence_id order at build time).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from rag_lab.index.backend import Store
from rag_lab.index.postings import add_common
from rag_lab.index.terms import query_terms
from rag_lab.limits import check_top_k
from rag_lab.records import Candidate
from rag_lab.retrieval.question import ParsedQuestion, parse_text_question

POOL_MAX_DF = 5000
FIRST_OF_SLOT, OTHER_OF_SLOT = 2, 1  # tiers: how many BM25 ceilings a key match is lifted by

Ids = npt.NDArray[np.int64]
Scores = npt.NDArray[np.float64]


def bm25(question: str, index: Store) -> tuple[Ids, Scores, float]:
    """Unit ids (ascending), their BM25 scores, and the ceiling no unit's score can reach.

    Only the pool's terms are weighed whole; a common term is looked up at the candidates
    (``TermPostings.weights_at``), so its tf weights are computed for the hits alone.
    """
    postings = index.term_postings(query_terms(question))
    if not postings:  # the ceiling of no score is 0; the lift must still be positive
        return np.zeros(0, np.int64), np.zeros(0), 1.0
    total = index.unit_count
    k1 = index.config["ranking"]["k1"]

    def idf(df: int) -> float:
        return math.log(1.0 + (total - df + 0.5) / (df + 0.5))

    by_df = sorted(postings.items(), key=lambda item: (item[1].df, item[0]))
    pool = [item for item in by_df if item[1].df <= POOL_MAX_DF] or by_df[:1]
    rest = by_df[len(pool) :]
    wholes = [p.whole() for _, p in pool]
    ids = np.concatenate([w[0] for w in wholes])
    weights: Scores = np.concatenate([w[1] * idf(p.df) for w, (_, p) in zip(wholes, pool, strict=True)])
    if len(pool) == 1:  # one term's ids: ascending and distinct, each score its one weight
        unique, scores = ids, weights  # (= the bincount over them: 0.0 + w is w, weights are > 0)
    else:
        unique, inverse = _unique(ids, False)
        scores = np.bincount(inverse, weights=weights).astype(np.float64, copy=False)
    add_common(scores, unique, [(term, idf(term.df)) for _, term in rest])
    ceiling = (k1 + 1) * sum(idf(p.df) for p in postings.values())
    return unique.astype(np.int64), scores, math.ceil(ceiling + 1.0)


def _unique(ids: npt.NDArray[Any], ascending: bool) -> tuple[npt.NDArray[Any], npt.NDArray[np.intp]]:
    """``np.unique(ids, return_inverse=True)`` by one stable sort (numpy 2.4's hashing unique is
    slower here); ``ascending``: ``ids`` are ascending and distinct already (one term's)."""
    if ascending:
        return ids, np.arange(ids.size)
    order = np.argsort(ids, kind="stable")
    ordered = ids[order]
    first = np.empty(ordered.size, bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    inverse = np.empty(ids.size, np.intp)
    inverse[order] = np.cumsum(first) - 1
    return ordered.compress(first), inverse  # = ordered[first], without the boolean-index path


def _top(ids: Ids, scores: Scores, k: int) -> npt.NDArray[np.intp]:
    """Positions of the ``k`` best units by (score descending, id ascending): the same as
    ``np.lexsort((ids, -scores))[:k]``, sorting only the units that score at least the k-th best.

    The k-th best is found among the units scoring at least the least of k chunk maxima (k
    units reach that floor, so it is at most the k-th best score): a partition of all scores
    took 40–90 µs at 100k documents, most of them tied (a handful of distinct BM25 sums)."""
    n = ids.size
    if n > 4 * k:
        floor = np.maximum.reduceat(scores, np.arange(k) * (n // k)).min()
        near = np.flatnonzero(scores >= floor)
        if near.size > 4 * k:
            held = scores[near]
            kth = np.partition(held, near.size - k)[near.size - k]  # the k-th largest score
            near = near[held >= kth]
        return near[np.lexsort((ids[near], -scores[near]))[:k]]
    return np.lexsort((ids, -scores))[:k]


def _with_lifted(ids: Ids, scores: Scores, lifted: Ids) -> tuple[Ids, Scores]:
    """``np.union1d(ids, lifted)`` and the scores on it (0.0 for a lifted unit BM25 did not
    score): the few lifted units not in ``ids`` are inserted at their places, rather than all
    ids sorted again and looked up (≈ 0.2 ms for 6,000 candidates at 10,000 documents)."""
    at = np.searchsorted(ids, lifted)
    known = at < ids.size
    known[known] = ids[at[known]] == lifted[known]
    fresh = ~known
    if not fresh.any():  # every lifted unit was scored (the usual case): nothing to insert
        return ids.copy(), scores.copy()
    merged: Ids = np.insert(ids, at[fresh], lifted[fresh])
    merged_scores: Scores = np.insert(scores, at[fresh], 0.0)
    return merged, merged_scores


def key_tiers(slots: list[tuple[str, str]], index: Store, ids: Ids, scores: Scores) -> dict[int, int]:
    """unit id → tier for the units of the (subject, field) slots the question names."""
    tiers: dict[int, int] = {}
    reserved = index.reserved_fields
    for subject, field_name in slots:
        if field_name in reserved:
            continue  # never an answer, so never lifted
        key_ids = index.unit_ids_for_key(subject, field_name)
        if not key_ids:
            continue
        wanted = np.asarray(key_ids, np.int64)
        pos = np.minimum(np.searchsorted(ids, wanted), max(ids.size - 1, 0))
        found = ids[pos] == wanted if ids.size else np.zeros(wanted.size, bool)
        own = np.where(found, scores[pos] if ids.size else 0.0, 0.0)
        best = int(wanted[np.lexsort((wanted, -own))[0]])
        for uid in key_ids:
            tiers[uid] = max(tiers.get(uid, 0), FIRST_OF_SLOT if uid == best else OTHER_OF_SLOT)
    return tiers


def retrieve(question: str, index: Store, top_k: int = 5, *, named_keys_first: bool = True) -> list[Candidate]:
    """The top ``top_k`` units for ``question`` as ``{"evidence": unit, "score": float}``.

    ``named_keys_first=False`` ranks by BM25 alone (for comparisons; see docs/retrieval.md).
    """
    return rank(question, index, top_k, named_keys_first=named_keys_first)[0]


def rank(
    question: str,
    index: Store,
    top_k: int = 5,
    *,
    named_keys_first: bool = True,
    parsed: ParsedQuestion | None = None,
) -> tuple[list[Candidate], dict[str, Any]]:
    """``retrieve`` plus what the trace shows of it: the lift and the units it lifted.

    ``parsed``: the question already parsed against ``index`` (saves parsing it again).
    """
    check_top_k(top_k)
    scored = ranking(question, index, named_keys_first=named_keys_first, parsed=parsed)
    return scored.top(top_k), scored.info


@dataclass(frozen=True)
class Ranking:
    """One question's scored units on one open index, lifts included: ``top(k)`` for any k is
    the head of one total order (score descending, then id), so the request's top k and the
    prose audit's top ``AUDIT_POOL`` come from one scoring (retrieval/prose_audit.py)."""

    question: str
    index: Store
    ids: Ids
    scores: Scores
    info: dict[str, Any]

    @property
    def lifted(self) -> bool:
        """Whether key matches were lifted (then the order is not BM25's alone)."""
        return bool(self.info["lifted_units"])

    def top(self, top_k: int) -> list[Candidate]:
        """The ``top_k`` best units as candidates, new dicts each call (``rank``'s)."""
        check_top_k(top_k)
        if self.ids.size == 0:
            return []
        order = _top(self.ids, self.scores, top_k)
        chosen = [int(self.ids[i]) for i in order]
        units = self.index.units_by_ids(chosen)
        return [
            {"evidence": units[uid], "score": round(float(self.scores[i]), 6)}
            for uid, i in zip(chosen, order.tolist(), strict=True)
        ]


def ranking(
    question: str, index: Store, *, named_keys_first: bool = True, parsed: ParsedQuestion | None = None
) -> Ranking:
    """The scoring behind ``rank`` (BM25, then the key lift), kept to take any top k from."""
    ids, scores, ceiling = bm25(question, index)
    tiers = {}
    if named_keys_first:
        slots = (parsed or parse_text_question(question, index)).slots
        tiers = key_tiers(slots, index, ids, scores)
    if tiers:
        lifted = np.asarray(sorted(tiers), np.int64)
        ids, scores = _with_lifted(ids, scores, lifted)
        scores[np.searchsorted(ids, lifted)] += ceiling * np.asarray([tiers[int(i)] for i in lifted], np.float64)
    info: dict[str, Any] = {"named_keys_first": named_keys_first, "lift": ceiling, "lifted_units": len(tiers)}
    return Ranking(question, index, ids, scores, info)
