"""Field matching, fourth pass (issue 13): light endings, belonging, openings (docs/questions.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import ABSENT_CHARS as ABSENT
from tests.conftest import assert_rows_in_questions_doc, write_files

from rag_lab.data.aliases import general_aliases
from rag_lab.index import build_index
from rag_lab.retrieval import query_once
from rag_lab.retrieval.fields import Method, belonging_fields, extended_by_light_tail, match_field

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

GENERAL = general_aliases()


def _named(rest: str, fields: list[str], named: str) -> object:
    """``match_field`` as the parse calls it when ``named`` is a field of the corpus the subject lacks."""
    at = rest.find(named)
    return match_field(rest, fields, GENERAL, named=[named], asked_at=[(at, at + len(named))])


@pytest.mark.parametrize(
    ("rest", "fields", "named", "want"),
    [
        ("请问\ufffc的主持人是谁啊？", ["主持", "播出时间"], "主持人", "主持"),  # an agent suffix
        ("\ufffc任职于什么？", ["任职", "性别"], "任职于", "任职"),  # a verb + 于
        ("\ufffc的交通状况怎么样？", ["交通", "地址"], "交通状况", "交通"),  # a light head noun
        ("\ufffc是什么文化程度？", ["文化", "民族"], "文化程度", "文化"),
    ],
)
def test_a_named_field_that_is_an_own_field_plus_a_light_ending_asks_that_field(
    rest: str, fields: list[str], named: str, want: str
) -> None:
    d = _named(rest, fields, named)
    assert d.match is not None and (d.match.field, d.match.method, d.match.asked) == (want, Method.PARTIAL, named)  # type: ignore[attr-defined]


def test_an_own_field_that_is_the_named_word_plus_a_light_ending_is_named_even_inside_a_question_phrase() -> None:
    # 什么时候成立 means 成立时间 (which the subject lacks); 成立于 is 成立 plus 于: it is named
    d = _named("\ufffc是啥时候成立的？", ["成立于", "面积"], "成立")
    assert d.match is not None and (d.match.field, d.match.method) == ("成立于", Method.PARTIAL), d.steps  # type: ignore[attr-defined]
    # a field sharing only a piece that lies inside the phrase is still not named so
    d = match_field("\ufffc多长时间", ["发行时间", "面积"], GENERAL)
    assert d.match is None, d.steps


@pytest.mark.parametrize(
    ("rest", "fields", "named"),
    [
        ("\ufffc的出版时间", ["出版", "作者"], "出版时间"),  # 时间 names another aspect: 出版 may be the publisher
        ("\ufffc的开放时间", ["开放", "地点"], "开放时间"),
        ("\ufffc的发源地在哪", ["发源", "长度"], "发源地"),
        ("\ufffc是什么目的", ["目", "科"], "目的"),  # a one-code-point field is never extended
        ("\ufffc的主要研究方向是什么", ["研究方向", "职称"], "主要研究方向"),  # an opening may make another field
    ],
)
def test_an_ending_naming_another_aspect_is_not_a_light_ending(rest: str, fields: list[str], named: str) -> None:
    assert extended_by_light_tail(named, fields) == []
    d = _named(rest, fields, named)
    assert d.match is None or d.match.field not in fields[:1], d.steps  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("rest", "fields", "want"),
    [
        ("\ufffc属于哪个市？", ["所属市", "人口"], ["所属市"]),
        ("\ufffc属于哪条线路？", ["所属路线", "站台"], ["所属路线"]),  # 线路 / 路线 share a character
        ("你知道\ufffc属于哪里吗？", ["所属地域", "面积"], ["所属地域"]),  # 哪里 asks no noun
        ("\ufffc是属于哪个单位的？", ["隶属单位", "地址"], ["隶属单位"]),
        ("\ufffc属于什么？", ["归属", "面积"], ["归属"]),  # the word of belonging alone
        ("\ufffc属于哪个市？", ["所属市", "所属区"], ["所属市"]),  # the noun asked chooses
        ("\ufffc属于哪个市？", ["所属区域", "面积"], []),  # 区域 is not a 市
        ("\ufffc属于我们", ["所属市"], []),  # no question word after 属于
    ],
)
def test_belonging_asks_the_field_of_belonging_that_fits_the_noun(rest: str, fields: list[str], want: list[str]) -> None:
    from rag_lab.data.names import squash

    assert belonging_fields(squash(rest), fields)[1] == want
    d = _named(rest, fields, "属于")
    if len(want) == 1:
        assert d.match is not None and (d.match.field, d.match.method) == (want[0], Method.ALIAS), d.steps  # type: ignore[attr-defined]
    else:
        assert d.match is None, d.steps  # type: ignore[attr-defined]


def test_two_fields_of_belonging_that_both_fit_need_clarification() -> None:
    d = _named("\ufffc属于哪里？", ["所属", "归属"], "属于")
    assert d.match is None and d.candidates == ["归属", "所属"]  # type: ignore[attr-defined]


# -- through the whole request ------------------------------------------------------------

CORPUS = {
    "documents/a.md": "主题：东区\n区长：张三\n人口：十万\n主题：黄金舞台\n主持：李四\n播出时间：周六\n"
    "主题：三合乡\n所属市：开平市\n面积：五十平方公里\n"
    "主题：某书\n属于：丛书\n主题：某节目\n主持人：王五\n",  # 属于 and 主持人 are field names of other subjects
}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = write_files(tmp_path / "c", CORPUS)
    build_index(root)
    return root


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("我很好奇东区的区长是谁？", "张三"),  # 我很好奇 is an opening: the short subject 东区 begins a word
        ("你记得东区的人口吗？", "十万"),
        ("请问黄金舞台的主持人是谁啊？", "李四"),
        ("三合乡属于哪个市？", "开平市"),
    ],
)
def test_the_documented_phrasings_are_answered(corpus: Path, question: str, answer: str) -> None:
    result = query_once(question, corpus)
    assert (result["status"], result["answer"]) == ("answered", answer), result["message"]


@pytest.mark.parametrize("question", ["我很好奇西区的区长是谁？", "请问白银舞台的主持人是谁啊？", "五合乡属于哪个市？"])
def test_the_same_phrasings_about_a_subject_the_corpus_lacks_are_refused(corpus: Path, question: str) -> None:
    result = query_once(question, corpus)
    assert result["status"] not in ("answered", "partial"), result["message"]


def test_the_documented_rows_are_in_the_docs() -> None:
    assert_rows_in_questions_doc(
        ("我很好奇东区的区长是谁？", "请问黄金舞台的主持人是谁啊？", "三合乡属于哪个市？", "五合乡属于哪个市？")
    )


KNOWN = "甲乙丙丁戊"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    subjects=st.lists(st.text(KNOWN, min_size=1, max_size=3), min_size=1, max_size=4, unique=True),
    absent=st.text(ABSENT, min_size=1, max_size=3),
    template=st.sampled_from(
        ["我很好奇{x}的区长是谁？", "你记得{x}的主持人吗", "{x}属于哪个市？", "你知道{x}属于哪里吗", "{x}任职于什么"]
    ),
)
def test_a_question_about_an_absent_subject_is_never_answered_in_these_phrasings(
    tmp_path_factory: pytest.TempPathFactory, subjects: list[str], absent: str, template: str
) -> None:
    root = tmp_path_factory.mktemp("absent4")
    fields = ("区长", "主持", "所属市", "所属", "任职")
    body = "".join(f"主题：{s}\n{f}：{s}的{f}\n" for s in subjects for f in fields) + "主题：某人\n主持人：某\n属于：某\n"
    write_files(root, {"documents/a.md": body})
    build_index(root)
    result = query_once(template.format(x=absent), root)
    assert result["status"] not in ("answered", "partial"), (template, absent, result["message"])


SPELLINGS = {
    "documents/a.md": "主题：史蒂芬·霍金\n国籍：英国\n主题：《红楼梦》\n作者：曹雪芹\n"
    "主题：甲·乙丙\n国籍：某国\n主题：甲乙·丙\n国籍：另一国\n主题：王皓\n身高：1.76米\n",
}


@pytest.fixture
def spellings(tmp_path: Path) -> Path:
    root = write_files(tmp_path / "s", SPELLINGS)
    build_index(root)
    return root


@pytest.mark.parametrize(
    ("question", "answer"),
    [("史蒂芬霍金的国籍是什么？", "英国"), ("请问红楼梦的作者是谁", "曹雪芹"), ("史蒂芬 霍金的国籍", "英国")],
)
def test_a_subject_written_without_its_dot_space_or_brackets_is_found(spellings: Path, question: str, answer: str) -> None:
    result = query_once(question, spellings)
    assert (result["status"], result["answer"]) == ("answered", answer), result["message"]
    parse = next(e for e in result["trace"]["events"] if e["step"] == "parse")
    assert parse["field_steps"][0]["subject_written_as"] in ("史蒂芬·霍金", "《红楼梦》")


@pytest.mark.parametrize("question", ["甲乙丙的国籍是什么？", "史蒂芬霍金斯的国籍是什么？", "史蒂的国籍"])
def test_two_spellings_or_none_are_not_a_subject(spellings: Path, question: str) -> None:
    result = query_once(question, spellings)
    assert result["status"] not in ("answered", "partial"), result["message"]



POSSESSOR = {"documents/a.md": "主题：日本\n国家代码：jpn\n主题：某队\n成绩：冠军\n主题：杨过\n武器：玄铁重剑\n"}


@pytest.fixture
def possessor(tmp_path: Path) -> Path:
    root = write_files(tmp_path / "p", POSSESSOR)
    build_index(root)
    return root


def test_a_possessor_runs_on_to_a_de_before_more_name_of_the_field(possessor: Path) -> None:
    # 最佳 stands between 的 and the field 成绩: the possessor is still 日本国家男子足球队, not 日本
    result = query_once("你知道日本国家男子足球队的最佳成绩是什么，何时取得的吗？", possessor)
    assert (result["status"], result["reason"]) == ("refused", "no_supporting_evidence"), result["message"]
    assert "is not a subject in the corpus" in result["message"]
    # question phrasing after 的 (的是什么) is no name: 杨过 keeps its field
    assert query_once("杨过使用的是什么武器？", possessor)["answer"] == "玄铁重剑"
