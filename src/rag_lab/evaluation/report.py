"""The evaluation report as text: headline numbers, per-category table, confusion matrix."""

from __future__ import annotations

from typing import Any

from rag_lab.evaluation.run import STATUSES


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
        f"negative rejection  : {report['negative_rejection']['refused']} of "
        f"{report['negative_rejection']['expected']} ({report['negative_rejection']['rate']:.4f})",
        f"conflict detection  : {report['conflict_detection']['detected']} of "
        f"{report['conflict_detection']['expected']} ({report['conflict_detection']['rate']:.4f})",
        f"citation validity   : {cv['valid']}/{cv['checked']} ({cv['rate']:.4f})",
        f"citation support    : {cs['supporting']}/{cs['checked']} ({cs['rate']:.4f})",
        "counters            : " + " ".join(f"{k}={v}" for k, v in report["counters"].items()),
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
