"""Monitoring counters: in each result's trace and summed in the eval report."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from rag_lab.cli import main
from rag_lab.evaluation import evaluate_file
from rag_lab.retrieval import query_once

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

AS_OF = date(2026, 1, 1)
NAMES = ["dropped_by_budget", "duplicates_merged", "empty_context", "stale_index", "uncovered_slots"]


def _counters(root: Path, question: str, **kw: object) -> dict[str, int]:
    return query_once(question, root, as_of=AS_OF, **kw)["trace"]["counters"]


def test_empty_context_and_dropped_by_budget(indexed_demo: Path) -> None:
    result = query_once("借阅台 开放时间", indexed_demo, budget=0, as_of=AS_OF)
    assert result["reason"] == "excluded_by_budget"
    assert result["trace"]["counters"] == {"empty_context": 1, "dropped_by_budget": 5, "uncovered_slots": 1}
    assert list(result["trace"]["counters"]) == sorted(result["trace"]["counters"])


def test_dropped_by_budget_counts_only_budget_skips(indexed_demo: Path) -> None:
    counters = _counters(indexed_demo, "新台 开放时间", budget=15)
    # 1 kept, 3 duplicates (not budget drops), the different sixth file over budget.
    assert counters["dropped_by_budget"] == 1
    assert "empty_context" not in counters


def test_uncovered_slot(indexed_demo: Path) -> None:
    assert _counters(indexed_demo, "借阅台 和 测试台 的 开放时间")["uncovered_slots"] == 1
    assert _counters(indexed_demo, "测试台 和 新台 的 开放时间")["uncovered_slots"] == 2
    assert "uncovered_slots" not in _counters(indexed_demo, "借阅台 开放时间 和 地点")


def test_duplicates_merged(indexed_demo: Path) -> None:
    assert _counters(indexed_demo, "新台 开放时间")["duplicates_merged"] == 4
    assert _counters(indexed_demo, "借阅台 开放时间")["duplicates_merged"] == 0
    # A question naming nothing retrieves nothing: an empty context, no audit, nothing merged.
    assert _counters(indexed_demo, "什么时候能借东西") == {"empty_context": 1}


def test_stale_index(indexed_demo: Path) -> None:
    assert "stale_index" not in _counters(indexed_demo, "借阅台 开放时间")
    (indexed_demo / "documents" / "camera_case.md").write_text(
        "主题：相机箱\n存放位置：别处\n", encoding="utf-8"
    )
    assert _counters(indexed_demo, "借阅台 开放时间") == {"stale_index": 1}


QUESTIONS = [
    {"id": "e1", "category": "budget", "question": "借阅台 开放时间", "budget": 0,
     "expect_status": "refused", "expect_reason": "excluded_by_budget"},
    {"id": "e2", "category": "dup", "question": "新台 开放时间",
     "expect_status": "refused", "expect_reason": "conflicting_evidence"},
    {"id": "e3", "category": "slots", "question": "借阅台 和 测试台 的 开放时间",
     "expect_status": "partial", "expect_answer": ["周二至周五十四点到十七点。", None]},
    {"id": "e4", "category": "plain", "question": "借阅台 开放时间", "as_of": "2026-01-01",
     "expect_status": "answered", "expect_answer": "周二至周五十四点到十七点。"},
]  # fmt: skip


@pytest.fixture
def questions(tmp_path: Path) -> Path:
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QUESTIONS), encoding="utf-8")
    return path


def test_eval_report_sums_the_counters(indexed_demo: Path, questions: Path) -> None:
    report = evaluate_file(indexed_demo, questions)
    order = ["empty_context", "uncovered_slots", "duplicates_merged", "dropped_by_budget", "stale_index"]
    assert list(report["counters"]) == order
    assert report["counters"] == {
        "empty_context": 1,
        "uncovered_slots": 1 + 1 + 1,  # e1 (budget), e2 (conflict), e3 (测试台)
        "duplicates_merged": 4,
        "dropped_by_budget": 5,
        "stale_index": 0,
    }
    assert all(row["ok"] for row in report["results"]), report["results"]


def test_eval_cli_reports_counters_and_stale_index(
    indexed_demo: Path, questions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", str(indexed_demo), str(questions), "--json"]) == 0
    counters = json.loads(capsys.readouterr().out)["counters"]
    assert counters["duplicates_merged"] == 4 and counters["stale_index"] == 0
    assert main(["eval", str(indexed_demo), str(questions)]) == 0
    text = capsys.readouterr().out
    assert "counters" in text and "duplicates_merged=4" in text and "empty_context=1" in text
    (indexed_demo / "documents" / "note.md").write_text("主题：便笺\n性质：改过\n", encoding="utf-8")
    assert main(["eval", str(indexed_demo), str(questions), "--json"]) == 0
    counters = json.loads(capsys.readouterr().out)["counters"]
    # Every question stops at the freshness check: only stale_index is counted, once per question.
    assert counters == {n: 0 for n in NAMES} | {"stale_index": len(QUESTIONS)}


def test_counter_names_are_the_documented_ones(indexed_demo: Path, questions: Path) -> None:
    from rag_lab.evaluation.run import COUNTER_NAMES

    assert sorted(COUNTER_NAMES) == NAMES
    seen: set[str] = set()
    for question, kw in [("借阅台 开放时间", {"budget": 0}), ("新台 开放时间", {})]:
        seen |= set(_counters(indexed_demo, question, **kw))
    (indexed_demo / "documents" / "note.md").write_text("主题：便笺\n", encoding="utf-8")
    seen |= set(_counters(indexed_demo, "借阅台 开放时间"))
    assert seen == set(NAMES)
