"""Bounded build memory (issue 18): units parked in a spill file must give the same index, byte
for byte in every table, as a build that keeps everything in memory."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from rag_lab.index import build, build_index, default_index_path, spill
from rag_lab.index.spill import SpillFile, merged, whole_terms

MakeCorpus = Callable[..., Path]


def tables(path: Path) -> dict[str, list[tuple[object, ...]]]:
    db = sqlite3.connect(path)
    try:
        names = [
            n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        ]
        return {n: db.execute(f"SELECT * FROM {n} ORDER BY 1, 2").fetchall() for n in names}
    finally:
        db.close()


def mixed_corpus(make_corpus: MakeCorpus) -> Path:
    files: dict[str, str | bytes] = {}
    for i in range(60):
        acl = "权限：staff\n" if i % 7 == 0 else "权限：ops\n" if i % 11 == 0 else ""
        files[f"documents/{i // 20}/{i:03d}.md"] = (
            f"{acl}主题：设施{i}号\n开放时间：九点到{i}点\n地点：楼{i % 5}层\n电话：{1000 + i}\n"
        )
    files["documents/prose.md"] = (
        "# 标题\n\n这是一段说明文字。它有两句话！\n\n| 房间 | 座位 |\n|---|---|\n| 一楼 | 120 |\n"
    )
    files["documents/astral.md"] = "主题：表情😀\n说明：笑脸😀和🙂\n"
    return make_corpus(files)


@pytest.mark.parametrize("key_bits", [63, 20])
def test_a_spilled_build_writes_the_same_index(
    make_corpus: MakeCorpus, monkeypatch: pytest.MonkeyPatch, key_bits: int
) -> None:
    root = mixed_corpus(make_corpus)
    path = default_index_path(root)
    build_index(root)
    expected = tables(path)
    assert len(expected["units"]) > 150 and len({row[-1] for row in expected["units"]}) == 3
    # tiny thresholds: every batch spills, 16+ buckets, merges of many small runs in tiny blocks;
    # key_bits 20 also forces dense term numbers (keys that would not fit in an int64)
    monkeypatch.setattr(build, "BATCH_FILES", 7)
    monkeypatch.setattr(build, "FLUSH_UNITS", 30)
    monkeypatch.setattr(build, "BUCKET_UNITS", 8)
    monkeypatch.setattr(build, "POSTINGS_SLICE", 50)
    monkeypatch.setattr(build, "KEY_BITS", key_bits)
    monkeypatch.setattr(spill, "MERGE_KEYS", 64)
    spilled: list[SpillFile] = []
    real = build.SpillFile

    def recording(folder: Path, prefix: str) -> SpillFile:
        spilled.append(real(folder, prefix))
        return spilled[-1]

    monkeypatch.setattr(build, "SpillFile", recording)
    build_index(root)
    assert len(spilled) == 1 and spilled[0].size > 0  # the spill path really ran
    assert tables(path) == expected
    assert sorted(p.name for p in path.parent.iterdir()) == ["index.sqlite", "index.sqlite.lock"]


def test_merged_runs_come_back_sorted_in_whole_terms() -> None:
    rng = np.random.default_rng(3)
    folder = Path(__file__).parent
    store = SpillFile(folder, ".test-spill-")
    try:
        runs, everything = [], []
        for size in [0, 1, 5, 300, 1000, 7]:
            keys = np.sort(rng.integers(0, 40 * 100, size=size, dtype=np.int64))
            everything.append(keys)
            runs.append(store.put(keys))
        expected = np.sort(np.concatenate(everything))
        blocks = list(merged(store, runs, budget=16))
        assert np.array_equal(np.concatenate(blocks), expected)
        slices = list(whole_terms(iter(blocks), 100, size=50))
        assert np.array_equal(np.concatenate(slices), expected)
        terms = [set((s // 100).tolist()) for s in slices]
        for a, b in zip(terms, terms[1:], strict=False):
            assert not a & b  # no term is split between slices
    finally:
        store.close()


def test_the_fold_shortcut_agrees_with_fold() -> None:
    from rag_lab.data.names import fold

    matched = [chr(cp) for cp in range(0x110000) if build._FOLDS_TO_ITSELF.fullmatch(chr(cp))]
    assert len(matched) > 20_000  # the CJK block and printable ASCII but upper-case letters
    assert all(fold(ch) == ch for ch in matched)  # fold works code point by code point
    for name in ["开放时间", "CPU类型", "ＣＰＵ", "cpu 2", "Ⅻ号楼", "é", "e\u0301"]:
        assert build._fold(name) == fold(name)
