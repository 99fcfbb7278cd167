"""Schemas 5 and 7, the compact layout: what is derived instead of stored must come back exactly."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.data import extract_corpus
from rag_lab.data.access import Principal
from rag_lab.errors import IndexError_
from rag_lab.index import Index, build_index, check_freshness, default_index_path
from rag_lab.index.build import _unit_row, _walk_digest
from rag_lab.index.freshness import FINGERPRINT, digest_of, fast_walk
from rag_lab.index.store import _row_to_unit, stored_text

MakeCorpus = Callable[..., Path]


TABLE = "# 座位\n\n座位表\n\n| 房间 | 座位数（个） | 备注 |\n|---|:--:|---|\n| 一楼 | 120 | |\n| 二楼 | 80 | 安静 |\n"


def test_every_unit_comes_back_by_id_and_by_evidence_id(indexed_demo: Path) -> None:
    (indexed_demo / "documents" / "seats.md").write_text(TABLE, encoding="utf-8")
    build_index(indexed_demo)
    units = sorted((u for r in extract_corpus(indexed_demo) for u in r.units), key=lambda u: u["evidence_id"])
    with Index(default_index_path(indexed_demo)) as index:
        by_id = index.units_by_ids(range(1, len(units) + 1))
        assert [by_id[i] for i in range(1, len(units) + 1)] == units  # ids 1.. in evidence_id order
        assert index.ids_of([u["evidence_id"] for u in units[::-1]]) == list(range(len(units), 0, -1))
        for unit in units:
            assert index.unit_by_evidence_id(unit["evidence_id"]) == unit
        kinds = {u.get("kind", u["modality"]) for u in units}
        assert {"text", "image", "sentence", "table_row", "table_cell"} <= kinds  # every unit kind round-trips


def test_unknown_and_malformed_evidence_ids(indexed_demo: Path) -> None:
    with Index(default_index_path(indexed_demo)) as index:
        real = index.units_for_key("借阅台", "开放时间")[0]["evidence_id"]
        for bad in ["ev_" + "0" * 24, "ev_" + "f" * 24, real.upper().replace("EV_", "ev_"), real[:-1], "x", ""]:
            assert index.unit_by_evidence_id(bad) is None, bad
        with pytest.raises(KeyError):
            index.ids_of([real, "ev_" + "0" * 24])


def test_hidden_units_are_not_found_by_evidence_id(make_corpus: MakeCorpus) -> None:
    root = make_corpus(
        {
            "documents/open.md": "主题：甲\n地点：一楼\n",
            "documents/staff.md": "权限：staff\n主题：乙\n地点：二楼\n",
        }
    )
    build_index(root)
    path = default_index_path(root)
    with Index(path, Principal("staff", frozenset({"staff"}))) as staff:
        hidden = staff.units_for_key("乙", "地点")[0]["evidence_id"]
        assert staff.unit_by_evidence_id(hidden) is not None
    with Index(path, Principal("guest", frozenset())) as guest:
        assert guest.unit_by_evidence_id(hidden) is None
        with pytest.raises(KeyError):
            guest.ids_of([hidden])
        assert guest.name_kinds(["乙", "甲"]) == {"甲": {"subject"}}


def test_texts_are_stored_in_the_shorter_encoding(indexed_demo: Path) -> None:
    db = sqlite3.connect(default_index_path(indexed_demo))
    try:
        rows = db.execute("SELECT text, value_at, value FROM units").fetchall()
    finally:
        db.close()
    kinds = {type(text) for text, _, _ in rows}
    assert kinds == {str, bytes}  # the demo has ASCII-heavy and Chinese lines
    for text, _, _ in rows:
        decoded = stored_text(text)
        other = decoded.encode("utf-8") if isinstance(text, bytes) else decoded.encode("utf-16-le")
        assert len(text.encode("utf-8") if isinstance(text, str) else text) <= len(other)


def test_postings_decode_to_the_units_terms(indexed_demo: Path) -> None:
    """Every posting's ids ascend and its weights are positive; a term's df is its id count."""
    from rag_lab.index.terms import query_terms

    with Index(default_index_path(indexed_demo)) as index:
        terms = query_terms("借阅台开放时间复印机电话会议室容量")
        postings = index.postings(terms)
        assert len(postings) >= 10 and set(postings) <= set(terms)
        for df, ids, weights in postings.values():
            assert df == ids.size == weights.size and ids.dtype == np.int32
            assert (np.diff(ids) > 0).all() and (weights > 0).all()
        unit = index.units_by_ids([int(postings[terms[0]][1][0])])
        assert unit  # the first id of a posting is a unit


def test_fresh_check_takes_the_walk_digest(make_corpus: MakeCorpus, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_corpus({"documents/a.md": "主题：甲\n地点：一楼\n", "documents/b/c.md": "主题：乙\n地点：二楼\n"})
    (root / "access.json").write_text("{}", encoding="utf-8")
    build_index(root)
    with Index(default_index_path(root)) as index:
        walked = fast_walk(root)
        assert walked is not None and sorted(walked[0]) == ["access.json", "documents/a.md", "documents/b/c.md"]
        assert index.walk_digest() == digest_of(*walked)

        def no_fingerprints() -> None:
            raise AssertionError("the fast path must not load fingerprints")

        monkeypatch.setattr(index, "fingerprints", no_fingerprints)
        assert not check_freshness(root, index).stale
        monkeypatch.undo()
        (root / "documents" / "a.md").write_text("主题：甲\n地点：三楼\n", encoding="utf-8")
        assert check_freshness(root, index).as_dict() == {"added": [], "deleted": [], "modified": ["documents/a.md"]}


def test_no_walk_digest_when_a_file_changed_while_it_was_read(make_corpus: MakeCorpus) -> None:
    root = make_corpus({"documents/a.md": "主题：甲\n地点：一楼\n"})
    walked = fast_walk(root)
    assert walked is not None
    stat = FINGERPRINT.unpack(walked[1][: FINGERPRINT.size])
    assert _walk_digest(root, {"documents/a.md": stat}) == digest_of(*walked)
    assert _walk_digest(root, {"documents/a.md": (stat[0] + 1, *stat[1:])}) == ""  # edited after its read
    assert _walk_digest(root, {}) == ""  # a file added after the walk of the build
    (root / "documents" / "link.md").symlink_to(root / "documents" / "a.md")
    assert fast_walk(root) is None  # symlinks take the careful path


def test_an_index_of_schema_5_is_refused_with_rebuild(indexed_demo: Path) -> None:
    """Schema 5 kept each unit's extras inline (no ``extras`` table): refused before it is read."""
    path = default_index_path(indexed_demo)
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = replace(value, '\"schema_version\": 9', '\"schema_version\": 5')")
    db.execute("DROP TABLE extras")
    db.commit()
    db.close()
    with pytest.raises(IndexError_, match="has schema version 5, this rag_lab reads version 9; rebuild it"):
        Index(path)


@pytest.mark.parametrize("version", [6, 8])
def test_an_index_of_an_older_schema_is_refused_with_rebuild(indexed_demo: Path, version: int) -> None:
    """Schema 6 stored each field line's whole text and every span's end (read as schema 7, its
    field-line units would get their field name twice); schema 8 every sentence's title and
    paragraph span in its extras. A reader reads one layout only: refused before anything is read."""
    path = default_index_path(indexed_demo)
    db = sqlite3.connect(path)
    db.execute(f"UPDATE meta SET value = replace(value, '\"schema_version\": 9', '\"schema_version\": {version}')")
    db.commit()
    db.close()
    with pytest.raises(IndexError_, match=f"has schema version {version}, this rag_lab reads version 9; rebuild it"):
        Index(path)


def test_an_index_of_schema_7_is_refused_with_rebuild(indexed_demo: Path) -> None:
    """Schema 7 stored a row per warning (path, line, message) and per warned line (path, line,
    text): read as schema 8 its warnings would not decode; refused before anything is read."""
    path = default_index_path(indexed_demo)
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = replace(value, '\"schema_version\": 9', '\"schema_version\": 7')")
    db.execute("DROP TABLE file_warnings")
    db.execute("CREATE TABLE file_warnings (path TEXT NOT NULL, line INTEGER NOT NULL, message TEXT NOT NULL)")
    db.commit()
    db.close()
    with pytest.raises(IndexError_, match="has schema version 7, this rag_lab reads version 9; rebuild it"):
        Index(path)


def test_a_lone_surrogate_matches_nothing(indexed_demo: Path) -> None:
    """A question may hold a lone surrogate (not UTF-8): no stored text equals it."""
    with Index(default_index_path(indexed_demo)) as index:
        assert index.name_kinds(["\ud800", "借阅台"]) == {"借阅台": {"subject"}}
        assert index.units_for_key("\ud800", "开放时间") == []
        assert index.warned_lines_naming(["\ud800"], ["\udfff"], 5) == []


NAME_CHARS = st.sampled_from("字段名ab：: 值😀")


@settings(max_examples=300, deadline=None)
@given(
    field=st.one_of(st.none(), st.text(NAME_CHARS, max_size=4)),
    before=st.text(NAME_CHARS, max_size=6),
    value=st.text(NAME_CHARS, max_size=6),
    suffix=st.booleans(),
    start=st.one_of(st.none(), st.integers(0, 50)),
    extra_end=st.integers(-2, 2),
)
def test_a_unit_row_comes_back_whatever_it_left_out(
    field: str | None, before: str, value: str, suffix: bool, start: int | None, extra_end: int
) -> None:
    """Schema 7 leaves out a ``field：value`` text's field part and a span end that the text gives:
    every combination (the text that is or is not ``field：value``, a value that is or is not a
    suffix of it, a span that ends with the text or not, no span) decodes to the unit as it was."""
    text = before + value if suffix else before
    span = None if start is None else [start, start + len(text) + extra_end]
    unit = {
        "evidence_id": "ev_" + "ab" * 12, "source": "documents/a.md", "sha256": "cd" * 32, "span": span,
        "line": 3, "text": text, "subject": "主体", "field": field, "value": value, "modality": "text",
    }  # fmt: skip
    stored = _unit_row(unit, 1, "")
    row = (1, stored[0], unit["source"], bytes.fromhex(unit["sha256"]), *stored[2:7], field, *stored[8:12], None, None)
    assert _row_to_unit(row) == unit
    if field is not None and text == f"{field}：{value}":
        assert stored[8] is None and stored_text(stored[5]) == value  # the value alone
    if span is not None and extra_end == 0:
        assert stored[3] is None  # the end is the start + the text's length


EXTRA_VALUES = st.one_of(
    st.sampled_from([1, True, 1.0, 0, False, 0.0, -0.0, None, "1", "标题", [1, 2], [True, 2], [1.0, 2]]),
    st.lists(st.sampled_from([1, True, "a", 1.0]), max_size=3),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["kind", "title", "headings", "parent_span"]), EXTRA_VALUES), max_size=8))
def test_extra_json_made_once_per_file_is_the_json_of_each_unit(extra_keys: list[dict[str, object]]) -> None:
    """_unit_row's memo of extra JSONs (by repr, across a file's units) stores what each unit's own
    JSON would be — values that compare equal but are written differently (1, True, 1.0) included."""
    memo: dict[str, str | bytes] = {}
    for i, keys in enumerate(extra_keys):
        unit = {
            "evidence_id": "ev_" + "ab" * 12, "source": "documents/a.md", "sha256": "cd" * 32, "span": [i, i + 1],
            "line": i, "text": "句", "subject": None, "field": None, "value": "句", "modality": "text", **keys,
        }  # fmt: skip
        assert _unit_row(unit, 1, "", memo) == _unit_row(unit, 1, "")
