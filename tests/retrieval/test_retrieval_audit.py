"""The complete same-key audit (seed 000 反例): no top-k or budget hole hides a conflict."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rag_lab.data import extract_documents
from rag_lab.index import Index, build_index, default_index_path
from rag_lab.retrieval import answer, pack_context, query_once, retrieve

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

MakeCorpus = Callable[..., Path]
NINE = "上午九点。"
TEN = "上午十点，节假日除外。"  # longer line: BM25 length normalisation ranks it last


def desk_corpus(make_corpus: MakeCorpus, same: int) -> Path:
    files = {f"documents/{i:02d}.md": f"主题：新台\n开放时间：{NINE}\n" for i in range(same)}
    files["documents/zz.md"] = f"主题：新台\n开放时间：{TEN}\n"
    root = make_corpus(files)
    build_index(root)
    return root


def test_five_same_one_conflict_outside_top5(make_corpus: MakeCorpus) -> None:
    root = desk_corpus(make_corpus, 5)
    with Index(default_index_path(root)) as index:
        top5 = retrieve("新台 开放时间", index, top_k=5)
    assert [c["evidence"]["value"] for c in top5] == [NINE] * 5  # the sixth is outside the top 5
    result = query_once("新台 开放时间", root, top_k=5)
    assert (result["status"], result["reason"], result["answer"]) == ("refused", "conflicting_evidence", None)
    assert result["same_key_sources_checked"] == 6
    assert sorted(c["source"] for c in result["citations"]) == [f"documents/{i:02d}.md" for i in range(5)] + [
        "documents/zz.md"
    ]
    assert result["support_scope"] == "complete_current_subject_field_source_set"
    sides = {s["value"]: len(s["evidence_ids"]) for s in result["slots"][0]["sides"]}
    assert sides == {NINE: 5, TEN: 1}


def test_fifty_same_one_conflict(make_corpus: MakeCorpus) -> None:
    root = desk_corpus(make_corpus, 50)
    result = query_once("新台 开放时间", root, top_k=5)
    assert (result["status"], result["reason"]) == ("refused", "conflicting_evidence")
    assert result["same_key_sources_checked"] == 51
    assert len(result["citations"]) == 51
    assert len({c["evidence_id"] for c in result["citations"]}) == 51
    audit = [e for e in result["trace"]["events"] if e["step"] == "audit"]
    assert len(audit[0]["same_key_units"]) == 51 and audit[0]["values"] == sorted([NINE, TEN])


def test_fifty_same_answer_cites_every_copy(make_corpus: MakeCorpus) -> None:
    root = make_corpus({f"documents/{i:02d}.md": f"主题：新台\n开放时间：{NINE}\n" for i in range(50)})
    build_index(root)
    result = query_once("新台 开放时间", root, top_k=5)
    assert (result["status"], result["answer"]) == ("answered", NINE)
    assert result["same_key_sources_checked"] == 50 and len(result["citations"]) == 50
    assert (result["independent_sources"], result["duplicates_merged"]) == (1, 49)


def test_conflict_excluded_by_budget(make_corpus: MakeCorpus) -> None:
    root = make_corpus(
        {"documents/a.md": f"主题：新台\n开放时间：{NINE}\n", "documents/b.md": f"主题：新台\n开放时间：{TEN}\n"}
    )
    build_index(root)
    budget = len(f"开放时间：{NINE}")  # 10 code points: the longer, conflicting line cannot fit
    result = query_once("新台 开放时间", root, top_k=5, budget=budget)
    pack = next(e for e in result["trace"]["events"] if e["step"] == "pack")
    assert pack["characters"] == budget
    assert [s["characters"] for s in pack["skipped"]] == [len(f"开放时间：{TEN}")]
    assert (result["status"], result["reason"]) == ("refused", "conflicting_evidence")
    assert sorted(c["source"] for c in result["citations"]) == ["documents/a.md", "documents/b.md"]
    assert result["same_key_sources_checked"] == 2


def test_agreeing_key_beside_a_conflicting_one(indexed_demo: Path) -> None:
    result = query_once("测试台 地点", indexed_demo)
    assert (result["status"], result["answer"]) == ("answered", "工程楼二层东侧")
    assert len(result["citations"]) == 2
    conflict = query_once("测试台 开放时间", indexed_demo)
    assert (conflict["reason"], sorted(c["source"] for c in conflict["citations"])) == (
        "conflicting_evidence",
        ["documents/test_bench_a.md", "documents/test_bench_b.md"],
    )


def test_old_version_note_retires_nothing(indexed_demo: Path) -> None:
    result = query_once("旧服务台 开放时间", indexed_demo)
    assert (result["status"], result["answer"]) == ("answered", "周一至周五上午八点到十一点。")


# --- answer() without an index reads the current originals -------------------------------------


def test_answer_without_index_finds_a_file_added_after_extraction(make_corpus: MakeCorpus) -> None:
    root = make_corpus({f"documents/{i}.md": f"主题：新台\n开放时间：{NINE}\n" for i in range(5)})
    entries = extract_documents(root)
    (root / "documents" / "5.md").write_text(f"主题：新台\n开放时间：{TEN}\n", encoding="utf-8")
    result = answer("新台 开放时间", [{"evidence": e, "score": 1.0} for e in entries], root)
    assert (result["reason"], result["same_key_sources_checked"], len(result["citations"])) == (
        "conflicting_evidence",
        6,
        6,
    )


def test_answer_without_index_agrees_when_all_current_copies_agree(make_corpus: MakeCorpus) -> None:
    root = make_corpus({f"documents/{i}.md": f"主题：新台\n开放时间：{NINE}\n" for i in range(6)})
    entries = extract_documents(root)
    kept, _ = pack_context([{"evidence": e, "score": 1.0} for e in entries[:1]], 1200)
    result = answer("新台 开放时间", kept, root)
    assert (result["status"], result["answer"], result["same_key_sources_checked"]) == ("answered", NINE, 6)
    assert [c["support_type"] for c in result["citations"]] == ["verbatim_line"] * 6


def test_answer_without_index_sees_an_edited_copy_outside_the_candidates(make_corpus: MakeCorpus) -> None:
    root = make_corpus({"documents/a.md": f"主题：新台\n开放时间：{NINE}\n", "documents/b.md": f"主题：新台\n开放时间：{NINE}\n"})
    entries = extract_documents(root)
    (root / "documents" / "b.md").write_text(f"主题：新台\n开放时间：{TEN}\n", encoding="utf-8")
    a_only = [{"evidence": e, "score": 1.0} for e in entries if e["source"] == "documents/a.md"]
    result = answer("新台 开放时间", a_only, root)
    assert (result["reason"], result["same_key_sources_checked"]) == ("conflicting_evidence", 2)


# --- validity windows (生效日期 / 失效日期) ----------------------------------------------------


def test_unit_before_its_start_date_is_not_evidence(indexed_demo: Path) -> None:
    from datetime import date

    early = query_once("档案室 开放时间", indexed_demo, as_of=date(2019, 12, 31))
    assert (early["status"], early["reason"], early["citations"]) == ("refused", "no_supporting_evidence", [])
    assert "outside its validity window on 2019-12-31" in early["message"]
    later = query_once("档案室 开放时间", indexed_demo, as_of=date(2020, 1, 1))
    assert (later["status"], later["answer"]) == ("answered", "周二和周四下午两点到五点。")


def test_explicit_end_date_retires_the_old_value(make_corpus: MakeCorpus) -> None:
    from datetime import date

    root = make_corpus(
        {
            "documents/old.md": "主题：新台\n失效日期：2021-01-01\n开放时间：上午九点。\n",
            "documents/new.md": "主题：新台\n生效日期：2021-01-01\n开放时间：上午十点。\n",
        }
    )
    build_index(root)
    before = query_once("新台 开放时间", root, as_of=date(2020, 12, 31))
    after = query_once("新台 开放时间", root, as_of=date(2021, 1, 1))
    assert (before["answer"], [c["source"] for c in before["citations"]]) == (NINE, ["documents/old.md"])
    assert (after["answer"], [c["source"] for c in after["citations"]]) == ("上午十点。", ["documents/new.md"])
    audit = next(e for e in after["trace"]["events"] if e["step"] == "audit")
    assert len(audit["out_of_window"]) == 1


def test_later_start_date_alone_retires_nothing(make_corpus: MakeCorpus) -> None:
    from datetime import date

    root = make_corpus(
        {
            "documents/old.md": "主题：新台\n生效日期：2019-01-01\n开放时间：上午九点。\n",
            "documents/new.md": "主题：新台\n生效日期：2021-01-01\n开放时间：上午十点。\n",
        }
    )
    build_index(root)
    result = query_once("新台 开放时间", root, as_of=date(2022, 1, 1))
    assert (result["reason"], result["same_key_sources_checked"]) == ("conflicting_evidence", 2)
