"""Off-template probes: phrasings the realistic generator never uses, on its corpus.

    python benchmarks/probe_questions.py [--out benchmarks/out] [--per-form 60] [--seed 0] [--json]

The realistic benchmark's questions come from templates written next to the parser. These
probes are written separately, to find what the templates miss: preambles in another
clause that name common-word subjects (`基础问题：…`), a name said twice, brackets, slashes,
newlines, the field first, three fields or three subjects in one question, and one form
that is a known limit (`大学生想问…`: the subject 大学 inside the word 大学生). Subjects and
fields are drawn from ``OUT/realistic/subjects.jsonl`` (agreeing subjects only), so the
expected answer is known; run ``benchmarks/bench_realistic.py`` first to generate and index
the corpus.

Per form: correct (status answered with exactly the expected value or list), wrong
(answered or partial with anything else — the goal is 0 everywhere), and the other
outcomes by status/reason (a clarification is not wrong: it never asserts anything).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from rag_lab.retrieval import query_once

HERE = Path(__file__).resolve().parent

SINGLE_FORMS = {
    "preamble_clause": "基础问题：{S}的{F}",
    "trailing_clause": "{S}的{F}是什么？这对我的设计很重要",
    "other_subject_after": "{S}的{F}，中国的呢？",
    "said_twice": "{S}{F}{S}",
    "field_first": "{F}，{S}的是多少",
    "colon_first": "想问一下{F}：{S}",
    "brackets": "【{S}】{F}",
    "parenthesis": "{S}（{F}）",
    "slash": "{S}/{F}",
    "newline": "{S}\n{F}",
    "ascii_punctuation": "{S}!!! {F}???",
    "pronoun": "那个{S}，它的{F}呢",
    "limit_word_inside_word": "大学生想问{S}的{F}",
}


def load_subjects(bench: Path) -> list[dict[str, Any]]:
    path = bench / "subjects.jsonl"
    if not path.exists():
        sys.exit(f"{path} is missing: run benchmarks/bench_realistic.py first")
    subjects = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [s for s in subjects if s["fields"] and not s["conflicting_fields"] and s["kind"] != "topic"]


def probes(subjects: list[dict[str, Any]], per_form: int, rng: random.Random) -> list[dict[str, Any]]:
    """Questions with their expected answer (a string, or a list for several slots)."""
    out = []
    for form, text in SINGLE_FORMS.items():
        for s in rng.sample(subjects, per_form):
            f = rng.choice(sorted(s["fields"]))
            out.append({"form": form, "question": text.format(S=s["subject"], F=f), "expect": s["fields"][f]})
    with_three = [s for s in subjects if len(s["fields"]) >= 3]
    for s in rng.sample(with_three, per_form):
        fs = rng.sample(sorted(s["fields"]), 3)
        question = f"{s['subject']}的{fs[0]}、{fs[1]}和{fs[2]}分别是什么"
        out.append({"form": "three_fields", "question": question, "expect": [s["fields"][f] for f in fs]})
    by_field: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in subjects:
        for f in s["fields"]:
            by_field[f].append(s)
    shared = sorted(f for f, holders in by_field.items() if len(holders) >= 3)
    for _ in range(per_form):
        f = rng.choice(shared)
        a, b, c = rng.sample(by_field[f], 3)
        question = f"{a['subject']}、{b['subject']}以及{c['subject']}的{f}"
        out.append({"form": "three_subjects", "question": question, "expect": [x["fields"][f] for x in (a, b, c)]})
    return out


def judge(probe: dict[str, Any], result: dict[str, Any]) -> str:
    expect = probe["expect"]
    got = [s["answer"] for s in result.get("slots", [])] if isinstance(expect, list) else result["answer"]
    if result["status"] == "answered" and got == expect:
        return "correct"
    if result["status"] in ("answered", "partial"):
        return "wrong"
    return f"{result['status']}/{result['reason']}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--per-form", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = ap.parse_args(argv)
    bench = args.out / "realistic"
    rng = random.Random(args.seed)
    asked = probes(load_subjects(bench), args.per_form, rng)
    by_form: dict[str, Counter[str]] = defaultdict(Counter)
    examples: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for probe in asked:
        verdict = judge(probe, query_once(probe["question"], bench / "corpus", top_k=5))
        by_form[probe["form"]][verdict] += 1
        if verdict != "correct" and len(examples[probe["form"]]) < 3:
            examples[probe["form"]].append({"question": probe["question"], "verdict": verdict})
    report = {
        "per_form": args.per_form,
        "seed": args.seed,
        "forms": {form: dict(counts) for form, counts in by_form.items()},
        "wrong": sum(c["wrong"] for c in by_form.values()),
        "examples": examples,
    }
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
        return 0
    print("| form | correct | wrong | other |")
    print("|---|---:|---:|---|")
    for form, counts in by_form.items():
        other = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k not in ("correct", "wrong"))
        print(f"| `{form}` | {counts['correct']}/{sum(counts.values())} | {counts['wrong']} | {other} |")
    print(f"\nwrong answers in all: {report['wrong']}")
    for form, items in examples.items():
        for item in items:
            print(f"  {form}: {item['question']!r} → {item['verdict']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
