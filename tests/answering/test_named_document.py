"""A question that names a document's title is about that document's subject (docs/prose.md,
"A named document"): another document's sentence that says the name's parts apart, or is
credited the name as a piece it leaves unsaid, supports nothing about it."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.answering.test_prose_answers import corpus

from rag_lab.retrieval import query_once

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

A = "# 沧澜博雅学堂\n\n## 概况\n每逢秋季，沧澜博雅学堂都会举办音乐节。\n"
A_FACTS = "## 历史\n1884年，沧澜博雅学堂的第二次扩建由谢景书主持完成。\n沧澜博雅学堂位于沧澜市西城区学府路129号。\n"
B = (
    "# 槐里兰亭学堂\n\n## 历史\n1925年，槐里兰亭学堂的第二次扩建由何建主持完成。\n"
    "槐里兰亭学堂位于沧澜市高新区光明路11号。\n"
)
C = "# 望江清风学堂\n\n## 历史\n1931年，望江清风学堂的第二次扩建由马强主持完成。\n"
EXTENDED = "沧澜博雅学堂的第二次扩建由谁主持完成？"


def test_other_documents_left_without_the_name_do_not_conflict(tmp_path: Path) -> None:
    root = corpus(tmp_path, {"a.md": A + A_FACTS, "b.md": B, "c.md": C})
    result = query_once(EXTENDED, root)
    assert (result["status"], result["answer"]) == ("answered", "1884年，沧澜博雅学堂的第二次扩建由谢景书主持完成。")
    assert {c["source"] for c in result["citations"]} == {"documents/a.md"}


def test_a_name_said_in_parts_by_another_document_does_not_conflict(tmp_path: Path) -> None:
    # 槐里 and 怀瑾图书馆 are both in b.md's sentence, apart: bigram coverage alone accepted it
    a = "# 槐里怀瑾图书馆\n\n槐里怀瑾图书馆位于杉湖市港区长江路167号。\n"
    b = "# 青岚怀瑾图书馆\n\n青岚怀瑾图书馆位于槐里市高新区光明路11号。\n"
    root = corpus(tmp_path, {"a.md": a, "b.md": b})
    result = query_once("槐里怀瑾图书馆位于哪里？", root)
    assert (result["status"], result["answer"]) == ("answered", "槐里怀瑾图书馆位于杉湖市港区长江路167号。")
    result = query_once("青岚怀瑾图书馆位于哪里？", root)
    assert (result["status"], result["answer"]) == ("answered", "青岚怀瑾图书馆位于槐里市高新区光明路11号。")


def test_another_documents_fact_is_not_the_named_ones(tmp_path: Path) -> None:
    # the named document says nothing of its extension: b.md's must not answer for it
    root = corpus(tmp_path, {"a.md": A, "b.md": B})
    result = query_once(EXTENDED, root)
    assert (result["status"], result["reason"]) == ("refused", "insufficient_evidence")
    assert "沧澜博雅学堂" in result["message"] and result["citations"] == []
    verified = [e for e in result["trace"]["events"] if e["step"] == "verify"]
    assert {e["source"] for e in verified} >= {"documents/a.md"}  # verified before its title counted


def unit(eid: str, source: str, title: str, text: str) -> dict:
    return {"evidence_id": eid, "source": source, "sha256": eid * 8, "kind": "sentence", "text": text,
            "title": title, "headings": [], "span": [0, len(text)], "parent_span": [0, len(text)]}  # fmt: skip


def test_the_named_document_is_looked_up_when_retrieval_does_not_reach_it() -> None:
    from datetime import date

    from rag_lab.answering.prose import decide_prose

    other = unit("b", "documents/b.md", "槐里兰亭学堂", "1925年，槐里兰亭学堂的第二次扩建由何建主持完成。")
    named = unit("a", "documents/a.md", "沧澜博雅学堂", "每逢秋季，沧澜博雅学堂都会举办音乐节。")
    asked: list[str] = []

    def about(words: str) -> list[dict]:
        asked.append(words)
        return [named]

    # without the lookup, graded coverage lets the name go unsaid: another document's fact answers
    assert decide_prose(EXTENDED, [other], [], date(2026, 1, 1)).answer == other["text"]
    decision = decide_prose(EXTENDED, [other], [], date(2026, 1, 1), about=about)
    assert (decision.status, decision.reason) == ("refused", "insufficient_evidence")
    assert asked == ["沧澜博雅学堂"]  # the phrase of the piece it was credited (沧澜博雅; 学堂 it says)
    assert "沧澜博雅学堂" in decision.message
    # a lookup that finds no document of that name changes nothing
    assert decide_prose(EXTENDED, [other], [], date(2026, 1, 1), about=lambda w: [other]).answer == other["text"]


def test_a_document_the_caller_cannot_see_names_nothing(tmp_path: Path) -> None:
    from rag_lab.data.access import Principal

    root = corpus(tmp_path, {"a.md": "权限：hr\n\n" + A, "b.md": B})
    bob = Principal("bob", frozenset({"staff"}))
    result = query_once(EXTENDED, root, principal=bob)
    assert "a.md" not in str(result)  # the hidden document neither refuses nor is looked up for bob
