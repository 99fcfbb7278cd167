"""The postings cache (index/postings.py ``PostingsCache``) is bounded by what its terms hold:
a term is counted at its store's estimate when put, and by the bytes of its whole weights and
bit sets when they are made (``TermPostings._grow``), not by what it might hold one day. Caches
that share a ``PostingsBudget`` (the server's views) are bounded together, least recently used
term of any of them first out, and a closed store gives its room back."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.index import build_index
from rag_lab.index.backend import open_store, resolve_location
from rag_lab.index.postings import PostingsBudget, PostingsCache, TermPostings
from rag_lab.index.terms import query_terms


def term(df: int, universe: int = 4096, seed: int = 0, stored: int = 0) -> TermPostings:
    """A term charged 64 + 4 bytes a posting, plus ``stored`` bytes let go once it is decoded."""
    ids = np.sort(np.random.default_rng(seed).choice(universe, df, replace=False)).astype(np.int32)
    decode = lambda: (ids, lambda pos, units: np.ones(len(units)))  # noqa: E731
    return TermPostings(df, 64 + 4 * df + stored, decode, universe, stored=stored)


def expected(posting: TermPostings, stored: int) -> int:
    """What ``posting`` holds: its charge when put, less its stored bytes once decoded, plus what it made."""
    return 64 + 4 * posting.df + (stored if posting._decoded is None else 0) + made(posting)


def made(posting: TermPostings) -> int:
    """The bytes of the arrays a term made after it was put: its whole weights and bit sets."""
    whole = 0 if posting._whole is None else posting._whole[1].nbytes
    return whole + (0 if posting._bits is None else posting._bits.nbytes)


def check(cache: PostingsCache, evicted: list[TermPostings]) -> None:
    held = list(cache.held().values())
    assert cache.cached_bytes == sum(p.nbytes for p in held) <= cache.limit
    assert all(p._cache is cache for p in held) and all(p._cache is None for p in evicted)


def test_growth_is_counted_and_lets_the_least_recent_term_go() -> None:
    cache = PostingsCache(limit=10_000)
    a, b = term(900, seed=1), term(900, seed=2)
    cache.put({1: a, 2: b})
    assert cache.cached_bytes == 2 * (64 + 4 * 900)
    found, missing = cache.get([1, 3])  # 1 is now the most recent
    assert found == {1: a} and missing == [3]
    b.whole()  # 900 float64 weights: 7,264 + 7,264 > 10,000, so the least recent (b itself) goes
    assert b.nbytes == 64 + 4 * 900 + 8 * 900 and b._cache is None
    check(cache, [b])
    assert cache.cached_bytes == a.nbytes == 64 + 4 * 900
    a.weights_at(np.arange(0, 4096, 2))  # 2,048 candidates searched: 4 × 2,048 ≥ 4,096 / 8 + 900
    assert a._bits is not None and a.nbytes == 64 + 4 * 900 + a._bits.nbytes
    check(cache, [b])
    before = cache.cached_bytes
    b.weights_at(np.arange(0, 4096, 2))  # a term let go grows on its own, the cache does not count it
    assert b._bits is not None and cache.cached_bytes == before


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(st.tuples(st.sampled_from(["put", "get", "whole", "look"]), st.integers(0, 7)), max_size=40),
       limit=st.integers(2_000, 40_000))
def test_the_count_is_what_the_held_terms_hold(ops: list[tuple[str, int]], limit: int) -> None:
    cache = PostingsCache(limit)
    made_terms: dict[int, TermPostings] = {}
    for op, k in ops:
        if op == "put":
            made_terms[k] = made_terms.get(k) or term(40 + 150 * k, seed=k, stored=k * 100)
            cache.put({k: made_terms[k]})
        elif op == "get":
            cache.get([k])
        elif k in made_terms and op == "whole":
            made_terms[k].whole()
        elif k in made_terms:
            made_terms[k].weights_at(np.arange(k, 4096, 3))
        check(cache, [p for t, p in made_terms.items() if cache.held().get(t) is not p])  # let go or never taken
        assert all(p.nbytes == expected(p, k * 100) for k, p in made_terms.items())


@pytest.mark.usefixtures("store")  # SQLite and PostgreSQL (tests/conftest.py)
def test_a_stores_terms_are_counted_as_they_grow(tmp_path: Path) -> None:
    """Rare terms weighed whole by BM25 and common terms given bit sets by repeated lookups:
    each term's count is its estimate when put, less the stored bytes its decoding let go, plus
    exactly what it made, and the cache's total is the sum over the terms it holds."""
    (tmp_path / "documents").mkdir()
    for n in range(60):
        text = "".join("甲乙丙丁戊己庚辛"[(n * 7 + i) % 8] for i in range(4 + n % 5))
        (tmp_path / "documents" / f"d{n:02d}.md").write_text(f"主题：题{n}\n内容：{text}\n", encoding="utf-8")
    build_index(tmp_path)
    with open_store(resolve_location(tmp_path, None), None) as index:
        postings = index.term_postings(query_terms("甲乙丙丁戊己庚辛内容"))
        put = {t: p.nbytes for t, p in postings.items()}
        stored = {t: p._stored for t, p in postings.items()}
        assert all(0 < stored[t] < put[t] and p._decoded is None for t, p in postings.items())
        for t, p in postings.items():
            if t % 2:
                p.whole()
            for _ in range(4):
                p.weights_at(np.arange(1, 200))
        assert any(p._bits is not None for p in postings.values())
        assert any(p._whole is not None for p in postings.values())
        assert all(p._decode is None and p._stored == 0 for p in postings.values())  # the stored bytes let go
        assert all(p.nbytes == put[t] - stored[t] + made(p) for t, p in postings.items())
        cache = index._postings_cache
        assert cache.cached_bytes == sum(p.nbytes for p in cache.held().values())
        assert set(cache.held()) >= set(postings)


def test_caches_sharing_a_budget_are_bounded_together() -> None:
    budget = PostingsBudget(limit=3 * (64 + 4 * 900))
    first, second = PostingsCache(budget), PostingsCache(budget)
    a, b, c, d = (term(900, seed=k) for k in range(4))
    first.put({1: a, 2: b})
    second.put({1: c})  # the same term number in another cache is another term
    assert budget.cached_bytes == first.cached_bytes + second.cached_bytes == 3 * a.nbytes
    first.get([1])  # a is now more recent than b and c
    second.put({2: d})  # one over: b, the least recently used of either cache, goes
    assert b._cache is None and set(first.held()) == {1} and set(second.held()) == {1, 2}
    check(first, [b])
    check(second, [])
    assert budget.cached_bytes == first.cached_bytes + second.cached_bytes <= budget.limit
    second.clear()  # its store closed: the room is given back at once
    assert second.held() == {} and second.cached_bytes == 0 and c._cache is None and d._cache is None
    assert budget.cached_bytes == first.cached_bytes == a.nbytes and list(budget.order) == [(first._number, 1)]
    c.whole()  # a term let go grows on its own
    assert budget.cached_bytes == a.nbytes
    with pytest.raises(ValueError, match="number of bytes"):
        PostingsBudget(-1)


@settings(max_examples=60, deadline=None)
@given(
    ops=st.lists(
        st.tuples(st.sampled_from(["put", "get", "whole", "look", "clear"]), st.integers(0, 2), st.integers(0, 5)),
        max_size=50,
    ),
    limit=st.integers(2_000, 30_000),
)
def test_shared_budgets_count_what_every_cache_holds(ops: list[tuple[str, int, int]], limit: int) -> None:
    budget = PostingsBudget(limit)
    caches = [PostingsCache(budget) for _ in range(3)]
    made_terms: dict[tuple[int, int], TermPostings] = {}
    for op, c, k in ops:
        cache = caches[c]
        if op == "put":
            made_terms[c, k] = made_terms.get((c, k)) or term(40 + 150 * k, seed=10 * c + k, stored=50 * k)
            cache.put({k: made_terms[c, k]})
        elif op == "get":
            cache.get([k])
        elif op == "clear":
            cache.clear()
        elif (c, k) in made_terms and op == "whole":
            made_terms[c, k].whole()
        elif (c, k) in made_terms:
            made_terms[c, k].weights_at(np.arange(k, 4096, 3))
        for n, each in enumerate(caches):
            check(each, [p for (m, t), p in made_terms.items() if m == n and each.held().get(t) is not p])
        assert budget.cached_bytes == sum(each.cached_bytes for each in caches) <= limit
        assert len(budget.order) == sum(len(each.held()) for each in caches)
        assert all(p.nbytes == expected(p, 50 * k) for (_, k), p in made_terms.items())


@pytest.mark.usefixtures("store")  # SQLite and PostgreSQL (tests/conftest.py)
def test_stores_share_a_budget_and_give_it_back_when_closed(tmp_path: Path) -> None:
    (tmp_path / "documents").mkdir()
    for n in range(40):
        text = "".join("甲乙丙丁戊己庚辛"[(n * 3 + i) % 8] for i in range(5 + n % 4))
        (tmp_path / "documents" / f"d{n:02d}.md").write_text(f"主题：题{n}\n内容：{text}\n", encoding="utf-8")
    build_index(tmp_path)
    budget = PostingsBudget(1 << 30)
    location = resolve_location(tmp_path, None)
    terms = query_terms("甲乙丙丁戊己庚辛内容")
    first = open_store(location, None, postings=budget)
    with open_store(location, None, postings=budget) as second:
        for index in (first, second):
            index.term_postings(terms)
        held = first._postings_cache.cached_bytes
        assert held > 0 and budget.cached_bytes == held + second._postings_cache.cached_bytes
        first.close()
        assert budget.cached_bytes == second._postings_cache.cached_bytes == held  # the same terms
    assert budget.cached_bytes == 0 and not budget.order


def test_threads_decoding_one_term_let_its_stored_bytes_go_once() -> None:
    cache = PostingsCache(limit=1 << 20)
    posting = term(900, stored=1_000)
    cache.put({1: posting})
    start = threading.Barrier(8)

    def decode() -> None:
        start.wait()
        posting.ids()

    threads = [threading.Thread(target=decode) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert posting.nbytes == cache.cached_bytes == 64 + 4 * 900 and posting._decode is None
