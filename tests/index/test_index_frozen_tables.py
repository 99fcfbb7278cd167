"""The index file's tables, row for row, as main wrote them before the build's fast path (issue 18):
a frozen digest per table of an index of a fixed corpus. A build change that alters one stored
byte fails here; the format (docs/index-format.md) changes only with SCHEMA_VERSION, and then
these digests are renewed on purpose."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from operator import itemgetter
from pathlib import Path
from typing import Any

import pytest

from rag_lab.index import build, build_index, default_index_path
from rag_lab.index.rows import compact_text
from rag_lab.index.schema import FILE_KINDS
from rag_lab.index.store import stored_extra, stored_text, stored_unit_text
from rag_lab.index.warned import decoded, joined_text

MakeCorpus = Callable[..., Path]
FIELDS = ["开放时间", "地点", "联系电话", "容量", "噪音规定", "借阅规则", "CPU型号", "Ｗｉｆｉ"]
PLACES = ["文科楼", "主楼", "图书馆", "实验楼", "体育馆"]
# what the files table keeps of a file's stat (it differs from checkout to checkout)
STAT_COLUMNS = {"mtime_ns", "ctime_ns", "inode"}


def frozen_corpus(make_corpus: MakeCorpus) -> Path:
    files: dict[str, str | bytes] = {}
    for i in range(240):
        lines = [f"主题：{PLACES[i % 5]}{i // 5}号{'服务站' if i % 3 else '观测站'}"]
        for j in range(3 + i % 4):
            lines.append(
                f"{FIELDS[(i + j) % len(FIELDS)]}：{'九点到' if j % 2 else '面向'}{i * 7 % 13}点，请预约"
            )
            if (i + j) % 9 == 0:
                lines.append("")
        if i % 17 == 0:
            lines.insert(1, "生效日期：2026-01-01")
        if i % 19 == 0:
            lines.append("权限：staff")
        if i % 23 == 0:
            lines.append("这是一段说明。它有两句话！")
        if i % 29 == 0:
            lines += ["| 房间 | 座位 |", "|---|---|", f"| 一楼 | {i} |"]
        if i % 31 == 0:
            lines.append("开放时间: 九点")
        files[f"documents/{i // 100:03d}/{i:06d}.md"] = "\n".join(lines) + "\n"
    files["documents/crlf.md"] = "主题：回车\r\n地点：二楼\r\n"
    files["documents/bom.md"] = "\ufeff主题：标记\n地点：三楼\n"
    files["documents/bad.md"] = b"\xff\xfe"
    files["documents/astral.md"] = "主题：表情😀\n说明：笑脸😀和🙂\n"
    files["access.json"] = '{"documents/001/*": ["ops", "staff"]}'
    return make_corpus(files)


def table_digests(path: Path) -> dict[str, str]:
    db = sqlite3.connect(path)
    try:
        names = [
            n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        ]
        out = {}
        for name in names:
            columns = [r[1] for r in db.execute(f"PRAGMA table_info({name})") if r[1] not in STAT_COLUMNS]
            rows = db.execute(f"SELECT {', '.join(columns)} FROM {name} ORDER BY 1, 2").fetchall()
            if name == "meta":
                rows = [r for r in rows if r[0] != "walk_digest"]
            out[name] = hashlib.sha256(repr(rows).encode()).hexdigest()[:16]
        return out
    finally:
        db.close()


EXPECTED = {  # main at 6a08bb1 (schema 5), before the fast path; meta, units and extras renewed for schema 6,
    # meta, units and files for schema 7 (decoded, they are schema 6's: test below), meta and the
    # warnings for schema 8 (decoded, they are schema 7's: test below), meta, units and extras for
    # schema 9 (decoded, they are schema 8's: test below)
    "acl_stats": "53dd8fffe336cd21",
    "field_vectors": "4f53cda18c2baa0c",
    "file_warnings": "5f2589a5b7702960",
    "files": "2406933cc32ee691",
    "folded_names": "167ce886ce185c86",
    "images": "4f53cda18c2baa0c",
    "extras": "eddeab3c2c0a20da",
    "meta": "abf740860f3cb30f",
    "names": "176b5531203a2a96",
    "postings": "14f70a1df3532151",
    "strings": "86fcbe64f2acad86",
    "unit_lengths": "bdb11868c76e2583",
    "units": "c393ee6192143d21",
    "vectors": "4f53cda18c2baa0c",
    "warning_lines": "bc0b9c53480721f1",
    "warning_messages": "7230516c3cce8d9c",
}


@pytest.mark.parametrize("workers", [0, 2])
def test_the_index_tables_are_the_ones_main_wrote(
    make_corpus: MakeCorpus, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    root = frozen_corpus(make_corpus)
    monkeypatch.setattr(build, "_worker_count", lambda files: workers)
    monkeypatch.setattr(build, "BATCH_FILES", 50)
    build_index(root)
    assert table_digests(default_index_path(root)) == EXPECTED


SCHEMA_8_EXTRAS = "161b9978bbd15c16"  # main's extras at schema 8 (8437412): every sentence's title and span
SCHEMA_8_UNITS = "dd422e5151659046"  # and its units table
SCHEMA_7_FILE_WARNINGS = "03aa7fe22de71abe"  # main's file_warnings at schema 7 (393c103): a row per warning
SCHEMA_7_WARNING_LINES = "8562241b08af74b1"  # and its warning_lines, path and text in each row
SCHEMA_6_UNITS = "645400a95c538a76"  # main's units table at schema 6 (6cd7fe8): whole texts, every span end
SCHEMA_6_FILES = "04125231ea2ad9af"  # and its files table, kinds by name
SCHEMA_5_UNITS = "e2b6f9f28516a4ea"  # main's units table at schema 5, each unit's extras inline


def schema_8_extras(db: sqlite3.Connection) -> tuple[list[tuple[int, str | bytes]], dict[int, int]]:
    """The ``extras`` rows as schema 8 stored them — every sentence's title and paragraph span
    written out (schema 9 leaves out a title that is the file's document name and a paragraph
    span that is the sentence's own) — and each unit's extra id there. Ids follow the values
    (``SELECT DISTINCT extra … ORDER BY 1``: TEXT before BLOB, each in byte order)."""
    paths = dict(db.execute("SELECT id, path FROM files"))
    names = dict(db.execute("SELECT id, name FROM strings"))
    stored = dict(db.execute("SELECT id, extra FROM extras"))
    whole: dict[int, str | bytes] = {}
    for uid, file, start, end, text, field, value_at, value, extra in db.execute(
        "SELECT id, file, span_start, span_end, text, field, value_at, value, extra FROM units WHERE extra IS NOT NULL"
    ):
        plain, _value = stored_unit_text(text, names.get(field), value_at, value)
        span = None if start is None else [start, start + len(plain) if end is None else end]
        rest = stored_extra(stored[extra], paths[file], span)
        whole[uid] = compact_text(json.dumps(rest, ensure_ascii=False, sort_keys=True))
    order = sorted(set(whole.values()), key=lambda v: (isinstance(v, bytes), v if isinstance(v, bytes) else v.encode()))
    ids = {value: i for i, value in enumerate(order, 1)}
    return [(i, value) for value, i in ids.items()], {uid: ids[value] for uid, value in whole.items()}


def schema_6_units(db: sqlite3.Connection) -> list[tuple[Any, ...]]:
    """The units rows (every column, in key order) as schema 6 stored them: a field line's whole
    text (schema 7 keeps its value alone, ``value_at`` NULL) and every span's end; extra ids
    those of schema 8's ``extras`` (:func:`schema_8_extras`)."""
    columns = [r[1] for r in db.execute("PRAGMA table_info(units)")]
    assert columns[4:11] == ["span_end", "line", "text", "subject", "field", "value_at", "value"]
    assert columns[14] == "extra"
    names = dict(db.execute("SELECT id, name FROM strings"))
    _extras, extra_ids = schema_8_extras(db)
    out = []
    for row in db.execute(f"SELECT {', '.join(columns)} FROM units ORDER BY 1, 2").fetchall():
        (*head, start, end, line, stored, subject, field, value_at, value), tail = row[:11], list(row[11:])
        if tail[3] is not None:
            tail[3] = extra_ids[row[0]]
        text = stored_text(stored)
        if value_at is None:  # the text was ``field：value``, the value alone stored
            value_at = len(names[field]) + 1
            text = f"{names[field]}：{text}"
            stored = compact_text(text)
        if start is not None and end is None:  # the span ended where the text does
            end = start + len(text)
        out.append((*head, start, end, line, stored, subject, field, value_at, value, *tail))
    return out


def test_units_and_files_decoded_are_the_rows_of_schema_6(make_corpus: MakeCorpus) -> None:
    """Schema 7 only leaves out what a row can get from its own columns: decoded back, every
    unit row and every file row is the one schema 6 stored, byte for byte."""
    root = frozen_corpus(make_corpus)
    build_index(root)
    db = sqlite3.connect(default_index_path(root))
    try:
        rows = schema_6_units(db)
        shortened = db.execute("SELECT count(*) FROM units WHERE value_at IS NULL").fetchone()[0]
        ends = db.execute("SELECT count(*) FROM units WHERE span_end IS NULL AND span_start IS NOT NULL").fetchone()[0]
        columns = [r[1] for r in db.execute("PRAGMA table_info(files)") if r[1] not in STAT_COLUMNS]
        files = [
            (i, path, FILE_KINDS[kind], *rest)
            for i, path, kind, *rest in db.execute(f"SELECT {', '.join(columns)} FROM files ORDER BY 1, 2")
        ]
    finally:
        db.close()
    assert 0 < shortened < len(rows)  # both forms occur in the fixed corpus (prose, tables: whole texts)
    assert ends > 0  # (every unit of this corpus ends where its text does)
    assert hashlib.sha256(repr(rows).encode()).hexdigest()[:16] == SCHEMA_6_UNITS
    assert hashlib.sha256(repr(files).encode()).hexdigest()[:16] == SCHEMA_6_FILES


def test_units_with_their_extras_joined_are_the_rows_of_schema_5(make_corpus: MakeCorpus) -> None:
    """Schema 6 only moved each distinct extra into ``extras``: joined back (to schema 7's rows
    decoded as schema 6 stored them), every unit row is the one schema 5 stored, byte for byte."""
    root = frozen_corpus(make_corpus)
    build_index(root)
    db = sqlite3.connect(default_index_path(root))
    try:
        columns = [r[1] for r in db.execute("PRAGMA table_info(units)")]
        assert columns[-2:] == ["extra", "acl"]
        extras = dict(schema_8_extras(db)[0])
        rows = [(*r[:-2], None if r[-2] is None else extras[r[-2]], r[-1]) for r in schema_6_units(db)]
        assert any(r[-2] is not None for r in rows)
        distinct = db.execute("SELECT count(*), count(DISTINCT extra) FROM extras").fetchone()
    finally:
        db.close()
    assert hashlib.sha256(repr(rows).encode()).hexdigest()[:16] == SCHEMA_5_UNITS
    assert distinct[0] == distinct[1]  # each extra once


def schema_7_warnings(db: sqlite3.Connection) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The rows of ``file_warnings`` (path, line, message) and ``warning_lines`` (path, line,
    text, name, subject_line) as schema 7 stored them, by path and line (ties in the parser's
    order): schema 8 packs a file's warnings in one row, codes the 主题 message and stores every
    other message once, and leaves out a warned line's text when its units give it."""
    paths = dict(db.execute("SELECT id, path FROM files"))
    messages = dict(db.execute("SELECT id, message FROM warning_messages"))
    warnings = [
        (paths[file], line, message)
        for file, n, lines, codes in db.execute("SELECT file, n, lines, codes FROM file_warnings ORDER BY file")
        for line, message in decoded(n, lines, codes, messages)
    ]
    warned = []
    for name, file, line, text, subject_line in db.execute(
        "SELECT name, file, line, text, subject_line FROM warning_lines"
    ).fetchall():
        if text is None:
            units = db.execute("SELECT text FROM units WHERE file = ? AND line = ? ORDER BY span_start", (file, line))
            text = joined_text(stored_text(t) for (t,) in units)
        warned.append((paths[file], line, stored_text(text), name, subject_line))
    by_place = itemgetter(0, 1)
    return sorted(warnings, key=by_place), sorted(warned, key=by_place)


def test_warnings_decoded_are_the_rows_of_schema_7(make_corpus: MakeCorpus) -> None:
    """Schema 8 only packs the warnings: decoded back, both tables are schema 7's, byte for byte."""
    root = frozen_corpus(make_corpus)
    build_index(root)
    db = sqlite3.connect(default_index_path(root))
    try:
        warnings, warned = schema_7_warnings(db)
        coded = db.execute("SELECT count(*) FROM warning_messages").fetchone()[0]
    finally:
        db.close()
    assert warnings and warned and 0 < coded < len(warnings)
    assert hashlib.sha256(repr(warnings).encode()).hexdigest()[:16] == SCHEMA_7_FILE_WARNINGS
    assert hashlib.sha256(repr(warned).encode()).hexdigest()[:16] == SCHEMA_7_WARNING_LINES


def test_extras_decoded_are_the_rows_of_schema_8(make_corpus: MakeCorpus) -> None:
    """Schema 9 only leaves out of a sentence's extras the title that is its file's document name
    and the paragraph span that is its own span: put back, ``extras`` and the units' extra ids are
    schema 8's, byte for byte — and both rules apply in the fixed corpus (titles by file name; a
    warned ASCII-colon line, a paragraph of one sentence), as does neither (two-sentence paragraphs)."""
    root = frozen_corpus(make_corpus)
    build_index(root)
    db = sqlite3.connect(default_index_path(root))
    try:
        extras, extra_ids = schema_8_extras(db)
        units = [
            (*row[:14], None if row[14] is None else extra_ids[row[0]], *row[15:])
            for row in db.execute("SELECT * FROM units ORDER BY 1, 2").fetchall()
        ]
        stored = [json.loads(stored_text(e)) for (e,) in db.execute("SELECT extra FROM extras")]
    finally:
        db.close()
    sentences = [e for e in stored if e.get("kind") == "sentence"]
    assert any("title" not in e for e in sentences) and any("parent_span" not in e for e in sentences)
    assert any("parent_span" in e for e in sentences)
    assert hashlib.sha256(repr(extras).encode()).hexdigest()[:16] == SCHEMA_8_EXTRAS
    assert hashlib.sha256(repr(units).encode()).hexdigest()[:16] == SCHEMA_8_UNITS
