"""Replay: recompute a decision from a saved trace's fixed candidates against the current files.

The saved trace fixes the question, the configuration and the ranked candidates (whole
units), so ranking is not re-run: packing, ordering, verification, the audit and the
decision are, against the files as they are now. The differences are listed.
"""

from __future__ import annotations

import json
import os
from datetime import date
from pathlib import Path
from typing import Any

from rag_lab.data.access import Principal
from rag_lab.errors import TraceError
from rag_lab.generation import Generator, RecordedGenerator
from rag_lab.index import check_freshness
from rag_lab.index.backend import Store, open_store, resolve_location, store_exists
from rag_lab.records import Result
from rag_lab.retrieval.answer import answer
from rag_lab.retrieval.generate import attach
from rag_lab.retrieval.query import select_context
from rag_lab.retrieval.sources import CorpusSource, EvidenceSource
from rag_lab.retrieval.trace import Trace

REQUIRED_CONFIG = ("top_k", "budget", "budget_unit", "reserve_tokens", "ordering", "dedup", "as_of")
COMPARED = ("status", "reason", "answer", "same_key_sources_checked", "duplicates_merged")
#: Compared only when the saved result has them (results saved before generation existed do not).
COMPARED_IF_SAVED = ("text", "coverage")


def load_trace(path: str | os.PathLike[str]) -> tuple[dict[str, Any], Result | None]:
    """A saved ``ask --json`` result or a bare trace → (trace, result or None)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TraceError(f"cannot read trace {str(path)!r}: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("trace"), dict):
        return data["trace"], data
    if isinstance(data, dict) and "events" in data:
        return data, None
    raise TraceError(f"{path}: neither a result with a trace nor a trace object")


def _event(trace: dict[str, Any], step: str) -> dict[str, Any] | None:
    return next((e for e in trace.get("events", []) if e.get("step") == step), None)


def saved_generator(saved: dict[str, Any]) -> Generator | None:
    """The generator to replay: the composer again (deterministic), or an endpoint's recorded raw
    output (no call is made) from the trace's ``generate`` event."""
    event = _event(saved, "generate")
    if event is None or event.get("generator") == "composer" or "raw" not in event:
        return None
    return RecordedGenerator(event)


def replay(
    saved: dict[str, Any],
    root: str | os.PathLike[str],
    index_path: str | os.PathLike[str] | None = None,
    *,
    generator: Generator | None = None,
) -> Result:
    """Recompute the result of a saved trace (see module docstring). ``generator`` replaces the
    saved run's generator (evaluation on fixed packages); by default the saved one is replayed."""
    question, config = saved.get("question"), saved.get("config")
    retrieved = _event(saved, "retrieve")
    if not isinstance(question, str) or not isinstance(config, dict) or retrieved is None:
        raise TraceError(
            "the trace has no question, config or retrieve step; only ask traces that retrieved can be replayed"
        )
    missing = [k for k in REQUIRED_CONFIG if k not in config]
    if missing:
        raise TraceError(f"the trace's config lacks {missing}; it was not written by this rag_lab")
    try:
        candidates = [{"score": c["score"], "evidence": c["evidence"]} for c in retrieved["candidates"]]
        as_of = date.fromisoformat(config["as_of"])
        who = _event(saved, "principal")
        principal = None if who is None else Principal(who["name"], frozenset(who["groups"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise TraceError(f"the trace is malformed ({type(exc).__name__}: {exc})") from None
    path = resolve_location(root, index_path)
    index: Store | None = open_store(path, principal) if store_exists(path) else None
    if index is not None and check_freshness(root, index).stale:
        # A stale same-key map would miss new copies: audit from the current files instead.
        index.close()
        index = None
    source: EvidenceSource = index if index is not None else CorpusSource(root, principal=principal)
    try:
        trace = Trace(config, question=question)
        if principal is not None:
            trace.add("principal", name=principal.name, groups=sorted(principal.groups))
        trace.add("replay", candidates=len(candidates), index=index is not None)
        kept = select_context(question, candidates, source, config, trace)
        result = answer(
            question,
            kept,
            root,
            source,
            retrieved=candidates,
            as_of=as_of,
            trace=trace,
        )
        return attach(result, kept, source, generator or saved_generator(saved), trace)
    finally:
        if index is not None:
            index.close()


def differences(before: Result | None, saved_trace: dict[str, Any], after: Result) -> list[str]:
    """Human-readable differences between the saved and the recomputed decision."""
    diffs: list[str] = []
    decision = _event(saved_trace, "decision") or {}
    if before is not None:
        for key in COMPARED + tuple(k for k in COMPARED_IF_SAVED if k in before):
            if before.get(key) != after.get(key):
                diffs.append(f"{key}: {before.get(key)!r} → {after.get(key)!r}")
        old_ids = [c["evidence_id"] for c in before.get("citations", [])]
        new_ids = [c["evidence_id"] for c in after.get("citations", [])]
        if old_ids != new_ids:
            diffs.append(f"citations: {old_ids} → {new_ids}")
    else:
        for key in ("status", "reason"):
            if decision.get(key) != after.get(key):
                diffs.append(f"{key}: {decision.get(key)!r} → {after.get(key)!r}")
    for step in ("pack", "order"):
        old, new = _event(saved_trace, step), _event(after["trace"], step)
        if old != new:
            diffs.append(
                f"{step} step differs: {json.dumps(old, ensure_ascii=False)} → {json.dumps(new, ensure_ascii=False)}"
            )
    return diffs
