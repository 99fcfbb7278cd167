"""Evaluation: the shipped question set, separate metrics, the golden report, bad question files."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from rag_lab.cli import main
from rag_lab.demo import corpus_path, questions_path
from rag_lab.errors import QuestionSetError
from rag_lab.evaluation import evaluate, evaluate_demo, load_questions
from rag_lab.index import build_index

GOLDEN = Path(__file__).parent / "golden" / "eval_demo.json"
UPDATE = os.environ.get("RAG_LAB_UPDATE_GOLDEN") == "1"


def test_eval_demo_json_matches_golden_file(capsys: pytest.CaptureFixture[str]) -> None:
    """`rag-lab eval --demo --json` byte for byte; updating needs RAG_LAB_UPDATE_GOLDEN=1."""
    assert main(["eval", "--demo", "--json"]) == 0
    text = capsys.readouterr().out
    assert "/tmp" not in text and "rag-lab-eval-" not in text
    if UPDATE:
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")


def test_shipped_question_set_covers_every_required_category() -> None:
    questions = load_questions(questions_path())
    categories = {q["category"] for q in questions}
    assert len(questions) >= 39
    assert {
        "answerable_text", "answerable_image", "natural_phrasing", "unknown_subject", "unknown_field",
        "conflict_two_way", "conflict_5_plus_1", "reserved_field", "injection_note", "unsupported_attribute",
        "clarification_subject_only", "clarification_field_only", "evidence_not_retrieved", "excluded_by_budget",
    } <= categories


def test_demo_report_measures_answering_and_refusing_separately() -> None:
    report = evaluate_demo()
    assert report["total"] == len(load_questions(questions_path()))
    assert report["answerable_coverage"] == 1.0
    assert report["answer_accuracy"] == 1.0
    assert report["unsupported_answers"] == {"count": 0, "items": []}
    assert report["wrong_refusals"]["count"] == 0
    assert report["correct_refusals"]["by_reason"]["conflicting_evidence"] == 4
    assert report["citation_validity"]["rate"] == 1.0
    assert report["confusion"]["refused"]["answered"] == 0


@pytest.fixture
def demo_root(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    shutil.copytree(corpus_path(), root)
    build_index(root)
    return root


def test_an_answer_where_a_refusal_was_expected_is_an_unsupported_answer(demo_root: Path) -> None:
    questions = [
        {"id": "x1", "question": "借阅台 开放时间", "expect_status": "refused",
         "expect_reason": "no_supporting_evidence", "category": "trap"},
        {"id": "x2", "question": "测试台 开放时间", "expect_status": "answered",
         "expect_answer": "周三上午九点。", "category": "trap"},
    ]
    report = evaluate(demo_root, questions)
    assert report["unsupported_answers"]["count"] == 1
    assert report["unsupported_answers"]["items"][0]["id"] == "x1"
    assert report["wrong_refusals"] == {"count": 1, "ids": ["x2"]}
    assert report["correct_refusals"]["total"] == 0
    assert report["ok"] == 0


def test_a_wrong_value_is_not_accurate_even_when_answered(demo_root: Path) -> None:
    questions = [{"id": "w", "question": "借阅台 开放时间", "expect_status": "answered",
                  "expect_answer": "全天", "category": "c"}]
    report = evaluate(demo_root, questions)
    assert report["answerable_coverage"] == 1.0
    assert report["answer_accuracy"] == 0.0


def test_citation_validity_is_rechecked_against_the_files(demo_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rag_lab.evaluation.run as run

    real = run.query_once

    def tampered(*args: object, **kwargs: object) -> dict[str, object]:
        result = real(*args, **kwargs)  # type: ignore[arg-type]
        for cite in result["citations"]:
            cite["sha256"] = "0" * 64
        return result

    monkeypatch.setattr(run, "query_once", tampered)
    questions = [{"id": "v", "question": "借阅台 开放时间", "expect_status": "answered",
                  "expect_answer": "周二至周五十四点到十七点。", "category": "c"}]
    report = evaluate(demo_root, questions)
    assert report["citation_validity"]["valid"] == 0
    assert report["citation_validity"]["invalid"][0]["problem"] == "documents/library.md sha256 differs"


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"id": "a", "question": "q", "expect_status": "answered", "category": "c"}\n', ":1: expect_answer"),
        ('{"id": "a", "question": "q", "expect_status": "done", "category": "c"}\n', ":1: expect_status 'done'"),
        ("not json\n", ":1: not valid JSON"),
        ('{"id": "a", "question": "q", "expect_status": "refused", "category": "c"}\n\n'
         '{"id": "b", "question": "q", "expect_status": "refused", "category": "c"}\n', ":2: blank line"),
        ('{"id": "a", "question": "q", "expect_status": "refused", "category": "c"}\n'
         '{"id": "a", "question": "q", "expect_status": "refused", "category": "c"}\n', ":2: duplicate id"),
        ('{"id": "a", "question": "q", "expect_status": "refused", "category": "c", "x": 1}\n', ":1: unknown field"),
        ('{"id": "a", "question": "q", "expect_status": "refused", "category": "c", "expect_reason": "nope"}\n',
         ":1: expect_reason 'nope'"),
        ('{"id": "a", "question": "q", "expect_status": "refused", "category": "c", "as_of": "2020-13-01"}\n',
         ":1: as_of"),
        ("", "no questions"),
    ],
)
def test_malformed_question_files_name_file_and_line(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(QuestionSetError) as info:
        load_questions(path)
    assert str(path) in str(info.value)
    assert fragment in str(info.value)
