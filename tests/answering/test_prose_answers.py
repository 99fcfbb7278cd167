"""Prose questions end to end through query_once: answers, refusals, conflicts, reprints, windows."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from rag_lab.index import build_index
from rag_lab.retrieval import query_once

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

LIB = "# 新图书馆\n\n## 开放\n新馆将于2024年9月1日开放。\n馆长是张伟教授；新馆位于北京市海淀区。\n"


def corpus(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "c"
    for name, text in files.items():
        path = root / "documents" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    build_index(root)
    return root


def test_answers_with_a_verbatim_sentence_that_reconstructs_from_its_span(tmp_path: Path) -> None:
    root = corpus(tmp_path, {"lib.md": LIB})
    result = query_once("新馆什么时候开放？", root)
    assert (result["status"], result["reason"], result["answer"]) == (
        "answered",
        None,
        "新馆将于2024年9月1日开放。",
    )
    [cite] = result["citations"]
    assert cite["support_type"] == "verbatim_sentence" and cite["kind"] == "sentence"
    text = (root / cite["source"]).read_text(encoding="utf-8")
    assert text[cite["span"][0] : cite["span"][1]] == result["answer"]
    span = result["slots"][0]["answer_span"]
    assert span["text"] == "2024年9月1日" and text[span["span"][0] : span["span"][1]] == "2024年9月1日"
    assert result["support_scope"] == "retrieved_and_lexical_top_50_sentences_passing_support_check"
    check = next(s for s in result["trace"]["events"] if s["step"] == "support_check")
    assert check["status"] == "answered"
    assert [c["evidence_id"] for c in check["checks"] if c["ok"]] == [cite["evidence_id"]]


def test_refuses_saying_what_is_missing(tmp_path: Path) -> None:
    root = corpus(tmp_path, {"lib.md": LIB + "新馆的开放仪式很隆重。\n"})
    result = query_once("新馆的停车场有多少个车位？", root)
    assert (result["status"], result["reason"]) == ("refused", "insufficient_evidence")
    assert "停车场" in result["message"] and result["citations"] == [] and result["answer"] is None
    typed = query_once("新馆几点关门？", root)
    assert typed["reason"] == "insufficient_evidence" and "关门" in typed["message"]


def test_no_type_value_is_refused_with_the_type_named(tmp_path: Path) -> None:
    root = corpus(tmp_path, {"lib.md": "# 新馆\n\n新馆将在秋季之后开放。\n"})
    result = query_once("新馆什么时候开放？", root)
    assert result["reason"] == "insufficient_evidence"
    assert "mention 新馆、开放 but give no date or time" in result["message"]


def test_independent_sources_that_differ_conflict_and_reprints_do_not_count(tmp_path: Path) -> None:
    a = "# 简报\n\n新馆共有120个座位。\n"
    root = corpus(tmp_path, {"a.md": a, "a_copy.md": a, "b.md": "# 新馆\n\n新馆共有150个座位。\n"})
    result = query_once("新馆有多少个座位？", root)
    assert (result["status"], result["reason"], result["answer"]) == ("refused", "conflicting_evidence", None)
    sides = result["slots"][0]["sides"]
    assert [s["values"] for s in sides] == [["120个"], ["150个"]]
    assert len(sides[0]["evidence_ids"]) == 2  # both copies cited …
    assert result["independent_sources"] == 2  # … but they are one independent source
    assert sorted(c["source"] for c in result["citations"]) == [
        "documents/a.md",
        "documents/a_copy.md",
        "documents/b.md",
    ]


def test_reprints_agreeing_are_one_source_and_all_cited(tmp_path: Path) -> None:
    a = "# 简报\n\n新馆共有120个座位。\n"
    root = corpus(tmp_path, {"a.md": a, "a_copy.md": a})
    result = query_once("新馆有多少个座位？", root)
    assert result["status"] == "answered" and len(result["citations"]) == 2
    assert result["independent_sources"] == 1


def test_validity_dates_retire_a_version(tmp_path: Path) -> None:
    old = "生效日期：2020-01-01\n失效日期：2023-01-01\n\n游泳馆单次票价为15元。\n"
    new = "生效日期：2023-01-01\n\n游泳馆单次票价为20元。\n"
    root = corpus(tmp_path, {"old.md": old, "new.md": new})
    assert (
        query_once("游泳馆单次票价是多少？", root, as_of=date(2024, 1, 1))["answer"]
        == "游泳馆单次票价为20元。"
    )
    assert (
        query_once("游泳馆单次票价是多少？", root, as_of=date(2021, 1, 1))["answer"]
        == "游泳馆单次票价为15元。"
    )


def test_a_supporting_sentence_outside_the_budget_is_excluded_by_budget(tmp_path: Path) -> None:
    root = corpus(tmp_path, {"lib.md": LIB})
    result = query_once("新馆什么时候开放？", root, budget=5)
    assert (result["status"], result["reason"]) == ("refused", "excluded_by_budget")


def test_a_changed_file_is_stale_before_any_prose_is_read(tmp_path: Path) -> None:
    root = corpus(tmp_path, {"lib.md": LIB})
    (root / "documents" / "lib.md").write_text(LIB.replace("9月1日", "9月2日"), encoding="utf-8")
    assert query_once("新馆什么时候开放？", root)["reason"] == "index_stale"


@pytest.mark.parametrize("name", ["lib.md", "lib.txt"])
def test_txt_files_are_prose_documents_too(tmp_path: Path, name: str) -> None:
    root = corpus(tmp_path, {name: "新馆将于2024年9月1日开放。\n"})
    assert query_once("新馆什么时候开放？", root)["citations"][0]["source"] == f"documents/{name}"


def test_table_cells_answer_like_fields(tmp_path: Path) -> None:
    table = "# 班车\n\n| 线路 | 票价（元） |\n|---|---|\n| 东湖—滨江 | 2 |\n"
    root = corpus(tmp_path, {"bus.md": table, "bus2.md": table.replace("| 2 |", "| 3 |")})
    result = query_once("东湖—滨江 票价", root)
    assert (result["status"], result["reason"]) == ("refused", "conflicting_evidence")
    assert {c["support_type"] for c in result["citations"]} == {"verbatim_cell"}


def test_field_questions_still_answer_with_prose_around(tmp_path: Path) -> None:
    root = corpus(tmp_path, {"lib.md": LIB + "\n主题：借阅台\n开放时间：周二至周五。\n"})
    result = query_once("借阅台 开放时间", root)
    assert (result["status"], result["answer"]) == ("answered", "周二至周五。")
    assert result["citations"][0]["support_type"] == "verbatim_line"


def test_a_hidden_prose_source_neither_answers_nor_conflicts_for_a_caller_who_cannot_see_it(
    tmp_path: Path,
) -> None:
    from rag_lab.data.access import Principal

    root = corpus(
        tmp_path,
        {"a.md": "# 简报\n\n新馆共有120个座位。\n", "b.md": "权限：hr\n\n新馆共有150个座位。\n"},
    )
    bob, alice = Principal("bob", frozenset({"staff"})), Principal("alice", frozenset({"hr"}))
    seen_by_bob = query_once("新馆有多少个座位？", root, principal=bob)
    assert (seen_by_bob["status"], seen_by_bob["answer"]) == ("answered", "新馆共有120个座位。")
    assert "b.md" not in str(seen_by_bob)
    assert query_once("新馆有多少个座位？", root, principal=alice)["reason"] == "conflicting_evidence"


def test_an_added_or_changed_txt_file_makes_the_index_stale(tmp_path: Path) -> None:
    root = corpus(tmp_path, {"lib.txt": "新馆将于2024年9月1日开放。\n"})
    (root / "documents" / "more.txt").write_text("新馆共有120个座位。\n", encoding="utf-8")
    result = query_once("新馆什么时候开放？", root)
    assert result["reason"] == "index_stale" and "documents/more.txt" in result["message"]


CONFLICT_FILES = {
    "a.md": "# 简报\n\n新馆共有120个座位。\n",
    "b.md": "# 通知\n\n据最新统计，新馆目前共有150个座位，另有站位。\n",
    "c.md": "# 新馆\n\n新馆共有120个座位。欢迎读者。\n",
}


def test_a_conflict_beyond_the_top_k_is_found_by_the_audit(tmp_path: Path) -> None:
    root = corpus(tmp_path, CONFLICT_FILES)
    result = query_once("新馆有多少个座位？", root, top_k=1)
    retrieved = next(e for e in result["trace"]["events"] if e["step"] == "retrieve")
    shown = [c["evidence"]["source"] for c in retrieved["candidates"]]
    assert len(shown) == 1 and "b.md" not in str(retrieved)  # the 150 sentence was not retrieved …
    assert (result["status"], result["reason"]) == ("refused", "conflicting_evidence")  # … the audit found it
    assert [s["values"] for s in result["slots"][0]["sides"]] == [["120个"], ["150个"]]
    assert "documents/b.md" in {c["source"] for c in result["citations"]}
    audit_verified = [e for e in result["trace"]["events"] if e["step"] == "verify" and e["purpose"] == "prose_audit"]
    assert {e["source"] for e in audit_verified} >= {"documents/b.md"}  # verified before it counted
    assert result["support_scope"] == "retrieved_and_lexical_top_50_sentences_passing_support_check"


def test_the_audit_is_bounded_and_agreeing_or_hidden_sentences_do_not_conflict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rag_lab.retrieval.prose_audit as prose_audit
    from rag_lab.data.access import Principal

    agreeing = {k: v for k, v in CONFLICT_FILES.items() if k != "b.md"}
    root = corpus(tmp_path / "agree", agreeing)
    assert query_once("新馆有多少个座位？", root, top_k=1)["status"] == "answered"  # c.md agrees
    root = corpus(tmp_path / "hidden", {**CONFLICT_FILES, "b.md": "权限：hr\n\n" + CONFLICT_FILES["b.md"]})
    bob = Principal("bob", frozenset({"staff"}))
    seen_by_bob = query_once("新馆有多少个座位？", root, top_k=1, principal=bob)
    assert seen_by_bob["status"] == "answered" and "b.md" not in str(seen_by_bob)
    # the pool is a fixed number of units: with a pool of one the 150 sentence is not reached
    root = corpus(tmp_path / "bounded", CONFLICT_FILES)
    monkeypatch.setattr(prose_audit, "AUDIT_POOL", 1)
    assert query_once("新馆有多少个座位？", root, top_k=1)["status"] == "answered"


def test_an_audited_sentence_outside_its_validity_window_does_not_conflict(tmp_path: Path) -> None:
    old = "生效日期：2020-01-01\n失效日期：2023-01-01\n\n据最新统计，新馆目前共有150个座位，另有站位。\n"
    root = corpus(tmp_path, {**CONFLICT_FILES, "b.md": old})
    result = query_once("新馆有多少个座位？", root, top_k=1, as_of=date(2024, 1, 1))
    assert (result["status"], result["answer"]) == ("answered", "新馆共有120个座位。")
