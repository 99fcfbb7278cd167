"""Dedup by identity: same sha256 and same span is one piece of evidence; similar text never merges."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from rag_lab.index import build_index
from rag_lab.retrieval import pack_context, query_once

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

AS_OF = date(2026, 1, 1)


def _event(result: dict, step: str) -> dict:
    return next(e for e in result["trace"]["events"] if e["step"] == step)


def test_new_desk_with_dedup(indexed_demo: Path) -> None:
    result = query_once("新台 开放时间", indexed_demo, top_k=5, as_of=AS_OF)
    retrieved = [c["evidence"] for c in _event(result, "retrieve")["candidates"]]
    pack = _event(result, "pack")
    # Top 5 holds four of the five byte-identical copies and the different sixth file.
    sources = sorted(u["source"] for u in retrieved if u["subject"] == "新台")
    assert len(sources) == 5 and "documents/new_desk/6.md" in sources
    identities = {(u["sha256"], tuple(u["span"])) for u in retrieved}
    assert pack["duplicates_merged"] == 3 == len(retrieved) - len(identities)
    assert len(pack["kept"]) == 2
    first = pack["kept"][0]
    assert [(s["reason"], s["duplicate_of"]) for s in pack["skipped"]] == [("duplicate", first)] * 3
    # The audit still reads all six files (seed 000 反例 / seed 002): copies are merged, not hidden.
    assert (result["status"], result["reason"]) == ("refused", "conflicting_evidence")
    assert result["same_key_sources_checked"] == 6
    assert len(result["citations"]) == 6
    distinct = {c["sha256"] for c in result["citations"]}
    assert len(distinct) == 2 == result["independent_sources"]
    assert result["duplicates_merged"] == result["same_key_sources_checked"] - len(distinct) == 4
    sides = {s["value"]: len(s["evidence_ids"]) for s in result["slots"][0]["sides"]}
    assert sides == {"上午九点。": 5, "上午十点。": 1}


def test_new_desk_without_dedup_keeps_the_copies(indexed_demo: Path) -> None:
    result = query_once("新台 开放时间", indexed_demo, top_k=5, dedup=False, as_of=AS_OF)
    pack = _event(result, "pack")
    assert "duplicates_merged" not in pack
    assert len(pack["kept"]) == 5 and pack["skipped"] == []
    assert result["trace"]["config"]["dedup"] is False
    # The decision does not depend on dedup: the audit is complete either way.
    assert (result["status"], result["same_key_sources_checked"], len(result["citations"])) == (
        "refused",
        6,
        6,
    )
    assert result["duplicates_merged"] == 4


def test_same_line_in_different_files_is_not_merged(make_corpus) -> None:
    root = make_corpus(
        {
            "documents/a.md": "主题：甲台\n地点：一楼东侧\n",
            "documents/b.md": "# 甲台说明\n主题：甲台\n地点：一楼东侧\n",
        }
    )
    build_index(root)
    result = query_once("甲台 地点", root, as_of=AS_OF)
    pack = _event(result, "pack")
    assert pack["duplicates_merged"] == 0 and len(pack["kept"]) == 2
    kept = [c["evidence"] for c in _event(result, "retrieve")["candidates"]]
    assert kept[0]["text"] == kept[1]["text"]
    assert kept[0]["sha256"] != kept[1]["sha256"] and kept[0]["span"] != kept[1]["span"]
    assert result["status"] == "answered"
    assert (result["independent_sources"], result["duplicates_merged"]) == (2, 0)


def test_near_identical_text_never_merges(make_corpus) -> None:
    root = make_corpus(
        {
            "documents/a.md": "主题：甲台\n开放时间：上午九点。\n",
            "documents/b.md": "主题：甲台\n开放时间：上午九点\n",
        }
    )
    build_index(root)
    result = query_once("甲台 开放时间", root, as_of=AS_OF)
    assert _event(result, "pack")["duplicates_merged"] == 0
    assert (result["status"], result["reason"]) == ("refused", "conflicting_evidence")
    assert result["duplicates_merged"] == 0


def _unit(eid: str, sha: str | None, span: list[int] | None, text: str) -> dict:
    return {"evidence": {"evidence_id": eid, "sha256": sha, "span": span, "text": text, "source": eid}}


def test_pack_identity_is_sha_and_span() -> None:
    sha = "ab" * 32
    candidates = [
        _unit("a", sha, [0, 5], "地点：一楼"),
        _unit("b", sha, [0, 5], "地点：一楼"),  # same bytes, same span: duplicate
        _unit("c", sha, [6, 11], "地点：一楼"),  # same bytes, other span: other evidence
        _unit("d", "cd" * 32, [0, 5], "地点：一楼"),  # other bytes, same span and text
        _unit("e", None, None, "地点：一楼"),  # identity unknown: never merged
        _unit("f", None, None, "地点：一楼"),
    ]
    kept, report = pack_context(candidates, 1000, dedup=True)
    assert [c["evidence"]["evidence_id"] for c in kept] == ["a", "c", "d", "e", "f"]
    assert report["duplicates_merged"] == 1
    assert report["skipped"] == [{"evidence_id": "b", "rank": 2, "reason": "duplicate", "duplicate_of": "a"}]
    # A duplicate costs no budget, and an over-budget original is not a target for merging.
    kept, report = pack_context([_unit("x", sha, [0, 9], "x" * 9), *candidates[:2]], 6, dedup=True)
    assert [c["evidence"]["evidence_id"] for c in kept] == ["a"]
    assert [s["reason"] for s in report["skipped"]] == ["over_budget", "duplicate"]


def test_dedup_off_is_the_seed_default_of_pack_context() -> None:
    sha = "ab" * 32
    kept, report = pack_context([_unit("a", sha, [0, 2], "ab"), _unit("b", sha, [0, 2], "ab")], 10)
    assert len(kept) == 2 and "duplicates_merged" not in report
