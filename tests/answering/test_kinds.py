"""Kinds answered by an instance (answering/kinds.py, docs/prose.md "Kinds answered by an instance")."""

from __future__ import annotations

import pytest

from rag_lab.answering.kinds import KIND_INSTANCES, instances, kinds_asked
from rag_lab.answering.prose import support_check


def sentence(text: str, title: str) -> dict:
    return {"text": text, "value": text, "kind": "sentence", "title": title, "headings": []}


@pytest.mark.parametrize(
    ("kind", "text", "found"),
    [
        ("季节", "排列成圆锥花序，秋季开花。", ["秋季"]),
        ("季节", "春末夏初最盛。", ["春末", "夏初"]),
        ("颜色", "花冠淡紫色，果实黑色。", ["淡紫色", "黑色"]),
        ("形状", "总苞圆柱形，叶片披针形。", ["圆柱形", "披针形"]),
        ("职业", "牛佬，香港漫画家。", ["漫画家"]),
        ("职业", "中国足球运动员，司职中场。", ["运动员"]),
        ("语言", "他精通英语、法语和意大利语。", ["英语", "法语", "意大利语"]),
    ],
)
def test_instances_of_a_kind(kind: str, text: str, found: list[str]) -> None:
    assert [v for _, _, v in instances(kind, text)] == found


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("季节", "四季如春。"),  # no season named
        ("形状", "情形复杂，地形崎岖。"),  # words holding 形 that name no shape
        ("职业", "他的家乡在大家的帮助下重建。"),  # 家 alone is no occupation
        ("语言", "术语与用语。"),
    ],
)
def test_words_that_are_no_instance(kind: str, text: str) -> None:
    assert instances(kind, text) == []


def test_the_asked_kinds_come_from_heads_and_terms() -> None:
    assert kinds_asked(["牡蒿", "开花"], ["季节"]) == ["季节"]
    assert kinds_asked(["牛佬", "职业"], []) == ["职业"]
    assert kinds_asked(["牛佬", "爱好"], ["作品"]) == []
    assert kinds_asked(["西班牙语言"], []) == []  # a name ending in a kind word asks for no instance
    assert set(KIND_INSTANCES) == {"季节", "颜色", "形状", "职业", "语言"}


def test_an_instance_fills_the_slot_when_no_span_aligns() -> None:
    support = support_check("牡蒿在什么季节开花？", sentence("头状花序卵形，排列成圆锥花序，秋季开花。", "牡蒿"))
    assert support.ok and [v for _, _, v in support.values] == ["秋季"]


def test_a_kind_term_is_said_by_an_instance() -> None:
    support = support_check("牛佬的职业是什么？", sentence("牛佬，香港漫画家，原名文启明。", "牛佬"))
    assert support.ok and [v for _, _, v in support.values] == ["漫画家"]


def test_without_an_instance_the_kind_term_is_missing() -> None:
    support = support_check("牛佬的职业是什么？", sentence("牛佬，原名文启明，1961年出生。", "牛佬"))
    assert not support.ok and support.problem == "terms" and support.missing == ("职业",)


def test_an_instance_must_stand_in_a_clause_that_says_the_question() -> None:
    text = "头状花序卵形，开花后结果，叶片到了深秋季节全部变成红色。"
    support = support_check("牡蒿在什么季节开花？", sentence(text, "牡蒿"))
    assert support.covered == ("牡蒿", "开花")
    assert not support.ok and support.problem == "answer_type"  # 秋季 is when the leaves turn red


def test_other_kinds_stay_terms() -> None:
    support = support_check("牛佬的爱好是什么？", sentence("牛佬，香港漫画家。", "牛佬"))
    assert not support.ok and support.missing == ("爱好",)



def test_a_kind_the_sentence_names_is_left_to_the_aligned_span() -> None:
    # 放弃了漫画家的职业 names the kind: no instance stands in for it (the aligned span finds nothing after 职业)
    support = support_check("牛佬的职业是什么？", sentence("牛佬后来放弃了漫画家的职业。", "牛佬"))
    assert not support.ok and support.problem == "answer_type" and support.values == ()


def test_two_sentences_naming_the_same_instance_are_no_tie() -> None:
    from datetime import date

    from rag_lab.answering.prose import decide_prose

    def unit(n: int, text: str) -> dict:
        return {**sentence(text, "牛佬"), "evidence_id": f"e{n}", "sha256": "s", "source": "a.md",
                "span": [n * 100, n * 100 + len(text)], "parent_span": [0, 1000]}  # fmt: skip

    question = "牛佬的职业是什么？"
    first, second = unit(1, "牛佬，香港漫画家，原名文启明。"), unit(2, "牛佬是香港漫画家中最多作品被拍成电影的。")
    other = unit(3, "牛佬，香港演员，原名文启明。")
    agreeing = decide_prose(question, [first, second], [], date(2024, 1, 1))
    assert agreeing is not None and agreeing.answer == first["text"] and len(agreeing.cited) == 1
    differing = decide_prose(question, [first, other], [], date(2024, 1, 1))
    assert differing is not None and differing.answer is None and "equally well" in differing.message
