"""A build killed at a random moment leaves the previous index whole, usable and current."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from rag_lab.index import Index, build_index, default_index_path
from rag_lab.retrieval import retrieve

DOCS = 4000
TRIALS = 10


def write_corpus(root: Path, version: str) -> None:
    for i in range(DOCS):
        folder = root / "documents" / f"{i // 1000:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{i:06d}.md").write_text(
            f"主题：设施{i}号\n开放时间：{version}第{i}版九点到十七点。\n地点：楼{i}层\n备注：无\n",
            encoding="utf-8",
        )


def run_build(root: Path) -> subprocess.Popen[bytes]:
    code = f"from rag_lab.index import build_index; build_index({str(root)!r})"
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_killed_builds_leave_the_previous_index_intact(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    write_corpus(root, "旧")
    build_index(root)
    path = default_index_path(root)
    old_bytes = path.read_bytes()
    write_corpus(root, "新")  # every document changes: a full rebuild is needed

    started = time.perf_counter()
    full = run_build(root)
    assert full.wait(timeout=120) == 0
    duration = time.perf_counter() - started
    # put the old index back, as if that build had never happened
    path.write_bytes(old_bytes)

    rng = random.Random(1234)
    killed_before_done = killed_mid_write = 0
    for trial in range(TRIALS):
        proc = run_build(root)
        if trial % 2:
            # odd trials: any moment of the build (start-up, reading the corpus, writing, renaming)
            time.sleep(rng.uniform(0.15, 0.95) * duration)
        else:
            # even trials: right after the temporary index file appears, i.e. while it is written
            deadline = time.monotonic() + 60
            while not list(path.parent.glob(path.name + ".tmp-*")) and proc.poll() is None:
                assert time.monotonic() < deadline, "the build never created its temporary file"
                time.sleep(0.001)
            time.sleep(rng.uniform(0.0, 0.01))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        leftovers = list(path.parent.glob(path.name + ".tmp-*"))
        if proc.returncode == -signal.SIGKILL:
            killed_before_done += 1
            killed_mid_write += bool(leftovers)
        if path.read_bytes() != old_bytes:
            # the kill came after the rename: the new index must then be complete
            with Index(path) as index:
                unit = index.units_for_key("设施7号", "开放时间")[0]
                assert unit["value"] == "新第7版九点到十七点。"
            path.write_bytes(old_bytes)
            continue
        with Index(path) as index:
            assert index.unit_count == DOCS * 3
            assert [u["value"] for u in index.units_for_key("设施7号", "开放时间")] == ["旧第7版九点到十七点。"]
            top = retrieve("设施7号 开放时间", index, top_k=1)
            assert top[0]["evidence"]["value"] == "旧第7版九点到十七点。"
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        finally:
            db.close()
    # Timing on a shared machine varies; what matters is that most kills hit an unfinished build.
    assert killed_before_done >= TRIALS // 2, f"only {killed_before_done} of {TRIALS} kills hit a running build"
    assert killed_mid_write >= 2, f"only {killed_mid_write} kills hit a build while it wrote its temporary file"

    summary = build_index(root)
    assert summary.units == DOCS * 3
    assert list(path.parent.glob(path.name + ".tmp-*")) == []
    with Index(path) as index:
        assert [u["value"] for u in index.units_for_key("设施7号", "开放时间")] == ["新第7版九点到十七点。"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["index.sqlite", "index.sqlite.lock"]
    assert os.path.getsize(path) > 0
