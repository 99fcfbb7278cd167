"""pack_context: greedy whole-unit packing under a code-point budget (seed 000 算例一)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.errors import ConfigError
from rag_lab.retrieval import pack_context

TEXTS = st.lists(
    st.text(alphabet=st.sampled_from(list("开放时间：九点abc😀\u0301０１")), max_size=15), max_size=25
)


def candidates(texts: list[str]) -> list[dict[str, Any]]:
    return [{"evidence": {"evidence_id": f"ev_{i:03d}", "text": t}, "score": float(-i)} for i, t in enumerate(texts)]


@settings(max_examples=300, deadline=None)
@given(texts=TEXTS, budget=st.integers(min_value=0, max_value=80))
def test_packing_invariants(texts: list[str], budget: int) -> None:
    cands = candidates(texts)
    kept, report = pack_context(cands, budget)
    used = sum(len(c["evidence"]["text"]) for c in kept)
    # never over budget, and the report says exactly what was used
    assert used <= budget
    assert report["characters"] == used and report["budget"] == budget
    # never cuts a unit: kept candidates are the very objects passed in, text untouched
    assert all(any(k is c for c in cands) for k in kept)
    assert [k["evidence"]["text"] for k in kept] == [texts[int(k["evidence"]["evidence_id"][3:])] for k in kept]
    # keeps rank order
    ranks = [int(k["evidence"]["evidence_id"][3:]) for k in kept]
    assert ranks == sorted(ranks)
    # every candidate is either kept or skipped, once
    skipped = report["skipped"]
    assert sorted(ranks + [s["rank"] - 1 for s in skipped]) == list(range(len(texts)))
    assert report["kept"] == [k["evidence"]["evidence_id"] for k in kept]
    # skips and continues: a skipped unit truly did not fit in what was left at its turn
    used_before = 0
    kept_set = set(ranks)
    for i, text in enumerate(texts):
        if i in kept_set:
            used_before += len(text)
        else:
            [entry] = [s for s in skipped if s["rank"] == i + 1]
            assert used_before + len(text) > budget
            assert entry["remaining"] == budget - used_before
            assert entry["characters"] == len(text) and entry["reason"] == "over_budget"


@settings(max_examples=200, deadline=None)
@given(texts=TEXTS, budget=st.integers(min_value=0, max_value=80))
def test_packing_equals_the_greedy_oracle(texts: list[str], budget: int) -> None:
    expected, used = [], 0
    for i, text in enumerate(texts):
        if used + len(text) <= budget:
            expected.append(i)
            used += len(text)
    kept, _ = pack_context(candidates(texts), budget)
    assert [int(k["evidence"]["evidence_id"][3:]) for k in kept] == expected


def test_long_first_unit_does_not_stop_the_scan() -> None:
    kept, report = pack_context(candidates(["x" * 100, "ab", "cde", "f"]), 5)
    assert [k["evidence"]["text"] for k in kept] == ["ab", "cde"]
    assert [(s["rank"], s["remaining"]) for s in report["skipped"]] == [(1, 5), (4, 0)]


def test_counts_code_points_not_bytes_or_graphemes() -> None:
    # 4 CJK chars (12 UTF-8 bytes), an emoji (1 code point) and e + combining acute (2 code points)
    kept, report = pack_context(candidates(["开放时间", "😀", "e\u0301"]), 7)
    assert [k["evidence"]["text"] for k in kept] == ["开放时间", "😀", "e\u0301"]
    assert report["characters"] == 7
    kept, _ = pack_context(candidates(["开放时间", "😀", "e\u0301"]), 6)
    assert [k["evidence"]["text"] for k in kept] == ["开放时间", "😀"]


def test_default_budget_is_1200_code_points() -> None:
    kept, report = pack_context(candidates(["字" * 1200, "字"]))
    assert (report["budget"], report["characters"], len(kept), report["unit"]) == (1200, 1200, 1, "codepoints")


def test_empty_candidates() -> None:
    assert pack_context([], 10) == ([], {"budget": 10, "unit": "codepoints", "characters": 0, "kept": [], "skipped": []})


@pytest.mark.parametrize("budget", [-1, True, 1.5, "5"])
def test_bad_budget_is_a_config_error(budget: object) -> None:
    with pytest.raises(ConfigError, match=r"budget must be a whole number from 0 to 4194304, got "):
        pack_context(candidates(["a"]), budget)  # type: ignore[arg-type]
