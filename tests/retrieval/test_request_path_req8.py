"""Shortcuts of the request path (issue 18, req8) give what the plain computation gives.

* the claim check's ``holds`` (a cell of a unit the claim does not cite, stopping at its first
  failing check) = ``supports(...)[0]``;
* ``Decider.verify`` comparing a repeated evidence id's unit with the first by exact types and
  values: ``_plainly_equal`` only when the JSON keys are equal, and the same verifications and
  trace as keys alone;
* the prose audit's ``passes`` = ``support_check(...).ok`` (over the demo prose corpus's
  questions and the top 50 units of each), and ``answer_type`` remembered = computed afresh.
"""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.answering.answer_types import answer_type
from rag_lab.answering.support import passes, support_check
from rag_lab.data.corpus import sha256_hex
from rag_lab.data.documents import evidence_id
from rag_lab.generation.verify import facts_of, holds, prepare, supports
from rag_lab.index import Index, build_index, default_index_path
from rag_lab.retrieval.answer import Decider, _plainly_equal, _unit_key
from rag_lab.retrieval.rank import rank
from rag_lab.retrieval.trace import Trace
from rag_lab.retrieval.verify import read_whole

DEMO_PROSE = Path(__file__).resolve().parents[2] / "src" / "rag_lab" / "demo" / "prose"
CLAIM_CHARS = "开放时间是周一至周五的不未无图书馆东湖12３年月日号documents/a.md ，。（）未注明生效日期"
WORDS = st.text(alphabet=st.sampled_from("开放时间周一至五不图书馆东湖123年月日"), min_size=1, max_size=8)


@st.composite
def units(draw: st.DrawFn) -> dict[str, Any]:
    unit: dict[str, Any] = {
        "evidence_id": "ev_" + "0" * 24,
        "source": draw(st.sampled_from(["documents/a.md", "documents/b.md"])),
        "subject": draw(WORDS),
        "field": draw(st.sampled_from(["开放时间", "地址", "原文"])),
        "value": draw(WORDS),
        "span": [0, 5],
    }
    unit["text"] = f"{unit['field']}：{unit['value']}"
    if draw(st.booleans()):
        unit["valid_from"] = "2024-01-01"
    return unit


@settings(max_examples=400, deadline=None)
@given(
    claim=st.text(alphabet=st.sampled_from(CLAIM_CHARS), max_size=30),
    unit=units(),
    vocabulary=st.lists(WORDS, max_size=4),
    reserved=st.sampled_from([frozenset(), frozenset({"原文"})]),
)
def test_holds_is_the_truth_of_supports(
    claim: str, unit: dict[str, Any], vocabulary: list[str], reserved: frozenset[str]
) -> None:
    facts = facts_of(claim, sorted(set(vocabulary), key=lambda w: (-len(w), w)))
    want = supports(claim, facts, unit, reserved)[0]
    assert holds(claim, facts, unit, reserved) == want
    assert holds(claim, facts, unit, reserved, prepare(unit)) == want


def test_holds_sees_both_outcomes() -> None:
    unit = {"source": "documents/a.md", "subject": "东湖图书馆", "field": "开放时间", "value": "周一至周五"}
    unit["text"] = "开放时间：周一至周五"
    claim = "东湖图书馆的开放时间是周一至周五。"
    assert holds(claim, facts_of(claim, ["东湖图书馆", "周一至周五", "开放时间"]), unit, frozenset())
    other = "东湖图书馆的开放时间是周六。"
    assert not holds(other, facts_of(other, ["东湖图书馆", "开放时间"]), unit, frozenset())
    assert not holds(claim, facts_of(claim, ["东湖图书馆"]), unit, frozenset({"开放时间"}))


LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from([0.0, -0.0, 1.0, 2.5]), st.sampled_from(["1", "a", ""])
)
VALUES = st.one_of(LEAVES, st.lists(LEAVES, max_size=3), st.tuples(LEAVES, LEAVES), st.dictionaries(
    st.sampled_from(["x", "y"]), LEAVES, max_size=2))  # fmt: skip
UNITS = st.dictionaries(st.sampled_from(["evidence_id", "source", "span", "line", "value", "extra"]), VALUES, max_size=5)


def _plain(value: Any) -> bool:
    kinds = (str, int, bool, type(None))
    return type(value) in kinds or (type(value) in (list, tuple) and all(type(v) in kinds for v in value))


@settings(max_examples=1500, deadline=None)
@given(a=UNITS, b=UNITS)
def test_plainly_equal_only_for_equal_keys(a: dict[str, Any], b: dict[str, Any]) -> None:
    if _plainly_equal(a, b):
        assert _unit_key(a) == _unit_key(b)
    assert _plainly_equal(a, dict(a)) == all(map(_plain, a.values()))


def test_plainly_equal_tells_types_apart() -> None:
    unit = {"evidence_id": "ev_1", "span": [1, 2], "line": 1}
    assert _plainly_equal(unit, dict(unit))
    assert not _plainly_equal(unit, {**unit, "line": True})  # 1 == True, but the JSON differs
    assert not _plainly_equal(unit, {**unit, "span": [1.0, 2]})
    assert not _plainly_equal(unit, {**unit, "span": (1, 2)})  # the same JSON, but not proven here
    assert not _plainly_equal(unit, {**unit, "extra": None})


class _PlainDecider(Decider):
    """Decider.verify as it was: the whole-unit JSON key of every repeated id."""

    def verify(self, unit: dict[str, Any], purpose: str) -> None:
        key = _unit_key(unit)
        if key not in self.verified:
            self.verified[key] = self._check(unit, purpose)


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_verify_keeps_the_verifications_of_whole_unit_keys(data: st.DataObject, tmp_path_factory: Any) -> None:
    root = tmp_path_factory.mktemp("v")
    (root / "documents").mkdir(exist_ok=True)
    (root / "documents" / "a.md").write_text("主题：甲馆\n开放时间：周一\n", encoding="utf-8")
    digest = sha256_hex((root / "documents" / "a.md").read_bytes())
    base = {"evidence_id": evidence_id("documents/a.md", (6, 13), digest), "source": "documents/a.md",
            "sha256": digest, "span": [6, 13], "line": 2, "text": "开放时间：周一", "subject": "甲馆",
            "field": "开放时间", "value": "周一", "modality": "text"}  # fmt: skip
    variants = [base, dict(base), {**base, "line": True}, {**base, "span": [6.0, 13]}, {**base, "span": (6, 13)},
                {**base, "evidence_id": "ev_" + "b" * 24}, {**base, "sha256": "1" * 64}, {**base, "value": "周二"}]  # fmt: skip
    order = data.draw(st.lists(st.sampled_from(range(len(variants))), min_size=1, max_size=8))
    traces = []
    for kind in (Decider, _PlainDecider):
        trace = Trace()
        decider = kind(root, None, trace, date(2026, 12, 1))  # type: ignore[arg-type]
        for k in order:
            try:
                decider.verify(dict(variants[k]), "context")
            except Exception as exc:  # a failed verification raises: the same in both
                trace.add("raised", kind=type(exc).__name__)
        traces.append(json.dumps(trace.as_dict(), default=str))
    assert traces[0] == traces[1]
    if 0 in order:  # the real unit is verified, and its copies are not verified again
        events = json.loads(traces[0])["events"]
        assert any(e.get("ok") for e in events)
        if set(order) <= {0, 1}:
            assert len(events) == 1


def test_prose_audit_passes_is_the_support_check(tmp_path: Path) -> None:
    root = tmp_path / "prose"
    shutil.copytree(DEMO_PROSE, root)
    build_index(root)
    lines = (DEMO_PROSE.parent / "prose_questions.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()]
    seen = {True: 0, False: 0}
    with Index(default_index_path(root)) as index:
        for question in questions:
            for candidate in rank(question, index, 50)[0]:
                unit = candidate["evidence"]
                want = support_check(question, unit).ok
                assert passes(question, unit) == want, (question, unit["text"])
                seen[want] += 1
            assert answer_type(question) == answer_type.__wrapped__(question)
    assert seen[True] >= 5 and seen[False] >= 50


def test_read_whole_reads_what_read_bytes_reads(tmp_path: Path) -> None:
    """``read_whole`` through a bare descriptor = ``Path.read_bytes``, at chunk edges too; a
    folder or a missing file raises the OSError ``open`` raises (the reader reports its strerror)."""
    for size in (0, 1, 125, (1 << 16) - 1, 1 << 16, (1 << 16) + 1, 3 * (1 << 16) + 7):
        path = tmp_path / f"f{size}"
        path.write_bytes(bytes(range(256)) * (size // 256) + bytes(size % 256))
        assert read_whole(str(path)) == path.read_bytes()
    for where in (tmp_path, tmp_path / "absent"):
        with pytest.raises(OSError) as plain:
            where.read_bytes()
        with pytest.raises(OSError) as ours:
            read_whole(str(where))
        assert ours.value.strerror == plain.value.strerror
