"""Labels that cannot be trusted hide the document from everyone and are reported at index time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from perm_corpora import ALICE, AS_OF, BOB

from rag_lab.data.access import Principal
from rag_lab.demo import corpus_path
from rag_lab.index import Index, build_index, default_index_path
from rag_lab.retrieval import query_once

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

DOC = "documents/secret/vault.md"
BODY = "主题：金库\n地点：地下五层\n"
EVERYONE = [ALICE, BOB, None]


def corpus(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "corpus"
    shutil.copytree(corpus_path(), root)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def ask(root: Path, question: str, principal: Principal | None) -> dict[str, Any]:
    return query_once(question, root, principal=principal, as_of=AS_OF)


def problems(root: Path, principal: Principal | None) -> list[dict[str, Any]]:
    with Index(default_index_path(root), principal) as index:
        return index.file_problems()


def access_warnings(root: Path, principal: Principal | None = None) -> list[tuple[str, str]]:
    return [
        (p["path"], p["message"]) for p in problems(root, principal) if p["message"].startswith("access: ")
    ]


def assert_hidden_from_everyone(root: Path) -> None:
    for principal in EVERYONE:
        result = ask(root, "金库 地点", principal)
        # 地点 alone is still known (field_without_subject), unless every file is hidden
        assert result["reason"] in ("field_without_subject", "no_supporting_evidence")
        assert result["answer"] is None and result["citations"] == []
        assert "地下五层" not in json.dumps(result, ensure_ascii=False)
        assert ask(root, "金库", principal)["reason"] == "no_supporting_evidence"
    with Index(default_index_path(root)) as index:
        assert index.snapshot_of(DOC)[6] == "!"
        assert index.units_for_key("金库", "地点") == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "权限：hr;;<x>\n" + BODY,
            "access: malformed access label (groups are letters, digits, _ . -); hidden from everyone",
        ),
        ("权限：hr\n" + BODY + "权限：finance\n", "access: 2 权限 lines; write one; hidden from everyone"),
        ("权限：hr\n权限：hr\n" + BODY, "access: 2 权限 lines; write one; hidden from everyone"),
    ],
    ids=["malformed", "two-lines", "two-equal-lines"],
)
def test_bad_inline_label_hides_from_everyone(text: str, message: str, tmp_path: Path) -> None:
    root = corpus(tmp_path, {DOC: text})
    summary = build_index(root)
    assert summary.errors == [] and summary.warnings == 1
    assert access_warnings(root) == [(DOC, message)]
    # the report is index-time information for everyone, including callers who cannot read the file
    assert access_warnings(root, BOB) == access_warnings(root, ALICE) == [(DOC, message)]
    assert_hidden_from_everyone(root)


@pytest.mark.parametrize(
    "label",
    ["权限：", "权限： ", "权限 ：hr", "权限： hr"],
    ids=["empty", "blank", "space-before", "space-after"],
)
def test_unreadable_label_line_fails_closed(label: str, tmp_path: Path) -> None:
    root = corpus(tmp_path, {DOC: label + "\n" + BODY})
    build_index(root)
    assert [path for path, _ in access_warnings(root)] == [DOC]
    assert_hidden_from_everyone(root)


def test_label_in_both_places_hides_from_everyone(tmp_path: Path) -> None:
    root = corpus(
        tmp_path, {DOC: "权限：hr\n" + BODY, "access.json": json.dumps({"documents/secret/*": ["hr"]})}
    )
    summary = build_index(root)
    assert summary.warnings == 1
    assert access_warnings(root) == [
        (DOC, "access: labelled both by 权限 lines and by access.json; hidden from everyone")
    ]
    assert_hidden_from_everyone(root)


def test_two_sidecar_patterns_hide_from_everyone(tmp_path: Path) -> None:
    rules = {"documents/secret/*": ["hr"], "documents/*/vault.md": ["hr"]}
    root = corpus(tmp_path, {DOC: BODY, "access.json": json.dumps(rules)})
    build_index(root)
    assert access_warnings(root) == [(DOC, "access: matched by 2 access.json patterns; hidden from everyone")]
    assert_hidden_from_everyone(root)


@pytest.mark.parametrize(
    ("sidecar", "fragment"),
    [
        ('{"documents/secret/*": ["hr"', "access.json cannot be read"),
        ('{"documents/secret/*": "hr"}', "access.json must map path patterns to lists of groups"),
        ('["hr"]', "access.json must map path patterns to lists of groups"),
        ('{"documents/secret/*": ["h r;"]}', "malformed access label"),
    ],
    ids=["not-json", "string-not-list", "not-an-object", "bad-group"],
)
def test_malformed_sidecar_fails_closed(sidecar: str, fragment: str, tmp_path: Path) -> None:
    root = corpus(tmp_path, {DOC: BODY, "access.json": sidecar})
    summary = build_index(root)
    warned = access_warnings(root)
    assert warned and all(fragment in message for _, message in warned)
    assert (DOC, warned[0][1]) in warned
    assert summary.warnings == len(warned)
    assert_hidden_from_everyone(root)
    if fragment != "malformed access label":
        # an unreadable sidecar cannot say which files it meant: every file is hidden
        assert len(warned) == summary.files - 1  # all but access.json itself
        for principal in EVERYONE:
            result = ask(root, "借阅台 开放时间", principal)
            assert (result["status"], result["reason"]) == ("refused", "no_supporting_evidence")
    else:
        # a bad group list hides only the files its pattern matches
        assert [path for path, _ in warned] == [DOC]
        assert ask(root, "借阅台 开放时间", BOB)["answer"] == "周二至周五十四点到十七点。"


def test_a_file_that_fails_to_parse_is_hidden_and_reported(tmp_path: Path) -> None:
    """A parse error means the label cannot be read: the file is NOBODY's and its error is reported."""
    root = corpus(tmp_path, {DOC: "主题：金库\n地点：地下五层\n\0"})  # a NUL byte: not text
    (root / "documents/secret/broken.md").write_bytes("权限：hr\n主题：金库\n".encode() + b"\xff\xfe")
    summary = build_index(root)
    assert sorted(e["path"] for e in summary.errors) == ["documents/secret/broken.md", DOC]
    for principal in EVERYONE:
        errors = [(p["path"], p["severity"]) for p in problems(root, principal) if p["severity"] == "error"]
        assert errors == [("documents/secret/broken.md", "error"), (DOC, "error")]
    with Index(default_index_path(root)) as index:
        assert index.snapshot_of("documents/secret/broken.md")[6] == "!"
        assert index.snapshot_of(DOC)[6] == "!"
    assert_hidden_from_everyone(root)


def test_a_good_label_next_to_bad_ones_still_works(tmp_path: Path) -> None:
    root = corpus(
        tmp_path,
        {
            DOC: "权限：hr;;<x>\n" + BODY,
            "documents/secret/ok.md": "权限：hr、finance\n主题：金库\n联系人：老钱\n",
        },
    )
    build_index(root)
    assert ask(root, "金库 联系人", ALICE)["answer"] == "老钱"
    assert ask(root, "金库 联系人", Principal("carol", frozenset({"finance"})))["answer"] == "老钱"
    assert ask(root, "金库 联系人", BOB)["reason"] == "no_supporting_evidence"
    assert ask(root, "金库 联系人", None)["answer"] == "老钱"
    assert ask(root, "金库 地点", ALICE)["reason"] == "no_supporting_evidence"
