"""Change detection against the snapshot: add, delete, modify, same-size edit, touch."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rag_lab.index import Changes, Index, build_index, check_freshness, default_index_path

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

MakeCorpus = Callable[..., Path]
FILES = {
    "documents/a.md": "主题：甲\n地点：一楼\n",
    "documents/b.md": "主题：乙\n地点：二楼\n",
}


@pytest.fixture
def root(make_corpus: MakeCorpus) -> Path:
    built = make_corpus(FILES)
    build_index(built)
    return built


def changes(root: Path) -> Changes:
    with Index(default_index_path(root)) as index:
        return check_freshness(root, index)


def test_fresh_after_build(root: Path) -> None:
    found = changes(root)
    assert (found.stale, found.paths(), found.rehashed) == (False, [], 0)


def test_added_file(root: Path) -> None:
    (root / "documents" / "sub").mkdir()
    (root / "documents" / "sub" / "c.md").write_text("主题：丙\n地点：三楼\n", encoding="utf-8")
    found = changes(root)
    assert found.as_dict() == {"added": ["documents/sub/c.md"], "deleted": [], "modified": []}
    assert found.stale


def test_added_non_corpus_file_is_not_a_change(root: Path) -> None:
    (root / "documents" / "readme.rst").write_text("主题：丙\n", encoding="utf-8")
    (root / "notes.md").write_text("主题：丙\n", encoding="utf-8")
    assert not changes(root).stale


def test_deleted_file(root: Path) -> None:
    (root / "documents" / "b.md").unlink()
    assert changes(root).as_dict() == {"added": [], "deleted": ["documents/b.md"], "modified": []}


def test_modified_file(root: Path) -> None:
    (root / "documents" / "a.md").write_text("主题：甲\n地点：一楼东侧\n", encoding="utf-8")
    assert changes(root).as_dict() == {"added": [], "deleted": [], "modified": ["documents/a.md"]}


def test_same_size_edit_with_restored_mtime_is_detected(root: Path) -> None:
    path = root / "documents" / "a.md"
    before = path.stat()
    time.sleep(0.01)
    path.write_text("主题：甲\n地点：二楼\n", encoding="utf-8")  # same byte length
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    found = changes(root)
    assert found.modified == ["documents/a.md"]
    assert found.rehashed == 1


def test_replacing_by_rename_with_same_stat_is_detected(root: Path) -> None:
    path = root / "documents" / "a.md"
    before = path.stat()
    replacement = root / "a.tmp"
    replacement.write_text("主题：甲\n地点：三楼\n", encoding="utf-8")
    os.utime(replacement, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(replacement, path)
    assert changes(root).modified == ["documents/a.md"]


def test_touch_is_not_a_change(root: Path) -> None:
    path = root / "documents" / "a.md"
    time.sleep(0.01)
    path.touch()
    found = changes(root)
    assert (found.stale, found.rehashed) == (False, 1)


def test_rewrite_with_identical_bytes_is_not_a_change(root: Path) -> None:
    path = root / "documents" / "b.md"
    path.write_bytes(path.read_bytes())
    assert not changes(root).stale


def test_unparsable_file_stays_fresh_until_it_changes(make_corpus: MakeCorpus) -> None:
    root = make_corpus({"documents/a.md": "主题：甲\n地点：一楼\n", "documents/bad.md": b"\xff"})
    build_index(root)
    assert not changes(root).stale
    (root / "documents" / "bad.md").write_text("主题：乙\n地点：二楼\n", encoding="utf-8")
    assert changes(root).modified == ["documents/bad.md"]


def test_several_changes_are_all_named_sorted(root: Path) -> None:
    (root / "documents" / "a.md").unlink()
    (root / "documents" / "b.md").write_text("主题：乙\n地点：三楼\n", encoding="utf-8")
    (root / "documents" / "0.md").write_text("主题：零\n地点：地下\n", encoding="utf-8")
    found = changes(root)
    assert found.as_dict() == {"added": ["documents/0.md"], "deleted": ["documents/a.md"], "modified": ["documents/b.md"]}
    assert found.paths() == ["documents/0.md", "documents/a.md", "documents/b.md"]


def test_rename_is_one_deletion_and_one_addition(root: Path) -> None:
    (root / "documents" / "a.md").rename(root / "documents" / "z.md")
    assert changes(root).as_dict() == {"added": ["documents/z.md"], "deleted": ["documents/a.md"], "modified": []}


def test_symlinks_stay_fresh_until_their_target_changes(make_corpus: MakeCorpus, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("主题：外\n地点：外面\n", encoding="utf-8")
    root = make_corpus({"documents/a.md": "主题：甲\n地点：一楼\n"})
    (root / "documents" / "inside.md").symlink_to(root / "documents" / "a.md")
    (root / "documents" / "escape.md").symlink_to(outside)  # an error file, not indexed
    (root / "documents" / "dir").symlink_to(root / "documents", target_is_directory=True)
    build_index(root)
    assert not changes(root).stale
    (root / "documents" / "a.md").write_text("主题：甲\n地点：二楼\n", encoding="utf-8")
    assert changes(root).modified == ["documents/a.md", "documents/inside.md"]
    outside.write_text("主题：外\n地点：别处\n", encoding="utf-8")  # not part of the corpus
    assert changes(root).modified == ["documents/a.md", "documents/inside.md"]
