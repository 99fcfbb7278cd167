"""Ordering strategies on a frozen candidate set of real units (tests/context/frozen/order_candidates.json)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from rag_lab.data import extract_documents
from rag_lab.errors import ConfigError
from rag_lab.index import build_index
from rag_lab.retrieval import query_once
from rag_lab.retrieval.order import STRATEGIES, order_context
from rag_lab.retrieval.question import parse_text_question
from rag_lab.retrieval.sources import CorpusSource

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

FROZEN = json.loads((Path(__file__).parent / "frozen" / "order_candidates.json").read_text(encoding="utf-8"))
# The expected orders as 1-based ranks, written out by hand (the JSON holds the same as evidence ids).
RANKS = {"relevance": [1, 2, 3, 4, 5, 6], "by_slot": [2, 4, 6, 1, 3, 5], "ends": [1, 3, 5, 6, 4, 2]}


@pytest.fixture
def frozen_root(make_corpus) -> Path:
    return make_corpus(FROZEN["files"])


def test_frozen_candidates_are_real_units_of_the_frozen_corpus(frozen_root: Path) -> None:
    units = {u["evidence_id"]: u for u in extract_documents(frozen_root)}
    for candidate in FROZEN["candidates"]:
        assert units[candidate["evidence"]["evidence_id"]] == candidate["evidence"]
    slots = parse_text_question(FROZEN["question"], CorpusSource(frozen_root)).slots
    assert [list(s) for s in slots] == FROZEN["slots"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_each_strategy_gives_the_frozen_order(strategy: str) -> None:
    candidates = FROZEN["candidates"]
    slots = [tuple(s) for s in FROZEN["slots"]]
    ordered = [c["evidence"]["evidence_id"] for c in order_context(candidates, strategy, slots)]
    assert ordered == FROZEN["expected_order"][strategy]
    ids = [c["evidence"]["evidence_id"] for c in candidates]
    assert [ids.index(i) + 1 for i in ordered] == RANKS[strategy]


def test_ordering_is_a_permutation_and_does_not_mutate_its_input() -> None:
    candidates = FROZEN["candidates"]
    before = json.dumps(candidates, ensure_ascii=False)
    for strategy in STRATEGIES:
        ordered = order_context(candidates, strategy, [tuple(s) for s in FROZEN["slots"]])
        assert sorted(id(c) for c in ordered) == sorted(id(c) for c in candidates)
    assert json.dumps(candidates, ensure_ascii=False) == before


@pytest.mark.parametrize("n", range(0, 8))
def test_ends_puts_the_strongest_at_both_ends(n: int) -> None:
    candidates = [{"evidence": {"evidence_id": str(rank)}} for rank in range(1, n + 1)]
    ordered = [int(c["evidence"]["evidence_id"]) for c in order_context(candidates, "ends", [])]
    assert sorted(ordered) == list(range(1, n + 1))
    if n >= 2:
        assert (ordered[0], ordered[-1]) == (1, 2)
    if n >= 4:
        assert (ordered[1], ordered[-2]) == (3, 4)


def test_by_slot_without_slots_is_rank_order() -> None:
    candidates = FROZEN["candidates"]
    assert order_context(candidates, "by_slot", []) == candidates


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_strategy_is_recorded_in_the_trace(frozen_root: Path, strategy: str) -> None:
    build_index(frozen_root)
    result = query_once(FROZEN["question"], frozen_root, ordering=strategy, top_k=6, as_of=date(2026, 1, 1))
    events = {e["step"]: e for e in result["trace"]["events"]}
    assert result["trace"]["config"]["ordering"] == strategy
    assert events["order"]["strategy"] == strategy
    by_id = {c["evidence"]["evidence_id"]: c for c in events["retrieve"]["candidates"]}
    kept = [by_id[i] for i in events["pack"]["kept"]]
    slots = [tuple(s) for s in events["parse"]["slots"]]
    expected = [c["evidence"]["evidence_id"] for c in order_context(kept, strategy, slots)]
    assert events["order"]["order"] == expected
    assert list(events["package"]["ids"].values()) == expected
    if strategy == "ends":
        assert expected != events["pack"]["kept"]  # the strategy did reorder this context
    # Ordering never changes the decision.
    assert (result["status"], result["reason"]) == ("partial", "partial_support")


def test_invalid_strategy_is_a_config_error(frozen_root: Path) -> None:
    with pytest.raises(ConfigError, match="ordering 'random' is not one of"):
        order_context(FROZEN["candidates"], "random", [])
    build_index(frozen_root)
    with pytest.raises(ConfigError, match="ordering"):
        query_once(FROZEN["question"], frozen_root, ordering="random")
