"""Time validity: 生效日期 ≤ as_of < 失效日期; only in-window values can conflict."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from rag_lab.cli import main
from rag_lab.index import build_index
from rag_lab.retrieval import query_once
from rag_lab.retrieval.answer import in_window

FILES = {
    # 甲台: the old value is retired by its own 失效日期, the new one starts that day.
    "documents/jia_old.md": "主题：甲台\n生效日期：2020-01-01\n失效日期：2024-01-01\n开放时间：八点。\n",
    "documents/jia_new.md": "主题：甲台\n生效日期：2024-01-01\n开放时间：九点。\n",
    # 乙台: two open-ended documents; the later 生效日期 does not retire the earlier one.
    "documents/yi_a.md": "主题：乙台\n生效日期：2020-01-01\n开放时间：八点。\n",
    "documents/yi_b.md": "主题：乙台\n生效日期：2022-01-01\n开放时间：九点。\n",
    # 丙台: 版本说明 retires nothing.
    "documents/bing_a.md": "主题：丙台\n版本说明：旧记录，已作废\n开放时间：八点。\n",
    "documents/bing_b.md": "主题：丙台\n开放时间：九点。\n",
    # 丁台: expired everywhere.
    "documents/ding.md": "主题：丁台\n失效日期：2021-01-01\n开放时间：十点。\n",
}


def _audit(result: dict) -> dict:
    return next(e for e in result["trace"]["events"] if e["step"] == "audit")


@pytest.fixture
def root(make_corpus) -> Path:
    root = make_corpus(FILES)
    summary = build_index(root).as_dict()
    assert summary["errors"] == []
    return root


@pytest.mark.parametrize(
    ("day", "answer", "dropped"),
    [
        (date(2019, 12, 31), None, ["jia_old.md", "jia_new.md"]),
        (date(2020, 1, 1), "八点。", ["jia_new.md"]),  # 生效日期 is inclusive
        (date(2023, 12, 31), "八点。", ["jia_new.md"]),
        (date(2024, 1, 1), "九点。", ["jia_old.md"]),  # 失效日期 is exclusive
        (date(2030, 6, 1), "九点。", ["jia_old.md"]),
    ],
)
def test_windows_that_do_not_both_cover_as_of_are_no_conflict(
    root: Path, day: date, answer: str | None, dropped: list[str]
) -> None:
    result = query_once("甲台 开放时间", root, as_of=day)
    audit = _audit(result)
    assert result["answer"] == answer
    if answer is None:
        assert (result["status"], result["reason"]) == ("refused", "no_supporting_evidence")
        assert "outside its validity window" in result["message"]
        assert result["citations"] == []
    else:
        assert result["status"] == "answered"
        assert result["same_key_sources_checked"] == 1
        assert [c["source"] for c in result["citations"]] == [
            f"documents/{n}" for n in ("jia_old.md", "jia_new.md") if n not in dropped
        ]
    by_source = {u["evidence_id"]: u["source"] for u in _units(result)}
    assert sorted(by_source[i] for i in audit["out_of_window"]) == sorted(f"documents/{n}" for n in dropped)
    assert len(audit["same_key_units"]) == 2
    assert result["trace"]["config"]["as_of"] == day.isoformat()


def _units(result: dict) -> list[dict]:
    return [
        c["evidence"]
        for c in next(e for e in result["trace"]["events"] if e["step"] == "retrieve")["candidates"]
    ]


def test_both_windows_cover_as_of_is_a_conflict(root: Path) -> None:
    result = query_once("乙台 开放时间", root, as_of=date(2023, 1, 1))
    assert (result["status"], result["reason"]) == ("refused", "conflicting_evidence")
    assert _audit(result)["out_of_window"] == []
    assert _audit(result)["values"] == ["九点。", "八点。"]
    assert len(result["citations"]) == 2


def test_a_later_valid_from_alone_does_not_retire_an_open_document(root: Path) -> None:
    before = query_once("乙台 开放时间", root, as_of=date(2021, 6, 1))
    assert (before["status"], before["answer"]) == ("answered", "八点。")
    after = query_once("乙台 开放时间", root, as_of=date(2099, 1, 1))
    assert after["reason"] == "conflicting_evidence"


def test_version_note_retires_nothing(root: Path) -> None:
    result = query_once("丙台 开放时间", root, as_of=date(2025, 1, 1))
    assert (result["status"], result["reason"]) == ("refused", "conflicting_evidence")
    assert _audit(result)["out_of_window"] == []
    assert sorted(c["source"] for c in result["citations"]) == ["documents/bing_a.md", "documents/bing_b.md"]
    note = query_once("丙台 版本说明", root, as_of=date(2025, 1, 1))
    assert note["reason"] == "reserved_field"


def test_in_window_bounds() -> None:
    unit = {"valid_from": "2020-01-01", "valid_to": "2021-01-01"}
    assert not in_window(unit, date(2019, 12, 31))
    assert in_window(unit, date(2020, 1, 1))
    assert in_window(unit, date(2020, 12, 31))
    assert not in_window(unit, date(2021, 1, 1))
    assert in_window({}, date(1, 1, 1)) and in_window({}, date(9999, 12, 30))


@pytest.mark.parametrize(
    "bad",
    [
        "生效日期：2024-13-01",
        "生效日期：2024-1-1",
        "失效日期：2024/01/01",
        "生效日期：明年",
        "生效日期：20240101",
    ],
)
def test_malformed_date_is_an_index_error_for_that_file_only(make_corpus, bad: str) -> None:
    root = make_corpus({**FILES, "documents/bad.md": f"主题：戊台\n{bad}\n开放时间：七点。\n"})
    summary = build_index(root).as_dict()
    assert [e["path"] for e in summary["errors"]] == ["documents/bad.md"]
    assert (
        "not an ISO date" in summary["errors"][0]["error"] and "YYYY-MM-DD" in summary["errors"][0]["error"]
    )
    clean = build_index(make_corpus(FILES, name="clean")).as_dict()
    assert summary["files"] == len(FILES) + 1
    assert summary["units"] == clean["units"] == 14  # every unit of every other file was indexed
    assert query_once("乙台 开放时间", root, as_of=date(2021, 6, 1))["answer"] == "八点。"
    assert query_once("戊台 开放时间", root, as_of=date(2025, 1, 1))["status"] != "answered"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ("失效日期：2020-01-01\n生效日期：2021-01-01\n", "never valid"),
        ("生效日期：2020-01-01\n生效日期：2021-01-01\n", "second, different 生效日期"),
    ],
)
def test_inconsistent_dates_are_index_errors(make_corpus, lines: str, message: str) -> None:
    root = make_corpus({**FILES, "documents/bad.md": f"主题：戊台\n{lines}开放时间：七点。\n"})
    summary = build_index(root).as_dict()
    assert [e["path"] for e in summary["errors"]] == ["documents/bad.md"]
    assert message in summary["errors"][0]["error"]


def test_cli_index_reports_the_malformed_file(make_corpus, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_corpus({**FILES, "documents/bad.md": "主题：戊台\n生效日期：2024-02-30\n"})
    assert main(["index", str(root)]) == 0
    captured = capsys.readouterr()
    assert "1 errors" in captured.out
    assert "documents/bad.md" in captured.err and "not an ISO date" in captured.err


def test_clock_injection_is_used_when_as_of_is_none(root: Path) -> None:
    result = query_once("甲台 开放时间", root, clock=lambda: date(2022, 5, 5))
    assert result["answer"] == "八点。"
    assert result["trace"]["config"]["as_of"] == "2022-05-05"

    def broken_clock() -> date:
        raise AssertionError("the clock must not be read when as_of is given")

    result = query_once("甲台 开放时间", root, as_of=date(2025, 5, 5), clock=broken_clock)
    assert result["answer"] == "九点。"


def test_cli_as_of(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", str(root), "甲台 开放时间", "--as-of", "2021-01-01", "--json"]) == 0
    assert '"answer": "八点。"' in capsys.readouterr().out
    assert main(["ask", str(root), "甲台 开放时间", "--as-of", "2021-13-01"]) == 2
    assert "--as-of '2021-13-01' is not a date" in capsys.readouterr().err
