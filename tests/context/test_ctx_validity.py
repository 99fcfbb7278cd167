"""Time validity: 生效日期 ≤ as_of < 失效日期; only in-window values can conflict."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from rag_lab.cli import main
from rag_lab.index import build_index
from rag_lab.retrieval import query_once
from rag_lab.retrieval.answer import in_window

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

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
    ["生效日期：2024-13-01", "失效日期：2024/02/30", "生效日期：明年", "生效日期：20240101", "生效日期 ：2024-01-01"],
)
def test_unreadable_date_keeps_the_file_and_refuses_its_questions(make_corpus, bad: str) -> None:
    root = make_corpus({**FILES, "documents/bad.md": f"主题：戊台\n{bad}\n开放时间：七点。\n"})
    summary = build_index(root).as_dict()
    assert summary["errors"] == []  # the file is not dropped
    assert summary["files"] == len(FILES) + 1
    # its units (开放时间, and the date line when it is a clean field line) are in the index
    assert summary["units"] == 14 + (1 if " ：" in bad else 2)
    assert query_once("乙台 开放时间", root, as_of=date(2021, 6, 1))["answer"] == "八点。"
    result = query_once("戊台 开放时间", root, as_of=date(2025, 1, 1))
    assert (result["status"], result["reason"], result["answer"]) == ("refused", "validity_unreadable", None)
    assert "documents/bad.md:2" in result["message"] and "unreadable" in result["message"]
    assert result["citations"] == []
    audit = _audit(result)
    assert [p["source"] for p in audit["validity_unreadable"]] == ["documents/bad.md"]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ("失效日期：2020-01-01\n生效日期：2021-01-01\n", "is before 生效日期"),
        ("生效日期：2020-01-01\n生效日期：2021-01-01\n", "second, different 生效日期"),
    ],
)
def test_inconsistent_dates_are_unreadable_windows(make_corpus, lines: str, message: str) -> None:
    root = make_corpus({**FILES, "documents/bad.md": f"主题：戊台\n{lines}开放时间：七点。\n"})
    summary = build_index(root).as_dict()
    assert summary["errors"] == []
    result = query_once("戊台 开放时间", root, as_of=date(2020, 6, 1))
    assert result["reason"] == "validity_unreadable" and message in result["message"]


def test_one_unreadable_copy_refuses_the_whole_key(make_corpus) -> None:
    """Whether the unreadable copy is current is unknown: no value of the key is given."""
    root = make_corpus({**FILES, "documents/yi_bad.md": "主题：乙台\n失效日期：明天\n开放时间：八点。\n"})
    build_index(root)
    result = query_once("乙台 开放时间", root, as_of=date(2021, 6, 1))
    assert result["reason"] == "validity_unreadable" and "documents/yi_bad.md:2" in result["message"]


@pytest.mark.parametrize(
    ("value", "answered_on", "refused_on"),
    [("1996年8月1日", date(1996, 8, 1), date(1996, 7, 31)), ("2024/3/1", date(2024, 3, 1), date(2024, 2, 29)),
     ("2024.3.1", date(2024, 3, 1), date(2024, 2, 29)), ("2024-3-1", date(2024, 3, 1), date(2024, 2, 29))],
)
def test_dates_as_people_write_them_bound_the_window(
    make_corpus, value: str, answered_on: date, refused_on: date
) -> None:
    root = make_corpus({"documents/wu.md": f"主题：戊台\n生效日期：{value}\n开放时间：七点。\n"})
    assert build_index(root).as_dict()["errors"] == []
    assert query_once("戊台 开放时间", root, as_of=answered_on)["answer"] == "七点。"
    late = query_once("戊台 开放时间", root, as_of=refused_on)
    assert (late["reason"], late["answer"]) == ("no_supporting_evidence", None)


def test_unreadable_window_without_an_index_is_refused_too(make_corpus) -> None:
    from rag_lab.retrieval import answer

    root = make_corpus({"documents/wu.md": "主题：戊台\n生效日期：下月起\n开放时间：七点。\n"})
    from rag_lab.data import extract_documents

    units = [u for u in extract_documents(root) if u["field"] == "开放时间"]
    result = answer("戊台 开放时间", [{"score": 1.0, "evidence": units[0]}], root)
    assert result["reason"] == "validity_unreadable"


def test_cli_index_warns_about_the_unreadable_date(make_corpus, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_corpus({**FILES, "documents/bad.md": "主题：戊台\n生效日期：2024-02-30\n"})
    assert main(["index", str(root)]) == 0
    captured = capsys.readouterr()
    assert "0 errors" in captured.out
    assert "documents/bad.md:2" in captured.err and "validity window unreadable" in captured.err


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
