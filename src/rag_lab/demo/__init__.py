"""The bundled demo corpus (every case the seeds discuss) and its question set."""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).parent


def corpus_path() -> Path:
    """The demo corpus folder inside the installed package (copy it before indexing)."""
    return _HERE / "corpus"


def questions_path() -> Path:
    """The shipped, versioned demo question set (JSONL, docs/evaluation.md)."""
    return _HERE / "questions.jsonl"


def prose_corpus_path() -> Path:
    """The prose demo corpus (Markdown and text prose, a table, a conflict, a reprint)."""
    return _HERE / "prose"


def prose_questions_path() -> Path:
    """The prose demo's question set (answerable, negatives, a conflict)."""
    return _HERE / "prose_questions.jsonl"
