"""Evaluation at its edges: ratios with nothing to count, bars on them, multi-image answers, file endings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from rag_lab.cli import main
from rag_lab.demo import corpus_path
from rag_lab.errors import QuestionSetError
from rag_lab.evaluation import evaluate, load_questions, render_report
from rag_lab.evaluation.bars import check_bars
from rag_lab.index import build_index

REFUSAL = {"id": "r1", "question": "火星基地 坐标", "expect_status": "refused",
           "expect_reason": "no_supporting_evidence", "category": "unknown_subject"}
ANSWERABLE = {"id": "a1", "question": "借阅台 开放时间", "expect_status": "answered",
              "expect_answer": "周二至周五十四点到十七点。", "category": "answerable_text"}
WRONG = {"id": "a2", "question": "借阅台 开放时间", "expect_status": "answered",
         "expect_answer": "全天", "category": "answerable_text"}
TWO_SQUARES = {"id": "i2", "question": "正方形", "expect_status": "answered",
               "expect_answer": "蓝色 大 正方形；黄色 小 正方形", "category": "answerable_image"}


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("edges") / "corpus"
    shutil.copytree(corpus_path(), root)
    build_index(root)
    return root


def write_questions(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in items), encoding="utf-8")
    return path


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- a ratio with nothing to count ------------------------------------------------------------

def test_a_refusal_only_set_has_no_coverage_or_accuracy_rather_than_zero(demo_root: Path) -> None:
    report = evaluate(demo_root, [REFUSAL])
    assert report["answerable"] == 0
    assert report["answerable_coverage"] is None
    assert report["answer_accuracy"] is None
    assert report["citation_validity"] == {"checked": 0, "valid": 0, "rate": None, "invalid": []}
    assert report["citation_support"] == {"checked": 0, "supporting": 0, "rate": None}
    assert '"answerable_coverage": null' in json.dumps(report)


def test_bars_are_met_missed_or_not_applicable(demo_root: Path) -> None:
    answerable_only = evaluate(demo_root, [ANSWERABLE, WRONG])
    assert answerable_only["answer_accuracy"] == 0.5
    checked = check_bars(answerable_only, {"--min-accuracy": 0.5, "--min-coverage": 1.0, "--max-unsupported": 0})
    assert [(c["option"], c["value"], c["outcome"]) for c in checked] == [
        ("--min-coverage", 1.0, "met"), ("--min-accuracy", 0.5, "met"), ("--max-unsupported", None, "not_applicable"),
    ]
    assert check_bars(answerable_only, {"--min-accuracy": 0.51})[0]["outcome"] == "missed"
    mixed = evaluate(demo_root, [ANSWERABLE, REFUSAL])
    assert check_bars(mixed, {"--max-unsupported": 0})[0] == {
        "option": "--max-unsupported", "metric": "unsupported_answers", "bar": 0, "value": 0, "outcome": "met",
    }


@pytest.mark.parametrize(("option", "value"), [("--min-coverage", "90"), ("--min-coverage", "-0.1"),
                                               ("--min-accuracy", "nan"), ("--max-unsupported", "-1"),
                                               ("--max-unsupported", "0.5")])
def test_a_bar_outside_its_range_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["eval", "--demo", option, value])
    assert info.value.code == 2
    assert f"argument {option}: invalid" in capsys.readouterr().err


def test_the_text_report_shows_a_dash_for_nothing_to_count_and_never_none(demo_root: Path) -> None:
    text = render_report(evaluate(demo_root, [REFUSAL]))
    assert "answerable coverage : —  (0 answerable)" in text
    assert "answer accuracy     : —" in text
    assert "citation validity   : 0/0 (—)" in text
    assert "None" not in text


def test_the_text_report_never_prints_none_for_questions_not_as_expected(demo_root: Path) -> None:
    trap = {"id": "x1", "question": "借阅台 开放时间", "expect_status": "refused", "category": "trap"}
    unknown = {"id": "x2", "question": "火星基地 坐标", "expect_status": "answered",
               "expect_answer": "全天", "category": "trap"}
    slots = {"id": "x3", "question": "借阅台 和 测试台 的 开放时间", "expect_status": "partial",
             "expect_answer": ["全天", None], "category": "trap"}
    report = evaluate(demo_root, [trap, unknown, slots])
    assert [r["ok"] for r in report["results"]] == [False, False, False]
    text = render_report(report)
    assert "None" not in text
    assert "x1 '借阅台 开放时间': expected refused, got answered '周二至周五十四点到十七点。'" in text
    assert "x2 '火星基地 坐标': expected answered '全天', got refused/no_supporting_evidence" in text
    assert "x3 '借阅台 和 测试台 的 开放时间': expected partial ['全天', —], got partial/partial_support" in text


# -- bars on such a metric ----------------------------------------------------------------------

def test_min_coverage_on_a_refusal_only_set_is_not_applicable(
    demo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl", [REFUSAL])
    code, out, err = run_cli(capsys, "eval", str(demo_root), str(questions), "--min-coverage", "0.9")
    assert code == 0
    assert "not applicable: --min-coverage 0.9 (answerable_coverage has nothing to count:" in err
    assert "below the bar" not in err


def test_max_unsupported_on_an_answerable_only_set_is_not_applicable(
    demo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl", [ANSWERABLE])
    code, out, err = run_cli(capsys, "eval", str(demo_root), str(questions), "--max-unsupported", "0", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["bars"] == [
        {"option": "--max-unsupported", "metric": "unsupported_answers", "bar": 0, "value": None,
         "outcome": "not_applicable"},
    ]
    assert "not applicable: --max-unsupported 0" in err


def test_a_missed_bar_still_exits_4_and_a_met_one_passes(
    demo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl", [ANSWERABLE, WRONG, REFUSAL])
    code, _, err = run_cli(capsys, "eval", str(demo_root), str(questions), "--min-accuracy", "0.9",
                           "--min-coverage", "1", "--max-unsupported", "0")
    assert code == 4
    assert "below the bar: --min-accuracy 0.9 (answer_accuracy 0.5)" in err
    assert "--min-coverage" not in err and "--max-unsupported" not in err
    code, _, err = run_cli(capsys, "eval", str(demo_root), str(questions), "--min-citation-validity", "1")
    assert (code, err) == (0, "")


def test_every_bar_on_nothing_to_count_is_not_applicable(
    demo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl", [REFUSAL])
    code, out, err = run_cli(
        capsys, "eval", str(demo_root), str(questions), "--json", "--min-coverage", "1", "--min-accuracy", "1",
        "--min-citation-validity", "1", "--min-citation-support", "1",
    )
    assert code == 0
    outcomes = {b["option"]: b["outcome"] for b in json.loads(out)["bars"]}
    assert outcomes == {
        "--min-coverage": "not_applicable", "--min-accuracy": "not_applicable",
        "--min-citation-validity": "not_applicable", "--min-citation-support": "not_applicable",
    }
    assert err.count("not applicable:") == 4


# -- an answer naming two images -------------------------------------------------------------------

def test_an_answer_naming_two_images_is_supported_by_each_image(demo_root: Path) -> None:
    report = evaluate(demo_root, [TWO_SQUARES])
    assert report["results"][0]["ok"] is True
    assert report["citation_validity"]["valid"] == 2
    assert report["citation_support"] == {"checked": 2, "supporting": 2, "rate": 1.0}


def test_an_image_citation_for_a_phrase_the_answer_does_not_name_does_not_support(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rag_lab.evaluation.run as run

    real = run.query_once

    def one_phrase_dropped(*args: Any, **kwargs: Any) -> dict[str, Any]:
        result: dict[str, Any] = real(*args, **kwargs)
        result["slots"][0]["answer"] = "蓝色 大 正方形"  # the yellow square's citation stays
        return result

    monkeypatch.setattr(run, "query_once", one_phrase_dropped)
    report = evaluate(demo_root, [TWO_SQUARES])
    assert report["citation_support"] == {"checked": 2, "supporting": 1, "rate": 0.5}


# -- file endings ----------------------------------------------------------------------------------

@pytest.mark.parametrize("ending", ["\n", "\n\n", "\n\n\n", "\n  \n", "\r\n", "\r\n\r\n", ""])
def test_trailing_newlines_and_blank_lines_are_fine(tmp_path: Path, ending: str) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(REFUSAL) + "\n" + json.dumps(ANSWERABLE) + ending, encoding="utf-8", newline="")
    assert [q["id"] for q in load_questions(path)] == ["r1", "a1"]


def test_a_blank_line_before_the_last_question_is_still_an_error(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(REFUSAL) + "\n\n" + json.dumps(ANSWERABLE) + "\n\n", encoding="utf-8")
    with pytest.raises(QuestionSetError, match=r"q\.jsonl:2: blank line"):
        load_questions(path)


def test_only_blank_lines_is_no_questions(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text("\n \n\n", encoding="utf-8")
    with pytest.raises(QuestionSetError, match="no questions"):
        load_questions(path)


def test_a_leading_byte_order_mark_is_not_part_of_the_first_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text("\ufeff" + json.dumps(REFUSAL) + "\n", encoding="utf-8")
    assert [q["id"] for q in load_questions(path)] == ["r1"]
