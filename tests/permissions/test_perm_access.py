"""Callers with access see the hidden evidence; callers without it are filtered before ranking."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from perm_corpora import (
    ALICE,
    AS_OF,
    BOB,
    CONFLICT_DOC,
    COPY_DOC,
    UNKNOWN_DOC,
    hidden_evidence_ids,
)

from rag_lab.cli import main
from rag_lab.data.access import Principal
from rag_lab.demo import corpus_path
from rag_lab.index import build_index
from rag_lab.records import SUPPORT_SCOPE, VISIBLE_SUPPORT_SCOPE
from rag_lab.retrieval import query_once

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

BENCHES = ["documents/test_bench_a.md", "documents/test_bench_b.md"]


def ask(root: Path, question: str, principal: Principal | None, **kw: Any) -> dict[str, Any]:
    return query_once(question, root, principal=principal, as_of=AS_OF, **kw)


def sources(result: dict[str, Any]) -> list[str]:
    return [c["source"] for c in result["citations"]]


def retrieved_ids(result: dict[str, Any]) -> list[str]:
    step = next(e for e in result["trace"]["events"] if e["step"] == "retrieve")
    return [c["evidence"]["evidence_id"] for c in step["candidates"]]


# -- 2. a caller with access, and the owner, see the hidden evidence ---------------------------


@pytest.mark.parametrize(
    ("principal", "scope"), [(ALICE, VISIBLE_SUPPORT_SCOPE), (None, SUPPORT_SCOPE)], ids=["alice", "owner"]
)
def test_case_a_conflict_is_visible_with_access(
    principal: Principal | None, scope: str, make_b: Callable[[str], Path]
) -> None:
    root = make_b("conflict")
    result = ask(root, "测试台 开放时间", principal)
    assert (result["status"], result["reason"]) == ("refused", "conflicting_evidence")
    assert sources(result) == [CONFLICT_DOC, *BENCHES]
    assert result["same_key_sources_checked"] == 3
    assert [s["value"] for s in result["slots"][0]["sides"]] == sorted(
        ["周三上午九点。", "周四上午十点。", "周五全天。"]
    )
    assert result["support_scope"] == scope
    # bob, on the same corpus, sees the visible two-way conflict only
    bob = ask(root, "测试台 开放时间", BOB)
    assert (bob["status"], bob["reason"]) == ("refused", "conflicting_evidence")
    assert sources(bob) == BENCHES and bob["same_key_sources_checked"] == 2
    assert bob["support_scope"] == VISIBLE_SUPPORT_SCOPE


@pytest.mark.parametrize("principal", [ALICE, None], ids=["alice", "owner"])
def test_case_b_hidden_subject_is_answered_with_access(
    principal: Principal | None, make_b: Callable[[str], Path]
) -> None:
    root = make_b("unknown")
    result = ask(root, "秘密基地 地点", principal)
    assert (result["status"], result["answer"]) == ("answered", "地下三层")
    assert sources(result) == [UNKNOWN_DOC]
    clarify = ask(root, "秘密基地", principal)
    assert (clarify["status"], clarify["reason"]) == ("needs_clarification", "subject_without_field")
    assert clarify["clarification"] == {"subject": "秘密基地", "fields": sorted(["地点", "联系人"])}
    # 地点 has more than 20 subjects: 秘密基地 enters alice's first 20 and pushes 装订室 out
    place = ask(root, "地点", principal)["clarification"]
    assert "秘密基地" in place["subjects"] and "装订室" not in place["subjects"] and place["more"] is True


@pytest.mark.parametrize("principal", [ALICE, None], ids=["alice", "owner"])
def test_case_c_hidden_copy_is_a_second_citation_with_access(
    principal: Principal | None, make_b: Callable[[str], Path]
) -> None:
    root = make_b("duplicate")
    result = ask(root, "借阅台 开放时间", principal)
    assert (result["status"], result["answer"]) == ("answered", "周二至周五十四点到十七点。")
    assert sources(result) == ["documents/library.md", COPY_DOC]
    assert (
        result["same_key_sources_checked"],
        result["independent_sources"],
        result["duplicates_merged"],
    ) == (
        2,
        1,
        1,
    )
    bob = ask(root, "借阅台 开放时间", BOB)
    assert sources(bob) == ["documents/library.md"]
    assert (bob["same_key_sources_checked"], bob["independent_sources"], bob["duplicates_merged"]) == (
        1,
        1,
        0,
    )


def test_cli_as_alice_sees_the_conflict(
    make_b: Callable[[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_b("all")
    args = ["ask", str(root), "测试台 开放时间", "--json", "--as-of", AS_OF.isoformat()]
    assert main([*args, "--as", "alice", "--groups", "hr,staff"]) == 3
    result = json.loads(capsys.readouterr().out)
    assert sources(result) == [CONFLICT_DOC, *BENCHES]
    assert result["trace"]["events"][0] == {"step": "principal", "name": "alice", "groups": ["hr", "staff"]}
    assert main([*args, "--as", "bob", "--groups", "staff"]) == 3
    assert sources(json.loads(capsys.readouterr().out)) == BENCHES
    # --as with no groups: public documents only
    assert main([*args, "--as", "nobody"]) == 3
    assert sources(json.loads(capsys.readouterr().out)) == BENCHES


# -- 3. filtering happens before ranking -------------------------------------------------------


@pytest.mark.parametrize(
    "question", ["秘密基地 地点", "测试台 开放时间", "周五全天", "借阅台 开放时间", "地下三层 老周", "借阅台"]
)
def test_bobs_candidates_never_contain_hidden_units(question: str, make_b: Callable[[str], Path]) -> None:
    root = make_b("all")
    hidden = hidden_evidence_ids(root)
    assert len(hidden) == 5 + 1 + 2 + 1  # library copy (its fields and its prose sentence), 秘密基地 (地点, 联系人), 测试台 开放时间
    for top_k in (1, 5, 50):
        bob = ask(root, question, BOB, top_k=top_k)
        assert retrieved_ids(bob) and not set(retrieved_ids(bob)) & hidden
        assert not any(h in json.dumps(bob) for h in hidden)
    # the same question does retrieve hidden units for alice: the filter is what removed them
    assert set(retrieved_ids(ask(root, question, ALICE, top_k=50))) & hidden


def test_bobs_scores_are_computed_from_visible_units_only(
    corpus_a: Path, make_b: Callable[[str], Path]
) -> None:
    root = make_b("all")
    for question in ("借阅台 开放时间", "测试台 开放时间", "地点"):
        on_a = ask(corpus_a, question, BOB, top_k=50)
        on_b = ask(root, question, BOB, top_k=50)
        step = [e for e in on_b["trace"]["events"] if e["step"] == "retrieve"]
        assert step == [e for e in on_a["trace"]["events"] if e["step"] == "retrieve"]
        # alice's statistics include the hidden units, so the same visible unit scores differently
        alice = ask(root, question, ALICE, top_k=50)
        score = {c["evidence"]["evidence_id"]: c["score"] for c in step[0]["candidates"]}
        alice_step = next(e for e in alice["trace"]["events"] if e["step"] == "retrieve")
        alice_score = {c["evidence"]["evidence_id"]: c["score"] for c in alice_step["candidates"]}
        shared = set(score) & set(alice_score)
        assert shared and any(score[i] != alice_score[i] for i in shared)


RANKING_STEPS = {"retrieve", "pack", "order", "package", "verify"}


def shape(result: dict[str, Any]) -> dict[str, Any]:
    """The result without the question's own words and the ranking of visible units by them."""
    trace = result["trace"]
    return {
        **{k: v for k, v in result.items() if k not in ("question", "trace")},
        "events": [e for e in trace["events"] if e["step"] not in RANKING_STEPS],
        "counters": trace["counters"],
    }


@pytest.mark.parametrize(
    ("hidden", "made_up", "expected"),
    [
        ("秘密基地", "火星基地", ("refused", "no_supporting_evidence")),
        ("秘密基地 联系人", "火星基地 联系人", ("refused", "no_supporting_evidence")),
        ("秘密基地 地点", "火星基地 地点", ("refused", "no_supporting_evidence")),  # issue 13: not a subject
    ],
)
def test_hidden_subject_is_refused_like_a_made_up_one(
    hidden: str, made_up: str, expected: tuple[str, str], make_b: Callable[[str], Path]
) -> None:
    root = make_b("unknown")
    bob, mars = ask(root, hidden, BOB), ask(root, made_up, BOB)
    assert (bob["status"], bob["reason"]) == (mars["status"], mars["reason"]) == expected
    assert bob["message"] == mars["message"]
    assert shape(bob) == shape(mars)  # same parse (no subject known), same decision, same counters
    assert "秘密基地" not in json.dumps(shape(bob), ensure_ascii=False)
    alice = ask(root, hidden, ALICE)
    assert alice["status"] in ("answered", "needs_clarification")
    assert ask(root, "秘密基地", ALICE)["reason"] == "subject_without_field"


def test_images_are_restricted_through_the_sidecar(tmp_path: Path) -> None:
    """A PNG has no 权限 line; the sidecar restricts it, and a hidden image is never re-measured for bob."""
    root = tmp_path / "corpus"
    shutil.copytree(corpus_path(), root)
    (root / "access.json").write_text(json.dumps({"images/red_*.png": ["人事"]}), encoding="utf-8")
    build_index(root)
    bob = ask(root, "红色 小 圆形", BOB)
    assert (bob["status"], bob["reason"]) == ("refused", "no_supporting_evidence")
    assert bob["message"] == "No image in the corpus measures as 红色 小 圆形."
    assert "red_circle" not in json.dumps(bob)
    hr = ask(root, "红色 小 圆形", Principal("hui", frozenset({"人事"})))  # group names may be Chinese
    assert (hr["status"], hr["answer"]) == ("answered", "红色 小 圆形")
    assert sources(hr) == ["images/red_circle.png"]
    assert ask(root, "蓝色 大 正方形", BOB)["answer"] == "蓝色 大 正方形"


@pytest.mark.parametrize("groups", ["staff hr", "staff，hr", "staff、hr"])
def test_cli_groups_accept_the_label_separators(
    groups: str, make_b: Callable[[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_b("conflict")
    args = ["ask", str(root), "测试台 开放时间", "--json", "--as-of", AS_OF.isoformat()]
    assert main([*args, "--as", "alice", "--groups", groups]) == 3
    assert sources(json.loads(capsys.readouterr().out)) == [CONFLICT_DOC, *BENCHES]
