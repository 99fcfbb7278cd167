"""Building and opening an index: summary counts, same-key map, bad files, corrupt index files."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from rag_lab.errors import IndexError_, RagLabError
from rag_lab.index import Index, build_index, check_freshness, default_index_path
from rag_lab.index.schema import SCHEMA_VERSION
from rag_lab.retrieval import query_once

MakeCorpus = Callable[..., Path]


def test_demo_summary_counts(demo_root: Path) -> None:
    summary = build_index(demo_root)
    assert summary.index_path == str(demo_root / ".rag_lab" / "index.sqlite")
    assert (summary.files, summary.units, summary.errors, summary.warnings) == (45, 134, [], 0)
    assert set(summary.as_dict()) == {"index", "files", "units", "errors", "warnings", "seconds"}
    with Index(default_index_path(demo_root)) as index:
        assert index.unit_count == 134
        assert len(index.snapshot()) == 45


def test_summary_counts_small_corpus(make_corpus: MakeCorpus) -> None:
    root = make_corpus(
        {
            "documents/a.md": "主题：甲\n地点：一楼\n容量：八人\n",
            "documents/b.md": "主题：乙\n地点：二楼\n地点 ：错\n",
            "documents/c.md": "# 只有标题\n",
        }
    )
    summary = build_index(root)
    assert (summary.files, summary.units, summary.errors, summary.warnings) == (3, 3, [], 1)
    with Index(default_index_path(root)) as index:
        assert index.file_problems() == [
            {
                "path": "documents/b.md",
                "line": 3,
                "severity": "warning",
                "message": "whitespace next to the full-width colon; write 字段：值 without spaces",
            }
        ]


def test_same_key_lookup_spans_files(indexed_demo: Path) -> None:
    with Index(default_index_path(indexed_demo)) as index:
        units = index.units_for_key("打印室", "开放时间")
        assert sorted(u["source"] for u in units) == [
            "documents/faq/print_room_faq.md",
            "documents/notices/print_room_notice.md",
            "documents/services/print_room.md",
        ]
        assert {u["value"] for u in units} == {"周一至周六八点到二十点。"}
        assert [u["evidence_id"] for u in units] == sorted(u["evidence_id"] for u in units)
        assert len(index.units_for_key("新台", "开放时间")) == 6
        assert index.units_for_key("借阅台", "容量") == []
        assert index.fields_of("会议室B") == ["地点", "容量", "注意事项", "预约方式"]
        one = index.units_for_key("借阅台", "开放时间")[0]
        assert index.unit_by_evidence_id(one["evidence_id"]) == one


def test_index_units_equal_extracted_units(indexed_demo: Path) -> None:
    from rag_lab.data import extract_documents

    with Index(default_index_path(indexed_demo)) as index:
        for unit in extract_documents(indexed_demo):
            assert index.unit_by_evidence_id(unit["evidence_id"]) == unit


def test_rag_lab_folder_is_never_indexed(make_corpus: MakeCorpus) -> None:
    root = make_corpus(
        {
            "documents/a.md": "主题：甲\n地点：一楼\n",
            ".rag_lab/documents/x.md": "主题：甲\n地点：假的\n",
            ".rag_lab/stray.md": "主题：甲\n地点：假的\n",
        }
    )
    build_index(root)
    with Index(default_index_path(root)) as index:
        assert sorted(index.snapshot()) == ["documents/a.md"]
        assert [u["value"] for u in index.units_for_key("甲", "地点")] == ["一楼"]
        assert not check_freshness(root, index).stale
    build_index(root)  # rebuilding rewrites .rag_lab/ and still leaves the corpus fresh
    result = query_once("甲 地点", root)
    assert (result["status"], result["answer"]) == ("answered", "一楼")


def test_bad_files_are_reported_and_the_rest_is_indexed(make_corpus: MakeCorpus, demo_root: Path) -> None:
    png = (demo_root / "images" / "red_circle.png").read_bytes()
    root = make_corpus(
        {
            "documents/good.md": "主题：甲\n地点：一楼\n",
            "documents/bad.md": "主题：乙\n地点：".encode() + b"\xc3\x28\n",
            "images/truncated.png": png[: len(png) // 2],
            "images/empty.png": b"",
            "images/red.png": png,
        }
    )
    summary = build_index(root)
    assert summary.files == 5
    assert summary.units == 2  # the good document's line and the good image
    errors = {e["path"]: e["error"] for e in summary.errors}
    assert sorted(errors) == ["documents/bad.md", "images/empty.png", "images/truncated.png"]
    assert errors["documents/bad.md"] == "invalid UTF-8 at byte offset 22 (invalid continuation byte); save the file as UTF-8"
    assert errors["images/empty.png"] and errors["images/truncated.png"]
    with Index(default_index_path(root)) as index:
        assert index.snapshot()["images/empty.png"][5] == errors["images/empty.png"]
        assert index.snapshot()["documents/bad.md"][4] is not None  # hashed although unparsable
        assert not check_freshness(root, index).stale  # error files do not make the index stale
    result = query_once("甲 地点", root)
    assert (result["status"], result["answer"]) == ("answered", "一楼")
    image = query_once("红色 小 圆形", root)
    assert (image["status"], [c["source"] for c in image["citations"]]) == ("answered", ["images/red.png"])


def test_missing_root_is_a_corpus_error(tmp_path: Path) -> None:
    from rag_lab.errors import CorpusError

    with pytest.raises(CorpusError, match="is not a folder"):
        build_index(tmp_path / "nope")


# --- corrupt index files -------------------------------------------------------------------------


def test_missing_index_raises(tmp_path: Path) -> None:
    with pytest.raises(IndexError_, match=r"no index at .*build it with `rag-lab index ROOT`"):
        Index(tmp_path / "index.sqlite")


def test_truncated_index_raises_clear_error(indexed_demo: Path) -> None:
    path = default_index_path(indexed_demo)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(IndexError_) as caught:
        Index(path)
    message = str(caught.value)
    assert "is truncated or damaged" in message
    assert f"{len(data) // 2} bytes on disk, the header says {len(data)}" in message
    assert "rebuild it with `rag-lab index ROOT`" in message
    with pytest.raises(IndexError_, match="truncated"):
        query_once("借阅台 开放时间", indexed_demo)


@pytest.mark.parametrize(
    "content", [b"", b"hello, not a database\n" * 20, b"SQLite format 3\x00short"], ids=["empty", "text", "header-only"]
)
def test_non_sqlite_index_raises_clear_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "index.sqlite"
    path.write_bytes(content)
    with pytest.raises(IndexError_, match=r"is not an rag_lab index \(not an SQLite file\); rebuild it"):
        Index(path)


def test_sqlite_file_of_another_kind_raises(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with pytest.raises(IndexError_, match="is corrupt or incomplete .*no such table: meta"):
        Index(path)
    assert issubclass(IndexError_, RagLabError)


def test_other_schema_version_raises(indexed_demo: Path) -> None:
    path = default_index_path(indexed_demo)
    db = sqlite3.connect(path)
    db.execute(
        "UPDATE meta SET value = replace(value, ?, ?) WHERE key = 'config'",
        (f'"schema_version": {SCHEMA_VERSION}', '"schema_version": 99'),
    )
    db.commit()
    db.close()
    with pytest.raises(IndexError_, match=f"has schema version 99, this rag_lab reads version {SCHEMA_VERSION}"):
        Index(path)


def test_index_with_64k_pages_opens(indexed_demo: Path) -> None:
    path = default_index_path(indexed_demo)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA page_size = 65536")
    db.execute("VACUUM")  # rewrites the file with 64 KiB pages: the header stores 1 for 65536
    db.close()
    assert path.read_bytes()[16:18] == b"\x00\x01"
    with Index(path) as index:
        assert [u["value"] for u in index.units_for_key("借阅台", "开放时间")] == ["周二至周五十四点到十七点。"]
