"""Checks of the benchmark scripts themselves (collected by the suite: ``testpaths`` in
``pyproject.toml`` holds ``benchmarks``, so a broken benchmark script fails CI)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_peers  # noqa: E402
import format_probe  # noqa: E402
from stage_timer import StageTimer  # noqa: E402


def test_varint_round_trip() -> None:
    values = np.array([0, 1, 127, 128, 300, 16383, 16384, 2**21 - 1, 2**21, 2**28 + 5, 2**32 - 1], np.int64)
    blob, starts = format_probe.varint_encode(values)
    assert starts.tolist()[:4] == [0, 1, 2, 3]  # one byte each below 128
    assert format_probe.varint_decode(blob.tobytes()).tolist() == values.tolist()


def test_stage_timer_charges_nested_time_to_the_inner_stage() -> None:
    t = StageTimer()

    class Box:
        @staticmethod
        def inner() -> None:
            time.sleep(0.02)

        @staticmethod
        def outer() -> None:
            time.sleep(0.01)
            Box.inner()

    t.wrap(Box, "inner", "inner")
    t.wrap(Box, "outer", "outer")
    began = time.perf_counter()
    Box.outer()
    total = time.perf_counter() - began
    t.restore()
    # exclusive: the outer stage is not charged for the inner one (no upper bound: the machine may be busy)
    assert t.seconds["inner"] >= 0.02 and t.seconds["outer"] >= 0.01
    assert t.seconds["outer"] + t.seconds["inner"] <= total
    assert t.calls == {"inner": 1, "outer": 1}
    assert set(t.cpu) == {"inner", "outer"} and all(v < 0.01 for v in t.cpu.values())  # sleeping is no CPU
    assert not hasattr(Box.inner, "__wrapped__")


def test_a_peer_that_is_not_installed_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def fake(name: str, *args: Any) -> Any:
        if name == "tantivy":
            raise ImportError("no tantivy here")
        return real(name, *args)

    monkeypatch.setattr(bench_peers.importlib, "import_module", fake)
    assert "benchmarks/requirements.txt" in (bench_peers.installed("tantivy") or "")
    assert bench_peers.installed("rag_lab") is None


def test_bench_peers_on_a_small_corpus(tmp_path: Path) -> None:
    """End to end at 300 documents: every peer that can run reports recall, a missing one is skipped."""
    cmd = [sys.executable, str(HERE / "bench_peers.py"), "--sizes", "300", "--questions", "30",
           "--peers", "rag_lab,tantivy,fts5", "--out", str(tmp_path), "--json", str(tmp_path / "p.json")]
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)
    report = json.loads((tmp_path / "p.json").read_text())
    rows = {r["peer"]: r for r in report["sizes"][0]["peers"]}
    assert set(rows) == {"rag_lab", "tantivy", "fts5"}
    assert rows["rag_lab"]["queries"]["recall_at_5"] == 1.0  # named keys first: the asked key is found
    assert rows["rag_lab"]["request_no_walk"]["answered"] == 1.0
    for row in rows.values():
        if "skipped" in row:
            continue
        assert "error" not in row, row
        assert row["index_bytes"] > 0 and row["build_s"] > 0
        assert 0.0 < row["queries"]["recall_at_5"] <= 1.0


def test_format_probes_refuse_an_index_of_another_schema(tmp_path: Path) -> None:
    from bench_index import require_schema

    from rag_lab.index.build import build_index
    from rag_lab.index.schema import SCHEMA_VERSION

    (tmp_path / "documents").mkdir()
    (tmp_path / "documents" / "a.md").write_text("主题：甲\n价格：1元\n", encoding="utf-8")
    build_index(tmp_path)
    index = tmp_path / ".rag_lab" / "index.sqlite"
    require_schema(index, (SCHEMA_VERSION,), "probe")  # its own schema passes
    with pytest.raises(SystemExit, match=rf"has index schema {SCHEMA_VERSION}; this probe reads schema 3 or 4"):
        require_schema(index, (3, 4), "probe")
    (tmp_path / "junk.sqlite").write_bytes(b"not a database" * 100)
    with pytest.raises(SystemExit, match="is not a rag_lab index"):
        require_schema(tmp_path / "junk.sqlite", (3, 4), "probe")


def test_request_stream_on_a_small_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """request_stream.py: each pass asks the stream's questions; the cache's count is reported."""
    import request_stream

    from rag_lab.index.build import build_index

    root = tmp_path / "corpus_300"
    gen = [sys.executable, str(HERE / "gen_corpus.py"), str(root), "--docs", "300", "--seed", "0",
           "--manifest", f"{root}.manifest.json"]
    subprocess.run(gen, check=True, capture_output=True, timeout=600)
    build_index(root)
    result = request_stream.child(root, None, 12, 2, 1 << 20)
    assert result["questions"] == 12 and len(result["passes"]) == 2
    assert all(p["p50"] > 0 and p["mean"] > 0 for p in result["passes"])
    assert 0 < result["cached_mib"] <= 1.0  # bounded by the cache asked for
    monkeypatch.setattr(sys, "argv", ["request_stream.py", str(tmp_path / "nowhere")])
    with pytest.raises(SystemExit, match="no manifest at"):
        request_stream.main()


def test_vector_rebuild_on_a_small_corpus(tmp_path: Path) -> None:
    """bench_vector_rebuild.py with the stand-in model: the changed build embeds only the rewritten
    sentences, the unchanged one nothing (what the script's table reports)."""
    cmd = [sys.executable, str(HERE / "bench_vector_rebuild.py"), "--model", "stand-in", "--docs", "12",
           "--changed", "3", "--out", str(tmp_path), "--json", str(tmp_path / "r.json")]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    first, changed, same = (report[k]["vectors"] for k in ("first", "changed", "same"))
    assert report["lexical"]["vectors"] is None and first["units_reused"] == first["field_names_reused"] == 0
    assert len(report["changed_files"]) == 3
    assert changed["units"] - changed["units_reused"] == 3 and changed["field_names_reused"] == changed["field_names"]
    assert same["units_reused"] == same["units"] == changed["units"] > 0
