"""Schema 9 leaves out of a sentence's extras its title when that is its file's document name
and its paragraph span when that is its own span (index/schema.py): every unit read back must be
the parser's, byte for byte, on both stores, on the fast path and the full one, in-process and
with workers — headings that differ from the file name or equal it, paragraphs of one sentence
whose span is or is not the paragraph's, astral text in names, headings and sentences."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.index.test_index_warnings import build_and_check

import rag_lab.index.vectors
from rag_lab.data import extract_corpus
from rag_lab.errors import IndexError_
from rag_lab.index import Index, build_index, default_index_path
from rag_lab.index.build import _unit_row
from rag_lab.index.store import _row_to_unit, stored_text
from rag_lab.records import Unit
from store_fixtures import sqlite_only

pytestmark = pytest.mark.usefixtures("store")

# file names: plain, astral, with a dot in the stem, and names some headings repeat
NAMES = ["游记", "😀笑", "a.b", "甲"]
LINES = [
    "# 游记",  # a heading equal to a file name: its title is the document name, not stored
    "# 标题😀",  # one that is not
    "## 第二节",
    "#  甲  ",  # the heading text 甲, stripped
    "#",  # an empty heading: not a title
    "第一句。第二句！",  # a paragraph of two sentences: its span is neither's
    "单独一句。",  # alone in its paragraph: the paragraph is its span
    "一句。——",  # one sentence, then a piece without a word: the paragraph is longer than it
    "  前后有空格。  ",
    "- 列表里的一句。",  # a marker the paragraph's span leaves out, as the sentence does
    "> 引用：一句😀。",  # a quote marker and a full-width colon (a warned line above any 主题)
    "笑脸😀🙂和表情。",
    "开放时间: 九点",  # an ASCII-colon line: warned, kept as prose
    "",
    "",
]
FULL_PATH = ["主题：甲楼", "地点：一楼", "| 房间 | 座位 |", "|---|---|", "| 一楼 | 3 |", "有回车。\r"]


@st.composite
def documents(draw: Any) -> tuple[str, bytes]:
    lines = draw(st.lists(st.sampled_from(LINES + (FULL_PATH if draw(st.booleans()) else [])), min_size=1, max_size=9))
    return draw(st.sampled_from(NAMES)), ("\n".join(lines) + draw(st.sampled_from(["", "\n"]))).encode()


def schema_8_order(unit: Unit) -> list[str]:
    """The keys of a unit as schema 8 read it back: the columns, then its extra keys sorted (JSON
    written with sorted keys)."""
    columns = ["evidence_id", "source", "sha256", "span", "line", "text", "subject", "field", "value", "modality"]
    columns += [k for k in ("valid_from", "valid_to") if k in unit]
    return columns + sorted(k for k in unit if k not in columns)


def check(root: Path) -> list[Unit]:
    expected = sorted((u for r in extract_corpus(root) for u in r.units), key=lambda u: u["evidence_id"])
    with Index(default_index_path(root)) as index:
        found = index.units_by_ids(range(1, len(expected) + 1))
        got = [found[i] for i in range(1, len(expected) + 1)]
        assert got == expected
        for unit in got:
            assert list(unit) == schema_8_order(unit)
            if "parent_span" in unit:
                assert unit["parent_span"] is not unit["span"]  # two lists, as the parser gave
            assert index.units_of_source(unit["source"]) == sorted(
                (u for u in expected if u["source"] == unit["source"]), key=lambda u: (u["span"][0], u["evidence_id"])
            )
    return expected


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(documents(), min_size=1, max_size=4), st.sampled_from([0, 2]), st.booleans())
def test_the_units_read_back_are_the_parsers(docs: list[tuple[str, bytes]], workers: int, fast: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for i, (name, data) in enumerate(docs):
            (root / "documents" / str(i)).mkdir(parents=True)
            (root / "documents" / str(i) / f"{name}.md").write_bytes(data)
        build_and_check(root, workers, fast, check)


CASES = {
    "documents/游记.md": "# 游记\n\n第一句。第二句！\n\n单独一句。\n",
    "documents/标题.md": "# 另一个标题😀\n\n一句。——\n\n## 节\n\n- 列表里的一句。\n",
    "documents/😀笑.md": "没有标题的一句😀。\n\n两句😀。两句🙂。\n",
    "documents/场馆.md": "主题：甲楼\n地点：一楼\n这是说明。\n",  # the full path: prose after a 主题 line
}


def corpus(make_corpus: Any) -> Path:
    root: Path = make_corpus(CASES)
    build_index(root)
    return root


def test_every_rule_is_met_and_undone(make_corpus: Any) -> None:
    """The fixed documents give every case: a title by heading (stored) and by file name or a
    heading equal to it (not stored), a paragraph of one sentence (not stored) and of one sentence
    shorter than it or of two (stored); read back, each unit is the parser's."""
    units = check(corpus(make_corpus))
    by_text = {u["text"]: u for u in units}
    assert by_text["单独一句。"]["title"] == "游记" and by_text["单独一句。"]["parent_span"] == by_text["单独一句。"]["span"]
    assert by_text["一句。"]["parent_span"] != by_text["一句。"]["span"]  # the paragraph holds "——" too
    assert by_text["没有标题的一句😀。"]["title"] == "😀笑"
    assert by_text["这是说明。"]["title"] == "场馆"


@sqlite_only
def test_what_the_sqlite_file_leaves_out(make_corpus: Any) -> None:
    import sqlite3

    root = corpus(make_corpus)
    db = sqlite3.connect(default_index_path(root))
    try:
        rows = db.execute(
            "SELECT u.text, f.path, x.extra FROM units u JOIN files f ON f.id = u.file JOIN extras x ON x.id = u.extra"
        ).fetchall()
        distinct = db.execute("SELECT count(*), count(DISTINCT extra) FROM extras").fetchone()
    finally:
        db.close()
    stored = {stored_text(text): json.loads(stored_text(extra)) for text, _path, extra in rows}
    assert stored["单独一句。"] == {"headings": ["游记"], "kind": "sentence"}  # heading == file name, one sentence
    assert stored["第一句。"] == {"headings": ["游记"], "kind": "sentence", "parent_span": [6, 14]}
    assert stored["一句。"] == {"headings": ["另一个标题😀"], "kind": "sentence", "parent_span": [10, 15], "title": "另一个标题😀"}
    assert stored["列表里的一句。"] == {"headings": ["另一个标题😀", "节"], "kind": "sentence", "title": "另一个标题😀"}
    assert stored["没有标题的一句😀。"] == {"headings": [], "kind": "sentence"}
    assert stored["这是说明。"] == {"headings": [], "kind": "sentence"}  # the full path's rule is the same
    assert distinct[0] == distinct[1]  # each extra once: the sentences that leave out both share one row


def test_the_vectors_see_each_sentence_whole(make_corpus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sentence vectors embed what ranking sees (title, heading, text): the title left out of the
    SQLite file is put back for them too (both stores share index/vectors.py)."""
    seen: list[dict[str, Any]] = []
    original = rag_lab.index.vectors.search_text

    def recording(unit: Unit) -> str:
        seen.append(dict(unit))
        return original(unit)

    class Embedder:
        name, dim = "fake", 4

        def passages(self, texts: list[str]) -> Any:
            import numpy as np

            return np.ones((len(texts), 4), dtype=np.float32) / 2

        queries = passages

    monkeypatch.setattr(rag_lab.index.vectors, "search_text", recording)
    root = make_corpus(CASES)
    build_index(root, vectors=True, embedder=Embedder())  # type: ignore[arg-type]
    keys = ("text", "kind", "title", "headings", "parent_span")
    expected = sorted(
        (tuple(str(u.get(k)) for k in keys) for r in extract_corpus(root) for u in r.units if u.get("kind") == "sentence"),
    )
    assert sorted(tuple(str(u.get(k)) for k in keys) for u in seen) == expected


COLUMNS = ["evidence_id", "source", "sha256", "span", "line", "text", "subject", "field", "value", "modality"]


def test_a_sentence_row_comes_back_whatever_it_left_out() -> None:
    """_unit_row and _row_to_unit on their own: each combination of a title that is or is not the
    document name (of an astral or dotted file name, or a value of another type) and a paragraph
    span that is or is not the span (values that compare equal but are written differently —
    True for 1, 1.0 — and a tuple stay stored) reads back as schema 8 read it, JSON for JSON."""
    for source in ("documents/a.md", "documents/x/😀.b.md"):
        stem = source.rsplit("/", 1)[1][: -len(".md")]
        for title in (stem, stem + " ", "标题", None, 1):
            for parent in ([1, 5], [1, 6], [True, 5], [1.0, 5], [1, 5, 7], (1, 5), None):
                unit: Unit = {
                    "evidence_id": "ev_" + "ab" * 12, "source": source, "sha256": "cd" * 32, "span": [1, 5],
                    "line": 1, "text": "句子", "subject": None, "field": None, "value": "句子", "modality": "text",
                    "headings": ["😀"], "kind": "sentence", "parent_span": parent, "title": title,
                }  # fmt: skip
                stored = _unit_row(unit, 1, "")
                extra = json.loads(stored_text(stored[13]))
                assert ("title" in extra) == (title != stem)
                assert ("parent_span" in extra) == (type(parent) is not list or json.dumps(parent) != "[1, 5]")
                row = (1, stored[0], source, bytes.fromhex(unit["sha256"]), *stored[2:14])
                as_schema_8 = {**{k: unit[k] for k in COLUMNS}, **dict(sorted((k, unit[k]) for k in unit if k not in COLUMNS))}
                assert json.dumps(_row_to_unit(row), ensure_ascii=False) == json.dumps(as_schema_8, ensure_ascii=False)
    for missing in ("title", "parent_span"):
        unit = {
            "evidence_id": "ev_" + "ab" * 12, "source": "documents/a.md", "sha256": "cd" * 32, "span": [1, 5],
            "line": 1, "text": "句子", "subject": None, "field": None, "value": "句子", "modality": "text",
            "headings": [], "kind": "sentence", "parent_span": [1, 5], "title": "a",
        }  # fmt: skip
        del unit[missing]
        with pytest.raises(IndexError_, match="has no title or no parent_span"):
            _unit_row(unit, 1, "")
