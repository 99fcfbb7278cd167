"""Field matching, seventh pass (issue 13): ordinary verbs, names running on with 之 or a Latin designation.

The rows are those of docs/questions.md ("Fields in other words": ordinary verbs; "Ordinary
words": longer names), run through the whole request.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import ABSENT_CHARS as ABSENT
from tests.conftest import assert_rows_in_questions_doc, write_files

from rag_lab.index import build_index
from rag_lab.retrieval import query_once
from rag_lab.retrieval.ordinary import possessed_after, splits_latin_word

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

CORPUS = {
    "documents/a.md": "主题：海运条例\n实行时间：2002年1月1日\n发布单位：国务院\n"
    "主题：妇科网\n运行时间：2010年\n"
    "主题：某联赛\n活动时间：2004年\n"
    "主题：西河\n属于：黄河水系\n长度：八十公里\n"
    "主题：东河\n所属水系：长江水系\n"
    "主题：科学\n出版历史：1880年至今\n作者：甲\n"
    "主题：长江\n长度：6300公里\n"
    "主题：ngc\n历元：J2000\n"
    "主题：ipad\ncpu：A5\n"
    "主题：委屈\n基本解释：心里难过\n主题：湿疹\n预防措施：保持皮肤清洁\n"
    "主题：寒神星\n发现：1862年11月12日\n主题：被\n总笔画：10\n主题：人\n总笔画：2\n"
    "主题：萧芳芳\n祖籍：江苏\n配偶：张三\n",
    "documents/b.md": "主题：某比赛\n开始：上午九点\n开始时间：九点\n使用：常用\n",
}

ROWS = (
    ("海运条例是什么时候开始实行的？", "2002年1月1日", "实行时间"),  # 什么时候开始 names no field of it: 实行 does
    ("妇科网什么时候开始运行的？", "2010年", "运行时间"),
    ("某联赛是什么时候开始的？", "2004年", "活动时间"),  # its only field, and 什么时候 asks a date it holds
    ("西河属于什么？", "黄河水系", "属于"),  # a field named 属于 is still that field
    ("东河属于哪个水系？", "长江水系", "所属水系"),  # belonging, as before
    ("长江之长度是多少？", "6300公里", "长度"),  # 之 before the field: the 长度 of 长江
    ("ipad cpu是什么", "A5", "cpu"),  # a field after the space, not more of the name
    ("怎么解释委屈？", "心里难过", "基本解释"),  # 解释 names the field: 委屈 begins a word after it
    ("如何预防湿疹？", "保持皮肤清洁", "预防措施"),
    ("寒神星是什么时候被观测到的？", "1862年11月12日", "发现"),  # 被 is the passive particle, not the subject 被
    ("萧芳芳是哪里人？", "江苏", "祖籍"),  # 人 in 哪里人 is the word, not the subject 人
)
REFUSED = (
    "人学的科学之路是由哪个出版社出版的？",  # 科学之路 is a road of 科学: not a subject in the corpus
    "科学之谜的作者是谁？",
    "ngc 641是多少历元？",  # ngc 641 is another object than ngc
    "怎么解释龘委屈？",  # the field's words before it, then more name: 龘委屈 is no subject
)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = write_files(tmp_path / "verbs", CORPUS)
    build_index(root)
    return root


@pytest.mark.parametrize(("question", "answer", "field"), ROWS, ids=[r[0] for r in ROWS])
def test_an_ordinary_verb_yields_to_the_other_words_and_a_real_field_of_its_name_still_answers(
    corpus: Path, question: str, answer: str, field: str
) -> None:
    result = query_once(question, corpus)
    assert (result["status"], result["answer"]) == ("answered", answer), result["message"]
    assert result["field_match"]["field"] == field


@pytest.mark.parametrize("question", REFUSED)
def test_a_name_running_on_with_zhi_or_a_latin_designation_is_not_the_shorter_subject(
    corpus: Path, question: str
) -> None:
    result = query_once(question, corpus)
    assert (result["status"], result["reason"]) == ("refused", "no_supporting_evidence"), result["message"]
    assert result["answer"] is None and "is not a subject in the corpus" in result["message"]


def test_the_verb_retry_is_in_the_trace(corpus: Path) -> None:
    result = query_once("海运条例是什么时候开始实行的？", corpus)
    parse = next(e for e in result["trace"]["events"] if e["step"] == "parse")
    steps = parse["field_steps"][0]["steps"]
    assert any(s.get("method") == "retry" and s.get("verbs") == ["开始"] for s in steps), steps
    assert result["field_match"]["method"] == "partial" and result["field_match"]["asked"] == "实行"


def test_the_documented_rows_are_in_the_docs() -> None:
    assert_rows_in_questions_doc(tuple(q for q, _, _ in ROWS) + REFUSED)


@pytest.mark.parametrize(
    ("question", "end", "run"),
    [
        ("科学之路是什么", 2, "之路"),
        ("科学之一是什么", 2, ""),  # 之一: one of them
        ("科学之后的事", 2, ""),
        ("科学的路", 2, ""),
    ],
)
def test_possessed_after(question: str, end: int, run: str) -> None:
    assert possessed_after(question, end, set()) == run


def test_a_latin_name_continued_across_a_space_is_cut_unless_a_name_begins_there() -> None:
    assert splits_latin_word("ngc 641的历元", 0, 3)
    assert splits_latin_word("iphone 6多少钱", 0, 6)
    assert not splits_latin_word("ipad cpu", 0, 4, frozenset({5}))  # cpu is a name found
    assert not splits_latin_word("tcl 是国企", 0, 3)


# -- property: an absent subject is never answered ---------------------------------------

FIELDS = ("年龄", "作者", "长度", "出版社")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    subject=st.text("甲乙丙丁戊己庚辛", min_size=1, max_size=4),
    more=st.text(ABSENT, min_size=1, max_size=3),
    latin=st.booleans(),
    field=st.sampled_from(FIELDS),
    template=st.sampled_from(["{x}的{f}是什么？", "请问{x}{f}是多少", "{x}是哪个{f}出版的", "你知道{x}的{f}吗"]),
)
def test_a_question_about_a_longer_name_continuing_a_subject_is_never_answered(
    tmp_path_factory: pytest.TempPathFactory,
    subject: str,
    more: str,
    latin: bool,
    field: str,
    template: str,
) -> None:
    """``X之Y`` (Y not a field) and ``abc 123`` name something else than X: never answered from X."""
    joint = "之"
    if latin:  # a Latin designation continued across a space: ngc → ngc 641
        subject = "".join("abcdefgh"["甲乙丙丁戊己庚辛".index(c)] for c in subject)
        more, joint = str(sum(map(ord, more)) % 1000), " "
    root = tmp_path_factory.mktemp("longer")
    write_files(root, {"documents/a.md": f"主题：{subject}\n" + "".join(f"{f}：{subject}的{f}\n" for f in FIELDS)})
    build_index(root)
    question = template.format(x=subject + joint + more, f=field)
    result = query_once(question, root)
    assert result["status"] not in ("answered", "partial"), (question, result["message"])


# -- a measure word's kind breaks a partial tie -------------------------------------------


@pytest.mark.parametrize(
    ("rest", "fields", "want"),
    [
        ("\ufffc的机车有多高吗？", ["机车宽度", "机车长度", "机车高度"], "机车高度"),
        ("\ufffc要单程行车多久？", ["单程行车时间", "单程行车里数"], "单程行车时间"),
        ("\ufffc的商品有多重？", ["商品尺寸", "商品重量"], "商品重量"),
        ("\ufffc的内存多大？", ["内存大小", "内存描述"], "内存大小"),
    ],
)
def test_a_measure_question_word_separates_partial_matches_that_tie(rest: str, fields: list[str], want: str) -> None:
    from rag_lab.data.aliases import general_aliases
    from rag_lab.retrieval.fields import Method, match_field

    d = match_field(rest, fields, general_aliases())
    assert d.match is not None and (d.match.field, d.match.method) == (want, Method.PARTIAL), d.steps


@pytest.mark.parametrize(
    ("rest", "fields"),
    [
        ("\ufffc有多深？", ["平均深度", "最大深度"]),  # both are 深度: still a choice
        ("\ufffc的机车是什么", ["机车宽度", "机车高度"]),  # no measure asked
    ],
)
def test_without_one_fitting_kind_a_partial_tie_stays_a_choice(rest: str, fields: list[str]) -> None:
    from rag_lab.data.aliases import general_aliases
    from rag_lab.retrieval.fields import match_field

    d = match_field(rest, fields, general_aliases())
    assert d.match is None and sorted(d.candidates) == sorted(fields), d.steps


def test_a_phrasing_that_names_a_field_the_subject_lacks_stops_the_kind_step() -> None:
    """``活了多少年`` names 享年 (the general table): a subject whose only field is something else that
    holds a number is not asked it (as ``什么时候去世`` never gives 出生日期); with 享年 it is."""
    from rag_lab.data.aliases import general_aliases
    from rag_lab.retrieval.fields import Method, match_field

    def kind(fields: list[str]) -> object:
        return match_field("请问\ufffc活了多少年", fields, general_aliases(), shared=True, by_kind=True, values=lambda f: ["二十三岁"])

    assert kind(["唯一"]).match is None  # type: ignore[attr-defined]
    found = kind(["享年"]).match  # type: ignore[attr-defined]
    assert found is not None and (found.field, found.method) == ("享年", Method.ALIAS)
