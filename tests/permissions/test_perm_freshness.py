"""index_stale names only changes a caller may see: a hidden file's edits are not bob's business."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from perm_corpora import ALICE, AS_OF, BOB, CONFLICT_DOC, UNKNOWN_DOC

from rag_lab.data.access import Principal
from rag_lab.index import Index, check_freshness, default_index_path
from rag_lab.retrieval import query_once

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

QUESTIONS = ["借阅台 开放时间", "测试台 开放时间", "秘密基地 地点", "开放时间"]


def ask(root: Path, question: str, principal: Principal | None) -> dict[str, Any]:
    return query_once(question, root, principal=principal, as_of=AS_OF)


def dumped(root: Path, principal: Principal | None) -> list[str]:
    return [json.dumps(ask(root, q, principal), ensure_ascii=False, sort_keys=True) for q in QUESTIONS]


def freshness(result: dict[str, Any]) -> dict[str, Any]:
    return next(e for e in result["trace"]["events"] if e["step"] == "freshness")


def edit_hidden(root: Path) -> None:
    (root / CONFLICT_DOC).write_text("主题：测试台\n开放时间：周六全天。\n\n权限：hr\n", encoding="utf-8")


def test_editing_a_hidden_file_is_not_stale_for_bob(make_b: Callable[[str], Path]) -> None:
    root = make_b("all")
    edit_hidden(root)
    for question in QUESTIONS:
        bob = ask(root, question, BOB)
        assert bob["reason"] != "index_stale"
        assert freshness(bob)["stale"] is False and freshness(bob)["modified"] == []
        assert CONFLICT_DOC not in json.dumps(bob, ensure_ascii=False)
    alice = ask(root, "借阅台 开放时间", ALICE)
    assert (alice["status"], alice["reason"]) == ("refused", "index_stale")
    assert alice["stale"] == {"added": [], "deleted": [], "modified": [CONFLICT_DOC]}
    assert CONFLICT_DOC in alice["message"]
    owner = ask(root, "借阅台 开放时间", None)
    assert (owner["reason"], owner["stale"]["modified"]) == ("index_stale", [CONFLICT_DOC])


def test_editing_a_hidden_file_leaves_bobs_output_byte_identical(make_b: Callable[[str], Path]) -> None:
    root = make_b("all")
    before = dumped(root, BOB)
    edit_hidden(root)
    assert dumped(root, BOB) == before


def test_touching_a_visible_file_is_visible_to_bob(make_b: Callable[[str], Path]) -> None:
    """Control for the test above: rehashing a file bob may read is his business (not stale, rehashed=1)."""
    root = make_b("all")
    path = root / "documents/library.md"
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    bob = ask(root, "借阅台 开放时间", BOB)
    assert bob["status"] == "answered"
    assert freshness(bob) == {
        "step": "freshness",
        "stale": False,
        "added": [],
        "deleted": [],
        "modified": [],
        "rehashed": 1,
    }


def test_adding_a_hidden_file_is_stale_for_the_owner_only(make_b: Callable[[str], Path]) -> None:
    root = make_b("all")
    before = dumped(root, BOB)
    new = "documents/secret/new_base.md"
    (root / new).write_text("权限：hr\n主题：秘密基地\n地点：地下四层\n", encoding="utf-8")
    assert dumped(root, BOB) == before  # an added file is never rehashed, so nothing changes
    for principal in (None, ALICE):
        result = ask(root, "借阅台 开放时间", principal)
        assert (result["reason"], result["stale"]) == (
            "index_stale",
            {"added": [new], "deleted": [], "modified": []},
        )
    # deleting a hidden file: stale for alice, not for bob
    (root / new).unlink()
    (root / UNKNOWN_DOC).unlink()
    assert dumped(root, BOB) == before
    assert ask(root, "借阅台 开放时间", ALICE)["stale"]["deleted"] == [UNKNOWN_DOC]


def test_a_hidden_file_made_public_is_stale_for_bob(make_b: Callable[[str], Path]) -> None:
    """Changes bob may read *after* the change are his: a label removed names the file."""
    root = make_b("unknown")
    (root / UNKNOWN_DOC).write_text("主题：秘密基地\n地点：地下三层\n", encoding="utf-8")
    bob = ask(root, "借阅台 开放时间", BOB)
    assert (bob["reason"], bob["stale"]["modified"]) == ("index_stale", [UNKNOWN_DOC])


def test_check_freshness_with_an_index_opened_for_bob(make_b: Callable[[str], Path]) -> None:
    root = make_b("all")
    edit_hidden(root)
    with Index(default_index_path(root), BOB) as index:
        assert not check_freshness(root, index).stale
    with Index(default_index_path(root), ALICE) as index:
        assert check_freshness(root, index).modified == [CONFLICT_DOC]
    with Index(default_index_path(root)) as index:
        assert check_freshness(root, index).modified == [CONFLICT_DOC]


def test_labelling_a_public_file_is_stale_for_bob(make_b: Callable[[str], Path]) -> None:
    root = make_b("all")
    note = root / "documents/note.md"
    note.write_bytes("权限：hr\n".encode() + note.read_bytes())
    bob = ask(root, "借阅台 开放时间", BOB)
    assert (bob["reason"], bob["stale"]["modified"]) == ("index_stale", ["documents/note.md"])


def test_editing_the_sidecar_is_stale_for_everyone(make_b: Callable[[str], Path]) -> None:
    root = make_b("all")
    (root / "access.json").write_text(json.dumps({"documents/*_copy.md": ["hr", "audit"]}), encoding="utf-8")
    for principal in (BOB, ALICE, None):
        result = ask(root, "借阅台 开放时间", principal)
        assert (result["reason"], result["stale"]) == (
            "index_stale",
            {"added": [], "deleted": [], "modified": ["access.json"]},
        )
