"""Question understanding and typed refusals; ranking order and ties."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rag_lab.errors import ConfigError, QuestionError
from rag_lab.index import Index, build_index, default_index_path
from rag_lab.retrieval import query_once, retrieve

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

MakeCorpus = Callable[..., Path]
LONG_HOURS = "周二至周五十四点到十七点，节假日另行通知。"


def test_subject_only_needs_clarification(indexed_demo: Path) -> None:
    result = query_once("借阅台", indexed_demo)
    assert (result["status"], result["reason"], result["answer"]) == (
        "needs_clarification",
        "subject_without_field",
        None,
    )
    assert result["clarification"] == {"subject": "借阅台", "fields": ["借用期限", "地点", "开放时间", "联系电话", "负责人"]}


def test_field_only_needs_clarification(indexed_demo: Path) -> None:
    result = query_once("开放时间是几点？", indexed_demo)
    assert (result["status"], result["reason"]) == ("needs_clarification", "field_without_subject")
    clarification = result["clarification"]
    assert clarification["field"] == "开放时间"
    assert {"借阅台", "打印室", "新台"} <= set(clarification["subjects"])
    assert clarification["subjects"] == sorted(clarification["subjects"])


def test_subject_without_that_field_is_no_supporting_evidence(indexed_demo: Path) -> None:
    result = query_once("借阅台 容量", indexed_demo)
    assert (result["status"], result["reason"], result["answer"]) == ("refused", "no_supporting_evidence", None)
    assert "借阅台 has no field 容量" in result["message"]


def test_longest_subject_match_wins(indexed_demo: Path) -> None:
    assert query_once("高等数学 学分", indexed_demo)["answer"] == "五学分"
    assert query_once("数学 学分", indexed_demo)["answer"] == "三学分"


def test_conjunction_makes_two_slots(indexed_demo: Path) -> None:
    result = query_once("借阅台和测试台的开放时间", indexed_demo)
    assert (result["status"], result["reason"]) == ("partial", "partial_support")
    assert [(s["subject"], s["status"], s["reason"]) for s in result["slots"]] == [
        ("借阅台", "answered", None),
        ("测试台", "refused", "conflicting_evidence"),
    ]


@pytest.fixture
def competing(make_corpus: MakeCorpus) -> Path:
    root = make_corpus(
        {
            "documents/lib.md": f"主题：借阅台\n开放时间：{LONG_HOURS}\n",
            "documents/print.md": "主题：打印室\n开放时间：全天。\n",
            "documents/board.md": "主题：公告栏\n备注：借阅台开放时间借阅台开放时间\n",
        }
    )
    build_index(root)
    return root


def test_named_key_outranks_a_unit_that_wins_on_bm25(competing: Path) -> None:
    with Index(default_index_path(competing)) as index:
        plain = retrieve("借阅台 开放时间", index, top_k=2, named_keys_first=False)
        ranked = retrieve("借阅台 开放时间", index, top_k=2)
    # BM25 alone prefers the notice board that repeats the words ...
    assert [c["evidence"]["source"] for c in plain] == ["documents/board.md", "documents/lib.md"]
    # ... the key the question names comes first, and scores still descend
    assert [c["evidence"]["source"] for c in ranked] == ["documents/lib.md", "documents/board.md"]
    assert ranked[0]["score"] > ranked[1]["score"]
    lifted = {c["evidence"]["source"]: c["score"] for c in ranked}
    bm25 = {c["evidence"]["source"]: c["score"] for c in plain}
    assert lifted["documents/board.md"] == bm25["documents/board.md"]  # not a named key: unchanged
    assert lifted["documents/lib.md"] > 2 * bm25["documents/board.md"]


def test_each_slot_gets_its_first_unit_before_any_second(make_corpus: MakeCorpus) -> None:
    files = {f"documents/a{i}.md": "主题：借阅台\n开放时间：上午九点。\n" for i in range(6)}
    files["documents/p.md"] = "主题：打印室\n开放时间：全天。\n"
    root = make_corpus(files)
    build_index(root)
    with Index(default_index_path(root)) as index:
        ranked = retrieve("借阅台和打印室的开放时间", index, top_k=3)
    subjects = [c["evidence"]["subject"] for c in ranked]
    assert sorted(subjects[:2]) == ["借阅台", "打印室"] and subjects[2] == "借阅台"
    result = query_once("借阅台和打印室的开放时间", root, top_k=2)
    assert result["status"] == "answered" and result["same_key_sources_checked"] == 7


def test_evidence_not_retrieved_when_slots_outnumber_top_k(competing: Path) -> None:
    result = query_once("借阅台和打印室的开放时间", competing, top_k=1)
    assert (result["status"], result["reason"]) == ("partial", "partial_support")
    missed = [s for s in result["slots"] if s["status"] == "refused"]
    assert [s["reason"] for s in missed] == ["evidence_not_retrieved"]
    assert all(c["evidence_id"] for c in result["citations"])
    assert {c["source"] for c in result["citations"]} <= {"documents/lib.md", "documents/print.md"}
    assert len(result["citations"]) == 1  # the same-key map is not used to fill the hole
    assert query_once("借阅台和打印室的开放时间", competing, top_k=2)["status"] == "answered"


def test_evidence_not_retrieved_from_the_callers_candidates(competing: Path) -> None:
    from rag_lab.data import extract_documents
    from rag_lab.retrieval import answer

    board = [u for u in extract_documents(competing) if u["source"] == "documents/board.md"]
    result = answer("借阅台 开放时间", [{"evidence": u, "score": 1.0} for u in board], competing)
    assert (result["status"], result["reason"], result["answer"]) == ("refused", "evidence_not_retrieved", None)
    assert result["citations"] == []


def test_excluded_by_budget(competing: Path) -> None:
    line = f"开放时间：{LONG_HOURS}"
    result = query_once("借阅台 开放时间", competing, top_k=2, budget=len(line) - 1)
    assert (result["status"], result["reason"], result["answer"]) == ("refused", "excluded_by_budget", None)
    pack = next(e for e in result["trace"]["events"] if e["step"] == "pack")
    assert [s["characters"] for s in pack["skipped"]] == [len(line)]
    assert pack["characters"] == len("备注：借阅台开放时间借阅台开放时间")  # the next one fit
    assert query_once("借阅台 开放时间", competing, top_k=2, budget=len(line))["answer"] == LONG_HOURS


def test_budget_zero_excludes_everything(indexed_demo: Path) -> None:
    result = query_once("借阅台 开放时间", indexed_demo, budget=0)
    assert (result["reason"], result["trace"]["counters"]["empty_context"]) == ("excluded_by_budget", 1)


def test_ranking_ties_are_broken_by_evidence_id(make_corpus: MakeCorpus) -> None:
    root = make_corpus({f"documents/{name}.md": "主题：新台\n开放时间：上午九点。\n" for name in "qwertyuiop"})
    build_index(root)
    with Index(default_index_path(root)) as index:
        ranked = retrieve("新台 开放时间", index, top_k=10)
        first_four = retrieve("新台 开放时间", index, top_k=4)
    scores = [c["score"] for c in ranked]
    assert scores[0] > scores[1] and len(set(scores[1:])) == 1  # the slot's first unit, then the rest
    ids = [c["evidence"]["evidence_id"] for c in ranked]
    assert ids == sorted(ids) and len(ids) == 10
    assert [c["evidence"]["evidence_id"] for c in first_four] == ids[:4]


def test_ranking_prefers_the_matching_subject(indexed_demo: Path) -> None:
    with Index(default_index_path(indexed_demo)) as index:
        ranked = retrieve("借阅台 开放时间", index, top_k=5)
    assert ranked[0]["evidence"]["text"] == "开放时间：周二至周五十四点到十七点。"
    scores = [c["score"] for c in ranked]
    assert scores == sorted(scores, reverse=True)


def test_retrieve_with_no_known_term_is_empty(indexed_demo: Path) -> None:
    with Index(default_index_path(indexed_demo)) as index:
        assert retrieve("😀😀", index) == []


@pytest.mark.parametrize("top_k", [0, -1, True, 2.5])
def test_bad_top_k_is_a_config_error(indexed_demo: Path, top_k: object) -> None:
    with pytest.raises(ConfigError, match="top_k must be a whole number"):
        query_once("借阅台 开放时间", indexed_demo, top_k=top_k)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("question", "message"),
    [("", "the question is empty"), ("  ", "the question is empty"), ("借阅台\x00开放时间", r"control character U\+0000 at code point 3"), ("问" * 501, "limit is 500")],
)
def test_unaskable_question_is_a_question_error(indexed_demo: Path, question: str, message: str) -> None:
    with pytest.raises(QuestionError, match=message):
        query_once(question, indexed_demo)


def test_trace_shows_the_lift(competing: Path) -> None:
    result = query_once("借阅台 开放时间", competing, top_k=3)
    step = next(e for e in result["trace"]["events"] if e["step"] == "retrieve")
    assert (step["named_keys_first"], step["lifted_units"]) == (True, 1)
    with Index(default_index_path(competing)) as index:
        plain = {
            c["evidence"]["evidence_id"]: c["score"]
            for c in retrieve("借阅台 开放时间", index, top_k=3, named_keys_first=False)
        }
    first = step["candidates"][0]
    assert first["evidence"]["source"] == "documents/lib.md"
    assert first["score"] == pytest.approx(plain[first["evidence"]["evidence_id"]] + 2 * step["lift"])
    assert all(c["score"] == plain[c["evidence"]["evidence_id"]] for c in step["candidates"][1:])


def test_names_without_terms_are_still_lifted(make_corpus: MakeCorpus) -> None:
    """Punctuation-only names give BM25 nothing to score; each slot's first unit still comes first."""
    files = {f"documents/a{i}.md": "主题：——\n※※：一\n" for i in range(5)}
    files["documents/f.md"] = "主题：·\n※※：二\n"  # its unit has the highest evidence_id
    root = make_corpus(files)
    build_index(root)
    result = query_once("——和·的※※", root, top_k=2)
    assert result["status"] == "answered"
    assert [s["answer"] for s in result["slots"]] == ["一", "二"]


@pytest.mark.parametrize(
    "question", ["借阅台开放时间借阅台", "借阅台的开放时间，借阅台的开放时间", "借阅台 开放时间 开放时间"]
)
def test_a_name_said_twice_is_one_name(indexed_demo: Path, question: str) -> None:
    result = query_once(question, indexed_demo)
    assert (result["status"], result["answer"]) == ("answered", "周二至周五十四点到十七点。")
    assert len(result["slots"]) == 1


def test_a_request_parses_its_question_once(indexed_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    from rag_lab.retrieval.question import parse_text_question

    calls = []

    def counting(question: str, source: object) -> object:
        calls.append(question)
        return parse_text_question(question, source)  # type: ignore[arg-type]

    for name in ("answer", "query", "rank"):  # the modules, not the package's same-named functions
        monkeypatch.setattr(importlib.import_module(f"rag_lab.retrieval.{name}"), "parse_text_question", counting)
    result = query_once("借阅台 和 打印室 的 开放时间", indexed_demo, ordering="by_slot")
    assert result["status"] == "answered"
    assert calls == ["借阅台 和 打印室 的 开放时间"]
