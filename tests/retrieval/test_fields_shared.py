"""Field matching, fifth pass (issue 13): a field named by a word sharing a character, checked by
the kind of answer asked (docs/questions.md, "Fields in other words": the ``shared`` step)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import ABSENT_CHARS as ABSENT
from tests.conftest import assert_rows_in_questions_doc, write_files

from rag_lab import neural
from rag_lab.data.aliases import general_aliases
from rag_lab.index import build_index
from rag_lab.retrieval import query_once
from rag_lab.retrieval.answer_kind import AnswerKind, asked_kind, value_fits, values_fit
from rag_lab.retrieval.fields import Method, match_field

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

GENERAL = general_aliases()


def _by_shared_characters(name: str, names: Sequence[str]) -> list[float]:
    """A scripted stand-in for stored name vectors (the model is outside the project): the more
    characters two names share, the nearer."""
    return [0.5 + 0.2 * len(set(name) & set(n)) for n in names]


def _shared(
    rest: str,
    fields: list[str],
    named: str,
    values: dict[str, list[str]] | None = None,
    relate: object = _by_shared_characters,
) -> object:
    """``match_field`` as the parse calls it for a subject named as a word, ``named`` a field it lacks."""
    at = rest.find(named)
    return match_field(
        rest, fields, GENERAL, named=[named], asked_at=[(at, at + len(named))], shared=True,
        values=None if values is None else (lambda f: values.get(f, [])),
        relate=relate,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("rest", "fields", "named", "want"),
    [
        ("\ufffc的外观如何", ["外形", "重量"], "外观", "外形"),  # 外: the same modifier
        ("\ufffc擅长什么", ["专长", "籍贯"], "擅长", "专长"),  # 长: the same head
        ("\ufffc哪年改名的", ["更名", "面积"], "改名", "更名"),
        ("\ufffc的创建时间", ["创建年份", "地址"], "创建时间", "创建年份"),
    ],
)
def test_a_named_field_sharing_a_character_with_exactly_one_own_field_asks_it(
    rest: str, fields: list[str], named: str, want: str
) -> None:
    d = _shared(rest, fields, named, {"更名": ["1990年"], "创建年份": ["1348年"]})
    assert d.match is not None, d.steps  # type: ignore[attr-defined]
    assert (d.match.field, d.match.method, d.match.asked) == (want, Method.SHARED, named)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("rest", "fields", "named", "why"),
    [
        ("\ufffc的外观", ["外形", "外径"], "外观", "two own fields share 外"),
        ("\ufffc的颜色", ["外形", "重量"], "颜色", "no own field shares a character"),
        ("\ufffc的曲", ["编曲", "作词"], "曲", "a one-code-point name is too short to share a morpheme"),
    ],
)
def test_no_answer_when_the_shared_character_does_not_single_out_one_field(
    rest: str, fields: list[str], named: str, why: str
) -> None:
    d = _shared(rest, fields, named)
    assert d.match is None, (why, d.steps)  # type: ignore[attr-defined]
    assert d.steps[-1]["method"] == "shared"  # type: ignore[attr-defined]


def test_a_field_whose_values_lack_the_asked_kind_is_not_taken() -> None:
    # 什么时候 asks a date; the only field sharing 创 holds a person
    d = _shared("\ufffc是什么时候创立的", ["创始人", "地址"], "创立", {"创始人": ["李雷"]})
    assert d.match is None and d.steps[-1]["kind"] == "date", d.steps  # type: ignore[attr-defined]
    d = _shared("\ufffc是什么时候创立的", ["创始人", "地址"], "创立", {"创始人": ["1990年由李雷创立"]})
    assert d.match is not None and d.match.field == "创始人"  # type: ignore[attr-defined]
    # 多少 asks a number: a name is not one
    d = _shared("\ufffc的编号是多少", ["编码", "地址"], "编号", {"编码": ["某某码"]})
    assert d.match is None, d.steps  # type: ignore[attr-defined]


def test_a_one_code_point_name_counts_only_where_a_number_or_date_is_asked_and_fits() -> None:
    d = _shared("\ufffc的宽是多少", ["宽度", "长度"], "宽", {"宽度": ["32米"]})
    assert d.match is not None and d.match.field == "宽度", d.steps  # type: ignore[attr-defined]
    d = _shared("\ufffc的宽是多少", ["宽度", "长度"], "宽", {"宽度": ["很宽"]})
    assert d.match is None, d.steps  # type: ignore[attr-defined]
    d = _shared("\ufffc的宽是什么", ["宽度", "长度"], "宽", {"宽度": ["32米"]})
    assert d.match is None, d.steps  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("named", "fields", "why"),
    [
        ("联系电话", ["负责人电话", "地址"], "one head 电话, other modifiers: two kinds of 电话"),
        ("所属单位", ["主管单位", "地址"], "one head 单位"),
        ("用户评分", ["评分", "地址"], "评分 lies inside 用户评分: the partial step's case"),
        ("出生地点", ["出生地", "性别"], "one name inside the other"),
    ],
)
def test_names_of_two_kinds_of_one_thing_or_inside_one_another_are_not_shared(
    named: str, fields: list[str], why: str
) -> None:
    d = _shared(f"\ufffc的{named}", fields, named)
    assert d.match is None, (why, d.steps)  # type: ignore[attr-defined]


def test_without_name_vectors_a_shared_character_is_no_evidence() -> None:
    d = _shared("\ufffc的外观如何", ["外形", "重量"], "外观", relate=None)
    assert d.match is None and "no field vectors" in d.steps[-1]["skipped"], d.steps  # type: ignore[attr-defined]


def test_with_name_vectors_the_field_must_also_be_the_nearest_own_field() -> None:
    def prefers(field: str) -> object:
        def relate(name: str, names: Sequence[str]) -> list[float]:
            return [0.9 if n == field else 0.5 for n in names]

        return relate

    d = _shared("\ufffc的外观", ["外形", "重量"], "外观", relate=prefers("重量"))
    assert d.match is None and d.steps[-1]["nearest"][0][0] == "重量", d.steps  # type: ignore[attr-defined]
    d = _shared("\ufffc的外观", ["外形", "重量"], "外观", relate=prefers("外形"))
    assert d.match is not None and d.match.field == "外形"  # type: ignore[attr-defined]

    def close(name: str, names: Sequence[str]) -> list[float]:
        return [0.9 if n == "外形" else 0.88 for n in names]  # nearest, but by less than EMBED_MARGIN

    d = _shared("\ufffc的外观", ["外形", "重量"], "外观", relate=close)
    assert d.match is None, d.steps  # type: ignore[attr-defined]
    d = _shared("\ufffc的外观", ["外形"], "外观", relate=close)  # one field: no next field to lead
    assert d.match is not None and d.match.field == "外形"  # type: ignore[attr-defined]


def test_the_step_runs_only_when_allowed_and_after_every_other_step() -> None:
    at = "\ufffc的外观".find("外观")
    d = match_field("\ufffc的外观", ["外形", "重量"], GENERAL, named=["外观"], asked_at=[(at, at + 2)])
    assert d.match is None  # shared=False: a subject that is not a word of its own gets no such guess
    d = _shared("\ufffc的外观尺寸", ["外观尺寸", "外形"], "外观")
    assert d.match is not None and d.match.method != Method.SHARED  # an earlier step decides  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("什么时候改名的", AnswerKind.DATE),
        ("是哪年建的", AnswerKind.DATE),
        ("活了多少年", AnswerKind.NUMBER),
        ("有几个", AnswerKind.NUMBER),
        ("在哪里", AnswerKind.PLACE),
        ("是谁写的", AnswerKind.PERSON),
        ("是谁在什么时候写的", None),  # two kinds: neither
        ("是什么", None),
    ],
)
def test_the_kind_a_question_word_asks(text: str, kind: AnswerKind | None) -> None:
    assert asked_kind(text) == kind


def test_value_shapes() -> None:
    assert value_fits(AnswerKind.DATE, "1862年11月12日") and value_fits(AnswerKind.DATE, "贞和4年（1348年）")
    assert value_fits(AnswerKind.DATE, "唐朝") and not value_fits(AnswerKind.DATE, "淮浦南路")
    assert value_fits(AnswerKind.NUMBER, "二十三岁") and value_fits(AnswerKind.NUMBER, "2800万元")
    assert not value_fits(AnswerKind.NUMBER, "良玉")
    assert value_fits(AnswerKind.PLACE, "北京") is None  # a place has no shape: never checked
    assert values_fit(None, ["良玉"]) and values_fit(AnswerKind.NUMBER, []) and not values_fit(AnswerKind.NUMBER, ["良玉"])


def _kind(rest: str, fields: list[str], values: dict[str, list[str]]) -> object:
    return match_field(rest, fields, GENERAL, shared=True, by_kind=True, values=lambda f: values.get(f, []))


@pytest.mark.parametrize(
    ("rest", "value"),
    [("\ufffc是什么时候被观测到的？", "1862年11月12日"), ("\ufffc一共有几个村", "5个"), ("请问\ufffc存在了多少年", "二十三年")],
)
def test_a_subjects_only_field_whose_values_fit_the_asked_kind_is_asked(rest: str, value: str) -> None:
    d = _kind(rest, ["唯一"], {"唯一": [value]})
    assert d.match is not None and (d.match.field, d.match.method) == ("唯一", Method.KIND), d.steps  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("rest", "fields", "values", "why"),
    [
        ("\ufffc是什么时候被观测到的？", ["唯一"], {"唯一": ["某天文台"]}, "the value is no date"),
        ("\ufffc是什么时候被观测到的？", ["甲", "乙"], {"甲": ["1862年"], "乙": ["1900年"]}, "two fields"),
        ("\ufffc是谁发现的", ["唯一"], {"唯一": ["某人"]}, "a person has no shape"),
        ("\ufffc什么时候去世的", ["出生日期"], {"出生日期": ["1900年"]}, "去世 means a field the subject lacks"),
        ("\ufffc是什么", ["唯一"], {"唯一": ["1900年"]}, "no kind asked"),
    ],
)
def test_the_kind_alone_never_chooses(rest: str, fields: list[str], values: dict[str, list[str]], why: str) -> None:
    d = _kind(rest, fields, values)
    assert d.match is None, (why, d.steps)  # type: ignore[attr-defined]


# -- through the whole request ------------------------------------------------------------

CORPUS = {
    "documents/a.md": "主题：某手机\n外形：直板\n主题：另一手机\n外观：翻盖\n"
    "主题：老镇\n更名：1990年更名为新镇\n主题：旧村\n改名：新村\n"
    "主题：某公司\n创始人：李雷\n地址：某路\n主题：另一公司\n创立：2001年\n"
    "主题：寒神星\n发现：1862年11月12日\n主题：第一次\n上映：1983年\n",
}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = write_files(tmp_path / "c", CORPUS)
    build_index(root, vectors=neural.available())  # the shared step needs field vectors
    return root


@pytest.mark.parametrize(
    ("question", "answer", "field"),
    [
        ("某手机的外观如何？", "直板", "外形"),
        ("老镇是哪年改名的？", "1990年更名为新镇", "更名"),
        ("寒神星是什么时候被观测到的？", "1862年11月12日", "发现"),
    ],
)
def test_the_documented_shared_rows_are_answered(corpus: Path, question: str, answer: str, field: str) -> None:
    result = query_once(question, corpus)
    if field != "发现" and not neural.available():  # without the extra: no vectors, no shared step
        assert result["status"] not in ("answered", "partial"), result["message"]
        return
    assert (result["status"], result["answer"]) == ("answered", answer), result["message"]
    assert result["field_match"]["method"] in ("shared", "kind") and result["field_match"]["field"] == field


@pytest.mark.parametrize("question", ["某公司是什么时候创立的？", "新手机的外观如何？", "某手机的颜色是什么？", "老镇有多大？", "上原由衣是什么时候第一次登场？"])
def test_the_documented_shared_refusals(corpus: Path, question: str) -> None:
    result = query_once(question, corpus)
    assert result["status"] not in ("answered", "partial"), result["message"]


def test_the_documented_rows_are_in_the_docs() -> None:
    assert_rows_in_questions_doc(
        ("某手机的外观如何？", "老镇是哪年改名的？", "某公司是什么时候创立的？", "新手机的外观如何？",
         "寒神星是什么时候被观测到的？", "上原由衣是什么时候第一次登场？")
    )


KNOWN = "甲乙丙丁戊"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    subjects=st.lists(st.text(KNOWN, min_size=1, max_size=3), min_size=1, max_size=4, unique=True),
    absent=st.text(ABSENT, min_size=1, max_size=2),
    short=st.text(KNOWN, min_size=1, max_size=2),
    template=st.sampled_from(
        ["{x}的外观如何？", "{x}哪年改名的", "你知道{x}擅长什么吗", "{x}的创建时间", "{x}{s}的外观",
         "{x}是什么时候被观测到的", "{x}是什么时候{s}登场的"]
    ),
)
def test_a_question_about_an_absent_subject_is_never_answered_by_a_shared_character(
    tmp_path_factory: pytest.TempPathFactory, subjects: list[str], absent: str, short: str, template: str
) -> None:
    """Whatever the subjects: a made-up name (alone, or running into a known short name) gets no answer."""
    subjects = sorted({*subjects, short})
    root = tmp_path_factory.mktemp("absent5")
    fields = (("外形", "直板"), ("更名", "1990年"), ("专长", "唱歌"), ("创建年份", "1348年"))
    body = "".join(f"主题：{s}\n{f}：{v}\n" for s in subjects for f, v in fields)
    body += "主题：某\n外观：某\n改名：某\n擅长：某\n创建时间：某\n主题：丁丁星\n发现：1862年\n"
    write_files(root, {"documents/a.md": body})
    build_index(root, vectors=neural.available())
    result = query_once(template.format(x=absent, s=short), root)
    assert result["status"] not in ("answered", "partial"), (template, absent, result["message"])
