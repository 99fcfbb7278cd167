"""Context packing under a budget: keep whole units in rank order, never cut one.

Greedy by design (seed §3.3): scan candidates in rank order; keep a unit if its
``text`` fits in what is left of the budget, otherwise skip it and keep scanning. It
does not maximise relevance and never stops early because one unit was too long.
"""

from __future__ import annotations

from typing import Any

from rag_lab.errors import ConfigError
from rag_lab.records import Candidate

DEFAULT_BUDGET = 1200


def check_budget(budget: int) -> int:
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise ConfigError(f"budget must be a whole number of code points ≥ 0, got {budget!r}")
    return budget


def pack_context(
    candidates: list[Candidate], budget: int = DEFAULT_BUDGET
) -> tuple[list[Candidate], dict[str, Any]]:
    """Returns ``(kept, report)``; the report names every skipped unit and why."""
    check_budget(budget)
    kept: list[Candidate] = []
    skipped: list[dict[str, Any]] = []
    used = 0
    for rank, candidate in enumerate(candidates, 1):
        evidence = candidate["evidence"]
        size = len(evidence["text"])
        if used + size <= budget:
            kept.append(candidate)
            used += size
        else:
            skipped.append(
                {
                    "evidence_id": evidence.get("evidence_id"),
                    "rank": rank,
                    "characters": size,
                    "reason": "over_budget",
                    "remaining": budget - used,
                }
            )
    report = {
        "budget": budget,
        "unit": "codepoints",
        "characters": used,
        "kept": [c["evidence"].get("evidence_id") for c in kept],
        "skipped": skipped,
    }
    return kept, report
