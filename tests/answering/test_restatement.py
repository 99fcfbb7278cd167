"""An untyped question answered by a sentence that restates it (docs/prose.md, "Restatement"):
every question piece said whole by the sentence itself, no aligned span needed; such a pass
ranks below one with something standing at the question's gap."""

from __future__ import annotations

from datetime import date

import pytest

from rag_lab.answering.prose import decide_prose, support_check
from rag_lab.records import Status


def sentence(text: str, title: str, n: int = 0) -> dict:
    return {
        "text": text, "value": text, "kind": "sentence", "title": title, "headings": [],
        "evidence_id": f"e{n}", "sha256": "same", "source": "documents/a.md", "span": [10 * n, 10 * n + len(text)],
    }  # fmt: skip


QUESTION = "在开馆典礼上，新馆发生了什么事情？"


@pytest.mark.parametrize(
    ("question", "text", "title", "expected"),
    [
        # every piece said, the answer where the question's words do not anchor it
        ("新馆的开放时间由什么决定？", "读者人数和季节决定了新馆的开放时间。", "学校", "ok"),
        (QUESTION, "在开馆典礼上，校长把新馆的钥匙交给了学生代表。", "学校", "ok"),
        # the title names 新馆: one piece beyond the context is not a restatement
        (QUESTION, "在开馆典礼上，校长把新馆的钥匙交给了学生代表。", "新馆", "answer_type"),
        # the question's words and too little besides them: nothing where an answer could stand
        (QUESTION, "新馆在开馆典礼上发生。", "学校", "answer_type"),
        # a piece unsaid: coverage fails as before
        (QUESTION, "在开馆典礼上，来宾众多。", "学校", "terms"),
        # an announcement stays one (数个…特点: the next sentences give them)
        ("在开馆典礼上，新馆展示了什么特点？", "在开馆典礼上，新馆展示了数个独有特点。", "学校", "answer_type"),
    ],
)
def test_a_restatement_passes_an_untyped_question(question: str, text: str, title: str, expected: str) -> None:
    support = support_check(question, sentence(text, title))
    assert ("ok" if support.ok else support.problem) == expected
    assert support.restated == (expected == "ok")


def test_typed_questions_still_need_their_value() -> None:
    support = support_check("在开馆典礼上，新馆是什么时候发生火灾的？", sentence("在开馆典礼上，新馆发生了火灾，无人受伤。", "学校"))
    assert not support.ok and support.problem == "answer_type" and not support.restated


def test_a_restatement_ranks_below_a_sentence_with_the_answer_at_the_gap() -> None:
    restated = sentence("读者人数和季节决定了新馆的开放时间。", "学校", 1)
    at_gap = sentence("新馆的开放时间由校务会议决定。", "学校", 2)
    question = "新馆的开放时间由什么决定？"
    assert support_check(question, restated).restated and not support_check(question, at_gap).restated
    assert support_check(question, at_gap).ok
    decision = decide_prose(question, [restated, at_gap], [], date(2024, 1, 1))
    assert decision is not None and decision.status == Status.ANSWERED
    assert decision.answer == at_gap["text"]
    # two restatements saying different things are a tie, refused
    other = sentence("校长和馆长决定了新馆的开放时间安排。", "学校", 3)
    tied = decide_prose(question, [restated, other], [], date(2024, 1, 1))
    assert tied is not None and tied.status == Status.REFUSED
