"""Notes on a non-answer: warned corpus lines that probably explain it.

A line such as ``地点:一楼`` (ASCII colon) is not a field line, so ``X 地点`` finds no such
field. When a question is not answered, every line the index warned about whose would-be
field name (the text before its colon) is in the question, and whose file holds a subject
the question names — or, for a broken ``主题`` line, whose value is in the question — is
returned as a note: ``documents/a.md:3 `地点:一楼` was not read as a field: <warning>``.
Only files the caller may see are looked at.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rag_lab.index.backend import Store
from rag_lab.retrieval.question import ParsedQuestion

MAX_NOTES = 5
MAX_NAME_CHARS = 64  # as rag_lab.data.documents.warned_name


def _substrings(text: str) -> Iterator[str]:
    """Every substring of ``text`` up to MAX_NAME_CHARS long (made only if the index has warned lines)."""
    return (text[i:j] for i in range(len(text)) for j in range(i + 1, min(i + MAX_NAME_CHARS, len(text)) + 1))


def warned_line_notes(question: str, parsed: ParsedQuestion, index: Store) -> list[dict[str, Any]]:
    """Up to MAX_NOTES notes (path, line, text, warning, note) for a question that was not answered."""
    found = index.warned_lines_naming(_substrings(question), parsed.subjects, MAX_NOTES)
    return [
        {
            "path": path,
            "line": line,
            "text": text,
            "warning": message,
            "note": f"{path}:{line} `{text}` was not read as a field: {message}",
        }
        for path, line, text, message in found[:MAX_NOTES]
    ]
