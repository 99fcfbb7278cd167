"""The shared, dependency-free part of the integrations: re-verified evidence, opened citations."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_lab.data.access import Principal
from rag_lab.errors import ConfigError, SourceFileError
from rag_lab.integrations.evidence import (
    RefusedError,
    explain,
    index_status,
    open_citation,
    verified_evidence,
)
from rag_lab.retrieval import query_once

ANONYMOUS = Principal("anonymous", frozenset())


def test_verified_evidence_quotes_each_citation_and_carries_the_status(corpus: Path) -> None:
    result = query_once("测试台 开放时间", corpus)
    records = verified_evidence(result, corpus)
    assert [r["quote"] for r in records] == ["开放时间：周三上午九点。", "开放时间：周四上午十点。"]
    assert {(r["status"], r["reason"]) for r in records} == {("refused", "conflicting_evidence")}
    assert all(r["verified"] and r["verification"]["checks"][-1] == "id" for r in records)
    assert records[0]["span"] == result["citations"][0]["span"]


def test_a_changed_file_is_not_quoted(corpus: Path) -> None:
    result = query_once("借阅台 开放时间", corpus)
    path = corpus / "documents" / "library.md"
    path.write_bytes(path.read_bytes().replace("十七点".encode(), "十八点".encode()))
    [record] = verified_evidence(result, corpus)
    assert record["verified"] is False
    assert record["verification"]["failed_check"] == "sha256"
    assert record["quote"] is None


def test_open_citation_gives_context_lines_and_hides_what_the_caller_may_not_see(corpus: Path) -> None:
    owner = query_once("员工休息室 开放时间", corpus)
    evidence_id = owner["citations"][0]["evidence_id"]
    view = open_citation(corpus, evidence_id, context_lines=1)
    assert view["quote"] == "开放时间：七点到二十二点"
    assert [(line["number"], line["cited"]) for line in view["context"]["lines"]] == [(2, False), (3, True)]
    with pytest.raises(SourceFileError) as hidden:
        open_citation(corpus, evidence_id, principal=ANONYMOUS)
    with pytest.raises(SourceFileError) as unknown:
        open_citation(corpus, "ev_000000000000000000000000", principal=ANONYMOUS)
    assert str(hidden.value).replace(evidence_id, "ID") == str(unknown.value).replace(
        "ev_000000000000000000000000", "ID"
    )
    with pytest.raises(ConfigError, match="context_lines"):
        open_citation(corpus, evidence_id, context_lines=51)


def test_an_opened_prose_citation_says_it_quotes_a_sentence(tmp_path: Path) -> None:
    from tests.conftest import write_files

    from rag_lab.index import build_index

    root = write_files(tmp_path / "c", {"documents/hall.md": "# 新馆\n\n新馆共有120个座位。新馆在东区。\n"})
    build_index(root)
    result = query_once("新馆共有多少个座位？", root)
    assert result["status"] == "answered", result["message"]
    cite = result["citations"][0]
    view = open_citation(root, cite["evidence_id"])
    assert (view["support_type"], view["quote"]) == ("verbatim_sentence", "新馆共有120个座位。")
    assert view["support_type"] == cite["support_type"] and view["verified"]


def test_index_status_counts_only_visible_units_and_names_no_hidden_change(corpus: Path) -> None:
    owner, anonymous = index_status(corpus), index_status(corpus, principal=ANONYMOUS)
    assert owner["units"] == anonymous["units"] + 1
    (corpus / "documents" / "staff_room.md").write_text(
        "主题：员工休息室\n权限：staff\n开放时间：全天\n", encoding="utf-8"
    )
    assert index_status(corpus)["changed"]["modified"] == ["documents/staff_room.md"]
    assert index_status(corpus, principal=ANONYMOUS)["stale"] is False
    (corpus / ".rag_lab" / "index.sqlite").unlink()
    assert index_status(corpus)["index"] == "missing"


def test_explain_says_what_to_add_and_refused_error_carries_the_result(corpus: Path) -> None:
    result = query_once("借阅台", corpus)
    text = explain(result)
    assert text.startswith("The question names a subject but not which of its fields is wanted.")
    assert "借用期限、地点、开放时间、联系电话、负责人" in text
    assert explain(query_once("借阅台 开放时间", corpus)) == ""
    error = RefusedError(result)
    assert (error.status, error.reason, error.result) == (
        "needs_clarification",
        "subject_without_field",
        result,
    )


def test_quoted_turns_a_change_after_answering_into_a_refusal(corpus: Path) -> None:
    from rag_lab.integrations.evidence import quoted

    result = query_once("借阅台 开放时间", corpus)
    assert quoted(result, corpus)[0] is result
    path = corpus / "documents" / "library.md"
    path.write_bytes(path.read_bytes() + b"\n")
    changed, records = quoted(result, corpus)
    assert (changed["status"], changed["reason"], changed["answer"], records) == (
        "refused",
        "source_verification_failed",
        None,
        [],
    )
    assert changed["verification_failure"]["failed_check"] == "sha256"
