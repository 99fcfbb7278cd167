"""Slots: several (subject, field) pairs in one question, each decided and audited on its own."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from rag_lab.data import extract_documents
from rag_lab.retrieval import query_once

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

AS_OF = date(2026, 1, 1)


def _slots(result: dict) -> dict[tuple[str, str], dict]:
    return {(s["subject"], s["field"]): s for s in result["slots"]}


def _audits(result: dict) -> list[dict]:
    return [e for e in result["trace"]["events"] if e["step"] == "audit"]


def test_two_subjects_one_answered_one_conflicting_is_partial(indexed_demo: Path) -> None:
    result = query_once("借阅台 和 测试台 的 开放时间", indexed_demo, as_of=AS_OF)
    assert (result["status"], result["reason"]) == ("partial", "partial_support")
    assert result["answer"] == "借阅台 开放时间：周二至周五十四点到十七点。"
    slots = _slots(result)
    assert list(slots) == [("借阅台", "开放时间"), ("测试台", "开放时间")]
    lend, bench = slots[("借阅台", "开放时间")], slots[("测试台", "开放时间")]
    assert (lend["status"], lend["reason"], lend["answer"]) == (
        "answered",
        None,
        "周二至周五十四点到十七点。",
    )
    assert [c["source"] for c in lend["citations"]] == ["documents/library.md"]
    assert lend["same_key_sources_checked"] == 1
    assert (bench["status"], bench["reason"], bench["answer"]) == ("refused", "conflicting_evidence", None)
    assert [c["source"] for c in bench["citations"]] == [
        "documents/test_bench_a.md",
        "documents/test_bench_b.md",
    ]
    assert bench["same_key_sources_checked"] == 2
    assert {s["value"] for s in bench["sides"]} == {"周三上午九点。", "周四上午十点。"}
    # The result cites every slot's sources, and checked counts add up slot by slot.
    assert [c["evidence_id"] for c in result["citations"]] == [
        c["evidence_id"] for s in result["slots"] for c in s["citations"]
    ]
    assert result["same_key_sources_checked"] == 3


def test_one_subject_two_fields_is_answered_with_two_slots(indexed_demo: Path) -> None:
    result = query_once("借阅台 开放时间 和 地点", indexed_demo, as_of=AS_OF)
    assert (result["status"], result["reason"]) == ("answered", None)
    assert [(s["subject"], s["field"], s["answer"]) for s in result["slots"]] == [
        ("借阅台", "开放时间", "周二至周五十四点到十七点。"),
        ("借阅台", "地点", "图书馆一楼大厅东侧"),
    ]
    assert result["answer"] == "借阅台 开放时间：周二至周五十四点到十七点。；借阅台 地点：图书馆一楼大厅东侧"
    assert [s["same_key_sources_checked"] for s in result["slots"]] == [1, 1]
    assert len(result["citations"]) == 2


def test_two_subjects_in_one_file_are_answered(indexed_demo: Path) -> None:
    result = query_once("会议室A 与 会议室B 的 容量", indexed_demo, as_of=AS_OF)
    assert result["status"] == "answered"
    assert [(s["subject"], s["answer"]) for s in result["slots"]] == [
        ("会议室A", "二十人"),
        ("会议室B", "八人"),
    ]
    assert {c["source"] for c in result["citations"]} == {"documents/services/meeting_rooms.md"}


def test_each_slot_gets_its_own_complete_audit(indexed_demo: Path) -> None:
    result = query_once("借阅台 和 测试台 的 开放时间", indexed_demo, as_of=AS_OF)
    units = extract_documents(indexed_demo)
    audits = _audits(result)
    assert [(a["subject"], a["field"]) for a in audits] == [("借阅台", "开放时间"), ("测试台", "开放时间")]
    for audit, slot in zip(audits, result["slots"], strict=True):
        expected = sorted(
            u["evidence_id"]
            for u in units
            if (u["subject"], u["field"]) == (audit["subject"], audit["field"])
        )
        assert sorted(audit["same_key_units"]) == expected
        assert slot["same_key_sources_checked"] == len(expected)
        assert sorted(c["evidence_id"] for c in slot["citations"]) == expected


def test_no_slot_answered_is_refused(indexed_demo: Path) -> None:
    result = query_once("测试台 和 新台 的 开放时间", indexed_demo, as_of=AS_OF)
    assert (result["status"], result["reason"], result["answer"]) == ("refused", "conflicting_evidence", None)
    assert [s["same_key_sources_checked"] for s in result["slots"]] == [2, 6]


def test_an_uncovered_slot_carries_its_own_reason(indexed_demo: Path) -> None:
    result = query_once("借阅台 和 会议室A 的 容量", indexed_demo, as_of=AS_OF)
    slots = _slots(result)
    assert result["status"] == "partial"
    assert slots[("会议室A", "容量")]["answer"] == "二十人"
    assert slots[("借阅台", "容量")]["reason"] == "no_supporting_evidence"
    assert slots[("借阅台", "容量")]["citations"] == []


def _single_slot_questions(root: Path) -> list[str]:
    keys = sorted({(u["subject"], u["field"]) for u in extract_documents(root)})
    return [f"{s} {f}" for s, f in keys]


def test_a_single_slot_question_never_yields_partial(indexed_demo: Path) -> None:
    questions = _single_slot_questions(indexed_demo)
    assert len(questions) > 100
    for question in questions:
        result = query_once(question, indexed_demo, as_of=AS_OF)
        assert result["status"] != "partial", question
        assert len(result["slots"]) <= 1, question


@pytest.mark.parametrize("question", ["测试台 开放时间", "新台 开放时间"])
def test_single_slot_conflict_is_refused_not_partial(indexed_demo: Path, question: str) -> None:
    result = query_once(question, indexed_demo, as_of=AS_OF)
    assert (result["status"], result["reason"]) == ("refused", "conflicting_evidence")
