"""Graded coverage (docs/prose.md, "One piece unsaid"): one question piece of two or more
characters may go unsaid when the sentence says every other piece whole, at least two of them,
and the unsaid piece is at most a third of the pieces' characters; such a pass ranks below one
that says every piece."""

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
