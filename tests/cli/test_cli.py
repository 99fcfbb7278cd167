"""The CLI: verbs, output formats, documented exit codes, errors on stderr."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rag_lab.cli import main
from rag_lab.demo import corpus_path

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("RAG_LAB_UPDATE_GOLDEN") == "1"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    target = tmp_path / "corpus"
    shutil.copytree(corpus_path(), target)
    assert main(["index", str(target)]) == 0
    return target


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_index_json_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "c"
    shutil.copytree(corpus_path(), target)
    code, out, _ = run(capsys, "index", str(target), "--json")
    summary = json.loads(out)
    assert code == 0
    assert summary["files"] == 45 and summary["errors"] == [] and summary["units"] > 100
    assert summary["index"] == str(target / ".rag_lab" / "index.sqlite")


def test_ask_answer_prints_value_and_citation_line(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "ask", str(root), "借阅台 开放时间")
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == "answered: 周二至周五十四点到十七点。"
    assert lines[1].startswith("  [1] documents/library.md:6 [43,61) ")
    assert lines[2].strip() == "开放时间：周二至周五十四点到十七点。"


def test_ask_refusal_exit_code_and_plain_sentence(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "ask", str(root), "测试台 开放时间")
    assert code == 3
    assert out.startswith("refused (conflicting_evidence): The sources disagree on 测试台 开放时间")


def test_ask_json_is_exactly_the_result_and_matches_golden(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "ask", str(root), "新台 开放时间", "--json", "--as-of", "2026-01-01")
    result = json.loads(out)
    assert code == 3
    assert result["reason"] == "conflicting_evidence"
    assert result["same_key_sources_checked"] == 6 and len(result["citations"]) == 6
    golden = GOLDEN / "ask_new_desk.json"
    if UPDATE:
        golden.write_text(out, encoding="utf-8")
    assert out == golden.read_text(encoding="utf-8")


def test_ask_trace_prints_steps_in_causal_order(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "ask", str(root), "借阅台 开放时间", "--trace")
    trace = out.split("trace:", 1)[1]
    order = [trace.index(step) for step in ("freshness", "retrieve", "pack", "verify (context)", "parse", "audit", "decision")]
    assert order == sorted(order)


def test_errors_go_to_stderr_with_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty" / "documents").mkdir(parents=True)
    code, out, err = run(capsys, "ask", str(tmp_path / "empty"), "借阅台 开放时间")
    assert code == 1 and out == ""
    assert "no index at" in err and "rag-lab index ROOT" in err


def test_bad_settings_are_usage_errors(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "ask", str(root), "借阅台 开放时间", "--top-k", "0")
    assert code == 2 and "top_k must be a whole number" in err
    code, _, err = run(capsys, "ask", str(root), "借阅台 开放时间", "--as-of", "tomorrow")
    assert code == 2 and "--as-of 'tomorrow' is not a date" in err
    with pytest.raises(SystemExit) as info:
        main(["ask"])
    assert info.value.code == 2


def test_empty_question_is_an_error_not_a_refusal(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "ask", str(root), "   ")
    assert code == 1 and "the question is empty" in err


def test_eval_thresholds_exit_4(tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"id": "a", "question": "测试台 开放时间", "expect_status": "answered",
                    "expect_answer": "周三上午九点。", "category": "c"}, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    code, out, err = run(capsys, "eval", str(root), str(questions), "--min-coverage", "0.5")
    assert code == 4 and "below the bar: --min-coverage 0.5 (answerable_coverage 0.0)" in err
    assert "expected \\ actual" in out
    code, _, _ = run(capsys, "eval", str(root), str(questions), "--max-unsupported", "0")
    assert code == 0


def test_demo_runs_from_an_installed_console_script() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "rag_lab.cli", "demo"], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert "answered: 周二至周五十四点到十七点。" in completed.stdout
    assert "refused (conflicting_evidence)" in completed.stdout
    assert "refused (unsupported_attribute)" in completed.stdout


def test_citations_are_followed_by_a_one_line_legend(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "ask", str(root), "借阅台 开放时间")
    assert out.splitlines()[3] == (
        "  legend: [43,61) = where the cited line is in the file, in Unicode code points"
        " · f82bb2ba17ba = the start of the file's SHA-256"
        " · verbatim_line = the value is quoted exactly from that line"
    )
    _, out, _ = run(capsys, "ask", str(root), "红色 小 圆形")
    assert out.splitlines()[-1].startswith("  legend: 17425db731cc = the start of the file's SHA-256 · remeasured_pixels")
    _, out, _ = run(capsys, "ask", str(root), "借阅台")
    assert "legend" not in out  # no citations, nothing to explain


def test_demo_json_is_one_document_with_every_result(capsys: pytest.CaptureFixture[str]) -> None:
    from rag_lab.cli import DEMO_QUESTIONS

    code, out, err = run(capsys, "demo", "--json")
    data = json.loads(out)
    assert code == 0 and "copied the demo corpus" in err
    assert data["index"]["files"] == 45 and data["index"]["errors"] == []
    assert [r["question"] for r in data["results"]] == list(DEMO_QUESTIONS)
    assert [(r["status"], r["reason"]) for r in data["results"]] == [
        ("answered", None), ("answered", None), ("answered", None),
        ("refused", "conflicting_evidence"), ("refused", "conflicting_evidence"), ("answered", None),
        ("refused", "unsupported_attribute"), ("refused", "reserved_field"),
        ("refused", "no_supporting_evidence"), ("partial", "partial_support"),
    ]
