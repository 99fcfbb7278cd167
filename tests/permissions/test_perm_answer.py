"""The low-level ``answer()`` drops candidates the index's caller may not read, wherever they came from."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from perm_corpora import AS_OF, BOB, CONFLICT_DOC

from rag_lab.data import extract_corpus
from rag_lab.index import Index, default_index_path
from rag_lab.records import Candidate, Unit
from rag_lab.retrieval.answer import answer

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

QUESTION = "测试台 开放时间"


def hidden_unit_from_files(root: Path) -> Unit:
    return next(u for rec in extract_corpus(root) if rec.path == CONFLICT_DOC for u in rec.units)


def hidden_unit_from_owner_index(root: Path) -> Unit:
    evidence_id = hidden_unit_from_files(root)["evidence_id"]
    with Index(default_index_path(root)) as owner:
        unit = owner.unit_by_evidence_id(evidence_id)
    assert unit is not None and unit["source"] == CONFLICT_DOC and unit["value"] == "周五全天。"
    return unit


def candidates(units: list[Unit]) -> list[Candidate]:
    return [{"evidence": u, "score": 10.0 - i} for i, u in enumerate(units)]


def decide(root: Path, units: list[Unit]) -> dict[str, Any]:
    with Index(default_index_path(root), BOB) as index:
        return answer(QUESTION, candidates(units), root, index, as_of=AS_OF)


def visible_units(root: Path) -> list[Unit]:
    with Index(default_index_path(root), BOB) as index:
        return index.units_for_key("测试台", "开放时间")


def assert_ignored(root: Path, hidden: Unit) -> None:
    visible = visible_units(root)
    assert [u["source"] for u in visible] == ["documents/test_bench_a.md", "documents/test_bench_b.md"]
    for units, without in (
        ([hidden, *visible], visible),  # first in rank order: not cited, not counted
        ([*visible, hidden], visible),
        ([hidden], []),  # alone: bob's result is as if nothing had been retrieved
    ):
        result, expected = decide(root, units), decide(root, without)
        assert json.dumps(result, ensure_ascii=False, sort_keys=True) == json.dumps(
            expected, ensure_ascii=False, sort_keys=True
        )
        assert hidden["evidence_id"] not in json.dumps(result)
        assert CONFLICT_DOC not in json.dumps(result, ensure_ascii=False)
    with_visible = decide(root, [hidden, *visible])
    assert (with_visible["status"], with_visible["reason"]) == ("refused", "conflicting_evidence")
    assert with_visible["same_key_sources_checked"] == 2 and len(with_visible["citations"]) == 2
    assert decide(root, [hidden])["reason"] == "evidence_not_retrieved"


def test_hidden_unit_read_from_the_files_is_ignored(make_b: Callable[[str], Path]) -> None:
    """A unit from ``extract_corpus`` carries its ACL (``acl: "hr"``): dropped before verification."""
    root = make_b("conflict")
    hidden = hidden_unit_from_files(root)
    assert hidden["acl"] == "hr"
    assert_ignored(root, hidden)


def test_hidden_unit_from_an_owners_index_is_ignored(make_b: Callable[[str], Path]) -> None:
    root = make_b("conflict")
    assert_ignored(root, hidden_unit_from_owner_index(root))


def test_hidden_unit_with_its_label_stripped_is_ignored(make_b: Callable[[str], Path]) -> None:
    root = make_b("conflict")
    hidden = {k: v for k, v in hidden_unit_from_files(root).items() if k != "acl"}
    assert_ignored(root, hidden)
