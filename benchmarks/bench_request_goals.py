"""Issue 18's request goals on one corpus, this checkout against another ``src``, alternated.

    python benchmarks/bench_request_goals.py ROOT --base-src /tmp/base/src [--rounds 3]

``ROOT``: a ``gen_corpus.py`` corpus with its index built and ``ROOT.manifest.json`` beside it
(nothing is written to it). Per round, one fresh process per code (base first, then this one,
back to back, so both see the same load), each measuring:

* per question of ``bench_query.questions_for`` (answered, conflicting, unknown): ``query_once``
  paired with a bare stat walk just before it (the floor), ``--pairs`` times: the median ratio;
  ``ratio_fresh_open``: the same with the kept index closed first (index/kept.py), as the first
  call of a process opens it (equal to ``ratio``'s kind of call for code without kept indexes);
  ``cpu_ratio``: ``query_once``'s CPU (``time.thread_time``) over the walk's (steadier under load);
* the rest of the request, ``run_request`` on one open index without the freshness walk, the
  same question 300 times after 20 warm-ups: wall and CPU (``time.thread_time``) p50 / p95;
* the same for ``--distinct`` different questions of the manifest, each asked once (nothing of
  it remembered by the open index yet): what a stream of new questions costs.

Prints the medians over rounds; ``--json`` writes every round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, os, statistics, sys, time
from datetime import date
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from bench_query import questions_for, stat_walk
from rag_lab.index import Changes, Index, default_index_path
from rag_lab.retrieval import query
try:
    from rag_lab.index.kept import close_kept
except ImportError:  # code before index/kept.py: query_once opens the index per call
    close_kept = None
root, pairs, distinct = Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
docs = int(root.name.rsplit("_", 1)[1])
today = date(2026, 12, 1)
config = query.request_config(5, query.DEFAULT_BUDGET, "codepoints", None, "relevance", True, today)

def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1e3

def timed(question, index):
    c, w = time.thread_time(), time.perf_counter()
    result = query.run_request(question, root, index, config, None, Changes)
    return time.thread_time() - c, time.perf_counter() - w, result

out = {"load": os.getloadavg()[0]}
for name, question in questions_for(root.parent, docs).items():
    query.query_once(question, root, as_of=today)
    ratios, walks, wholes, cold, cpu_ratios = [], [], [], [], []
    for _ in range(pairs):
        t, c = time.perf_counter(), time.thread_time(); stat_walk(root)
        walk, walk_cpu = time.perf_counter() - t, time.thread_time() - c
        t, c = time.perf_counter(), time.thread_time(); query.query_once(question, root, as_of=today)
        whole, whole_cpu = time.perf_counter() - t, time.thread_time() - c
        ratios.append(whole / walk); walks.append(walk); wholes.append(whole); cpu_ratios.append(whole_cpu / walk_cpu)
        if close_kept is not None:  # the first call of a process: the index opened afresh
            close_kept()
            t = time.perf_counter(); stat_walk(root); walk = time.perf_counter() - t
            t = time.perf_counter(); query.query_once(question, root, as_of=today); cold.append((time.perf_counter() - t) / walk)
    with Index(default_index_path(root)) as index:
        for _ in range(20):
            result = timed(question, index)[2]
        cpu, wall = zip(*[timed(question, index)[:2] for _ in range(300)])
    out[name] = {"status": f"{result['status']} / {result['reason']}", "ratio": statistics.median(ratios),
                 "ratio_fresh_open": statistics.median(cold or ratios), "cpu_ratio": statistics.median(cpu_ratios),
                 "walk_ms": statistics.median(walks) * 1e3, "query_once_ms": statistics.median(wholes) * 1e3,
                 "wall_p50": pct(wall, 0.5), "wall_p95": pct(wall, 0.95),
                 "cpu_p50": pct(cpu, 0.5), "cpu_p95": pct(cpu, 0.95)}
manifest = json.loads((root.parent / f"corpus_{docs}.manifest.json").read_text())
asked = [f"{k['subject']}的{k['field']}是什么？" for k in manifest["single_source_sample"]]
with Index(default_index_path(root)) as index:
    for q in asked[-20:]:
        timed(q, index)  # warm: imports, unit lengths, the first postings
    cpu, wall = zip(*[timed(q, index)[:2] for q in asked[:distinct]])
out["distinct"] = {"questions": len(cpu), "wall_p50": pct(wall, 0.5), "wall_p95": pct(wall, 0.95),
                   "cpu_p50": pct(cpu, 0.5), "cpu_p95": pct(cpu, 0.95)}
print(json.dumps(out))
"""


def run_child(code: str, args: list[str], src: Path | None) -> dict[str, Any]:
    """Run ``code`` in a fresh Python with ``args`` (and ``src`` first on its path, else this
    checkout's installed code): the JSON object its last printed line holds."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"the measuring process failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return result


def child(root: Path, src: Path | None, pairs: int, distinct: int) -> dict[str, Any]:
    return run_child(CHILD, [str(HERE), str(root), str(pairs), str(distinct)], src)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--base-src", type=Path, default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--distinct", type=int, default=200)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    codes = (["base"] if args.base_src else []) + ["this"]
    rounds: dict[str, list[dict[str, Any]]] = {c: [] for c in codes}
    for _ in range(args.rounds):
        for code in codes:
            rounds[code].append(child(args.root, args.base_src if code == "base" else None, args.pairs, args.distinct))
    for code in codes:
        rows = rounds[code]
        loads = [r["load"] for r in rows]
        print(f"{code} (load {min(loads):.1f}–{max(loads):.1f})")
        for name in ("answered", "conflicting", "unknown", "distinct"):
            keys = [k for k in ("ratio", "ratio_fresh_open", "cpu_ratio", "walk_ms", "query_once_ms", "wall_p50", "wall_p95",
                                "cpu_p50", "cpu_p95")
                    if k in rows[0][name]]
            cells = "  ".join(f"{k} {statistics.median(r[name][k] for r in rows):.3f}" for k in keys)
            print(f"  {name:12s} {cells}")
    if args.json:
        args.json.write_text(json.dumps(rounds, indent=1))


if __name__ == "__main__":
    main()
