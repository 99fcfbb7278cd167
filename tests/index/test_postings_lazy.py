"""Postings decoded lazily (index/postings.py) give exactly the floats of the whole computation.

Both stores: a term's ids and tf weights equal BM25's definition computed from the units
themselves; ``weights_at`` on any set of units equals looking them up in the whole list; and
``bm25`` (rare terms propose, common terms only looked up at the candidates) equals the
straightforward ranking over whole postings, bit for bit.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.data.access import Principal
from rag_lab.index import build_index
from rag_lab.index.backend import Store, open_store, resolve_location
from rag_lab.index.postings import BITS_FROM_DF, BITS_PAYBACK, add_common
from rag_lab.index.terms import query_terms, search_text, unit_terms
from rag_lab.retrieval import rank as rank_module
from rag_lab.retrieval.rank import bm25

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

ALPHABET = "甲乙丙丁戊己庚辛"
WHO = {"owner": None, "staff": Principal("bob", frozenset({"staff"})), "guest": Principal("eve", frozenset())}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, store: str) -> Path:
    """Short units over 8 characters (every bigram is shared, many repeat inside a unit), a
    third of the files visible to staff only (so a staff caller's terms have two rows)."""
    pick = random.Random(18)
    root = tmp_path_factory.mktemp(f"lazy_{store}")
    (root / "documents").mkdir()
    for n in range(40):
        lines = ["权限：staff"] if n % 3 == 0 else []
        lines.append(f"主题：{''.join(pick.choices(ALPHABET, k=3))}{n}")
        for f in range(pick.randint(1, 4)):
            lines.append(f"字段{f}：{''.join(pick.choices(ALPHABET[: pick.randint(2, 8)], k=pick.randint(1, 12)))}")
        (root / "documents" / f"d{n:02d}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    build_index(root)
    return root


@pytest.fixture(params=sorted(WHO))
def opened(request: pytest.FixtureRequest, corpus: Path) -> Iterator[Store]:
    with open_store(resolve_location(corpus, None), WHO[request.param]) as index:
        yield index


def by_definition(index: Store) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """term → (visible unit ids, BM25 tf weights), from the visible units' own text."""
    units = index.units_by_ids(range(1, 10_000))
    ids = sorted(units)
    codes, counts = unit_terms([search_text(units[i]) for i in ids])  # type: ignore[arg-type]
    k1, b = index.config["ranking"]["k1"], index.config["ranking"]["b"]
    avg_len = max(index.total_len / index.unit_count, 1.0)
    found: dict[int, list[tuple[int, float]]] = {}
    at = 0
    for uid, count in zip(ids, counts.tolist(), strict=True):
        terms = Counter(codes[at : at + count].tolist())
        at += count
        for term, tf in terms.items():
            weight = tf * (k1 + 1) / (tf + k1 * (1 - b + b * float(count) / avg_len))
            found.setdefault(term, []).append((uid, weight))
    return {t: (np.asarray([u for u, _ in p]), np.asarray([w for _, w in p])) for t, p in found.items()}


def test_whole_postings_are_bm25_by_definition(opened: Store) -> None:
    expected = by_definition(opened)
    assert len(expected) > 40
    got = opened.term_postings(sorted(expected))
    assert sorted(got) == sorted(expected)
    many_tf = 0
    for term, (ids, weights) in expected.items():
        posting = got[term]
        assert posting.df == ids.size
        whole_ids, whole_weights = posting.whole()
        assert whole_ids.dtype == np.int32 and whole_ids.tolist() == ids.tolist()
        assert whole_weights.tobytes() == weights.tobytes()  # the same operations, in the same order
        many_tf += int((weights > weights.min()).any())
        assert opened.postings([term])[term][0] == ids.size  # the tuple form says the same
    assert many_tf > 10  # the corpus has units with tf > 1 and different lengths


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_weights_at_equal_the_whole_list(corpus: Path, data: st.DataObject) -> None:
    who = data.draw(st.sampled_from(sorted(WHO)))
    text = data.draw(st.text(alphabet=ALPHABET, min_size=2, max_size=6))
    units = np.asarray(sorted(data.draw(st.sets(st.integers(-3, 200), max_size=80))), np.int64)
    location = resolve_location(corpus, None)
    with open_store(location, WHO[who]) as fresh, open_store(location, WHO[who]) as other:
        terms = query_terms(text)
        lazy = fresh.term_postings(terms)  # nothing decoded yet: weights_at decodes its hits only
        whole = other.term_postings(terms)
        for term, posting in lazy.items():
            hit, weights = posting.weights_at(units)
            ids, all_weights = whole[term].whole()
            assert hit.tolist() == np.isin(units, ids).tolist()
            assert weights.tobytes() == all_weights[np.searchsorted(ids, units[hit])].tobytes()
            for _ in range(posting.universe):  # until the searches have paid for the term's bit sets
                bits_hit, by_bits = posting.weights_at(units)
                assert bits_hit.tolist() == hit.tolist() and by_bits.tobytes() == weights.tobytes()
                if posting._bits is not None:
                    break
            paid = BITS_PAYBACK * posting._searched >= posting.universe // 8 + posting.df
            assert (posting._bits is not None) == (paid and posting.df * BITS_FROM_DF >= posting.universe)
            bits_hit, by_bits = posting.weights_at(units)  # by the bit set, when made
            assert bits_hit.tolist() == hit.tolist() and by_bits.tobytes() == weights.tobytes()
            again_hit, again = whole[term].weights_at(units)  # weighed whole already: looked up
            assert again_hit.tolist() == hit.tolist() and again.tobytes() == weights.tobytes()


def straightforward_bm25(question: str, index: Store) -> tuple[np.ndarray, np.ndarray, float]:
    """rank.bm25 before the lazy postings: every term decoded and weighed whole."""
    postings = index.postings(query_terms(question))
    if not postings:
        return np.zeros(0, np.int64), np.zeros(0), 1.0
    total, k1 = index.unit_count, index.config["ranking"]["k1"]

    def idf(df: int) -> float:
        return math.log(1.0 + (total - df + 0.5) / (df + 0.5))

    by_df = sorted(postings.items(), key=lambda item: (item[1][0], item[0]))
    pool = [item for item in by_df if item[1][0] <= rank_module.POOL_MAX_DF] or by_df[:1]
    ids = np.concatenate([p[1] for _, p in pool])
    weights = np.concatenate([p[2] * idf(p[0]) for _, p in pool])
    unique, inverse = np.unique(ids, return_inverse=True)
    scores = np.bincount(inverse, weights=weights).astype(np.float64)
    for _, (df, term_ids, term_weights) in by_df[len(pool) :]:
        pos = np.minimum(np.searchsorted(term_ids, unique), term_ids.size - 1)
        hit = term_ids[pos] == unique
        scores[hit] += term_weights[pos[hit]] * idf(df)
    ceiling = (k1 + 1) * sum(idf(df) for df, _, _ in postings.values())
    return unique.astype(np.int64), scores, math.ceil(ceiling + 1.0)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_bm25_equals_the_straightforward_ranking(corpus: Path, data: st.DataObject) -> None:
    who = data.draw(st.sampled_from(sorted(WHO)))
    question = data.draw(st.text(alphabet=ALPHABET + "的是什么？0123", min_size=1, max_size=12))
    pool_max = data.draw(st.sampled_from([0, 3, 8, rank_module.POOL_MAX_DF]))  # small: common terms exist
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rank_module, "POOL_MAX_DF", pool_max)
        location = resolve_location(corpus, None)
        with open_store(location, WHO[who]) as fresh, open_store(location, WHO[who]) as plain:
            ids, scores, ceiling = bm25(question, fresh)
            want_ids, want_scores, want_ceiling = straightforward_bm25(question, plain)
            assert ids.tolist() == want_ids.tolist() and scores.tobytes() == want_scores.tobytes()
            assert ceiling == want_ceiling
            for _ in range(2):  # from the store's cache (and by bit sets once searches paid for them)
                again = bm25(question, fresh)
                assert again[0].tolist() == ids.tolist() and again[1].tobytes() == scores.tobytes()


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_add_common_equals_term_by_term(corpus: Path, data: st.DataObject) -> None:
    """All common terms scored in one pass (index/postings.py ``add_common``, with the
    candidates' base weights shared and bit sets for tf > 1) = ``scores[hit] += w * idf`` term
    by term, bit for bit, at every lookup of each term, before and after its bit sets are made."""
    who = data.draw(st.sampled_from(sorted(WHO)))
    text = data.draw(st.text(alphabet=ALPHABET, min_size=2, max_size=8))
    low, high = data.draw(st.sampled_from([(-3, 200), (1, 200), (1, 60)]))  # some outside the ids: the slow path
    units = np.asarray(sorted(data.draw(st.sets(st.integers(low, high), max_size=80))), np.int64)
    start = np.asarray(data.draw(st.lists(st.floats(0, 50), min_size=units.size, max_size=units.size)))
    location = resolve_location(corpus, None)
    with open_store(location, WHO[who]) as batched, open_store(location, WHO[who]) as plain:
        terms = query_terms(text)
        for _ in range(8):  # enough lookups of many candidates to pay for the common terms' bit sets
            got = start.copy()
            found = batched.term_postings(terms)
            add_common(got, units, [(found[t], 0.5 + t % 7) for t in sorted(found)])
            want = start.copy()
            for term, posting in sorted(plain.term_postings(terms).items()):
                hit, weights = posting.weights_at(units)
                want[hit] += weights * (0.5 + term % 7)
            assert got.tobytes() == want.tobytes()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 60), max_size=90) | st.lists(st.integers(0, 100_000), max_size=30))
def test_unique_equals_numpy(values: list[int]) -> None:  # dense lists take the counting path
    ids = np.asarray(values, np.int32)
    unique, inverse = rank_module._unique(ids, False)
    want, want_inverse = np.unique(ids, return_inverse=True)
    assert unique.tolist() == want.tolist() and inverse.tolist() == want_inverse.tolist()
    distinct = np.asarray(sorted(set(values)), np.int32)
    same, identity = rank_module._unique(distinct, True)
    assert same.tolist() == distinct.tolist() and identity.tolist() == list(range(distinct.size))
