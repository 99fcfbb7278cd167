"""Context packing under a budget: keep whole units in rank order, never cut one.

Greedy by design (seed §3.3): scan candidates in rank order; keep a unit if it fits in
what is left of the budget, otherwise skip it and keep scanning. It does not maximise
relevance and never stops early because one unit was too long.

Budget units: ``codepoints`` (default, the seed's: code points of each unit's ``text``)
or ``tokens`` (a real tokenizer on the whole serialised evidence package, with
``reserve_tokens`` set aside for instructions and output). With ``dedup=True``, a
candidate with the same identity as a kept one (same file bytes and same span) is
skipped as a duplicate: copies are not independent support. Text similarity never
merges anything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rag_lab.errors import ConfigError
from rag_lab.limits import check_budget
from rag_lab.records import Candidate, Unit
from rag_lab.retrieval.package import render_package

DEFAULT_BUDGET = 1200
BUDGET_UNITS = ("codepoints", "tokens")
TokenCounter = Callable[[str], int]


def identity(unit: Unit) -> tuple[str, tuple[int, ...]] | None:
    """Same bytes and same span → same piece of evidence (None when unknown)."""
    sha, span = unit.get("sha256"), unit.get("span")
    if not sha:
        return None
    return (str(sha), tuple(span) if span is not None else ())


def pack_context(
    candidates: list[Candidate],
    budget: int = DEFAULT_BUDGET,
    *,
    unit: str = "codepoints",
    dedup: bool = False,
    count_tokens: TokenCounter | None = None,
    reserve_tokens: int = 0,
) -> tuple[list[Candidate], dict[str, Any]]:
    """Returns ``(kept, report)``; the report names every skipped unit and why."""
    check_budget(budget)
    if unit not in BUDGET_UNITS:
        raise ConfigError(f"budget unit {unit!r} is not one of {BUDGET_UNITS}")
    if unit == "tokens" and count_tokens is None:
        raise ConfigError("a tokens budget needs a tokenizer (rag_lab.retrieval.tokens.load_counter)")
    if isinstance(reserve_tokens, bool) or not isinstance(reserve_tokens, int) or reserve_tokens < 0:
        raise ConfigError(f"reserve_tokens must be a whole number ≥ 0, got {reserve_tokens!r}")
    available = budget - reserve_tokens if unit == "tokens" else budget
    kept: list[Candidate] = []
    skipped: list[dict[str, Any]] = []
    seen: dict[tuple[str, tuple[int, ...]], str] = {}
    used = 0
    for rank, candidate in enumerate(candidates, 1):
        evidence = candidate["evidence"]
        key = identity(evidence) if dedup else None
        if key is not None and key in seen:
            skipped.append(
                {
                    "evidence_id": evidence.get("evidence_id"),
                    "rank": rank,
                    "reason": "duplicate",
                    "duplicate_of": seen[key],
                }
            )
            continue
        if unit == "tokens":
            assert count_tokens is not None
            size = count_tokens(render_package([c["evidence"] for c in [*kept, candidate]])[0])
            fits = size <= available
        else:
            size = len(evidence["text"])
            fits = used + size <= available
        if fits:
            kept.append(candidate)
            used = size if unit == "tokens" else used + size
            if key is not None:
                seen[key] = str(evidence.get("evidence_id"))
        else:
            skipped.append(
                {
                    "evidence_id": evidence.get("evidence_id"),
                    "rank": rank,
                    "characters": len(evidence["text"]),
                    "reason": "over_budget",
                    "remaining": available - used,
                }
            )
    report: dict[str, Any] = {
        "budget": budget,
        "unit": unit,
        ("characters" if unit == "codepoints" else "tokens"): used,
        "kept": [c["evidence"].get("evidence_id") for c in kept],
        "skipped": skipped,
    }
    if unit == "tokens":
        report["reserved"] = reserve_tokens
    if dedup:
        report["duplicates_merged"] = sum(1 for s in skipped if s["reason"] == "duplicate")
    return kept, report
