"""``query_once``: freshness → retrieve → pack → verify → decide, over a persisted index."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import date
from pathlib import Path

from rag_lab.index import Index, check_freshness, default_index_path
from rag_lab.records import Reason, Result, Status
from rag_lab.retrieval.answer import answer, assemble
from rag_lab.retrieval.pack import DEFAULT_BUDGET, check_budget, pack_context
from rag_lab.retrieval.question import check_question
from rag_lab.retrieval.rank import check_top_k, retrieve
from rag_lab.retrieval.trace import Trace

STALE_LIST_LIMIT = 20


def query_once(
    question: str,
    root: str | os.PathLike[str],
    *,
    index_path: str | os.PathLike[str] | None = None,
    top_k: int = 5,
    budget: int = DEFAULT_BUDGET,
    as_of: date | None = None,
    clock: Callable[[], date] = date.today,
) -> Result:
    """Answer ``question`` from the corpus at ``root`` using its index (SPEC §3)."""
    check_question(question)
    check_top_k(top_k)
    check_budget(budget)
    day = as_of or clock()
    path = Path(index_path) if index_path is not None else default_index_path(root)
    with Index(path) as index:
        config = {
            "top_k": top_k,
            "budget": budget,
            "budget_unit": "codepoints",
            "as_of": day.isoformat(),
            "index": index.config,
        }
        trace = Trace(config)
        changes = check_freshness(root, index)
        trace.add("freshness", stale=changes.stale, **changes.as_dict(), rehashed=changes.rehashed)
        if changes.stale:
            trace.count("stale_index")
            trace.add("decision", status=str(Status.REFUSED), reason=str(Reason.INDEX_STALE))
            paths = changes.paths()
            shown = ", ".join(paths[:STALE_LIST_LIMIT]) + (" …" if len(paths) > STALE_LIST_LIMIT else "")
            return assemble(
                question,
                Status.REFUSED,
                Reason.INDEX_STALE,
                f"The corpus changed since the index was built ({len(paths)} file(s): {shown}); "
                "rebuild it with `rag-lab index ROOT`.",
                trace,
                stale=changes.as_dict(),
            )
        candidates = retrieve(question, index, top_k)
        trace.add(
            "retrieve",
            candidates=[{"score": c["score"], "evidence": c["evidence"]} for c in candidates],
        )
        kept, report = pack_context(candidates, budget)
        trace.add("pack", **report)
        if report["skipped"]:
            trace.count("dropped_by_budget", len(report["skipped"]))
        if not kept:
            trace.count("empty_context")
        return answer(question, kept, root, index, retrieved=candidates, as_of=day, trace=trace)
