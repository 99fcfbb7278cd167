"""benchmarks/gen_prose_corpus.py: the same arguments give the same bytes, and its questions are
answered with the sentences it says answer them (or refused, never answered wrongly)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_the_prose_corpus_is_deterministic_and_its_questions_have_their_answers(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parent / "gen_prose_corpus.py"
    for name in ("a", "b"):
        subprocess.run(
            [sys.executable, str(script), str(tmp_path / name), "--docs", "30", "--questions", str(tmp_path / f"{name}.json")],
            check=True, capture_output=True,
        )  # fmt: skip
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.md"))
    assert len(files) == 30
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)
    questions = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert questions == json.loads((tmp_path / "b.json").read_text(encoding="utf-8")) and len(questions) >= 8
    from datetime import date

    from rag_lab.index import build_index
    from rag_lab.retrieval import query_once

    build_index(tmp_path / "a")
    results = [query_once(q["question"], tmp_path / "a", as_of=date(2026, 12, 1)) for q in questions]
    answered = [(r, q) for r, q in zip(results, questions, strict=True) if r["status"] == "answered"]
    assert len(answered) >= len(questions) // 2
    assert all(r["answer"] == q["answer"] for r, q in answered)  # never a wrong sentence
    for q in questions:
        assert q["answer"] in (tmp_path / "a" / q["source"]).read_text(encoding="utf-8")
