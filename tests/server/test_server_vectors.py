"""``POST /api/index`` keeps the index's vectors: a server started on an index built with
``--vectors`` rebuilds with them (field matching's neural step reads them), embedding only what
is new and taking the rest from the index it replaces (index/vectors.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from server_support import BASE
from starlette.testclient import TestClient

import rag_lab.index.field_vectors
import rag_lab.neural
from model_stand_in import Recording
from rag_lab.index import Index, build_index, default_index_path
from rag_lab.server import create_app

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

DOCS = {
    "documents/a.md": "# 新馆\n\n新馆共有120个座位。新馆位于河西路。\n",
    "documents/fields.md": "主题：借阅台\n开放时间：九点\n",
}


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Recording:
    """The stand-in as the process's model (the server's build asks ``require_embedder``)."""
    stand_in = Recording()
    monkeypatch.setattr(rag_lab.neural, "available", lambda: True)
    monkeypatch.setattr(rag_lab.neural, "require_embedder", lambda: stand_in)
    monkeypatch.setattr(rag_lab.index.field_vectors, "_cache", {})
    return stand_in


def rebuilt(root: Path) -> dict[str, Any]:
    with TestClient(create_app(root, owner=True, watch=False), base_url=BASE) as client:
        response = client.post("/api/index", json={})
    assert response.status_code == 200
    summary: dict[str, Any] = response.json()
    return summary


def test_a_rebuild_keeps_the_vectors_and_embeds_only_what_is_new(make_corpus: Any, model: Recording) -> None:
    root = make_corpus(DOCS)
    build_index(root, vectors=True, embedder=model)  # type: ignore[arg-type]
    first = list(model.seen)
    (root / "documents/a.md").write_text(DOCS["documents/a.md"].replace("120个", "150个"), encoding="utf-8")
    rag_lab.index.field_vectors._cache.clear()
    summary = rebuilt(root)
    assert summary["vectors"]["units"] == 2 and summary["vectors"]["units_reused"] == 1
    assert summary["vectors"]["field_names_reused"] == summary["vectors"]["field_names"]
    assert model.seen[len(first) :] == ["新馆 新馆共有150个座位。"]
    with Index(default_index_path(root)) as index:
        assert index.config["vectors"]["model"] == model.name and index.vectors()[0].size == 2


def test_an_index_without_vectors_is_rebuilt_without(make_corpus: Any, model: Recording) -> None:
    root = make_corpus(DOCS)
    build_index(root)
    assert "vectors" not in rebuilt(root) and model.seen == []
    with Index(default_index_path(root)) as index:
        assert "vectors" not in index.config
