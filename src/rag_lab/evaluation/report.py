"""The evaluation report as text: headline numbers, per-category table, confusion matrix.

Nothing to count is shown as ``—`` (``null`` in the JSON report), and no value is ever
printed as ``None``: an absent reason or answer is left out, a missing slot answer is ``—``.
"""

from __future__ import annotations

from typing import Any

from rag_lab.evaluation.run import STATUSES

NOTHING = "—"


def _share(value: float | None) -> str:
    return NOTHING if value is None else f"{value:.4f}"


def _value(value: Any) -> str:
    """An answer as written in the report: quoted text, ``—`` for none, a list slot by slot."""
    if value is None:
        return NOTHING
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return repr(value)


def _outcome(status: str, reason: str | None, answer: Any) -> str:
    """``status``, ``status/reason``, then the answer when there is one."""
    text = status if reason is None else f"{status}/{reason}"
    return text if answer is None else f"{text} {_value(answer)}"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def claim_lines(claims: dict[str, Any]) -> list[str]:
    ids, sup = claims["resolvable_ids"], claims["supported_claims"]
    return [
        f"generator           : {claims['generator']}",
        f"resolvable ids      : {ids['resolved']}/{ids['cited']} ({_rate(ids['rate'])})",
        f"supported claims    : {sup['supported']}/{claims['claims']} ({_rate(sup['rate'])})",
        f"weighted coverage   : {_rate(claims['weighted_coverage'])}",
        "repairs             : " + (" ".join(f"{k}={v}" for k, v in claims["repairs"].items()) or "none")
        + f"  refused by verifier: {claims['refused_by_verifier']}",
    ]


def render_comparison(reports: list[dict[str, Any]]) -> str:
    """One row per generator: claim metrics next to the refusal outcomes, on the same packages."""
    lines = [f"{'generator':<40} {'ok':>4} {'unsup.ans':>9} {'wrong.ref':>9} {'ids':>7} {'claims':>7} {'coverage':>8}"]
    for r in reports:
        c = r["claims"]
        lines.append(
            f"{c['generator']:<40} {r['ok']:>4} {r['unsupported_answers']['count']:>9} "
            f"{r['wrong_refusals']['count']:>9} {_rate(c['resolvable_ids']['rate']):>7} "
            f"{_rate(c['supported_claims']['rate']):>7} {_rate(c['weighted_coverage']):>8}"
        )
    return "\n".join(lines)


def render_report(report: dict[str, Any]) -> str:
    lines = [
        f"question set: {report['questions']}  ({report['total']} questions, {report['ok']} as expected)"
        + (f"  retrieval: {report['retrieval']}" if report.get("retrieval", "lexical") != "lexical" else ""),
        f"answerable coverage : {_share(report['answerable_coverage'])}  ({report['answerable']} answerable)",
        f"answer accuracy     : {_share(report['answer_accuracy'])}",
        f"correct refusals    : {report['correct_refusals']['total']} of {report['expected_refusals']} "
        + " ".join(f"{k}={v}" for k, v in report["correct_refusals"]["by_reason"].items()),
        f"wrong refusals      : {report['wrong_refusals']['count']} {report['wrong_refusals']['ids']}",
        f"unsupported answers : {report['unsupported_answers']['count']}",
    ]
    for item in report["unsupported_answers"]["items"]:
        lines.append(
            f"    ! {item['id']} {item['question']!r} → {_value(item['answer'])} (expected {item['expect_status']})"
        )
    cv, cs = report["citation_validity"], report["citation_support"]
    lines += [
        f"clarifications      : {report['clarifications']['correct']} of {report['clarifications']['expected']}",
        f"negative rejection  : {report['negative_rejection']['refused']} of "
        f"{report['negative_rejection']['expected']} ({_share(report['negative_rejection']['rate'])})",
        f"conflict detection  : {report['conflict_detection']['detected']} of "
        f"{report['conflict_detection']['expected']} ({_share(report['conflict_detection']['rate'])})",
        f"citation validity   : {cv['valid']}/{cv['checked']} ({_share(cv['rate'])})",
        f"citation support    : {cs['supporting']}/{cs['checked']} ({_share(cs['rate'])})",
        "counters            : " + " ".join(f"{k}={v}" for k, v in report["counters"].items()),
        *claim_lines(report["claims"]),
        "",
        f"{'category':<28} {'ok':>4} {'total':>6}",
    ]
    for name, cat in report["categories"].items():
        lines.append(f"{name:<28} {cat['ok']:>4} {cat['total']:>6}")
    short = {"answered": "ans", "partial": "part", "refused": "ref", "needs_clarification": "clar"}
    lines += ["", "expected \\ actual  " + " ".join(f"{short[s]:>5}" for s in STATUSES)]
    for expected in STATUSES:
        row = report["confusion"][expected]
        lines.append(f"{short[expected]:<18} " + " ".join(f"{row[a]:>5}" for a in STATUSES))
    failed = [r for r in report["results"] if not r["ok"]]
    if failed:
        lines += ["", "not as expected:"]
        for r in failed:
            expected = _outcome(r["expect_status"], r["expect_reason"], r["expect_answer"])
            lines.append(
                f"  {r['id']} {r['question']!r}: expected {expected}, "
                f"got {_outcome(r['status'], r['reason'], r['answer'])}"
            )
    return "\n".join(lines)
