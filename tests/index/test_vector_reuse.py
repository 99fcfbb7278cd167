"""A rebuild with vectors embeds only what is new (index/vectors.py, "A rebuild embeds only what
is new"): every other vector is taken from the index it replaces, on both stores.

The model here is a stand-in for the ``[neural]`` extra (the one part outside the project,
``tests/model_stand_in.py``): a vector made from the SHA-256 of the text, so each text has its
own, and every text it is given is recorded. The last test runs the shipped model when the extra
is installed."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rag_lab.index.field_vectors
import rag_lab.neural
from model_stand_in import DIM, Recording
from rag_lab.cli import main
from rag_lab.index import BuildSummary, Index, build_index, default_index_path
from rag_lab.neural import available
from store_fixtures import sqlite_only

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

DOCS = {
    "documents/a.md": "# 新馆\n\n## 概况\n\n新馆共有120个座位。新馆位于河西路。\n\n## 开放\n\n新馆每天九点开放。\n",
    "documents/b.md": "# 旧馆\n\n旧馆建于1950年。旧馆藏书三万册。\n",
    "documents/c.md": "# 分馆\n\n分馆在东城。\n",
    "documents/fields.md": "主题：借阅台\n开放时间：九点\n电话：123\n",
}


@pytest.fixture(autouse=True)
def no_process_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Field-name vectors are also kept per process (field_vectors._cache): emptied, so what a
    build takes from the previous index is seen as such."""
    monkeypatch.setattr(rag_lab.index.field_vectors, "_cache", {})


def vectors_of(root: Path) -> tuple[list[int], Any]:
    with Index(default_index_path(root)) as index:
        ids, matrix = index.vectors()
    return ids.tolist(), matrix


def build(root: Path, model: Recording) -> BuildSummary:
    rag_lab.index.field_vectors._cache.clear()
    return build_index(root, vectors=True, embedder=model)  # type: ignore[arg-type]


def test_a_rebuild_embeds_only_the_changed_sentences(make_corpus: Any, tmp_path: Path) -> None:
    root = make_corpus(DOCS)
    first = Recording()
    summary = build(root, first)
    assert summary.vectors == {"units": 6, "units_reused": 0, "field_names": len(first.seen) - 6, "field_names_reused": 0}
    sentences_before = set(first.seen[:6])
    (root / "documents/a.md").write_text(DOCS["documents/a.md"].replace("120个", "150个"), encoding="utf-8")
    (root / "documents/b.md").write_text("# 老馆\n\n旧馆建于1950年。旧馆藏书三万册。\n", encoding="utf-8")  # retitled
    (root / "documents/c.md").unlink()
    (root / "documents/d.md").write_text("# 新馆\n\n## 开放\n\n新馆每天九点开放。\n", encoding="utf-8")  # a reprint
    second = Recording()
    summary = build(root, second)
    assert sorted(second.seen) == ["新馆 概况 新馆共有150个座位。", "老馆 旧馆建于1950年。", "老馆 旧馆藏书三万册。"]
    assert not sentences_before & set(second.seen)
    assert summary.vectors is not None
    assert (summary.vectors["units"], summary.vectors["units_reused"]) == (6, 3)  # d.md's reprint too
    assert summary.vectors["field_names_reused"] == summary.vectors["field_names"] > 0
    # the same vectors as a first build of the same files would store
    fresh = tmp_path / "fresh"
    shutil.copytree(root, fresh, ignore=shutil.ignore_patterns(".rag_lab"))
    build(fresh, Recording())
    (ids, matrix), (fresh_ids, fresh_matrix) = vectors_of(root), vectors_of(fresh)
    assert ids == fresh_ids and matrix.tobytes() == fresh_matrix.tobytes()
    # and nothing new at all: nothing embedded
    third = Recording()
    assert build(root, third).vectors == {**summary.vectors, "units_reused": 6}
    assert third.seen == []


def test_another_model_or_dimension_is_embedded_again(make_corpus: Any) -> None:
    root = make_corpus(DOCS)
    build(root, Recording("model-a"))
    for model in (Recording("model-b"), Recording("model-b", dim=DIM * 2)):
        summary = build(root, model)
        assert summary.vectors is not None and summary.vectors["units_reused"] == 0
        assert summary.vectors["field_names_reused"] == 0
        assert len(model.seen) == summary.vectors["units"] + summary.vectors["field_names"]
        assert vectors_of(root)[1].shape == (6, model.dim)


def test_an_index_built_without_vectors_gives_none(make_corpus: Any) -> None:
    root = make_corpus(DOCS)
    build(root, Recording())
    summary = build_index(root)
    assert summary.vectors is None and "vectors" not in summary.as_dict()
    again = Recording()
    assert build(root, again).vectors == {
        "units": 6, "units_reused": 0, "field_names": len(again.seen) - 6, "field_names_reused": 0
    }  # fmt: skip


@sqlite_only  # damages the SQLite file
def test_a_damaged_previous_index_is_embedded_again(make_corpus: Any) -> None:
    root = make_corpus(DOCS)
    build(root, Recording())
    path = default_index_path(root)
    db = sqlite3.connect(path)
    with db:  # one stored vector cut short: that sentence is embedded again, the others taken
        db.execute("UPDATE vectors SET vec = x'0000' WHERE id = (SELECT min(id) FROM vectors)")
        db.execute("UPDATE field_vectors SET vector = 'text' WHERE name = '电话'")
    db.close()
    model = Recording()
    summary = build(root, model)
    assert summary.vectors is not None
    assert (summary.vectors["units_reused"], len(model.seen)) == (5, 2)
    assert model.seen[1] == "电话"
    path.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)  # not an index any more
    model = Recording()
    summary = build(root, model)
    assert summary.vectors is not None and summary.vectors["units_reused"] == 0
    assert len(model.seen) == summary.vectors["units"] + summary.vectors["field_names"]


@sqlite_only  # the shipped model once is enough
@pytest.mark.skipif(not available(), reason="needs the [neural] extra")
def test_the_cli_says_what_it_took_and_the_shipped_model_agrees(
    make_corpus: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_corpus(DOCS)
    assert main(["index", str(root), "--vectors"]) == 0
    assert "vectors: 6 prose units (0 taken from the previous index)" in capsys.readouterr().out
    (root / "documents/c.md").write_text("# 分馆\n\n分馆在西城。\n", encoding="utf-8")
    assert main(["index", str(root), "--vectors"]) == 0
    out = capsys.readouterr().out
    assert "vectors: 6 prose units (5 taken from the previous index)" in out
    fresh = tmp_path / "fresh"
    shutil.copytree(root, fresh, ignore=shutil.ignore_patterns(".rag_lab"))
    assert main(["index", str(fresh), "--vectors"]) == 0
    (ids, matrix), (fresh_ids, fresh_matrix) = vectors_of(root), vectors_of(fresh)
    assert ids == fresh_ids
    assert np.allclose(matrix.astype(np.float32), fresh_matrix.astype(np.float32), atol=2e-3)


def test_the_cli_shows_the_embedding_as_it_goes(
    make_corpus: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Embedding is most of a build with vectors: ``rag-lab index --vectors`` draws a bar for it as
    for the files (from 1,000 units), up to every prose unit, taken ones included."""
    model = Recording()
    monkeypatch.setattr(rag_lab.neural, "require_embedder", lambda: model)
    sentences = "".join(f"第{i}句话。" for i in range(60))
    root = make_corpus({f"documents/{n:02d}.md": f"# 文{n}\n\n{sentences}\n" for n in range(20)})
    embedded = []
    for _build in range(2):  # the second takes every vector from the first
        assert main(["index", str(root), "--vectors"]) == 0
        err = capsys.readouterr().err
        shown = [part for part in err.split("\r") if part.startswith("embedding [")]
        assert shown and shown[-1] == "embedding [####################] 100% 1200/1200\n"
        done = [int(part.split()[-1].split("/")[0]) for part in shown]
        assert done == sorted(done)
        embedded.append(len(model.seen))
    assert len(set(model.seen[:1200])) == 1200 and embedded[1] == embedded[0]


def test_an_open_index_reads_its_vectors_once(make_corpus: Any) -> None:
    """Every fused question scores all the caller's vectors: an open index (or pinned generation)
    reads them once and hands out the same read-only arrays."""
    root = make_corpus(DOCS)
    build(root, Recording())
    with Index(default_index_path(root)) as index:
        ids, matrix = index.vectors()
        again = index.vectors()
        assert again[0] is ids and again[1] is matrix and len(ids) == 6
        assert not ids.flags.writeable and not matrix.flags.writeable
