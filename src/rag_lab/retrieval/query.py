"""``query_once``: freshness → retrieve → select context → verify → decide, over a persisted index."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from rag_lab.data.access import Principal
from rag_lab.errors import ConfigError
from rag_lab.generation import Generator
from rag_lab.index import Changes, check_freshness
from rag_lab.index.backend import Store, open_store, resolve_location
from rag_lab.index.kept import kept_index
from rag_lab.limits import check_budget, check_top_k
from rag_lab.neural import Embedder, require_embedder
from rag_lab.records import Candidate, Reason, Result, Status
from rag_lab.retrieval.answer import answer, assemble
from rag_lab.retrieval.generate import attach
from rag_lab.retrieval.notes import warned_line_notes
from rag_lab.retrieval.order import order_context
from rag_lab.retrieval.pack import DEFAULT_BUDGET, pack_context
from rag_lab.retrieval.package import package_of
from rag_lab.retrieval.question import ParsedQuestion, check_question, parse_text_question
from rag_lab.retrieval.rank import Ranking
from rag_lab.retrieval.rank import ranking as scoring
from rag_lab.retrieval.sources import EvidenceSource
from rag_lab.retrieval.trace import Trace

STALE_LIST_LIMIT = 20
RETRIEVALS = ("lexical", "fused")


def select_context(
    question: str,
    candidates: list[Candidate],
    source: EvidenceSource,
    config: dict[str, Any],
    trace: Trace,
    parsed: ParsedQuestion | None = None,
) -> list[Candidate]:
    """Pack (budget, dedup) and order the candidates; records both steps in the trace.

    ``parsed``: the question already parsed against ``source`` (for ``by_slot`` ordering).
    """
    counter = None
    if config["budget_unit"] == "tokens":
        from rag_lab.retrieval.tokens import load_counter

        counter = load_counter()
    kept, report = pack_context(
        candidates,
        config["budget"],
        unit=config["budget_unit"],
        dedup=config["dedup"],
        count_tokens=counter,
        reserve_tokens=config["reserve_tokens"],
    )
    trace.add("pack", **report)
    over = [s for s in report["skipped"] if s["reason"] == "over_budget"]
    if over:
        trace.count("dropped_by_budget", len(over))
    if not kept:
        trace.count("empty_context")
    slots: list[tuple[str, str]] = []
    if config["ordering"] == "by_slot":
        slots = (parsed or parse_text_question(question, source)).slots
    ordered = order_context(kept, config["ordering"], slots)
    trace.add("order", strategy=config["ordering"], order=[c["evidence"]["evidence_id"] for c in ordered])
    # a token budget counts the package exactly as packed, so sentences are expanded only under
    # a code-point budget (retrieval/expand.py has its own budget)
    trace.add("package", **package_of(ordered, source if config["budget_unit"] == "codepoints" else None))
    return ordered


def request_config(
    top_k: int,
    budget: int,
    budget_unit: str,
    reserve_tokens: int | None,
    ordering: str,
    dedup: bool,
    day: date,
) -> dict[str, Any]:
    if reserve_tokens is None:
        from rag_lab.retrieval.tokens import DEFAULT_RESERVE_TOKENS

        reserve_tokens = DEFAULT_RESERVE_TOKENS if budget_unit == "tokens" else 0
    return {
        "top_k": check_top_k(top_k),
        "budget": check_budget(budget),
        "budget_unit": budget_unit,
        "reserve_tokens": reserve_tokens,
        "ordering": ordering,
        "dedup": dedup,
        "as_of": day.isoformat(),
    }


def stale_result(question: str, changes_paths: list[str], changes: dict[str, Any], trace: Trace) -> Result:
    trace.count("stale_index")
    trace.add("decision", status=str(Status.REFUSED), reason=str(Reason.INDEX_STALE))
    shown = ", ".join(changes_paths[:STALE_LIST_LIMIT]) + (
        " …" if len(changes_paths) > STALE_LIST_LIMIT else ""
    )
    return assemble(
        question,
        Status.REFUSED,
        Reason.INDEX_STALE,
        f"The corpus changed since the index was built ({len(changes_paths)} file(s): {shown}); "
        "rebuild it with `rag-lab index ROOT`.",
        trace,
        stale=changes,
    )


def query_once(
    question: str,
    root: str | os.PathLike[str],
    *,
    index_path: str | os.PathLike[str] | None = None,
    top_k: int = 5,
    budget: int = DEFAULT_BUDGET,
    budget_unit: str = "codepoints",
    reserve_tokens: int | None = None,
    ordering: str = "relevance",
    dedup: bool = True,
    as_of: date | None = None,
    clock: Callable[[], date] = date.today,
    principal: Principal | None = None,
    retrieval: str = "lexical",
    embedder: Embedder | None = None,
    generator: Generator | None = None,
) -> Result:
    """Answer ``question`` from the corpus at ``root`` using its index (SPEC §3, §6).

    ``retrieval``: ``lexical`` (BM25, the default) or ``fused`` (lexical + dense by reciprocal
    rank, retrieval/fuse.py; needs an index built with vectors and the ``[neural]`` extra);
    ``embedder``: the query model for ``fused`` (default: the shared one, ``rag_lab.neural``).
    ``generator`` writes the answer's ``text`` and ``claims`` after the decision (default: the
    deterministic composer); the verifier checks them (docs/generation.md).
    """
    check_question(question)
    day = as_of or clock()
    config = request_config(top_k, budget, budget_unit, reserve_tokens, ordering, dedup, day)
    if retrieval != "lexical":  # only then in the config, so lexical traces keep their hash
        if retrieval not in RETRIEVALS:
            raise ConfigError(f"retrieval {retrieval!r} is not one of {RETRIEVALS}")
        config["retrieval"] = retrieval
    location = resolve_location(root, index_path)
    # an index file stays open across calls while it is the same file (index/kept.py)
    opened = kept_index(location, principal) if isinstance(location, Path) else open_store(location, principal)
    with opened as index:
        return run_request(
            question,
            root,
            index,
            config,
            principal,
            lambda: check_freshness(root, index),
            embedder=embedder,
            generator=generator,
        )


def run_request(
    question: str,
    root: str | os.PathLike[str],
    index: Store,
    config: dict[str, Any],
    principal: Principal | None,
    freshness: Callable[[], Changes],
    *,
    embedder: Embedder | None = None,
    generator: Generator | None = None,
) -> Result:
    """The request steps over an open index; ``freshness`` says what changed on disk.

    ``query_once`` passes a corpus walk; the server passes its watcher's view.
    """
    trace = Trace({**config, "index": index.config}, question=question)
    if principal is not None:
        trace.add("principal", name=principal.name, groups=sorted(principal.groups))
    changes = freshness()
    trace.add("freshness", stale=changes.stale, **changes.as_dict(), rehashed=changes.rehashed)
    if changes.stale:
        return attach(stale_result(question, changes.paths(), changes.as_dict(), trace), [], index, generator, trace)
    parsed = parse_text_question(question, index)  # once: ranking, ordering and deciding share it
    paraphrases = None
    lexical: Ranking | None = None  # the lexical scoring, for the prose audit to take its top 50 from
    if config.get("retrieval") == "fused":
        from rag_lab.answering.paraphrase import paraphrases_for
        from rag_lab.retrieval.fuse import fused_rank

        candidates, ranking = fused_rank(question, index, config["top_k"], parsed=parsed, embedder=embedder)
        paraphrases = paraphrases_for(embedder or require_embedder())  # the model also checks paraphrases
    else:
        check_top_k(config["top_k"])
        lexical = scoring(question, index, parsed=parsed)
        candidates, ranking = lexical.top(config["top_k"]), lexical.info  # = rank(question, index, top_k, parsed=…)
    trace.add(
        "retrieve", **ranking, candidates=[{"score": c["score"], "evidence": c["evidence"]} for c in candidates]
    )
    kept = select_context(question, candidates, index, config, trace, parsed)
    day = date.fromisoformat(config["as_of"])
    result = answer(
        question, kept, root, index, retrieved=candidates, as_of=day, trace=trace, parsed=parsed, paraphrases=paraphrases,
        ranking=lexical,
    )
    if result["status"] != Status.ANSWERED:
        notes = warned_line_notes(question, parsed, index)
        if notes:  # a warned line probably explains the non-answer (retrieval/notes.py)
            result["message"] += " Note: " + " Note: ".join(n["note"] for n in notes)
            result["notes"] = notes
            result["trace"] = result.pop("trace")  # the trace stays the last key
    return attach(result, kept, index, generator, trace)  # generate + verify the text (docs/generation.md)
