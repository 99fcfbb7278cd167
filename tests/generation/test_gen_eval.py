"""Claim-level evaluation per generator on fixed evidence packages (no retrieval in the replayed run)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from endpoint import package_refs, serve

from rag_lab.cli import main
from rag_lab.demo import questions_path
from rag_lab.errors import QuestionSetError
from rag_lab.evaluation import evaluate_file, load_packages
from rag_lab.generation.openai import ChatEndpointGenerator


def padded(body: dict[str, Any]) -> str:
    """A model that states each answered value correctly, then adds a number nobody wrote."""
    prompt = body["messages"][-1]["content"]
    refs = package_refs(body)
    out = []
    for subject, field, value in re.findall(r"^- answered: (.+?) / (.+?) = (.+)$", prompt, flags=re.M):
        ref = next(r for line, r in refs.items() if line in (f"{field}：{value}", value))
        text = f"{value}。" if field == "image" else f"{subject}的{field}是{value}"
        out += [{"text": text, "evidence": [ref]}, {"text": "另有3个窗口。", "evidence": [ref]}]
    return json.dumps(out, ensure_ascii=False)


def test_two_generators_compared_on_the_same_saved_packages(
    indexed_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    packages = tmp_path / "packages.jsonl"
    live = evaluate_file(indexed_demo, questions_path(), save_packages_to=packages)
    saved = load_packages(packages)
    assert len(saved) == live["total"] == 49

    import rag_lab.retrieval.query as query

    def no_ranking(*args: object, **kw: object) -> None:
        raise AssertionError("a packages run must not rank")

    monkeypatch.setattr(query, "scoring", no_ranking)  # the request ranks through rank.ranking (preq11)
    composer = evaluate_file(indexed_demo, questions_path(), packages=saved)
    with serve(padded) as endpoint:
        model = evaluate_file(
            indexed_demo, questions_path(), packages=saved, generator=ChatEndpointGenerator(endpoint.url, "padded")
        )
    # the decision is the same on the same packages: the confusion matrices agree
    assert composer["confusion"] == model["confusion"] == live["confusion"]
    assert composer["claims"] == live["claims"]
    assert composer["claims"]["weighted_coverage"] == 1.0 and composer["claims"]["repairs"] == {}
    deleted = model["claims"]["repairs"]["delete_claim"]
    assert deleted >= 20  # one padded claim per answered slot, each deleted
    assert model["claims"]["supported_claims"]["supported"] == model["claims"]["claims"] - deleted
    assert model["claims"]["weighted_coverage"] < 1.0
    assert model["claims"]["refused_by_verifier"] == 0 and model["unsupported_answers"]["count"] == 0
    assert model["claims"]["generator"] == "openai"


def test_a_packages_file_must_match_the_questions(indexed_demo: Path, tmp_path: Path) -> None:
    packages = tmp_path / "p.jsonl"
    packages.write_text(json.dumps({"id": "q01", "trace": {"question": "别的问题"}}) + "\n", encoding="utf-8")
    with pytest.raises(QuestionSetError, match="another question"):
        evaluate_file(indexed_demo, questions_path(), packages=load_packages(packages))
    packages.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(QuestionSetError, match="p.jsonl:1: not valid JSON"):
        load_packages(packages)


def test_eval_cli_compares_generators(indexed_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    packages = tmp_path / "p.jsonl"
    assert main(["eval", str(indexed_demo), str(questions_path()), "--save-packages", str(packages)]) == 0
    capsys.readouterr()
    with serve(padded) as endpoint:
        code = main(["eval", str(indexed_demo), str(questions_path()), "--packages", str(packages),
                     "--generator", "composer", "--generator", f"openai:{endpoint.url}", "--model", "padded", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    names = [r["claims"]["generator"] for r in out["generators"]]
    assert names == ["composer", f"openai:{endpoint.url}/chat/completions#padded"]
    assert [r["claims"]["weighted_coverage"] < 1.0 for r in out["generators"]] == [False, True]
