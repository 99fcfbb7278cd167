"""Sentence units in the evidence package: heading path, neighbours within their own budget."""

from __future__ import annotations

from pathlib import Path

from rag_lab.index import Index, build_index
from rag_lab.retrieval import query_once
from rag_lab.retrieval.expand import expand
from rag_lab.retrieval.package import render_package

DOC = "# 新馆\n\n## 座位\n第一句说明。新馆共有120个座位！第三句补充。\n\n另一段。\n"


def index_of(tmp_path: Path) -> Path:
    root = tmp_path / "c"
    (root / "documents").mkdir(parents=True)
    (root / "documents" / "lib.md").write_text(DOC, encoding="utf-8")
    build_index(root)
    return root


def test_a_sentence_is_rendered_with_its_heading_path_and_paragraph_neighbours(tmp_path: Path) -> None:
    root = index_of(tmp_path)
    with Index(root / ".rag_lab" / "index.sqlite") as index:
        units = index.units_of_source("documents/lib.md")
        seats = next(u for u in units if u["text"] == "新馆共有120个座位！")
        expansion = expand([seats], index)
        text, ids = render_package([seats], expansion)
    assert ids == {"E1": seats["evidence_id"]}
    first, third = DOC.index("第一句说明。"), DOC.index("第三句补充。")
    assert "位置：新馆 › 座位\n" in text
    assert (
        f"  (context [{first},{first + 6})) 第一句说明。\n新馆共有120个座位！\n  (context [{third},{third + 6})) 第三句补充。"
        in text
    )
    assert "另一段" not in text  # another paragraph is not a neighbour


def test_a_tight_expansion_budget_keeps_the_nearest_and_reports_what_it_dropped(tmp_path: Path) -> None:
    root = index_of(tmp_path)
    with Index(root / ".rag_lab" / "index.sqlite") as index:
        units = index.units_of_source("documents/lib.md")
        seats = next(u for u in units if u["text"] == "新馆共有120个座位！")
        expansion = expand([seats], index, budget=6)
    entry = expansion["by_unit"][seats["evidence_id"]]
    assert [u["text"] for u in entry["added"]] == ["第一句说明。"]  # before first, nearest first
    assert [d["reason"] for d in entry["dropped"]] == ["over_expansion_budget"]
    assert expansion["used"] == 6


def test_query_once_records_the_expansion_in_the_package_step(tmp_path: Path) -> None:
    root = index_of(tmp_path)
    result = query_once("新馆有多少个座位？", root, top_k=1)
    package = next(e for e in result["trace"]["events"] if e["step"] == "package")
    assert package["expansion"]["expanded"][0]["evidence_id"] == result["citations"][0]["evidence_id"]
    assert "位置：新馆 › 座位" in package["text"]
