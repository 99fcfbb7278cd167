"""Claim-level metrics and fixed evidence packages (docs/evaluation.md, "Generators and verifiers").

Next to the refusal confusion matrix, per generator: how many cited ids resolved to the
request's evidence, how many claims were supported, and the weighted citation coverage
(pooled: Σ wᵢ·supportedᵢ / Σ wᵢ over every claim of the run), plus the repairs the verifier made.
A *packages file* (JSONL, one ``{"id": …, "trace": …}`` per question) freezes each question's
retrieved candidates, so that two generators or two verifier versions are compared on exactly
the same evidence: ``replay`` re-packs and re-decides from the saved candidates, never re-ranks.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from rag_lab.errors import QuestionSetError


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def claim_metrics(generator: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    claims = [c for r in results for c in r.get("claims") or []]
    cited = sum(len(c.get("evidence", [])) + len(c.get("rejected_ids", [])) for c in claims)
    valid = sum(len(c.get("evidence", [])) for c in claims)
    weight = sum(int(c.get("weight", 1)) for c in claims)
    supported_weight = sum(int(c.get("weight", 1)) for c in claims if c.get("supported"))
    repairs: Counter[str] = Counter(
        str(e.get("action")) for r in results for e in r["trace"]["events"] if e.get("step") == "repair"
    )
    return {
        "generator": generator,
        "claims": len(claims),
        "resolvable_ids": {"cited": cited, "resolved": valid, "rate": _ratio(valid, cited)},
        "supported_claims": {
            "supported": sum(bool(c.get("supported")) for c in claims),
            "rate": _ratio(sum(bool(c.get("supported")) for c in claims), len(claims)),
        },
        "weighted_coverage": _ratio(supported_weight, weight),
        "repairs": dict(sorted(repairs.items())),
        "refused_by_verifier": sum(r.get("reason") == "unsupported_claim" for r in results),
    }


def save_packages(path: str | os.PathLike[str], rows: list[tuple[str, dict[str, Any]]]) -> None:
    """Write ``(question id, result)`` pairs as a packages file (the traces only)."""
    lines = [json.dumps({"id": qid, "trace": result["trace"]}, ensure_ascii=False, sort_keys=True) for qid, result in rows]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def load_packages(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise QuestionSetError(f"cannot read packages file {str(file)!r}: {exc}") from None
    out: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise QuestionSetError(f"{file}:{number}: not valid JSON ({exc.msg})") from None
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(item.get("trace"), dict):
            raise QuestionSetError(f"{file}:{number}: each line must be {{\"id\": …, \"trace\": {{…}}}}")
        out[item["id"]] = item["trace"]
    return out
