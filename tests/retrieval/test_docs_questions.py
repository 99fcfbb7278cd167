"""docs/questions.md: every example question gives the documented result on the demo corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_lab.retrieval import query_once

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

DOC = Path(__file__).resolve().parents[2] / "docs" / "questions.md"

EXAMPLES = [
    ("请问高等数学的学分是多少？", "answered", None, "五学分"),
    ("数学 学分", "answered", None, "三学分"),
    ("借阅台的开放时间和地点分别是什么？", "answered", None, None),
    ("借阅台、打印室的开放时间", "answered", None, None),
    ("借阅台 测试台 开放时间", "needs_clarification", "ambiguous_subject", None),
    ("打印室在哪？借阅台的开放时间是几点", "answered", None, "周二至周五十四点到十七点。"),  # the field's clause
    ("借阅台，测试台，开放时间", "needs_clarification", "ambiguous_subject", None),  # neither shares it alone
    ("借阅台开放时间借阅台", "answered", None, "周二至周五十四点到十七点。"),  # one name said twice
    ("借阅台 容量", "refused", "no_supporting_evidence", None),
    ("什么时候能借东西", "refused", "no_supporting_evidence", None),
    ("会议室Ａ 容量", "answered", None, "二十人"),  # full-width Ａ folds to A
    ("打印室在哪里", "answered", None, "学生活动中心一楼"),  # alias 在哪里 → 地点
    ("打印室的电话是多少", "answered", None, "010-62751002"),  # partial 电话 → 联系电话
    ("会议室A能坐多少人", "answered", None, "二十人"),  # alias 多少人 → 容量
    ("藏经阁的开放时间", "refused", "no_supporting_evidence", None),  # not a subject of the corpus
    ("借阅台及打印室的开放时间", "needs_clarification", "ambiguous_subject", None),  # 及 is no conjunction
]


@pytest.mark.parametrize(("question", "status", "reason", "answer"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_documented_question_gives_the_documented_result(
    indexed_demo: Path, question: str, status: str, reason: str | None, answer: str | None
) -> None:
    result = query_once(question, indexed_demo)
    assert (result["status"], result["reason"]) == (status, reason)
    if answer is not None:
        assert result["answer"] == answer
    if status == "answered" and answer is None:
        assert len(result["slots"]) == 2
    text = DOC.read_text(encoding="utf-8")
    assert f"`{question}`" in text
