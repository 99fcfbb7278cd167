"""Chained questions (issue 13): a field of a field's value is never answered as the first hop."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import write_files

from rag_lab.index import Index, build_index, default_index_path
from rag_lab.retrieval import query_once

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

FAMILY = {
    "documents/a.md": "主题：张三\n丈夫：李四\n年龄：三十岁\n出生：1990年\n主题：李四\n父亲：李老汉\n年龄：三十二岁\n"
    "主题：王芳\n丈夫：赵六\n"  # 赵六 is no subject of the corpus
    "主题：中国\n首都：北京\n医院：协和医院\n主题：人力资源机构\n国别：中国\n医保定点：是\n主题：是\n拼音：shì\n"
    "主题：王五\n出生日期：1980年\n主题：红楼梦\n首映：1987年\n作者：曹雪芹\n"
    "主题：赵七\n出生地：中国\n父亲：李四\n主题：研究院\n机构：科研机构\n",  # 机构 is a field name of the corpus
}


@pytest.fixture
def family(tmp_path: Path) -> Path:
    root = write_files(tmp_path / "family", FAMILY)
    build_index(root)
    return root


@pytest.mark.parametrize(
    "question",
    ["张三丈夫的父亲是谁", "张三的丈夫的父亲是谁？", "请问张三丈夫 父亲", "张三的丈夫多少岁", "张三丈夫的老师是谁"],
)
def test_a_field_of_a_fields_value_is_refused_never_the_first_hop(family: Path, question: str) -> None:
    result = query_once(question, family)
    assert (result["status"], result["reason"]) == ("refused", "no_supporting_evidence"), result["message"]
    assert result["answer"] is None and result["citations"] == []
    assert "does not give 张三's 丈夫 instead" in result["message"]
    parse = next(e for e in result["trace"]["events"] if e["step"] == "parse")
    assert parse["chain"]["field"] == "丈夫" and parse["slots"] == []


def test_a_noun_alias_after_de_is_a_chain_even_when_the_value_is_no_subject(family: Path) -> None:
    result = query_once("王芳丈夫的父亲是谁", family)
    assert (result["status"], result["answer"]) == ("refused", None), result["message"]
    assert "does not give 王芳's 丈夫 instead" in result["message"]
    assert query_once("王芳的丈夫是谁", family)["answer"] == "赵六"


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("张三的丈夫是谁", "李四"),
        ("张三丈夫的名字", "李四"),  # the value's own name is the first hop itself
        ("张三的年龄多少岁", "三十岁"),  # the alias asks about the first field
        ("李四的父亲是谁", "李老汉"),
        ("红楼梦的首映是什么时候", "1987年"),  # 1987年 is no subject: 什么时候 asks the 首映
        ("红楼梦的作者是谁", "曹雪芹"),
        ("人力资源机构是哪个国家的机构？", "中国"),  # 机构 restates the subject's own kind
        ("人力资源机构是医保定点医院吗", "是"),  # the value 是 names no subject
        ("赵七的出生地在哪里", "中国"),  # 在哪里 asks a place: 出生地 is one (its value 中国 is a subject)
        ("赵七的父亲是哪位", "李四"),  # 哪位 asks the value's own name
    ],
)
def test_one_field_followed_by_question_words_is_still_answered(family: Path, question: str, answer: str) -> None:
    result = query_once(question, family)
    assert (result["status"], result["answer"]) == ("answered", answer), result["message"]


PEOPLE = "甲乙丙丁戊"
HOPS = ("丈夫", "父亲", "母亲", "老师", "导演")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    names=st.lists(st.text(PEOPLE, min_size=2, max_size=3), min_size=2, max_size=2, unique=True),
    hops=st.lists(st.sampled_from(HOPS), min_size=2, max_size=2, unique=True),
    template=st.sampled_from(["{s}{a}的{b}是谁", "{s}的{a}的{b}是谁？", "请问{s}{a}{b}", "{s}的{a} 的{b}"]),
)
def test_a_chained_question_is_never_answered_with_the_first_hops_value(
    tmp_path_factory: pytest.TempPathFactory, names: list[str], hops: list[str], template: str
) -> None:
    """Whatever the names: the first hop's value (a subject with the second field) is never the answer."""
    root = tmp_path_factory.mktemp("chain")
    first, second = names
    a, b = hops
    body = f"主题：{first}\n{a}：{second}\n主题：{second}\n{b}：{second}的{b}\n"
    write_files(root, {"documents/a.md": body})
    build_index(root)
    result = query_once(template.format(s=first, a=a, b=b), root)
    assert result["status"] != "answered" or result["answer"] not in (second,), result["message"]
    assert result["status"] not in ("answered", "partial"), result["message"]


def test_the_documented_chain_rows_are_in_the_docs() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "questions.md").read_text(encoding="utf-8")
    for q in ("张三丈夫的父亲是谁", "张三的丈夫多少岁", "张三丈夫的老师是谁", "张三的丈夫是谁", "张三丈夫的名字", "张三的年龄多少岁",
              "赵七的出生地在哪里", "人力资源机构是哪个国家的机构"):
        assert f"| `{q}` |" in text


def test_the_chain_check_reuses_the_names_found_once(family: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18: the names of a question are looked up once; the chain check reuses them (same result)."""
    from rag_lab.retrieval import question as qmod

    calls: list[str] = []
    original = qmod.find_matches

    def counted(question: str, source: object) -> list[qmod.Match]:
        calls.append(question)
        return original(question, source)  # type: ignore[arg-type]

    with Index(default_index_path(family)) as index:
        before = [qmod.parse_text_question(q, index).as_dict() for q in ("张三丈夫的父亲是谁", "张三的丈夫是谁")]
        monkeypatch.setattr(qmod, "find_matches", counted)
        after = [qmod.parse_text_question(q, index).as_dict() for q in ("张三丈夫的父亲是谁", "张三的丈夫是谁")]
    assert after == before
    assert after[0]["chain"]["second"] == "父亲" and after[1]["slots"] == [["张三", "丈夫"]]
    assert calls == ["张三丈夫的父亲是谁", "张三的丈夫是谁"]
