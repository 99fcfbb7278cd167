"""CPU of the prose request without the freshness walk, this checkout against another ``src``.

    python benchmarks/request_prose.py ROOT QUESTIONS [--base-src /tmp/base/src] [--rounds 3] [--runs 10]

``ROOT``: a ``gen_prose_corpus.py`` corpus with its index; ``QUESTIONS``: its ``--questions`` file.
Per round, one fresh process per code (base first, then this one, back to back): on one open
index, each question is asked 3 times (warm-up), then ``--runs`` times, each timed by
``time.thread_time``; the question's figure is its median, and the round's p50 / p95 are over
the questions. A second pass (``--stages``) wraps the request's stages (inclusive CPU, a stage
nested in itself counted once) and prints each one's mean CPU per request: the prose conflict
audit (``audit_units``: its top-50 ranking and support checks), the prose decision, ranking
(``rank`` calls; since preq11 the request scores once through ``rank.ranking``, so BM25 scoring is
also shown on its own),
packing with sentence expansion, generation with the claim check, verification, parsing.
Prints the medians over rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import functools, importlib, json, statistics, sys, time
from datetime import date
from pathlib import Path
from rag_lab.index import Changes, Index, default_index_path
from rag_lab.retrieval import query
root, asked, runs, stages = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text()), int(sys.argv[3]), sys.argv[4] == "1"
STAGES = {
    "audit (top-50 ranking, support checks)": ("rag_lab.retrieval.prose_audit", "audit_units"),
    "prose decision": ("rag_lab.answering.prose", "decide_prose"),
    "ranking (all rank() calls)": ("rag_lab.retrieval.rank", "rank"),
    "BM25 scoring (all calls)": ("rag_lab.retrieval.rank", "bm25"),
    "pack + package (sentence expansion)": ("rag_lab.retrieval.query", "select_context"),
    "generation + claim check": ("rag_lab.retrieval.generate", "attach"),
    "verification (each unit)": ("rag_lab.retrieval.verify", "verify_unit"),
    "parse": ("rag_lab.retrieval.question", "parse_text_question"),
}
spent = {}
def wrap(f, label):
    inside = [False]
    @functools.wraps(f)
    def timed(*a, **k):
        if inside[0]:
            return f(*a, **k)
        inside[0], t = True, time.thread_time()
        try:
            return f(*a, **k)
        finally:
            spent[label] = spent.get(label, 0.0) + time.thread_time() - t
            inside[0] = False
    return timed
config = query.request_config(5, query.DEFAULT_BUDGET, "codepoints", None, "relevance", True, date(2026, 12, 1))
out = {}
with Index(default_index_path(root)) as index:
    medians = []
    for item in asked:
        for _ in range(3):
            query.run_request(item["question"], root, index, config, None, Changes)
        cpu = []
        for _ in range(runs):
            t = time.thread_time()
            query.run_request(item["question"], root, index, config, None, Changes)
            cpu.append(time.thread_time() - t)
        medians.append(statistics.median(cpu))
    medians.sort()
    out["cpu_p50_ms"] = statistics.median(medians) * 1e3
    out["cpu_p95_ms"] = medians[int(len(medians) * 0.95)] * 1e3
    if stages:
        for label, (module, name) in STAGES.items():
            mod = importlib.import_module(module)
            f = getattr(mod, name)
            for m in list(sys.modules.values()):
                if getattr(m, "__name__", "").startswith("rag_lab") and getattr(m, name, None) is f:
                    setattr(m, name, wrap(f, label))
        total = 0.0
        for item in asked:
            t = time.thread_time()
            query.run_request(item["question"], root, index, config, None, Changes)
            total += time.thread_time() - t
        out["stages_ms"] = {k: spent.get(k, 0.0) / len(asked) * 1e3 for k in STAGES}
        out["stages_ms"]["whole request (mean)"] = total / len(asked) * 1e3
print(json.dumps(out))
"""


def run(root: Path, questions: Path, src: Path | None, runs: int, stages: bool) -> dict[str, object]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(questions), str(runs), "1" if stages else "0"],
        check=True, capture_output=True, text=True, env=env,
    )  # fmt: skip
    found: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("questions", type=Path)
    ap.add_argument("--base-src", type=Path, default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--stages", action="store_true")
    args = ap.parse_args()
    codes = {"base": args.base_src, "this": None} if args.base_src else {"this": None}
    rounds: dict[str, list[dict[str, object]]] = {name: [] for name in codes}
    for _ in range(args.rounds):
        for name, src in codes.items():
            rounds[name].append(run(args.root, args.questions, src, args.runs, args.stages))
    for name, found in rounds.items():
        p50 = statistics.median(float(r["cpu_p50_ms"]) for r in found)  # type: ignore[arg-type]
        p95 = statistics.median(float(r["cpu_p95_ms"]) for r in found)  # type: ignore[arg-type]
        print(f"{name}: CPU p50 {p50:.2f} ms, p95 {p95:.2f} ms over the questions (median of {len(found)} rounds)")
        if args.stages:
            labels = found[0]["stages_ms"]
            for label in labels:  # type: ignore[union-attr]
                value = statistics.median(r["stages_ms"][label] for r in found)  # type: ignore[index]
                print(f"   {value:7.3f}  {label}")


if __name__ == "__main__":
    main()
