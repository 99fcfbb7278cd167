"""The request path's caches (issue 18, preq10): the question's analysis (``support._asked``), a
context's normalised text (``terms.norm``; preq10 cached its bigrams, preq12 tests the parts' bigrams
on it) and ``terms._split_by_context`` are made once and reused; a reused value must never differ from a fresh one, nor leak from one question to another."""

from __future__ import annotations

import itertools

from rag_lab.answering import support, terms
from rag_lab.answering.prose import support_check

QUESTIONS = (
    "新馆什么时候开放？",
    "新馆共有多少个座位？",
    "这部电影由谁发行？",
    "图书馆在哪里？",
    "图书馆的馆长是谁？",
)
UNITS = tuple(
    {"text": text, "kind": "sentence", "title": title, "headings": headings, "span": [0, len(text)],
     "parent_span": [0, len(text)]}  # fmt: skip
    for text, title, headings in (
        ("新馆于2021年9月1日正式开放。", "市图书馆", ["新馆"]),
        ("新馆共有120个座位。", "市图书馆", ["新馆"]),
        ("这部电影由华纳兄弟公司发行。", "某片", []),
        ("图书馆位于市中心的人民路。", "市图书馆", []),
        ("图书馆的馆长是王家瑞。", "市图书馆", ["馆长"]),
        ("新馆的座位比旧馆多。", "市图书馆", []),
    )
)


def clear() -> None:
    support._asked.cache_clear()
    terms.norm.cache_clear()
    terms._split_by_context.cache_clear()


def fresh(question: str, unit: dict) -> object:
    clear()
    return support_check(question, unit)


def test_cached_checks_equal_fresh_ones_in_any_order() -> None:
    expected = {(q, i): fresh(q, u) for q, (i, u) in itertools.product(QUESTIONS, enumerate(UNITS))}
    assert any(s.ok for s in expected.values()) and not all(s.ok for s in expected.values())
    clear()
    pairs = list(itertools.product(QUESTIONS, enumerate(UNITS)))
    for q, (i, u) in pairs + pairs[::-1]:  # every value twice, the second time from the caches
        assert support_check(q, u) == expected[(q, i)], (q, u["text"])


def test_the_question_analysis_is_the_question_s_own() -> None:
    clear()
    first, second = support._asked(QUESTIONS[0]), support._asked(QUESTIONS[1])
    assert first.terms != second.terms and first.kind != second.kind
    assert support._asked(QUESTIONS[0]) is first  # made once


def test_split_by_context_returns_fresh_lists() -> None:
    named, pieces = terms.split_by_context(["王家瑞担任"], "王家瑞")
    named.append("changed")
    pieces.clear()
    assert terms.split_by_context(["王家瑞担任"], "王家瑞") == (["王家瑞"], ["担任"])
