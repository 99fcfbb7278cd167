"""Realistic question understanding: every question of benchmarks/realistic through ``query_once``.

    python benchmarks/bench_realistic.py [--out benchmarks/out] [--subjects 20000] [--questions 2000]
                                         [--seed 0] [--show 15] [--limit N]

1. ``python benchmarks/realistic/generate.py OUT/realistic`` (cached: skipped when
   ``OUT/realistic/summary.json`` holds the same arguments);
2. ``rag-lab index OUT/realistic/corpus`` in a subprocess (wall time = index time);
3. every question through ``query_once(question, corpus, top_k=5)`` with the default
   budget, timed one by one;
4. scoring (never blended into one number):

   * answerable — answered with exactly the labelled value / answered with another value
     (wrong) / not answered (by status and reason);
   * answers where a refusal or clarification was expected (field_missing, unknown_subject,
     conflict labels came back answered or partial);
   * conflict → refused / conflicting_evidence; field_missing → refused /
     no_supporting_evidence; unknown_subject → needs_clarification / field_without_subject;
   * multi_subject / multi_field — status answered and ``[s["answer"] for s in slots]`` equals
     the expected list; wrong = answered with another list;
   * single-subject questions (every label but multi_*) that came back ``partial``.

Writes ``OUT/realistic.json`` (figures, per-pattern and per-template breakdowns, and the
first ``--show`` failures per category with status, reason, answer and the trace's parse
event) and prints a table plus the failures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from datetime import date
from pathlib import Path
from typing import Any

from rag_lab.index import Changes, Index, default_index_path
from rag_lab.retrieval import query_once
from rag_lab.retrieval.query import request_config, run_request
from rag_lab.retrieval.question import parse_text_question

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_index import code_state  # noqa: E402
from bench_query import stat_walk  # noqa: E402

HERE = Path(__file__).resolve().parent
SINGLE = ("answerable", "field_missing", "unknown_subject", "conflict")
MULTI = ("multi_subject", "multi_field")


def generate(out: Path, subjects: int, questions: int, seed: int) -> Path:
    bench = out / "realistic"
    stamp = bench / "summary.json"
    args = {"subjects": subjects, "questions": questions, "seed": seed}
    if stamp.exists():
        try:
            if json.loads(stamp.read_text()).get("args") == args:
                return bench
        except ValueError:
            pass
    cmd = [
        sys.executable,
        str(HERE / "realistic" / "generate.py"),
        str(bench),
        "--subjects",
        str(subjects),
        "--questions",
        str(questions),
        "--seed",
        str(seed),
        "--overwrite",
    ]
    proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
    stamp.write_text(json.dumps({"args": args, "summary": json.loads(proc.stdout)}, ensure_ascii=False))
    return bench


def index(corpus: Path) -> float:
    exe = Path(sys.executable).parent / "rag-lab"
    if exe.exists() and subprocess.run([str(exe), "--help"], capture_output=True).returncode == 0:
        cmd = [str(exe), "index", str(corpus)]
    else:
        code = "import sys; from rag_lab.index import build_index; build_index(sys.argv[1])"
        cmd = [sys.executable, "-c", code, str(corpus)]
    started = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def parse_event(result: dict[str, Any]) -> dict[str, Any] | None:
    for event in result.get("trace", {}).get("events", []):
        if event.get("step") == "parse":
            return {k: v for k, v in event.items() if k != "step"}
    return None


def outcome(q: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    """Which categories this (question, result) counts in, and whether it passed."""
    label, status, reason = q["label"], r["status"], r["reason"]
    slot_answers = [s.get("answer") for s in r.get("slots", [])]
    o: dict[str, Any] = {"label": label}
    if label == "answerable":
        o["correct"] = status == "answered" and r["answer"] == q["expect_answer"]
        o["wrong"] = status in ("answered", "partial") and r["answer"] != q["expect_answer"]
    elif label in MULTI:
        o["correct"] = status == "answered" and slot_answers == q["expect_answer"]
        expect = q["expect_answer"]
        # wrong: some slot carries a value that is not the expected one at that position
        o["wrong"] = status in ("answered", "partial") and any(
            a is not None and (i >= len(expect) or a != expect[i]) for i, a in enumerate(slot_answers)
        )
    else:
        o["correct"] = status == q["expect_status"] and reason == q["expect_reason"]
        o["answered_instead"] = status in ("answered", "partial")
    o["partial_single"] = label in SINGLE and status == "partial"
    return o


def split_timings(corpus: Path, questions: list[str]) -> dict[str, float]:
    """Medians (ms) of the pieces of an ask, on one open index, every question once.

    parse = ``parse_text_question`` alone (name lookup over the index, never a scan of
    the subjects); request = everything ``query_once`` does after the freshness check
    (retrieve, pack, verify, audit, decide); stat walk = the floor of the freshness check
    (recursive ``os.scandir`` + ``stat``), 5 runs.
    """
    parse, request, walk = [], [], []
    with Index(default_index_path(corpus)) as index:
        config = request_config(5, 1200, "codepoints", None, "relevance", True, date.today())
        for question in questions:
            t = time.perf_counter()
            parse_text_question(question, index)
            parse.append(time.perf_counter() - t)
            t = time.perf_counter()
            run_request(question, corpus, index, config, None, Changes)
            request.append(time.perf_counter() - t)
    for _ in range(5):
        t = time.perf_counter()
        stat_walk(corpus)
        walk.append(time.perf_counter() - t)
    return {
        "parse_median_ms": round(statistics.median(parse) * 1000, 2),
        "request_without_freshness_median_ms": round(statistics.median(request) * 1000, 2),
        "request_without_freshness_p90_ms": round(sorted(request)[int(0.9 * (len(request) - 1))] * 1000, 2),
        "stat_walk_median_ms": round(statistics.median(walk) * 1000, 2),
    }


def rate(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.1f} %)" if d else "0/0"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--subjects", type=int, default=20000)
    ap.add_argument("--questions", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=15)
    ap.add_argument("--limit", type=int, default=None, help="only the first N questions (debugging)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    state = code_state()
    t = time.perf_counter()
    bench = generate(args.out, args.subjects, args.questions, args.seed)
    gen_s = time.perf_counter() - t
    corpus = bench / "corpus"
    index_s = index(corpus)
    files = sum(len(f) for _, _, f in os.walk(corpus / "documents"))
    print(f"generated in {gen_s:.1f} s ({files} files); indexed in {index_s:.2f} s", flush=True)

    questions = [json.loads(line) for line in (bench / "questions.jsonl").read_text().splitlines()]
    if args.limit:
        questions = questions[: args.limit]
    latencies: list[float] = []
    records: list[dict[str, Any]] = []
    for i, q in enumerate(questions, 1):
        t = time.perf_counter()
        r = query_once(q["question"], corpus, top_k=5)
        latencies.append(time.perf_counter() - t)
        o = outcome(q, r)
        records.append({"q": q, "r": r, "o": o})
        if i % 250 == 0:
            print(
                f"  {i}/{len(questions)} asked, median {statistics.median(latencies) * 1000:.1f} ms",
                flush=True,
            )

    split = split_timings(corpus, [q["question"] for q in questions])

    by_label: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        by_label[rec["q"]["label"]].append(rec)

    def count(label: str, key: str) -> int:
        return sum(1 for rec in by_label[label] if rec["o"].get(key))

    n = {label: len(v) for label, v in by_label.items()}
    refusal_labels = ("field_missing", "unknown_subject", "conflict")
    figures = {
        "answerable_correct": [count("answerable", "correct"), n.get("answerable", 0)],
        "answerable_wrong": [count("answerable", "wrong"), n.get("answerable", 0)],
        "multi_wrong": [sum(count(lb, "wrong") for lb in MULTI), sum(n.get(lb, 0) for lb in MULTI)],
        "answered_where_refusal_expected": [
            sum(count(lb, "answered_instead") for lb in refusal_labels),
            sum(n.get(lb, 0) for lb in refusal_labels),
        ],
        "conflict_refused_conflicting_evidence": [count("conflict", "correct"), n.get("conflict", 0)],
        "field_missing_refused_no_supporting_evidence": [
            count("field_missing", "correct"),
            n.get("field_missing", 0),
        ],
        "unknown_subject_needs_clarification_field_without_subject": [
            count("unknown_subject", "correct"),
            n.get("unknown_subject", 0),
        ],
        "multi_subject_correct": [count("multi_subject", "correct"), n.get("multi_subject", 0)],
        "multi_field_correct": [count("multi_field", "correct"), n.get("multi_field", 0)],
        "single_subject_partial": [
            sum(count(lb, "partial_single") for lb in SINGLE),
            sum(n.get(lb, 0) for lb in SINGLE),
        ],
    }
    outcomes = {
        label: Counter(f"{rec['r']['status']}/{rec['r']['reason']}" for rec in recs).most_common()
        for label, recs in sorted(by_label.items())
    }
    by_pattern: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_template: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for rec in records:
        key = f"{rec['q']['label']}:{rec['q'].get('pattern')}"
        by_pattern[key][0] += int(bool(rec["o"]["correct"]))
        by_pattern[key][1] += 1
        by_template[rec["q"]["template"]][0] += int(bool(rec["o"]["correct"]))
        by_template[rec["q"]["template"]][1] += 1

    def failure(rec: dict[str, Any]) -> dict[str, Any]:
        q, r = rec["q"], rec["r"]
        return {
            "id": q["id"],
            "question": q["question"],
            "template": q["template"],
            "pattern": q.get("pattern"),
            "expected": {
                "subject": q["subject"],
                "field": q["field"],
                "status": q["expect_status"],
                "reason": q["expect_reason"],
                "answer": q["expect_answer"],
            },
            "status": r["status"],
            "reason": r["reason"],
            "answer": r["answer"],
            "slots": [
                [s["subject"], s["field"], s["status"], s["reason"], s["answer"]] for s in r.get("slots", [])
            ],
            "parse": parse_event(r),
        }

    failures = {}
    for label, recs in sorted(by_label.items()):
        bad = [rec for rec in recs if not rec["o"]["correct"]]
        failures[label] = {"count": len(bad), "first": [failure(rec) for rec in bad[: args.show]]}
    failures["single_subject_partial"] = {
        "count": figures["single_subject_partial"][0],
        "first": [failure(rec) for rec in records if rec["o"]["partial_single"]][: args.show],
    }
    failures["answered_where_refusal_expected"] = {
        "count": figures["answered_where_refusal_expected"][0],
        "first": [failure(rec) for rec in records if rec["o"].get("answered_instead")][: args.show],
    }

    lat_ms = sorted(x * 1000 for x in latencies)
    report = {
        "args": {"subjects": args.subjects, "questions": len(questions), "seed": args.seed, "top_k": 5},
        "code": state,
        "code_changed_during_run": code_state() != state,
        "files": files,
        "generate_s": round(gen_s, 2),
        "index_s": round(index_s, 2),
        "ask_median_ms": round(statistics.median(lat_ms), 2),
        "ask_p90_ms": round(lat_ms[int(0.9 * (len(lat_ms) - 1))], 2),
        "ask_max_ms": round(lat_ms[-1], 2),
        **split,
        "figures": figures,
        "outcomes_by_label": outcomes,
        "by_pattern": {k: v for k, v in sorted(by_pattern.items())},
        "by_template": {k: v for k, v in sorted(by_template.items())},
        "failures": failures,
    }
    path = args.json or args.out / "realistic.json"
    path.write_text(json.dumps(report, ensure_ascii=False, indent=1))

    print()
    print("| measure | result |")
    print("|---|---|")
    names = {
        "answerable_correct": "answerable answered with exactly the labelled value",
        "answerable_wrong": "answerable answered with another value (wrong answer)",
        "multi_wrong": "multi-slot answered with a wrong value list",
        "answered_where_refusal_expected": "answered/partial where a refusal or clarification was expected",
        "conflict_refused_conflicting_evidence": "conflict → refused / conflicting_evidence",
        "field_missing_refused_no_supporting_evidence": "field_missing → refused / no_supporting_evidence",
        "unknown_subject_needs_clarification_field_without_subject": "unknown_subject → needs_clarification / field_without_subject",
        "multi_subject_correct": "multi_subject answered, slot answers == expected list",
        "multi_field_correct": "multi_field answered, slot answers == expected list",
        "single_subject_partial": "single-subject questions that came back partial (goal 0)",
    }
    for key, (a, b) in figures.items():
        print(f"| {names[key]} | {rate(a, b)} |")
    print(f"| median / p90 ask latency | {report['ask_median_ms']} / {report['ask_p90_ms']} ms |")
    print(f"| stat walk of the corpus (floor of the freshness check) | {split['stat_walk_median_ms']} ms |")
    print(
        f"| ask without the freshness check: median / p90 | {split['request_without_freshness_median_ms']} / "
        f"{split['request_without_freshness_p90_ms']} ms |"
    )
    print(f"| parsing the question alone (median) | {split['parse_median_ms']} ms |")
    print(f"| index time ({files} files) | {report['index_s']} s |")
    print("\noutcomes by label:")
    for label, items in outcomes.items():
        print(f"  {label}: " + ", ".join(f"{k} {v}" for k, v in items))
    print("\nanswer rate by label:pattern:")
    for key, (a, b) in sorted(by_pattern.items()):
        print(f"  {key}: {rate(a, b)}")
    for label, block in failures.items():
        print(f"\n== failures: {label} ({block['count']}) ==")
        for f in block["first"]:
            p = f["parse"] or {}
            print(
                f"  {f['id']} [{f['template']}/{f['pattern']}] {f['question']!r}\n"
                f"     expected {f['expected']['subject']} | {f['expected']['field']} → "
                f"{f['expected']['status']}/{f['expected']['reason']} {f['expected']['answer']!r}\n"
                f"     got {f['status']}/{f['reason']} {f['answer']!r} slots={f['slots']}\n"
                f"     parse: slots={p.get('slots')} subjects={p.get('subjects')} fields={p.get('fields')} "
                f"problem={p.get('problem')} matches={p.get('matches')}"
            )
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
