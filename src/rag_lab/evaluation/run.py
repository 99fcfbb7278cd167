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
from rag_lab.errors import ConfigError, QuestionSetError
from rag_lab.evaluation.citations import recheck
from rag_lab.evaluation.claims import claim_metrics, save_packages
from rag_lab.evaluation.gate import evidence_set
from rag_lab.evaluation.questions import load_questions
from rag_lab.generation import Generator
from rag_lab.records import Modality, Status
from rag_lab.retrieval import query_once
from rag_lab.retrieval.query import RETRIEVALS

STATUSES = [s.value for s in Status]
ANSWERING = {Status.ANSWERED.value, Status.PARTIAL.value}
IMAGE_ANSWER_SEPARATOR = "；"  # how an image answer joins the phrases of several images (retrieval/answer.py)
COUNTER_NAMES = ("empty_context", "uncovered_slots", "duplicates_merged", "dropped_by_budget", "stale_index")


def _ratio(part: int, whole: int) -> float | None:
    """A share rounded to 4 places; ``None`` when there is nothing to count (never a made-up 0.0)."""
    return round(part / whole, 4) if whole else None


def _supports(cite: dict[str, Any], cited_value: str | None, slot: dict[str, Any]) -> bool:
    """Whether one citation's re-read value backs the slot's answer.

    A prose slot is backed by a cited sentence that is the answer or holds its ``answer_span``.
    An image answer names every matching image's phrase, joined by ``；`` (sorted, one per
    distinct phrase), so an image citation supports it when its re-measured phrase is one of
    them; a text citation's value must equal the whole answer.
    """
    answer = slot["answer"]
    if cited_value is None:
        return False
    if slot.get("kind") == "prose":
        span = slot.get("answer_span")
        return cited_value == answer or (span is not None and span["text"] in cited_value)
    if not isinstance(answer, str):
        return False
    if cite.get("modality") == Modality.IMAGE:
        return cited_value in answer.split(IMAGE_ANSWER_SEPARATOR)
    return cited_value == answer


def _actual_answer(result: dict[str, Any], expected: Any) -> Any:
    if isinstance(expected, list):
        return [s.get("answer") for s in result["slots"]]
    return result["answer"]


def is_prose(result: dict[str, Any]) -> bool:
    return bool(result["slots"]) and result["slots"][0].get("kind") == "prose"


def judge(
    item: dict[str, Any], result: dict[str, Any], cited_texts: list[str] | None = None
) -> dict[str, Any]:
    """One question's outcome: what was expected, what happened, and whether it matches.

    A prose answer (or ``match: contains``) is right when the expected string is contained
    in the answer and in the text of at least one cited span (``cited_texts``, when given).
    """
    expected_status, actual_status = item["expect_status"], result["status"]
    answer_ok = None
    if expected_status in ANSWERING and actual_status in ANSWERING:
        if item.get("match") == "contains" or is_prose(result):
            wanted = str(item["expect_answer"])
            answer_ok = wanted in str(result["answer"] or "") and (
                cited_texts is None or any(wanted in t for t in cited_texts)
            )
        else:
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
    evidence: dict[str, Any] | None = None,
    generator: Generator | None = None,
    packages: dict[str, dict[str, Any]] | None = None,
    save_packages_to: str | os.PathLike[str] | None = None,
    retrieval: str = "lexical",
    embedder: Any = None,
) -> dict[str, Any]:
    """Run every question and build the report (keys documented in docs/evaluation.md).

    ``retrieval``: ``lexical`` (default) or ``fused`` (lexical + dense; the index must hold
    vectors, ``rag-lab index ROOT --vectors``), as for ``query_once``; ``embedder`` its query model
    (a ``rag_lab.neural.Embedder``; evaluation does not import the neural layer itself).

    ``evidence``: a dict to fill with each question's evidence set (evaluation/gate.py).
    ``generator`` writes each answer's text (default: the composer). ``packages`` (from
    :func:`~rag_lab.evaluation.claims.load_packages`) replays each question's saved trace
    instead of retrieving; ``save_packages_to`` writes this run's traces as such a file.
    """
    if retrieval not in RETRIEVALS:  # said once, before any question runs
        raise ConfigError(f"retrieval {retrieval!r} is not one of {', '.join(RETRIEVALS)}")
    base = Path(root)
    done: list[tuple[str, dict[str, Any]]] = []
    rows, cite_total, cite_valid, cite_support, cite_answered = [], 0, 0, 0, 0
    invalid: list[dict[str, Any]] = []
    counters: Counter[str] = Counter()
    for item in questions:
        if packages is not None:
            result = _replayed(item, packages, base, index_path, generator)
        else:
            result = query_once(
                item["question"],
                base,
                index_path=index_path,
                top_k=item.get("top_k", 5),
                budget=item.get("budget", 1200),
                as_of=date.fromisoformat(item["as_of"]) if "as_of" in item else None,
                principal=principal,
                generator=generator,
                retrieval=retrieval,
                embedder=embedder,
            )
        done.append((item["id"], result))
        counters.update(result["trace"]["counters"])
        cited: list[str] = []
        for cite in result["citations"]:
            cite_total += 1
            problem, text = recheck(base, cite)
            if problem is None:
                cite_valid += 1
                cited.append(str(text))
            else:
                invalid.append({"id": item["id"], "evidence_id": cite["evidence_id"], "problem": problem})
        rows.append(judge(item, result, cited))
        if evidence is not None:
            evidence[item["id"]] = evidence_set(result)
        for slot in result["slots"]:
            if slot["status"] != Status.ANSWERED:
                continue
            for cite in slot["citations"]:
                cite_answered += 1
                cite_support += _supports(cite, recheck(base, cite)[1], slot)
    report = _report(name, rows, cite_total, cite_valid, invalid, cite_answered, cite_support, counters)
    report["retrieval"] = "replayed packages" if packages is not None else retrieval
    report["claims"] = claim_metrics(generator.name if generator else "composer", [r for _, r in done])
    if save_packages_to is not None:
        save_packages(save_packages_to, done)
    return report


def _replayed(
    item: dict[str, Any],
    packages: dict[str, dict[str, Any]],
    base: Path,
    index_path: str | os.PathLike[str] | None,
    generator: Generator | None,
) -> dict[str, Any]:
    from rag_lab.retrieval.replay import replay

    saved = packages.get(item["id"])
    if saved is None:
        raise QuestionSetError(f"the packages file has no saved trace for question {item['id']!r}")
    if saved.get("question") != item["question"]:
        raise QuestionSetError(f"the saved trace of {item['id']!r} is for another question: {saved.get('question')!r}")
    return replay(saved, base, index_path, generator=generator or _composer())


def _composer() -> Generator:
    from rag_lab.generation.composer import Composer

    return Composer()


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
        "negative_rejection": _negative_rejection(refusals),
        "conflict_detection": _conflict_detection(refusals),
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


def _negative_rejection(refusals: list[dict[str, Any]]) -> dict[str, Any]:
    """Questions expected refused for lack of evidence (not conflicts): how many were refused at all."""
    negatives = [r for r in refusals if r["expect_reason"] != "conflicting_evidence"]
    refused = sum(r["status"] not in ANSWERING for r in negatives)
    return {"expected": len(negatives), "refused": refused, "rate": _ratio(refused, len(negatives))}


def _conflict_detection(refusals: list[dict[str, Any]]) -> dict[str, Any]:
    conflicts = [r for r in refusals if r["expect_reason"] == "conflicting_evidence"]
    detected = sum(r["reason"] == "conflicting_evidence" for r in conflicts)
    return {"expected": len(conflicts), "detected": detected, "rate": _ratio(detected, len(conflicts))}


def evaluate_file(
    root: str | os.PathLike[str],
    questions: str | os.PathLike[str],
    *,
    index_path: str | os.PathLike[str] | None = None,
    principal: Principal | None = None,
    **options: Any,
) -> dict[str, Any]:
    """:func:`evaluate` on a question file; ``options``: ``generator``, ``packages``, ``save_packages_to``."""
    return evaluate(
        root,
        load_questions(questions),
        index_path=index_path,
        name=Path(questions).name,
        principal=principal,
        **options,
    )


def evaluate_demo(*, prose: bool = False, **options: Any) -> dict[str, Any]:
    """The shipped question set on a fresh copy of the demo corpus (``prose``: the prose demo;
    ``options`` as for :func:`evaluate`; with ``retrieval="fused"`` the copy is indexed with
    vectors)."""
    from rag_lab.demo import corpus_path, prose_corpus_path, prose_questions_path, questions_path
    from rag_lab.index import build_index

    corpus, questions = (prose_corpus_path(), prose_questions_path()) if prose else (corpus_path(), questions_path())
    with tempfile.TemporaryDirectory(prefix="rag-lab-eval-") as tmp:
        root = Path(tmp) / "corpus"
        shutil.copytree(corpus, root)
        fused = options.get("retrieval") == "fused" and options.get("packages") is None
        build_index(root, vectors=fused, embedder=options.get("embedder"))
        name = f"demo/{questions.name}"
        return evaluate(root, load_questions(questions), name=name, **options)
