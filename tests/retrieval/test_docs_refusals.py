"""docs/refusals.md documents every refusal reason and every status (built from the enums)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rag_lab.records import Reason, Status

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

DOC = Path(__file__).resolve().parents[2] / "docs" / "refusals.md"


def table_rows() -> dict[str, list[str]]:
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        found = re.match(r"^\| `([a-z_]+)` \|(.*)\|$", line)
        if found:
            rows[found.group(1)] = [cell.strip() for cell in found.group(2).split("|")]
    return rows


@pytest.mark.parametrize("reason", list(Reason), ids=str)
def test_every_reason_has_a_row(reason: Reason) -> None:
    rows = table_rows()
    assert str(reason) in rows, f"docs/refusals.md has no table row for `{reason}`"
    status, meaning, example = rows[str(reason)]
    assert status in {str(s) for s in Status}
    assert meaning and "→" in example


def test_no_row_for_an_unknown_reason() -> None:
    assert set(table_rows()) == {str(r) for r in Reason}


def test_every_status_is_named() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert all(f"`{s}`" in text for s in Status)


EXAMPLES = [
    ("新台 开放时间", {}, "conflicting_evidence"),
    ("借阅台 容量", {}, "no_supporting_evidence"),
    ("什么时候能借东西", {}, "no_supporting_evidence"),
    ("借阅台 和 测试台 的 开放时间", {"top_k": 1}, "evidence_not_retrieved"),
    ("借阅台 开放时间", {"budget": 5}, "excluded_by_budget"),
    ("红色 小 圆形 材质", {}, "unsupported_attribute"),
    ("便笺 原文", {}, "reserved_field"),
    ("借阅台", {}, "subject_without_field"),
    ("开放时间", {}, "field_without_subject"),
    ("借阅台 测试台 开放时间", {}, "ambiguous_subject"),
    ("借阅台 开放时间 地点", {}, "ambiguous_field"),
    ("借阅台和测试台的开放时间", {}, "partial_support"),
]


@pytest.mark.parametrize(("question", "options", "reason"), EXAMPLES, ids=[e[2] + "-" + e[0] for e in EXAMPLES])
def test_documented_example_gives_the_documented_status(
    indexed_demo: Path, question: str, options: dict[str, int], reason: str
) -> None:
    from rag_lab.retrieval import query_once

    result = query_once(question, indexed_demo, **options)  # type: ignore[arg-type]
    assert result["reason"] == reason
    assert result["status"] == table_rows()[reason][0]
    assert f"`{question}`" in DOC.read_text(encoding="utf-8")
    if reason != "partial_support":
        assert result["answer"] is None
