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
