"""The evaluation report as text: headline numbers, per-category table, confusion matrix."""

from __future__ import annotations

from typing import Any

from rag_lab.evaluation.run import STATUSES


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
        f"question set: {report['questions']}  ({report['total']} questions, {report['ok']} as expected)",
        f"answerable coverage : {report['answerable_coverage']:.4f}  ({report['answerable']} answerable)",
        f"answer accuracy     : {report['answer_accuracy']:.4f}",
        f"correct refusals    : {report['correct_refusals']['total']} of {report['expected_refusals']} "
        + " ".join(f"{k}={v}" for k, v in report["correct_refusals"]["by_reason"].items()),
        f"wrong refusals      : {report['wrong_refusals']['count']} {report['wrong_refusals']['ids']}",
        f"unsupported answers : {report['unsupported_answers']['count']}",
    ]
    for item in report["unsupported_answers"]["items"]:
        lines.append(
            f"    ! {item['id']} {item['question']!r} → {item['answer']!r} (expected {item['expect_status']})"
        )
    cv, cs = report["citation_validity"], report["citation_support"]
    lines += [
        f"clarifications      : {report['clarifications']['correct']} of {report['clarifications']['expected']}",
        f"citation validity   : {cv['valid']}/{cv['checked']} ({cv['rate']:.4f})",
        f"citation support    : {cs['supporting']}/{cs['checked']} ({cs['rate']:.4f})",
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
            lines.append(
                f"  {r['id']} {r['question']!r}: expected {r['expect_status']}/{r['expect_reason']}"
                f" {r['expect_answer']!r}, got {r['status']}/{r['reason']} {r['answer']!r}"
            )
    return "\n".join(lines)
