"""The eleventh pass's rules (docs/prose.md, "Eleventh-pass rules"): each test fails when its rule is
removed, and each rule has a look-alike case it must not accept."""

from __future__ import annotations

import pytest

from rag_lab.answering.answer_types import AnswerType, answer_type
from rag_lab.answering.prose import support_check


def sentence(text: str, title: str) -> dict:
    return {"text": text, "kind": "sentence", "title": title, "headings": [], "span": [0, len(text)],
            "parent_span": [0, len(text)]}  # fmt: skip


# -- 为什么 as 为 + 什么: the verb's complement and its object ------------------------------------


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("这部小说已经被改编为什么及真人版电影？", AnswerType.NONE),  # a conjunction after it: another object
        ("过敏的反应表现为什么？", AnswerType.NONE),  # it ends the question: 表现为 + 什么
        ("这是为什么？", AnswerType.REASON),  # a copula before it asks why
        ("这部小说为什么被改编为电影？", AnswerType.REASON),  # what it asks about follows it
    ],
)
def test_wei_shenme_as_complement_and_object(question: str, kind: AnswerType) -> None:
    assert answer_type(question)[0] == kind


def test_what_it_was_adapted_into_is_answered() -> None:
    title = "某小说"
    question = "《某小说》已经被改编为什么及真人版电影？"
    assert support_check(question, sentence("之后改编为漫画及真人版电影。", title)).ok
    # the look-alike negative: the sentence names the film only, nothing stands where 什么 stands
    assert not support_check(question, sentence("之后改编为真人版电影。", title)).ok


# -- 以Y为Z says that Z is Y (align._taken_as) ----------------------------------------------------


def test_what_a_thing_is_taken_as_answers_its_attribute() -> None:
    title = "某公司"
    text = "某公司是台湾一间以旅游和餐饮为主要业务的公司。"
    assert support_check("某公司的主要业务是什么？", sentence(text, title)).ok


@pytest.mark.parametrize(
    "text",
    [
        "某公司以诚信为原则，旅游和餐饮后来成为主要业务。",  # 以…为 another Z; 为Z without its 以
        "旅游和餐饮成为主要业务。",  # 为Z without 以 before it
    ],
)
def test_no_taken_as_frame_for_the_attribute_asked(text: str) -> None:
    assert not support_check("某公司的主要业务是什么？", sentence(text, "某公司")).ok


# -- 何时 answered by an event before 后/之前 opening its clause (answer_types.TIME_CLAUSE_RE) -----------


def test_when_is_answered_by_an_event_before_hou() -> None:
    support = support_check("长宗我部家何时成为丰臣家的从属势力？", sentence("四国征伐后，长宗我部家随即成为丰臣家的从属势力。", "长宗我部信亲"))
    assert support.ok and [v for _, _, v in support.values] == ["四国征伐后"]


@pytest.mark.parametrize(
    "text",
    [
        "此后，长宗我部家随即成为丰臣家的从属势力。",  # a deictic 此后 points back, it names no event
        "长宗我部家后来成为丰臣家的从属势力。",  # no clause ends in 后/之前
        "成为丰臣家的从属势力后，长宗我部家随即出兵。",  # the clause only repeats the question
    ],
)
def test_no_event_time_without_an_event_of_its_own(text: str) -> None:
    assert not support_check("长宗我部家何时成为丰臣家的从属势力？", sentence(text, "长宗我部信亲")).ok


# -- a yes/no question is answered by the sentence that says it (support._YES_NO_RE) --------------------


def test_a_yes_no_question_is_answered_by_the_sentence_saying_it() -> None:
    assert support_check("丙烯颜料溶于汽油吗？", sentence("溶于汽油。", "丙烯颜料")).ok
    assert support_check("丙烯颜料溶于汽油吗？", sentence("不溶于汽油。", "丙烯颜料")).ok  # it says no: still the answer


@pytest.mark.parametrize(
    ("question", "text"),
    [
        ("丙烯颜料溶于汽油吗？", "溶于水。"),  # says another thing
        ("丙烯颜料溶于汽油吗？", "丙烯颜料的颜色鲜艳。"),  # says only the subject
        ("丙烯颜料溶于汽油？", "溶于汽油。"),  # no 吗: not a yes/no question, nothing new is said
    ],
)
def test_no_yes_no_answer_without_the_statement(question: str, text: str) -> None:
    assert not support_check(question, sentence(text, "丙烯颜料")).ok


# -- how a name came about is how the thing got its name (terms.NAME_ORIGIN_RE) ----------------------


@pytest.mark.parametrize(
    "text",
    [
        "因盾柱木的柱头形状貌如盾形，故而得名。",
        "植物学家因其柱头形状貌如盾形，将它命名为盾柱木。",  # a naming cue says 得名
    ],
)
def test_how_a_name_came_about_is_answered_by_how_it_was_named(text: str) -> None:
    assert support_check("盾柱木的名字是怎样得来的？", sentence(text, "盾柱木")).ok


@pytest.mark.parametrize(
    "text",
    [
        "盾柱木的柱头形状貌如盾形。",  # says no naming
        "盾柱木的名字很常见，来自各地的游客都认识它。",  # 名字 and 来, but not how it was named
    ],
)
def test_no_name_origin_without_a_naming(text: str) -> None:
    assert not support_check("盾柱木的名字是怎样得来的？", sentence(text, "盾柱木")).ok


# -- V的是什么: what the predicate is, said in the clause after the anchor (align.aligned_span, onward) ---


def test_what_differs_is_said_in_the_next_clause() -> None:
    question = "椭球坐标系与其他三维正交坐标系不同的是什么？"
    text = "与大多数的三维正交坐标系的生成方法不同，椭球坐标系不是由二维坐标系旋转生成的。"
    assert support_check(question, sentence(text, "椭球坐标系")).ok


def test_x_shi_shenme_is_still_not_answered_by_the_next_clause() -> None:
    # X是什么 (X a noun) is answered where the sentence's 是 stands, not in the clause after X
    text = "椭球坐标系的旋转，后来被人们推广到三维空间。"
    assert not support_check("椭球坐标系的旋转是什么？", sentence(text, "椭球坐标系")).ok


def test_how_a_thing_is_done_is_taken_from_yi_y_fangshi_v() -> None:
    question = "《某专辑》的表现方式是什么？"
    assert support_check(question, sentence("专辑以弦乐四重奏乐团现场方式表现。", "某专辑")).ok
    # no manner noun before the verb: nothing says how it is done
    assert not support_check(question, sentence("专辑以弦乐四重奏乐团表现。", "某专辑")).ok
