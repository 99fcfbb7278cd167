"""Unit rows parked in row files (index/spill.py ``RowFile``) and copied into ``units`` by SQLite:
ordered by evidence digest with ties in path order, and never left behind by a build that
finished, failed or was killed. (That the copy writes the same tables as main is
test_index_frozen_tables.py's and test_index_spill.py's job.)"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from rag_lab.index import Index, build, build_index, default_index_path
from rag_lab.index.spill import RowFile

MakeCorpus = Callable[..., Path]


def row(eid: bytes, file_id: int, text: str | bytes) -> tuple[object, ...]:
    return (eid, file_id, 0, 4, 1, text, "甲", "地点", 3, None, 0, None, None, None, "")


def test_a_row_file_gives_its_rows_by_digest_then_position(tmp_path: Path) -> None:
    rows = RowFile.create(tmp_path / "x.tmp-rows0")
    b, a, c = b"\x02" * 12, b"\x01" * 12, b"\x03" * 12
    rows.put([row(b, 1, "first b"), row(a, 1, "地点：一楼".encode("utf-16-le"))])
    rows.put([])
    rows.put([row(c, 2, "c"), row(b, 2, "second b")])
    rows.finish()
    rows.close()
    db = sqlite3.connect(tmp_path / "x.tmp-rows0")
    found = db.execute("SELECT eid, seq, file, text, typeof(text) FROM s ORDER BY eid, seq").fetchall()
    stored = db.execute("SELECT eid, file, text FROM s").fetchall()  # the table's own (key) order
    db.close()
    assert [(e, f, t) for e, _s, f, t, _ty in found] == stored
    assert [(e, f) for e, _s, f, _t, _ty in found] == [(a, 1), (b, 1), (b, 2), (c, 2)]  # ties: in put order
    assert [ty for *_rest, ty in found] == ["blob", "text", "text", "text"]  # stored as given


def corpus(make_corpus: MakeCorpus) -> Path:
    return make_corpus({f"documents/{i:02d}.md": f"主题：设施{i}\n地点：{i}楼\n电话：{100 + i}\n" for i in range(30)})


def row_files(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".rag_lab").iterdir() if "-rows" in p.name)


@pytest.mark.parametrize("workers", [0, 2])
def test_a_build_leaves_no_row_files(make_corpus: MakeCorpus, monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    root = corpus(make_corpus)
    monkeypatch.setattr(build, "_worker_count", lambda files: workers)
    monkeypatch.setattr(build, "BATCH_FILES", 4)
    summary = build_index(root)
    assert summary.units == 60 and row_files(root) == []
    with Index(default_index_path(root)) as index:
        assert [u["text"] for u in index.units_for_key("设施7", "地点")] == ["地点：7楼"]


def test_a_failed_copy_removes_the_row_files_and_keeps_the_old_index(
    make_corpus: MakeCorpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = corpus(make_corpus)
    build_index(root)
    before = default_index_path(root).read_bytes()
    (root / "documents" / "new.md").write_text("主题：新\n地点：顶楼\n", encoding="utf-8")

    def broken(*_args: object) -> int:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(build, "_copy_units", broken)
    with pytest.raises(sqlite3.OperationalError):
        build_index(root)
    assert row_files(root) == [] and default_index_path(root).read_bytes() == before


def test_a_copy_that_misses_rows_fails_the_build(make_corpus: MakeCorpus, monkeypatch: pytest.MonkeyPatch) -> None:
    root = corpus(make_corpus)
    real = build._copy_units
    monkeypatch.setattr(build, "_copy_units", lambda *args: real(*args) - 1)
    with pytest.raises(build.IndexError_, match="parked 60 units but copied 59"):
        build_index(root)
    assert not default_index_path(root).exists() and row_files(root) == []


def test_row_files_of_a_killed_build_are_removed_by_the_next(make_corpus: MakeCorpus) -> None:
    root = corpus(make_corpus)
    build_index(root)
    leftover = root / ".rag_lab" / "index.sqlite.tmp-4242-abcd1234-rows1"
    RowFile.create(leftover)
    build_index(root)
    assert not leftover.exists() and row_files(root) == []


def test_rows_beyond_a_field_line_are_stored_as_given(tmp_path: Path) -> None:
    """A field-line row binds 8 values (the rest are constants); any other row — a value of its
    own, an image, a validity date, extra keys, a modality that is not the integer 0 — binds all
    15 (or 7 when it is a sentence's), so every value is stored as ``units`` stores it."""
    plain = row(b"\x01" * 12, 1, "地点：一楼")
    odd = [
        (b"\x02" * 12, 1, 0, 4, 2, "甲", "甲", "乙", 0, "丙", 0, None, None, None, ""),
        (b"\x03" * 12, 1, None, None, None, "图", None, None, 0, None, 1, None, None, '{"color": "red"}', "staff"),
        (b"\x04" * 12, 1, 0, 4, 3, "丁", "甲", "戊", 1, None, 0, "2026-01-01", None, None, ""),
        (b"\x05" * 12, 1, 0, 4, 4, "己", "甲", "庚", 1, None, 0.0, None, None, None, ""),
    ]
    rows = RowFile.create(tmp_path / "y.tmp-rows0")
    rows.put([plain])
    rows.put([plain[:0] + (b"\x00" * 12,) + plain[1:], *odd])
    rows.finish()
    rows.close()
    db = sqlite3.connect(tmp_path / "y.tmp-rows0")
    got = db.execute(  # an extra is stored once in x, the row holds its id there
        "SELECT eid, file, span_start, span_end, line, text, subject, field, value_at, value, modality, "
        "valid_from, valid_to, x.extra, acl, typeof(modality) FROM s LEFT JOIN x ON x.id = s.extra ORDER BY eid"
    ).fetchall()
    db.close()
    assert [r[:15] for r in got[2:]] == odd and got[1][:15] == plain
    assert [r[15] for r in got] == ["integer"] * 6  # INTEGER affinity, as in units: 0.0 is stored as 0


def test_a_row_file_stores_each_batchs_distinct_extras_once(tmp_path: Path) -> None:
    """A row's extra JSON goes to ``x`` once per batch; the row holds its id there (the build maps
    those ids to the ids of ``extras``)."""
    rows = RowFile.create(tmp_path / "x.tmp-rows0")
    para, other = '{"kind": "sentence"}', "表".encode("utf-16-le")

    def sentence(eid: int, extra: str | bytes | None) -> tuple[object, ...]:
        return (bytes([eid]) * 12, 1, eid, None, 1, "句", None, None, 0, None, 0, None, None, extra, "")

    rows.put([sentence(1, para), sentence(2, para), sentence(3, None), sentence(4, other)])
    rows.put([sentence(5, para)])
    rows.finish()
    rows.close()
    db = sqlite3.connect(tmp_path / "x.tmp-rows0")
    x = db.execute("SELECT id, extra FROM x ORDER BY id").fetchall()
    extras = db.execute("SELECT x.extra FROM s LEFT JOIN x ON x.id = s.extra ORDER BY s.eid").fetchall()
    db.close()
    assert x == [(1, para), (2, other), (3, para)]  # once per batch
    assert [e for (e,) in extras] == [para, para, None, other, para]


def test_runs_of_field_lines_sentences_and_other_rows_are_stored_as_given_in_put_order(tmp_path: Path) -> None:
    """A batch that mixes the three bindings (field line: 8 values, sentence: 7, other: 15) stores
    every row as given, equal digests in put order; look-alikes of a sentence's row (a value_at of
    False or 1, a modality of 0.0, a subject, no extra) take the full binding and keep their values."""
    tie = b"\x07" * 12

    def field_line(eid: bytes, file_id: int, text: str) -> tuple[object, ...]:
        return (eid, file_id, 0, None, 1, text, "甲", "地点", None, None, 0, None, None, None, "")

    def sentence(eid: bytes, extra: object = '{"kind": "sentence"}', **change: object) -> tuple[object, ...]:
        values = dict(value_at=0, modality=0, subject=None)
        values.update(change)
        return (eid, 2, 5, None, 3, "句子。", values["subject"], None, values["value_at"], None,
                values["modality"], None, None, extra, "staff")  # fmt: skip

    batch = [
        field_line(tie, 1, "一楼"),
        sentence(tie),
        sentence(tie, "表".encode("utf-16-le")),
        (tie, 1, 0, 4, 2, "甲", "甲", "乙", 0, "丙", 0, None, None, None, ""),
        sentence(tie, value_at=False),
        sentence(tie, value_at=1),
        sentence(tie, modality=0.0),
        sentence(tie, subject="甲"),
        sentence(tie, None),
        field_line(tie, 2, "1"),
        sentence(b"\x01" * 12),
    ]
    rows = RowFile.create(tmp_path / "z.tmp-rows0")
    rows.put(batch[:3])
    rows.put(batch[3:])
    rows.finish()
    rows.close()
    db = sqlite3.connect(tmp_path / "z.tmp-rows0")
    got = db.execute(
        "SELECT eid, file, span_start, span_end, line, text, subject, field, value_at, value, modality, "
        "valid_from, valid_to, x.extra, acl, typeof(value_at), typeof(modality) FROM s LEFT JOIN x ON x.id = s.extra "
        "ORDER BY eid, seq"
    ).fetchall()
    db.close()
    assert [r[:15] for r in got] == [batch[-1], *batch[:-1]]
    assert [r[15] for r in got] == ["integer", "null", *["integer"] * 8, "null"]  # value_at False: stored 0
    assert {r[16] for r in got} == {"integer"}
