"""The tenth pass's recognisers (docs/prose.md): each test fails when its rule is removed, and each
rule has a case it must not accept."""

from __future__ import annotations

import pytest

from rag_lab.answering.align import aligned_span
from rag_lab.answering.answer_types import AnswerType, time_clauses, typed_values
from rag_lab.answering.prose import support_check


def sentence(text: str, title: str) -> dict:
    return {"text": text, "kind": "sentence", "title": title, "headings": [], "span": [0, len(text)],
            "parent_span": [0, len(text)]}  # fmt: skip


def values(question: str, text: str, title: str) -> list[str]:
    support = support_check(question, sentence(text, title))
    return [v for _, _, v in support.values] if support.ok else []


# -- 谁: an organisation (answer_types._ORG) -----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("这部电影由华纳兄弟公司发行。", ["华纳兄弟公司"]),
        ("奖项由中国作家协会颁发。", ["中国作家协会"]),
        ("该计划由香港特别行政区政府推行。", ["香港特别行政区政府"]),
        ("大桥由交通运输部批准。", ["交通运输部"]),
    ],
)
def test_an_organisation_is_a_name(text: str, found: list[str]) -> None:
    assert [v for _, _, v in typed_values(AnswerType.NAME, text)] == found


@pytest.mark.parametrize("text", ["这部电影在全部城市发行。", "故事的结局出人意料。", "他住在寺院东侧。"])
def test_words_ending_in_an_organisation_head_are_no_organisation(text: str) -> None:
    assert typed_values(AnswerType.NAME, text) == []


def test_who_is_answered_by_an_organisation() -> None:
    assert values("这部电影由谁发行？", "这部电影由华纳兄弟公司发行。", "某片") == ["华纳兄弟公司"]
    assert values("这部电影由谁发行？", "这部电影在全部城市发行。", "某片") == []
    # without _ORG the aligned span or a place answers these in part (由华纳兄弟公司, 中国)
    assert values("这部电影是谁发行的？", "这部电影由华纳兄弟公司发行，上映于2001年。", "某片") == ["华纳兄弟公司"]
    assert values("谁颁发这个奖项？", "这个奖项每年由中国作家协会颁发。", "某奖") == ["中国作家协会"]
    assert values("该奖项由谁颁发？", "该奖项每年颁发一次，颁发者为中国作家协会。", "某奖") == ["中国作家协会"]


# -- 谁: the title as the sentence's subject (support._title_subject) --------------------------


def test_who_is_answered_by_the_title_opening_the_sentence() -> None:
    text = "阿若憍陈如听佛说法后，马上证得阿罗汉果，成为佛教僧团中的第一位阿罗汉。"
    assert values("佛教僧团中的第一位阿罗汉是谁？", text, "阿若憍陈如") == ["阿若憍陈如"]


def test_the_title_answers_nothing_when_the_sentence_does_not_open_with_it() -> None:
    text = "后来他马上证得阿罗汉果，成为佛教僧团中的第一位阿罗汉，阿若憍陈如也在场。"
    assert values("佛教僧团中的第一位阿罗汉是谁？", text, "阿若憍陈如") == []


def test_the_title_span_is_the_sentence_spelling_of_it() -> None:
    # ﬁ is one code point that normalises to two: the cited span is the sentence's own spelling
    text = "ﬁat公司听取意见后，成为当地第一家汽车厂。"
    assert values("当地第一家汽车厂是谁？", text, "Fiat公司") == ["ﬁat公司"]
    text = "ＡＢＣ公司听取意见后，成为当地第一家汽车厂。"
    assert values("当地第一家汽车厂是谁？", text, "ABC公司") == ["ＡＢＣ公司"]


def test_the_title_answers_nothing_when_the_question_names_it() -> None:
    text = "阿若憍陈如听佛说法后，成为佛教僧团中的第一位阿罗汉。"
    assert values("阿若憍陈如是谁的弟子？", text, "阿若憍陈如 (僧人)") == []


# -- 何时/什么时候: a time clause (answer_types.time_clauses) -----------------------------------


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("只有在春季化雪的时候可能会短期关闭。", ["只有在春季化雪的时候"]),
        ("当大军渡河时，敌军已撤。", ["当大军渡河时"]),
        ("原本是模特儿，高二的时候拍了MV。", ["高二的时候"]),
    ],
)
def test_time_clauses(text: str, found: list[str]) -> None:
    assert [v for _, _, v in time_clauses("什么时候", text)] == found


def test_a_time_clause_answers_only_when() -> None:
    assert time_clauses("哪一年", "只有在春季化雪的时候可能会短期关闭。") == []
    assert time_clauses("什么时候", "在此期间，他在时间管理上很有心得。") == []  # 时间/时期 are no clause ends


def test_when_is_answered_by_a_time_clause() -> None:
    question = "峡谷什么时候可能会短期关闭？"
    text = "峡谷终年可以进入，但是需要买门票，只有在春季化雪的时候可能会短期关闭。"
    assert values(question, text, "帕特纳赫峡谷") == ["只有在春季化雪的时候"]


def test_a_time_clause_that_only_repeats_the_question_is_no_answer() -> None:
    assert values("峡谷什么时候可能会短期关闭？", "峡谷在关闭时可能会短期关闭。", "帕特纳赫峡谷") == []


# -- the aligned span (align.py) ---------------------------------------------------------------


def test_an_announcing_colon_gives_what_follows_it() -> None:
    text = "其中，椭球坐标遵守以下限制：坐标曲面是椭球面，其余是双曲面。"
    assert [v for _, _, v in aligned_span("椭球坐标要遵守什么限制？", text)] == ["坐标曲面是椭球面"]


def test_a_colon_after_something_new_keeps_the_span_before_it() -> None:
    text = "其中，椭球坐标遵守三条限制：坐标曲面是椭球面。"
    assert [v for _, _, v in aligned_span("椭球坐标要遵守什么限制？", text)] == ["三条限制"]


def test_the_longest_left_anchor_of_both_forms() -> None:
    text = "学习程派表演形式，吸收牛派的风格，形成了自己独特的爱爱腔。"
    assert [v for _, _, v in aligned_span("爱爱腔的形成吸收了哪派的风格？", text)] == ["牛派的"]


def test_one_character_beside_the_question_word_may_be_said_otherwise() -> None:
    text = "它以暹罗君主的女儿威拍哇丽兰室公主而命名。"
    assert [v for _, _, v in aligned_span("威拍哇丽兰室路是以什么来命名的？", text)] == ["暹罗君主的女儿威拍哇丽兰室公主而"]


def test_only_one_character_beside_the_question_word() -> None:
    # 来命名 said as 取的名: two characters differ, no right anchor, no span
    assert aligned_span("威拍哇丽兰室路是以什么来命名的？", "它以暹罗君主的女儿威拍哇丽兰室公主取的名。") == []


# -- restatement with a time frame (support._restated_frame) -----------------------------------


def test_the_subject_beside_a_time_frame_is_restated() -> None:
    text = "1982年，骑士把兰比尔交换到底特律活塞队，直到退役。"
    support = support_check("在1982年，兰比尔发生了什么事情？", sentence(text, "比尔·兰比尔"))
    assert support.ok and support.restated


def test_the_subject_without_a_time_frame_is_no_restatement() -> None:
    text = "亚太基金会是融合知识的综合性研究机构，并提供政策支持。"
    support = support_check("亚太基金会的研究内容是什么？", sentence(text, "亚太基金会"))
    assert not support.ok
