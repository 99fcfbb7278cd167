"""The request paths of the server, composed from the library.

:func:`ask` is ``query_once`` (SPEC §3, §6) with two differences: the index is the
server's open version instead of a fresh ``Index(path)``, and freshness comes from
:meth:`ServerState.changes` (watched paths only) instead of a corpus walk. It calls the
same steps (``request_config`` and ``run_request``), so the trace events and result shape are the same, so a stale refusal from the server and
from ``query_once`` look alike. :func:`evidence_view` and :func:`image_bytes`
re-verify one unit at request time.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

from rag_lab.data.access import Principal
from rag_lab.data.corpus import sha256_hex
from rag_lab.data.documents import iter_lines
from rag_lab.records import Modality, Result, Unit
from rag_lab.retrieval.pack import DEFAULT_BUDGET
from rag_lab.retrieval.query import request_config, run_request
from rag_lab.retrieval.question import check_question
from rag_lab.retrieval.verify import SourceReader, Verification, verify_unit
from rag_lab.server.problems import ApiError, ErrorType
from rag_lab.server.state import ServerState

#: Lines shown on each side of a cited line by ``GET /api/evidence``.
CONTEXT_LINES = 20


def ask(
    state: ServerState,
    question: str,
    *,
    top_k: int = 5,
    budget: int = DEFAULT_BUDGET,
    as_of: date | None = None,
    clock: Callable[[], date] = date.today,
    principal: Principal | None = None,
) -> Result:
    """Answer ``question`` like ``query_once``, over the server's index and watcher."""
    check_question(question)
    day = as_of or clock()
    config = request_config(top_k, budget, "codepoints", None, "relevance", True, day)
    with state.reading() as version, version.using(principal) as index:
        return run_request(
            question,
            state.root,
            index,
            config,
            principal,
            lambda: state.changes(version, index if principal is not None else None),
        )


def _shown_id(evidence_id: str) -> str:
    """The id as a message quotes it: a long one (a hostile URL) is cut, not echoed whole."""
    return repr(evidence_id if len(evidence_id) <= 80 else evidence_id[:80] + "…")


def _unit(state: ServerState, evidence_id: str, principal: Principal | None) -> Unit:
    """The unit, if it exists *and* the principal may see it; otherwise the same 404."""
    with state.reading() as version, version.using(principal) as index:
        unit = index.unit_by_evidence_id(evidence_id)
    if unit is None:
        raise ApiError(
            ErrorType.UNKNOWN_EVIDENCE,
            f"no evidence unit {_shown_id(evidence_id)} in the current index; "
            "ask again for fresh citations (ids change when a file's bytes change)",
        )
    return unit


def _verify(state: ServerState, unit: Unit) -> tuple[Verification, bytes | None]:
    reader = SourceReader(state.root)
    outcome = verify_unit(unit, reader)
    data, _ = reader.read(unit["source"]) if outcome.checks else (None, None)
    return outcome, data


def excerpt(text: str, unit: Unit, highlight: bool) -> dict[str, Any]:
    """Numbered lines around the unit's line; ``highlight`` gives the span within its line."""
    lines = iter_lines(text)
    number = unit.get("line") or 1
    first = max(1, number - CONTEXT_LINES)
    last = min(len(lines), number + CONTEXT_LINES)
    shown = [{"number": n, "text": line.removesuffix("\r")} for n, _, line in lines[first - 1 : last]]
    mark = None
    if highlight and unit.get("span") is not None and 1 <= number <= len(lines):
        _, line_start, line = lines[number - 1]
        width = len(line.removesuffix("\r"))
        start, end = unit["span"]
        mark = {
            "line": number,
            "start": max(0, start - line_start),
            "end": min(width, end - line_start),
        }
    return {
        "first_line": first,
        "last_line": last,
        "total_lines": len(lines),
        "lines": shown,
        "highlight": mark,
    }


def evidence_view(state: ServerState, evidence_id: str, principal: Principal | None = None) -> dict[str, Any]:
    """The original around one unit, re-verified now (``GET /api/evidence/{id}``)."""
    unit = _unit(state, evidence_id, principal)
    outcome, data = _verify(state, unit)
    image = unit.get("modality") == Modality.IMAGE
    view: dict[str, Any] = {
        "evidence_id": unit["evidence_id"],
        "source": unit["source"],
        "modality": unit.get("modality"),
        "line": unit.get("line"),
        "span": unit.get("span"),
        "text": unit.get("text"),
        "subject": unit.get("subject"),
        "field": unit.get("field"),
        "value": unit.get("value"),
        "sha256": unit["sha256"],
        "current_sha256": None if data is None else sha256_hex(data),
        "verified": outcome.ok,
        "verification": outcome.as_dict(),
        "checked_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
    }
    if image:
        for key in ("bbox", "width", "height", "color", "size", "shape"):
            view[key] = unit.get(key)
        view["image_url"] = f"/api/images/{unit['evidence_id']}"
        view["excerpt"] = None
    else:
        text = None if data is None else data.decode("utf-8", errors="replace")
        view["excerpt"] = None if text is None else excerpt(text, unit, outcome.ok)
    return view


def image_bytes(
    state: ServerState, evidence_id: str, principal: Principal | None = None
) -> tuple[bytes, str]:
    """The PNG bytes of an image unit, exactly the bytes that were just re-verified."""
    unit = _unit(state, evidence_id, principal)
    if unit.get("modality") != Modality.IMAGE:
        raise ApiError(
            ErrorType.NOT_AN_IMAGE,
            f"evidence {evidence_id!r} is a text unit ({unit['source']}); open it with /api/evidence/{evidence_id}",
        )
    outcome, data = _verify(state, unit)
    if not outcome.ok or data is None:
        raise ApiError(
            ErrorType.SOURCE_VERIFICATION_FAILED,
            f"evidence {evidence_id} ({unit['source']}) failed the {outcome.failed_check} check: "
            f"{outcome.detail}; rebuild the index with `rag-lab index ROOT` if the corpus changed",
        )
    return data, unit["sha256"]
