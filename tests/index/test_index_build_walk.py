"""The build walks the corpus once (index/freshness.py ``build_walk``): its files are the ones
``data.corpus.walk`` lists, and the walk digest it stores is the digest of that same walk, so
the fast freshness check applies exactly when the full comparison finds nothing to re-hash."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from rag_lab.data.corpus import walk
from rag_lab.index import Index, build, build_index, check_freshness, default_index_path
from rag_lab.index.freshness import build_walk, digest_of, fast_walk

MakeCorpus = Callable[..., Path]

SHAPES: list[dict[str, str | bytes]] = [
    {"documents/a.md": "主题：甲\n地点：一楼\n"},
    {
        "documents/z.md": "主题：甲\n地点：一楼\n",
        "documents/b/c.md": "主题：乙\n地点：二楼\n",
        "documents/b/d/e.txt": "一段话。\n",
        "documents/b/ignored.doc": "not a corpus file",
        "documents/odd.md/inner.md": "主题：丙\n地点：三楼\n",  # a folder named like a document
        "documents/空 格/名字.md": "主题：丁\n地点：四楼\n",
        "images/x/red.png": b"\x89PNG\r\n\x1a\n",
        "access.json": "{}",
        "aliases.tsv": "开放时间\t营业时间\n",
        "notes.md": "outside documents/: not part of the corpus",
    },
]


@pytest.mark.parametrize("files", SHAPES)
def test_the_build_walk_lists_what_walk_lists(make_corpus: MakeCorpus, files: dict[str, str | bytes]) -> None:
    root = make_corpus(files)
    (root / "documents" / "empty").mkdir()
    items, digest = build_walk(root)
    assert items == list(walk(root))
    walked = fast_walk(root)
    assert walked is not None and digest == digest_of(*walked)


def test_a_symlink_gives_the_careful_walk_and_no_digest(make_corpus: MakeCorpus, tmp_path: Path) -> None:
    root = make_corpus({"documents/a.md": "主题：甲\n地点：一楼\n"})
    outside = tmp_path / "outside.md"
    outside.write_text("主题：乙\n地点：外面\n", encoding="utf-8")
    (root / "documents" / "in.md").symlink_to(root / "documents" / "a.md")
    (root / "documents" / "out.md").symlink_to(outside)
    items, digest = build_walk(root)
    assert items == list(walk(root)) and digest == ""
    assert any(item.error for item in items)  # the escaping link is reported as walk reports it


def test_a_file_changed_after_the_walk_is_never_taken_as_fresh(
    make_corpus: MakeCorpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index records the walk's fingerprints; a file edited between the walk and its read has
    another fingerprint from then on, so the stored digest no longer matches and the freshness
    check compares file by file (and re-hashes: the bytes indexed are the bytes now)."""
    root = make_corpus({"documents/a.md": "主题：甲\n地点：一楼\n", "documents/b.md": "主题：乙\n地点：二楼\n"})
    real = build.build_walk

    def walk_then_edit(base: Path) -> tuple[list[object], str]:
        items, digest = real(base)
        path = base / "documents" / "a.md"
        path.write_text("主题：甲\n地点：九楼\n", encoding="utf-8")  # same size, new bytes
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, items[0].fingerprint.mtime_ns))  # type: ignore[attr-defined]
        return items, digest  # type: ignore[return-value]

    monkeypatch.setattr(build, "build_walk", walk_then_edit)
    build_index(root)
    monkeypatch.undo()
    with Index(default_index_path(root)) as index:
        walked = fast_walk(root)
        assert walked is not None and index.walk_digest() != digest_of(*walked)
        loaded = []
        real_fingerprints = index.fingerprints

        def counted() -> dict[str, object]:
            loaded.append(1)
            return real_fingerprints()  # type: ignore[return-value]

        monkeypatch.setattr(index, "fingerprints", counted)
        changes = check_freshness(root, index)
        assert loaded and not changes.stale and changes.rehashed == 1  # indexed = on disk: 九楼
        assert [u["text"] for u in index.units_for_key("甲", "地点")] == ["地点：九楼"]
        (root / "documents" / "a.md").write_text("主题：甲\n地点：十楼\n", encoding="utf-8")
        assert check_freshness(root, index).modified == ["documents/a.md"]
