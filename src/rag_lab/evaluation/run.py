"""Running a question set through ``query_once`` and measuring answering and refusing separately.

Nothing here is blended into one score (SPEC §5). A refusal counts as a success only
when a refusal was expected; an answer where a refusal or clarification was expected
is an *unsupported answer*, the worst error, and each one is listed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

from rag_lab.data.access import Principal
from rag_lab.evaluation.citations import recheck
from rag_lab.evaluation.questions import load_questions
from rag_lab.records import Modality, Status
from rag_lab.retrieval import query_once

STATUSES = [s.value for s in Status]
ANSWERING = {Status.ANSWERED.value, Status.PARTIAL.value}
IMAGE_ANSWER_SEPARATOR = "；"  # how an image answer joins the phrases of several images (retrieval/answer.py)
COUNTER_NAMES = ("empty_context", "uncovered_slots", "duplicates_merged", "dropped_by_budget", "stale_index")


def _ratio(part: int, whole: int) -> float | None:
    """A share rounded to 4 places; ``None`` when there is nothing to count (never a made-up 0.0)."""
    return round(part / whole, 4) if whole else None


def _supports(cite: dict[str, Any], cited_value: str | None, answer: Any) -> bool:
    """Whether one citation's re-read value backs the slot's answer.

    An image answer names every matching image's phrase, joined by ``；`` (sorted, one per
    distinct phrase), so an image citation supports it when its re-measured phrase is one of
    them; a text citation's value must equal the whole answer.
    """
    if cited_value is None or not isinstance(answer, str):
        return False
    if cite.get("modality") == Modality.IMAGE:
        return cited_value in answer.split(IMAGE_ANSWER_SEPARATOR)
    return cited_value == answer


def _actual_answer(result: dict[str, Any], expected: Any) -> Any:
    if isinstance(expected, list):
        return [s.get("answer") for s in result["slots"]]
    return result["answer"]


def judge(item: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """One question's outcome: what was expected, what happened, and whether it matches."""
    expected_status, actual_status = item["expect_status"], result["status"]
    answer_ok = None
    if expected_status in ANSWERING and actual_status in ANSWERING:
        answer_ok = _actual_answer(result, item["expect_answer"]) == item["expect_answer"]
    reason_ok = item.get("expect_reason") is None or item.get("expect_reason") == result["reason"]
    ok = expected_status == actual_status and reason_ok and answer_ok is not False
    return {
        "id": item["id"],
        "category": item["category"],
        "question": item["question"],
        "expect_status": expected_status,
        "expect_reason": item.get("expect_reason"),
        "expect_answer": item.get("expect_answer"),
        "status": actual_status,
        "reason": result["reason"],
        "answer": _actual_answer(result, item.get("expect_answer")),
        "citations": len(result["citations"]),
        "ok": ok,
    }


def evaluate(
    root: str | os.PathLike[str],
    questions: list[dict[str, Any]],
    *,
    index_path: str | os.PathLike[str] | None = None,
    name: str = "questions",
    principal: Principal | None = None,
) -> dict[str, Any]:
    """Run every question and build the report (keys documented in docs/evaluation.md)."""
    base = Path(root)
    rows, cite_total, cite_valid, cite_support, cite_answered = [], 0, 0, 0, 0
    invalid: list[dict[str, Any]] = []
    counters: Counter[str] = Counter()
    for item in questions:
        result = query_once(
            item["question"],
            base,
            index_path=index_path,
            top_k=item.get("top_k", 5),
            budget=item.get("budget", 1200),
            as_of=date.fromisoformat(item["as_of"]) if "as_of" in item else None,
            principal=principal,
        )
        counters.update(result["trace"]["counters"])
        rows.append(judge(item, result))
        for cite in result["citations"]:
            cite_total += 1
            problem, _ = recheck(base, cite)
            if problem is None:
                cite_valid += 1
            else:
                invalid.append({"id": item["id"], "evidence_id": cite["evidence_id"], "problem": problem})
        for slot in result["slots"]:
            if slot["status"] != Status.ANSWERED:
                continue
            for cite in slot["citations"]:
                cite_answered += 1
                cite_support += _supports(cite, recheck(base, cite)[1], slot["answer"])
    return _report(name, rows, cite_total, cite_valid, invalid, cite_answered, cite_support, counters)


def _report(
    name: str,
    rows: list[dict[str, Any]],
    cite_total: int,
    cite_valid: int,
    invalid: list[dict[str, Any]],
    cite_answered: int,
    cite_support: int,
    counters: Counter[str],
) -> dict[str, Any]:
    answerable = [r for r in rows if r["expect_status"] in ANSWERING]
    refusals = [r for r in rows if r["expect_status"] == Status.REFUSED]
    clar = [r for r in rows if r["expect_status"] == Status.NEEDS_CLARIFICATION]
    correct_refusals: Counter[str] = Counter(
        str(r["reason"]) for r in refusals if r["status"] == Status.REFUSED and r["ok"]
    )
    unsupported = [r for r in rows if r["expect_status"] not in ANSWERING and r["status"] in ANSWERING]
    wrong_refusals = [r for r in answerable if r["status"] not in ANSWERING]
    confusion = {e: {a: 0 for a in STATUSES} for e in STATUSES}
    categories: dict[str, dict[str, int]] = {}
    for r in rows:
        confusion[r["expect_status"]][r["status"]] += 1
        cat = categories.setdefault(r["category"], {"total": 0, "ok": 0})
        cat["total"] += 1
        cat["ok"] += int(r["ok"])
    return {
        "questions": name,
        "total": len(rows),
        "ok": sum(r["ok"] for r in rows),
        "answerable": len(answerable),
        "answerable_coverage": _ratio(sum(r["status"] in ANSWERING for r in answerable), len(answerable)),
        "answer_accuracy": _ratio(sum(r["ok"] for r in answerable), len(answerable)),
        "expected_refusals": len(refusals),
        "correct_refusals": {
            "total": sum(correct_refusals.values()),
            "by_reason": dict(sorted(correct_refusals.items())),
        },
        "wrong_refusals": {"count": len(wrong_refusals), "ids": [r["id"] for r in wrong_refusals]},
        "unsupported_answers": {
            "count": len(unsupported),
            "items": [
                {k: r[k] for k in ("id", "question", "expect_status", "status", "answer")}
                for r in unsupported
            ],
        },
        "clarifications": {"expected": len(clar), "correct": sum(r["ok"] for r in clar)},
        "citation_validity": {
            "checked": cite_total,
            "valid": cite_valid,
            "rate": _ratio(cite_valid, cite_total),
            "invalid": invalid,
        },
        "citation_support": {
            "checked": cite_answered,
            "supporting": cite_support,
            "rate": _ratio(cite_support, cite_answered),
        },
        "counters": {n: counters.get(n, 0) for n in COUNTER_NAMES},
        "categories": dict(sorted(categories.items())),
        "confusion": confusion,
        "results": rows,
    }


def evaluate_file(
    root: str | os.PathLike[str],
    questions: str | os.PathLike[str],
    *,
    index_path: str | os.PathLike[str] | None = None,
    principal: Principal | None = None,
) -> dict[str, Any]:
    return evaluate(
        root, load_questions(questions), index_path=index_path, name=Path(questions).name, principal=principal
    )


def evaluate_demo() -> dict[str, Any]:
    """The shipped question set on a fresh copy of the demo corpus."""
    from rag_lab.demo import corpus_path, questions_path
    from rag_lab.index import build_index

    with tempfile.TemporaryDirectory(prefix="rag-lab-eval-") as tmp:
        root = Path(tmp) / "corpus"
        shutil.copytree(corpus_path(), root)
        build_index(root)
        return evaluate(root, load_questions(questions_path()), name="demo/questions.jsonl")
