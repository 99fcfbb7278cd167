"""The graded parts of the support check (docs/prose.md): an untyped question answered by a
sentence that restates it ("Restatement": every question piece said whole by the sentence itself,
no aligned span needed), and one question piece left unsaid beside the others ("One piece
unsaid": the sentence says every other piece whole, at least two of them, and the unsaid piece is
at most a third of the pieces' characters). Both rank below a pass that says everything at the
question's gap."""

from __future__ import annotations

from datetime import date

import pytest

from rag_lab.answering.prose import decide_prose, support_check
from rag_lab.answering.support import passes
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


LENGTH = "新馆的阅览室的长度约是多少米？"
HANDED = "2008年，新馆阅览室以什么方式交给学生会管理？"


@pytest.mark.parametrize(
    ("question", "text", "title", "expected", "unsaid"),
    [
        (LENGTH, "新馆的阅览室长约40米。", "学校", "ok", ("长度",)),  # 新馆, 阅览室 said; 长度 said as 长
        (LENGTH, "新馆的阅览室长约40米。", "新馆", "terms", ()),  # the title names 新馆: one piece beside it
        (HANDED, "2008年6月，新馆阅览室以委托方式交给学生会管理。", "学校", "ok", ()),  # all said
        (HANDED, "2008年6月，新馆阅览室以委托方式交给学生会。", "学校", "ok", ("管理",)),
        # the unsaid piece is most of the question: no
        ("新馆阅览室的照明设备采用什么技术？", "新馆阅览室采用节能技术。", "学校", "terms", ()),
        # only when the rest of the check passes (here no length): else the unsaid piece is reported
        (LENGTH, "新馆的阅览室很长，可容纳许多读者。", "学校", "terms", ()),
    ],
)
def test_one_piece_may_go_unsaid(question: str, text: str, title: str, expected: str, unsaid: tuple) -> None:
    support = support_check(question, sentence(text, title))
    assert ("ok" if support.ok else support.problem) == expected
    assert support.unsaid == unsaid
    assert passes(question, sentence(text, title)) == support.ok  # the conflict audit's verdict too
    if expected == "terms":
        assert support.missing


def test_two_unsaid_pieces_fail() -> None:
    support = support_check("2008年，新馆阅览室以什么方式交给学生会管理？", sentence("2008年6月，新馆阅览室委托学生会。", "学校"))
    assert not support.ok and support.problem == "terms"


def test_a_sentence_saying_every_piece_ranks_first() -> None:
    unsaid = sentence("新馆的阅览室长约40米。", "学校", 1)
    said = sentence("新馆的阅览室的长度为45米。", "学校", 2)
    assert support_check(LENGTH, unsaid).unsaid and not support_check(LENGTH, said).unsaid
    decision = decide_prose(LENGTH, [unsaid, said], [], date(2024, 1, 1))
    assert decision is not None and decision.status == Status.ANSWERED and decision.answer == said["text"]
