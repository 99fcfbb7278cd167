"""Every warning and warned line reads back as the parser produced it (schema 8 stores them
packed, index/warned.py): ``file_problems`` and ``warned_lines_naming`` of both stores, for
documents of every kind of warned line, on the fast path and the full one, in-process and with
workers."""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_lab.data import WARNED_LINE_CHARS, read_record
from rag_lab.data.access import AccessRules
from rag_lab.data.corpus import walk
from rag_lab.data.documents import warned_name
from rag_lab.index import Index, build, build_index, default_index_path
from rag_lab.index.pg_pool import close_pools
from store_fixtures import sqlite_only

pytestmark = pytest.mark.usefixtures("store")

MakeCorpus = Callable[..., Path]

SUBJECTS = ["文科楼", "主楼", "表情😀"]
# lines the parser warns about: kept as prose (before any 主题), not read as fields, broken 主题
# lines, CRs, too long lines; and lines around them
WARNED = [
    "不少市民认为：这里是好去处。每逢秋季都很热闹。",  # headless: its sentences give the text back
    "他说：“好。”然后走了。",
    "甲：乙。 丙。",  # a space between its sentences: the text is stored
    "- 列表：第一项。",  # a marker the sentences leave out: stored
    "  前有空格：后面的句子。  ",
    "长句：" + "很长的句子，" * 60 + "完。",  # over WARNED_LINE_CHARS: cut
    "长句：" + "很" * (WARNED_LINE_CHARS - 3),  # exactly WARNED_LINE_CHARS
    "开放时间: 九点",
    "地点:一楼",
    "字段 ：值",
    "字段： 值",
    "容量：",
    "主题： 名字",
    "主题：",
    "生效日期：明天",
    "权限：bad group!",
    "地点:一楼\r二楼",  # an ASCII-colon line with a lone CR: two warnings on one line
    "😀：🙂。",
    "a：b。c",
]
PLAIN = ["这是一个句子。它有两句话！", "", "# 标题", "开放时间：九点", "地点：二楼", "| 房间 | 座位 |"]


@st.composite
def documents(draw: Any) -> bytes:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 10))):
        kind = draw(st.sampled_from(["warned", "warned", "plain", "subject"]))
        if kind == "subject":
            lines.append("主题：" + draw(st.sampled_from(SUBJECTS)))
        else:
            lines.append(draw(st.sampled_from(WARNED if kind == "warned" else PLAIN)))
    return ("\n".join(lines) + draw(st.sampled_from(["", "\n"]))).encode()


def parsed(root: Path) -> list[Any]:
    """Each corpus file as the parser reads it (data/__init__.py), in path order."""
    rules = AccessRules.load(root)
    return sorted((read_record(root, item, rules) for item in walk(root)), key=lambda r: r.path)


def expected_problems(records: list[Any], visible: set[str]) -> list[dict[str, Any]]:
    """The warnings as ``file_problems`` reports them: by path, then line, ties in the parser's order."""
    return [
        {"path": r.path, "line": line, "severity": "warning", "message": message}
        for r in records
        if r.acl == "!" or r.acl in visible
        for line, message in sorted(r.warnings, key=lambda w: w[0])
    ]


def expected_lines(records: list[Any], visible: set[str]) -> list[tuple[str, int, str, str, str]]:
    """(name, path, line, text, message) of every warned line a note may cite, for a question
    naming every subject of the corpus."""
    out = []
    for r in records:
        if r.acl not in visible:
            continue
        has_subject = any(u["subject"] is not None for u in r.units)
        for line, text in sorted(r.warning_lines.items()):
            about = warned_name(text)
            if about is None or not (about[1] or has_subject):
                continue
            out += [(about[0], r.path, line, text, m) for ln, m in r.warnings if ln == line]
    return out


def check(root: Path) -> None:
    records = parsed(root)
    with Index(default_index_path(root)) as index:
        visible = set(index.visible)
        problems = [p for p in index.file_problems() if p["severity"] == "warning"]
        assert problems == expected_problems(records, visible)
        wanted = expected_lines(records, visible)
        names = sorted({w[0] for w in wanted} | {"没有的名字"})
        subjects = sorted({u["subject"] for r in records for u in r.units if u["subject"] is not None})
        got = index.warned_lines_naming(names, subjects, 1000)
        assert got == sorted({w[1:] for w in wanted})
        for name in names:  # one name at a time, and cut at a limit, as notes ask
            mine = [w[1:] for w in wanted if w[0] == name]
            for limit in (1, 2, 5):
                assert index.warned_lines_naming([name], subjects, limit) == sorted(set(mine[:limit]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(documents(), min_size=1, max_size=5),
    st.sampled_from([None, '{"documents/1.md": ["staff"]}', "{"]),
    st.sampled_from([0, 2]),
    st.booleans(),
)
def test_the_warnings_read_back_are_the_parsers(docs: list[bytes], sidecar: str | None, workers: int, fast: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "documents").mkdir()
        for i, data in enumerate(docs):
            (root / "documents" / f"{i}.md").write_bytes(data)
        if sidecar is not None:
            (root / "access.json").write_text(sidecar)
        build_and_check(root, workers, fast, check)


def build_and_check(root: Path, workers: int, fast: bool, check: Callable[[Path], object]) -> None:
    """Index ``root`` with ``workers`` forked workers and batches of 2 files, on the fast row path
    or (``fast`` false) the full one, then ``check(root)``; the stores' idle PostgreSQL connections
    are closed after: one database per hypothesis example, 40 of them exceed the server's limit."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(build, "_worker_count", lambda files: workers)
        patch.setattr(build, "BATCH_FILES", 2)
        if not fast:
            patch.setattr(build, "fast_rows", lambda *args: None)
        try:
            build_index(root)
            check(root)
        finally:
            close_pools()


def test_prose_lines_with_colons_read_back_whole(make_corpus: MakeCorpus) -> None:
    """The prose_colon shape (benchmarks/README.md): headless 字段：值-like prose lines, warned and
    kept as sentences; every text comes back, whether from its units or stored."""
    lines = ["# 标题", ""] + [WARNED[i % 7] for i in range(40)] + ["", "主题：文科楼", "地点:一楼", "开放时间：九点"]
    root = make_corpus({"documents/a.md": "\n".join(lines) + "\n", "documents/b.md": "主题：主楼\n开放时间: 九点\n"})
    build_index(root)
    check(root)
    records = parsed(root)
    assert sum(len(r.warnings) for r in records) == 42
    assert len({m for r in records for _, m in r.warnings}) > 30  # a message per line number


@sqlite_only
def test_what_the_sqlite_file_stores_of_warned_lines(make_corpus: MakeCorpus) -> None:
    """Which warned lines keep their text in the SQLite file: only those their units do not give."""
    root = make_corpus({"documents/a.md": "\n".join(WARNED[:7]) + "\n主题：主楼\n地点：二楼\n" + "\n".join(WARNED[7:]) + "\n"})
    build_index(root)
    db = sqlite3.connect(default_index_path(root))
    try:
        kept = dict(db.execute("SELECT line, text IS NOT NULL FROM warning_lines"))
        messages = [m for (m,) in db.execute("SELECT message FROM warning_messages")]
    finally:
        db.close()
    # given back by their sentences (6: cut at WARNED_LINE_CHARS; 10, 11, 19: ASCII-colon lines,
    # prose after the 主题 line too); 3 has a space between its sentences, 4 a list marker, the
    # others are no units (12-18) or a field line (20, 21)
    assert sorted(kept.items()) == [(n, n not in (1, 2, 5, 6, 7, 10, 11, 19)) for n in sorted(kept)]
    assert {3, 4, 12, 13, 15} <= set(kept)
    assert len(messages) == len(set(messages))  # each once
    assert not any("add 主题：… above line" in m for m in messages)  # made from the line number
    check(root)


def test_two_warnings_of_one_line_are_cut_in_the_builds_order(make_corpus: MakeCorpus) -> None:
    """A line with two warnings (an ASCII colon and a lone CR) cut by the limit between them:
    both stores keep the first the parser gave (PostgreSQL's LIMIT once cut ties in any order)."""
    lines = ["主题：文科楼", "开放时间：九点", "地点:一楼\r二楼", "备注:" + "\r".join("甲乙丙")]
    root = make_corpus({"documents/a.md": "\n".join(lines) + "\n"})
    build_index(root)
    check(root)
    with Index(default_index_path(root)) as index:
        first = index.warned_lines_naming(["地点"], ["文科楼"], 1)
        both = index.warned_lines_naming(["地点"], ["文科楼"], 2)
    assert len(first) == 1 and len(both) == 2 and first[0] == both[0]
    assert "ASCII colon" in first[0][3]
