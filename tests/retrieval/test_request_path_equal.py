"""Shortcuts of the request path (issue 18, req5) give what the plain computation gives.

* ``query_terms`` in Python = the valid codes of ``codes_of(normalise(text))`` (numpy), distinct,
  in first-occurrence order;
* ``Decider.verify`` writes a unit's whole-unit key only when a second unit with its evidence id
  comes, and still verifies (and traces) exactly the units the whole-unit key tells apart;
* a trace rendered twice has the configuration hash of its configuration at each rendering.
"""

from __future__ import annotations

import copy
from datetime import date
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.index.terms import codes_of, normalise, query_terms
from rag_lab.retrieval.answer import Decider, VerificationFailed
from rag_lab.retrieval.trace import Trace, config_hash

TEXT = st.text(alphabet=st.sampled_from("甲乙丙的是什么？ 　ＡｂC1２_-\x00\x01ﬁé\u0301😀"), max_size=16) | st.text(max_size=12)


def plain_query_terms(text: str) -> list[int]:
    codes, valid = codes_of(normalise(text))
    return list(dict.fromkeys(int(c) for c in codes[valid].tolist()))


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_query_terms_equal_the_numpy_split(text: str) -> None:
    assert query_terms(text) == plain_query_terms(text)


class _Source:
    reserved_fields: frozenset[str] = frozenset()


def _unit(root: Path) -> dict[str, Any]:
    from rag_lab.data.corpus import sha256_hex
    from rag_lab.data.documents import evidence_id

    data = "主题：甲馆\n开放时间：周一\n".encode()
    (root / "a.md").write_bytes(data)
    digest = sha256_hex(data)
    text = data.decode()
    start = text.index("开放时间")
    span = [start, start + len("开放时间：周一")]
    return {
        "evidence_id": evidence_id("a.md", (span[0], span[1]), digest), "source": "a.md", "sha256": digest,
        "span": span, "line": 2, "text": "开放时间：周一", "subject": "甲馆", "field": "开放时间", "value": "周一",
        "modality": "text",
    }


def _verified(root: Path, units: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    trace = Trace()
    decider = Decider(root, _Source(), trace, date(2026, 12, 1))  # type: ignore[arg-type]
    try:
        for unit in units:
            decider.verify(unit, "context")
    except VerificationFailed:
        return trace.events, False
    return trace.events, True


def test_verify_tells_units_apart_by_the_whole_unit(tmp_path: Path) -> None:
    unit = _unit(tmp_path)
    same = copy.deepcopy(unit)
    events, ok = _verified(tmp_path, [unit, same, unit, copy.deepcopy(unit)])
    assert ok and len(events) == 1  # one unit, however many copies
    other_line = dict(unit, line=3)  # same id, another unit: verified on its own (and passes)
    events, ok = _verified(tmp_path, [unit, other_line, same, dict(other_line)])
    assert ok and len(events) == 2
    forged = dict(unit, sha256="f" * 64)
    events, ok = _verified(tmp_path, [unit, same, forged])
    assert not ok and len(events) == 2 and events[-1]["failed_check"] == "sha256"
    events, ok = _verified(tmp_path, [dict(unit, evidence_id=None), dict(unit, evidence_id=None)])
    assert not ok and len(events) == 1  # no id: the whole-unit key from the first one on


def test_trace_hash_follows_its_config() -> None:
    trace = Trace({"top_k": 5, "index": {"k1": 1.2}})
    first = trace.as_dict()["config_hash"]
    assert first == config_hash({"top_k": 5, "index": {"k1": 1.2}}) == trace.as_dict()["config_hash"]
    trace.config["top_k"] = 6
    assert trace.as_dict()["config_hash"] == config_hash({"top_k": 6, "index": {"k1": 1.2}}) != first
