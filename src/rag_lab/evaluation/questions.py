"""Question-set files: JSONL, one question object per line (docs/evaluation.md)."""

from __future__ import annotations

import json
import os
from datetime import date
from pathlib import Path
from typing import Any

from rag_lab.errors import QuestionSetError
from rag_lab.records import Reason, Status

REQUIRED = ("id", "question", "expect_status", "category")
OPTIONAL = ("expect_answer", "expect_reason", "top_k", "budget", "as_of", "note")


def _fail(path: Path, line: int, message: str) -> QuestionSetError:
    return QuestionSetError(f"{path}:{line}: {message}")


def _check(path: Path, line: int, item: Any, seen: set[str]) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise _fail(path, line, "each line must be one JSON object")
    for key in REQUIRED:
        if not isinstance(item.get(key), str) or not item[key]:
            raise _fail(path, line, f"missing or empty string field {key!r}")
    unknown = sorted(set(item) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise _fail(path, line, f"unknown field(s) {unknown}; allowed: {sorted(REQUIRED + OPTIONAL)}")
    if item["id"] in seen:
        raise _fail(path, line, f"duplicate id {item['id']!r}")
    seen.add(item["id"])
    if item["expect_status"] not in {s.value for s in Status}:
        raise _fail(
            path, line, f"expect_status {item['expect_status']!r} is not one of {[s.value for s in Status]}"
        )
    reason = item.get("expect_reason")
    if reason is not None and reason not in {r.value for r in Reason}:
        raise _fail(path, line, f"expect_reason {reason!r} is not one of {[r.value for r in Reason]}")
    expect_answer = item.get("expect_answer")
    if item["expect_status"] in (Status.ANSWERED, Status.PARTIAL):
        ok = isinstance(expect_answer, str) or (
            isinstance(expect_answer, list) and all(a is None or isinstance(a, str) for a in expect_answer)
        )
        if not ok:
            raise _fail(path, line, "expect_answer (a string, or a list with one entry per slot) is required")
    elif expect_answer is not None:
        raise _fail(path, line, f"expect_answer must be absent when expect_status is {item['expect_status']}")
    for key in ("top_k", "budget"):
        if key in item and (not isinstance(item[key], int) or isinstance(item[key], bool)):
            raise _fail(path, line, f"{key} must be a whole number")
    if "as_of" in item:
        try:
            date.fromisoformat(item["as_of"])
        except (TypeError, ValueError):
            raise _fail(path, line, f"as_of {item['as_of']!r} is not a YYYY-MM-DD date") from None
    return item


def load_questions(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read and check a question file; any malformed line raises with file and line number."""
    file = Path(path)
    try:
        raw = file.read_bytes().decode("utf-8-sig")  # a leading BOM (Notepad) is not part of line 1
    except OSError as exc:
        raise QuestionSetError(f"cannot read question file {str(file)!r}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise QuestionSetError(f"{file}: invalid UTF-8 at byte offset {exc.start}") from None
    questions: list[dict[str, Any]] = []
    seen: set[str] = set()
    lines = raw.split("\n")
    while lines and not lines[-1].strip():  # blank lines (and newlines) at the end are fine
        lines.pop()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            raise _fail(file, number, "blank line; every line must hold one question object")
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _fail(file, number, f"not valid JSON ({exc.msg} at column {exc.colno})") from None
        questions.append(_check(file, number, item, seen))
    if not questions:
        raise QuestionSetError(f"{file}: no questions")
    return questions
