"""The twelfth pass's rules (docs/prose.md, "Twelfth-pass rules"): each test fails when its rule is
removed, and each rule has a look-alike case it must not accept."""

from __future__ import annotations

import hashlib

from rag_lab.data.documents import ParsedDocument, parse_document


def parse(text: str) -> ParsedDocument:
    data = text.encode("utf-8")
    return parse_document("documents/t.md", data, hashlib.sha256(data).hexdigest())


def sentences(parsed: ParsedDocument) -> list[str]:
    return [str(u["text"]) for u in parsed.units if u.get("kind") == "sentence"]


# -- a malformed field line before any 主题 line stays prose ---------------------------------------


def test_a_paragraph_ending_in_a_colon_is_prose() -> None:
    # one line of prose whose last clause announces a table; the first full-width colon ends it
    parsed = parse("# 甲桥\n\n甲桥位于乙县丙镇，是省级风景名胜区。甲桥的数值（单位/米）：\n")
    assert "甲桥位于乙县丙镇，是省级风景名胜区。" in sentences(parsed)
    assert parsed.warnings == [(3, "field line before any 主题 line; add 主题：… above line 3")]


def test_a_space_before_a_colon_in_prose_keeps_the_paragraph() -> None:
    parsed = parse("# 甲\n\n甲（希伯来文： abc）是一位先知。他著有《甲书》。\n")
    assert "他著有《甲书》。" in sentences(parsed)
    assert parsed.warnings == [(3, "field line before any 主题 line; add 主题：… above line 3")]


def test_an_empty_field_under_a_subject_is_still_no_unit() -> None:
    # the look-alike: after a 主题 line the same shape is a field with an empty value, warned and skipped
    parsed = parse("主题：甲\n地点：\n")
    assert parsed.units == []
    assert parsed.warnings == [(2, "field '地点' has an empty value; the line is not an evidence unit")]
    parsed = parse("主题：甲\n地点 ：一楼\n")
    assert parsed.units == [] and "whitespace next to the full-width colon" in parsed.warnings[0][1]
    # before any 主题 line a bare name and colon holds no sentence: still a warned field line, no unit
    bare = parse("---\n\n地点：\n")
    assert bare.units == [] and "has an empty value" in bare.warnings[0][1]
    # and a date or access line with an empty value still fails closed before any 主题 line
    dated = parse("失效日期：\n甲桥位于乙县。\n")
    assert all(u.get("validity_unreadable") for u in dated.units) and dated.units


# -- a reason told before the outcome the sentence restates ---------------------------------------


def unit(text: str, title: str) -> dict:
    return {"text": text, "kind": "sentence", "title": title, "headings": [], "span": [0, len(text)],
            "parent_span": [0, len(text)]}  # fmt: skip


def test_a_reason_told_before_the_restated_outcome_answers() -> None:
    from rag_lab.answering.prose import support_check

    question = "李某为何无缘国家奥运队？"
    text = "2008年，李某在备战比赛时再次撕裂了十字韧带，被迫又休养一年，不但无缘国家奥运队的名单，还被球会解约。"
    check = support_check(question, unit(text, "李某"))
    assert check.ok and check.restated  # no cause word: it ranks below a sentence that has one


def test_the_outcome_alone_is_no_reason() -> None:
    from rag_lab.answering.prose import support_check

    question = "李某为何无缘国家奥运队？"
    # only a date before the outcome; the outcome first; a short clause before it; a sentence pointing back
    for text in (
        "2009年，李某无缘国家奥运队。",
        "李某无缘国家奥运队，之后转会到南方的一家球会效力多年。",
        "受伤后被判停赛，李某无缘国家奥运队。",
        "因此，经过一年的休养和漫长的等待，李某仍然无缘国家奥运队。",
    ):
        assert not support_check(question, unit(text, "李某")).ok, text
