"""Corpora, principals and questions shared by the permission tests (SPEC §7, docs/permissions.md).

Corpus A is a byte-identical copy of the demo corpus. Corpus B is A plus hidden
documents, one case at a time or all together:

* ``conflict``  — (a) a hidden 测试台 document whose 开放时间 disagrees with the visible two;
* ``unknown``   — (b) a hidden document about a subject nothing visible names (秘密基地);
* ``duplicate`` — (c) a hidden byte-for-byte copy of documents/library.md, restricted
  through the sidecar ROOT/access.json rather than an inline label;
* ``all``       — the three together.

bob (group staff) may read none of them; alice (group hr) may read all of them.
"""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path
from typing import Any

from rag_lab.data import extract_corpus
from rag_lab.data.access import Principal
from rag_lab.demo import questions_path

BOB = Principal("bob", frozenset({"staff"}))
ALICE = Principal("alice", frozenset({"hr"}))
AS_OF = date(2026, 6, 1)

CONFLICT_DOC = "documents/secret/bench_c.md"
CONFLICT_TEXT = "主题：测试台\n开放时间：周五全天。\n\n权限：hr\n"  # the label may stand anywhere
UNKNOWN_DOC = "documents/secret/base.md"
UNKNOWN_TEXT = "权限：hr\n主题：秘密基地\n地点：地下三层\n联系人：老周\n"
COPY_DOC = "documents/library_copy.md"
SIDECAR_RULES = {"documents/*_copy.md": ["hr"]}

CASES = ("conflict", "unknown", "duplicate", "all")
HIDDEN_PATHS = {
    "conflict": [CONFLICT_DOC],
    "unknown": [UNKNOWN_DOC],
    "duplicate": [COPY_DOC],
    "all": [COPY_DOC, UNKNOWN_DOC, CONFLICT_DOC],
}
# Words that exist only in hidden documents: they must never reach bob's output.
HIDDEN_WORDS = {
    "conflict": ["周五全天", "bench_c"],
    "unknown": ["秘密基地", "地下三层", "老周", "secret/base"],
    "duplicate": ["library_copy"],
}
HIDDEN_WORDS["all"] = [w for case in ("conflict", "unknown", "duplicate") for w in HIDDEN_WORDS[case]]

# Asked besides the demo question set: clarification lists, hidden subjects, hidden values.
EXTRA_QUESTIONS = [
    "测试台",
    "开放时间",
    "地点",
    "测试台 开放时间",
    "测试台的开放时间是哪天？",
    "借阅台 开放时间",
    "借阅台 开放时间 和 地点",
    "秘密基地",
    "秘密基地 地点",
    "秘密基地的联系人是谁",
    "火星基地",
    "火星基地 地点",
    "周五全天",
    "地下三层 老周",
    "借阅台 和 测试台 的 开放时间",
]


def add_hidden(root: Path, case: str) -> Path:
    """Add the hidden document(s) of ``case`` to the corpus at ``root``."""
    if case in ("conflict", "all"):
        (root / CONFLICT_DOC).parent.mkdir(parents=True, exist_ok=True)
        (root / CONFLICT_DOC).write_text(CONFLICT_TEXT, encoding="utf-8")
    if case in ("unknown", "all"):
        (root / UNKNOWN_DOC).parent.mkdir(parents=True, exist_ok=True)
        (root / UNKNOWN_DOC).write_text(UNKNOWN_TEXT, encoding="utf-8")
    if case in ("duplicate", "all"):
        shutil.copyfile(root / "documents/library.md", root / COPY_DOC)
        (root / "access.json").write_text(json.dumps(SIDECAR_RULES), encoding="utf-8")
    return root


def demo_questions() -> list[dict[str, Any]]:
    lines = questions_path().read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def all_questions() -> list[dict[str, Any]]:
    """The demo set (with its own top_k/budget/as_of) plus EXTRA_QUESTIONS."""
    extra = [{"id": f"x{i:02d}", "question": q} for i, q in enumerate(EXTRA_QUESTIONS, 1)]
    return demo_questions() + extra


def query_kwargs(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "top_k": item.get("top_k", 5),
        "budget": item.get("budget", 1200),
        "as_of": date.fromisoformat(item["as_of"]) if "as_of" in item else AS_OF,
    }


def hidden_evidence_ids(root: Path) -> set[str]:
    """Evidence ids of every unit in a restricted file (read from the files, not the index)."""
    return {u["evidence_id"] for rec in extract_corpus(root) if rec.acl != "" for u in rec.units}


# Hidden files that fail or warn at index time (for the server's /api/index proof): a file
# bob may not read with a warning, and a file that failed closed (invalid UTF-8: its label
# cannot be read, so nobody may read it). Neither may be counted or named to bob.
PROBLEM_FILES = {
    "documents/secret/notes.md": "权限：hr\n主题：秘密笔记\n地点:三楼\n".encode(),
    "documents/hr/broken.md": b"\xe6\x9d\x83\xe9\x99\x90\xef\xbc\x9ahr\n\xff\xfe broken\n",
}
PROBLEM_WORDS = ["秘密笔记", "secret/notes", "hr/broken", "invalid UTF-8"]


def add_hidden_problems(root: Path) -> Path:
    for rel, data in PROBLEM_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root
