"""What every integration hands out: re-verified evidence, one opened citation, the index
status and a refusal in plain words. No third-party imports: the MCP server and the
LlamaIndex / LangChain retrievers are thin shells over these functions.

* :func:`verified_evidence` — a result's citations, each re-verified now against the
  original bytes (``verify_unit``) and carrying its quoted span;
* :func:`open_citation` — one evidence id: the quoted span, numbered lines around it,
  and the checks of a re-verification done for this call;
* :func:`index_status` — whether the index is there, its unit count and staleness, as
  the given principal sees them (hidden files are neither counted nor named);
* :func:`explain` — a non-answer as a sentence a person (or a model) can pass on.

A unit the principal may not see is answered exactly like an id that does not exist.
"""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from rag_lab.data.access import Principal
from rag_lab.data.corpus import check_root
from rag_lab.data.documents import iter_lines
from rag_lab.errors import ConfigError, RagLabError, SourceFileError
from rag_lab.index import check_freshness
from rag_lab.index.backend import Store, open_store, resolve_location, store_exists
from rag_lab.records import Modality, Reason, Result, Status, Unit
from rag_lab.retrieval.pack import DEFAULT_BUDGET
from rag_lab.retrieval.query import query_once
from rag_lab.retrieval.verify import SourceReader, citation, verify_unit

#: Lines shown on each side of the cited line by :func:`open_citation` (default).
CONTEXT_LINES = 3
#: The most context lines a caller may ask for on each side.
MAX_CONTEXT_LINES = 50

#: A reason in plain words (the library's message follows it with the details).
PLAIN_REASONS: dict[str, str] = {
    "index_stale": "The files changed after the index was built, so nothing is answered until it is rebuilt.",
    "source_verification_failed": "A source no longer matches the bytes it was indexed from, so it cannot be cited.",
    "conflicting_evidence": "The sources disagree and none is preferred, so there is no answer; every side is cited.",
    "no_supporting_evidence": "No source in the corpus supports an answer. That is not evidence that the answer is no.",
    "evidence_not_retrieved": "The corpus has this information but the search did not bring it up; "
    "ask with more specific words or a larger top_k.",
    "excluded_by_budget": "The evidence was found but did not fit in the context budget; ask with a larger budget.",
    "unsupported_attribute": "Images are measured only for colour, size and shape; the question asks for more.",
    "reserved_field": "That field is kept as data and is never given as an answer.",
    "subject_without_field": "The question names a subject but not which of its fields is wanted.",
    "field_without_subject": "The question names a field but no subject the corpus knows.",
    "ambiguous_subject": "The question could mean more than one subject.",
    "ambiguous_field": "The question could mean more than one field.",
    "partial_support": "Only part of the question is supported by the sources.",
}


class RefusedError(RagLabError):
    """Raised by a retriever made with ``on_refusal="raise"`` when rag_lab did not answer.

    ``result`` is the full result (status, reason, message, citations, trace);
    ``explanation`` is :func:`explain` of it. Refusals are values everywhere else: this
    exception exists only for pipelines whose callers asked for one.
    """

    def __init__(self, result: Result) -> None:
        self.result = result
        self.status = str(result["status"])
        self.reason = None if result.get("reason") is None else str(result["reason"])
        self.explanation = explain(result)
        super().__init__(f"rag_lab did not answer {result['question']!r} ({self.status}): {self.explanation}")


def explain(result: Result) -> str:
    """A non-answer in plain words, with what would make it answerable ("" when answered)."""
    if result["status"] == Status.ANSWERED:
        return ""
    reason = result.get("reason")
    parts = [PLAIN_REASONS.get(str(reason), f"rag_lab did not answer ({reason}).")] if reason else []
    parts.append(str(result.get("message") or ""))
    clarification = result.get("clarification") or {}
    if clarification.get("fields"):
        parts.append(
            f"Ask again naming one of the fields of {clarification['subject']}: "
            + "、".join(clarification["fields"])
            + "."
        )
    if clarification.get("subjects"):
        more = " …" if clarification.get("more") else ""
        parts.append(
            f"Ask again naming one of the subjects with {clarification['field']}: "
            + "、".join(clarification["subjects"])
            + more
            + "."
        )
    return " ".join(p for p in parts if p)


def _unit(index: Store, evidence_id: str) -> Unit:
    unit = index.unit_by_evidence_id(evidence_id) if isinstance(evidence_id, str) else None
    if unit is None:
        raise SourceFileError(
            str(evidence_id),
            f"no evidence unit {evidence_id!r} in the current index; ask again for fresh citations "
            "(ids change when a file's bytes change)",
        )
    return unit


def _record(unit: Unit, reader: SourceReader, context_lines: int | None) -> dict[str, Any]:
    """One unit re-verified now, with its quote (and numbered context lines when asked)."""
    outcome = verify_unit(unit, reader)
    data, _ = reader.read(unit["source"]) if outcome.checks else (None, None)
    image = unit.get("modality") == Modality.IMAGE
    record: dict[str, Any] = {
        "evidence_id": unit["evidence_id"],
        "source": unit["source"],
        "sha256": unit["sha256"],
        "span": unit.get("span"),
        "line": unit.get("line"),
        "modality": str(unit.get("modality") or Modality.TEXT),
        "support_type": citation(unit)["support_type"],  # verbatim_sentence/_cell for prose units
        "subject": unit.get("subject"),
        "field": unit.get("field"),
        "value": unit.get("value"),
        "verified": outcome.ok,
        "verification": outcome.as_dict(),
        "checked_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
    }
    if image:
        record["quote"] = unit.get("text") if outcome.ok else None
        for key in ("bbox", "width", "height", "color", "size", "shape"):
            record[key] = unit.get(key)
        return record
    text = data.decode("utf-8", errors="replace") if data is not None and outcome.ok else None
    start, end = unit["span"]
    record["quote"] = None if text is None else text[start:end].strip()
    if context_lines is not None:
        record["context"] = (
            None if text is None else _context(text, int(unit.get("line") or 1), context_lines)
        )
    return record


def _context(text: str, number: int, around: int) -> dict[str, Any]:
    lines = iter_lines(text)
    if len(lines) > 1 and lines[-1][2] == "":
        lines.pop()  # the empty piece after a final newline is not a line
    first, last = max(1, number - around), min(len(lines), number + around)
    return {
        "first_line": first,
        "last_line": last,
        "total_lines": len(lines),
        "lines": [
            {"number": n, "text": line.removesuffix("\r"), "cited": n == number}
            for n, _, line in lines[first - 1 : last]
        ],
    }


def _index_path(root: Path, index_path: str | os.PathLike[str] | None) -> Path | str:
    return resolve_location(root, index_path)


def verified_evidence(
    result: Result,
    root: str | os.PathLike[str],
    *,
    index_path: str | os.PathLike[str] | None = None,
    principal: Principal | None = None,
) -> list[dict[str, Any]]:
    """The result's citations, in order, each re-verified now and carrying ``quote``.

    Every record also carries the request's ``status`` and ``reason``, so evidence of a
    conflict (cited on every side, not answered) cannot pass for an answer's.
    """
    base = check_root(root)
    reader = SourceReader(base)
    records = []
    with open_store(_index_path(base, index_path), principal) as index:
        for cite in result.get("citations") or []:
            record = _record(_unit(index, cite["evidence_id"]), reader, None)
            record.update(status=str(result["status"]), reason=result.get("reason"))
            records.append(record)
    return records


def open_citation(
    root: str | os.PathLike[str],
    evidence_id: str,
    *,
    index_path: str | os.PathLike[str] | None = None,
    principal: Principal | None = None,
    context_lines: int = CONTEXT_LINES,
) -> dict[str, Any]:
    """One citation opened: its quote, ``context`` lines around it, re-verified now.

    Raises :class:`SourceFileError` for an id that is not in the index (or not visible
    to ``principal``: the same message), :class:`rag_lab.errors.IndexError_` without
    an index. A failed re-verification is a value: ``verified: False`` with the failed
    check, and no quote or context from bytes that no longer match.
    """
    if not isinstance(context_lines, int) or not 0 <= context_lines <= MAX_CONTEXT_LINES:
        raise ConfigError(
            f"context_lines must be a whole number 0..{MAX_CONTEXT_LINES}, got {context_lines!r}"
        )
    base = check_root(root)
    with open_store(_index_path(base, index_path), principal) as index:
        unit = _unit(index, evidence_id)
    return _record(
        unit, SourceReader(base), None if unit.get("modality") == Modality.IMAGE else context_lines
    )


def index_status(
    root: str | os.PathLike[str],
    *,
    index_path: str | os.PathLike[str] | None = None,
    principal: Principal | None = None,
) -> dict[str, Any]:
    """Is the index there and current? Counts and changed paths as ``principal`` sees them."""
    base = check_root(root)
    path = _index_path(base, index_path)
    out: dict[str, Any] = {"corpus": base.name, "index": "missing"}
    if not store_exists(path):
        out["message"] = "no index yet; build it with `rag-lab index ROOT`"
        return out
    try:
        with open_store(path, principal) as index:
            changes = check_freshness(base, index)
            problems = index.file_problems()
            out.update(
                index="ready",
                units=index.unit_count,
                stale=changes.stale,
                changed=changes.as_dict(),
                file_errors=sum(1 for p in problems if p["severity"] == "error"),
                file_warnings=sum(1 for p in problems if p["severity"] == "warning"),
            )
    except RagLabError as exc:
        out.update(index="unreadable", message=str(exc))
        return out
    if out["stale"]:
        out["message"] = "the corpus changed since the index was built; rebuild it with `rag-lab index ROOT`"
    return out


#: What a retriever does when rag_lab does not answer: return a refusal note (and any
#: cited sides), or raise :class:`RefusedError`.
ON_REFUSAL = ("note", "raise")


def retrieve_verified(
    question: str,
    root: str | os.PathLike[str],
    *,
    index_path: str | os.PathLike[str] | None = None,
    top_k: int = 5,
    budget: int = DEFAULT_BUDGET,
    as_of: date | None = None,
    principal: Principal | None = None,
    on_refusal: str = "note",
) -> list[tuple[str, str, dict[str, Any]]]:
    """``(id, text, metadata)`` for a retriever to wrap in its framework's node type.

    Answered: one item per citation, ``text`` the quoted original line, ``metadata`` the
    re-verified record (source, line, span, sha256, evidence_id, support_type, …) plus
    ``question``, ``status``, ``reason`` and ``answer``. Not answered: with
    ``on_refusal="note"`` a first item whose ``text`` is :func:`explain` of the result and
    whose metadata has ``is_refusal: True`` (then the cited sides of a conflict, or the
    answered slots of a partial answer); with ``"raise"`` :class:`RefusedError`.
    Evidence whose file changed since answering (``verified: False``) is never returned:
    the request is refused as ``source_verification_failed`` instead.
    """
    if on_refusal not in ON_REFUSAL:
        raise ConfigError(f"on_refusal must be one of {', '.join(ON_REFUSAL)}, got {on_refusal!r}")
    result = query_once(
        question, root, index_path=index_path, top_k=top_k, budget=budget, as_of=as_of, principal=principal
    )
    result, records = quoted(result, root, index_path=index_path, principal=principal)
    if result["status"] != Status.ANSWERED and on_refusal == "raise":
        raise RefusedError(result)
    common = {
        "question": result["question"],
        "status": str(result["status"]),
        "reason": None if result.get("reason") is None else str(result["reason"]),
        "answer": result.get("answer"),
    }
    items: list[tuple[str, str, dict[str, Any]]] = []
    if result["status"] != Status.ANSWERED:
        note = {
            **common,
            "is_refusal": True,
            "message": result.get("message"),
            "explanation": explain(result),
        }
        if result.get("clarification"):
            note["clarification"] = result["clarification"]
        key = f"{result['question']}\0{common['status']}\0{common['reason']}".encode()
        items.append((f"rag_lab-refusal-{hashlib.sha256(key).hexdigest()[:16]}", explain(result), note))
    for record in records:
        items.append((record["evidence_id"], str(record["quote"]), {**record, **common, "is_refusal": False}))
    return items


def quoted(
    result: Result,
    root: str | os.PathLike[str],
    *,
    index_path: str | os.PathLike[str] | None = None,
    principal: Principal | None = None,
) -> tuple[Result, list[dict[str, Any]]]:
    """``(result, verified_evidence(result))``; if a cited file changed since answering,
    the result becomes a ``source_verification_failed`` refusal with no evidence."""
    records = verified_evidence(result, root, index_path=index_path, principal=principal)
    failed = next((r for r in records if not r["verified"]), None)
    if failed is None:
        return result, records
    return _changed_meanwhile(result, failed), []


def _changed_meanwhile(result: Result, failed: dict[str, Any]) -> Result:
    """The result refused because a cited file changed between answering and quoting."""
    check = failed["verification"]
    return {
        **result,
        "status": str(Status.REFUSED),
        "reason": str(Reason.SOURCE_VERIFICATION_FAILED),
        "answer": None,
        "citations": [],
        "message": f"{failed['source']} changed while it was being cited ({check.get('failed_check')} check: "
        f"{check.get('detail')}); rebuild the index with `rag-lab index ROOT` and ask again.",
        "verification_failure": check,
    }
