"""CPU of the request without the freshness walk, per question: ``run_request`` on one open index.

    python benchmarks/request_cpu.py ROOT [--runs 300] [--profile] [--stages]

``ROOT`` is a corpus made by ``gen_corpus.py`` with a built index (``ROOT/.rag_lab/index.sqlite``)
and its ``ROOT.manifest.json`` beside it (the three questions of ``bench_query.questions_for``).
Per question: 20 warm-ups, then ``--runs`` requests, each timed by ``time.thread_time`` (CPU of
this thread: steadier than wall time on a shared machine) and ``time.perf_counter``; prints
p50/p95 of both. ``--profile``: one cProfile of 200 requests per question, top functions by
own time. ``--stages``: the stage split of ``profile_stages.install_query_timers`` (CPU ms).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import sys
import time
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_query import questions_for  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--stages", action="store_true")
    ap.add_argument("--only", default=None, help="one question name: answered, conflicting, unknown")
    args = ap.parse_args()
    from rag_lab.index import Changes, Index, default_index_path
    from rag_lab.retrieval import query

    root = args.root
    docs = int(root.name.rsplit("_", 1)[1])
    questions = questions_for(root.parent, docs)
    if args.only:
        questions = {args.only: questions[args.only]}
    config = query.request_config(5, query.DEFAULT_BUDGET, "codepoints", None, "relevance", True, date(2026, 12, 1))
    out = {}
    with Index(default_index_path(root)) as index:
        for name, question in questions.items():
            for _ in range(20):
                result = query.run_request(question, root, index, config, None, Changes)
            cpu, wall = [], []
            for _ in range(args.runs):
                c, w = time.thread_time(), time.perf_counter()
                query.run_request(question, root, index, config, None, Changes)
                cpu.append(time.thread_time() - c)
                wall.append(time.perf_counter() - w)
            cpu.sort()
            wall.sort()
            out[name] = {
                "status": f"{result['status']} / {result['reason']}",
                "cpu_p50_ms": round(statistics.median(cpu) * 1e3, 3),
                "cpu_p95_ms": round(cpu[int(len(cpu) * 0.95)] * 1e3, 3),
                "wall_p50_ms": round(statistics.median(wall) * 1e3, 3),
                "wall_p95_ms": round(wall[int(len(wall) * 0.95)] * 1e3, 3),
            }
            print(name, json.dumps(out[name]), flush=True)
            if args.stages:
                from profile_stages import install_query_timers
                from stage_timer import StageTimer

                t = StageTimer()
                install_query_timers(t)
                samples = []
                try:
                    for _ in range(100):
                        t.reset()
                        query.run_request(question, root, index, config, None, Changes)
                        samples.append(dict(t.cpu))
                finally:
                    t.restore()
                labels = sorted({k for s in samples for k in s})
                for k in sorted(labels, key=lambda k: -statistics.median(s.get(k, 0.0) for s in samples)):
                    print(f"   {statistics.median(s.get(k, 0.0) for s in samples) * 1e3:7.3f}  {k}")
            if args.profile:
                prof = cProfile.Profile()
                prof.enable()
                for _ in range(200):
                    query.run_request(question, root, index, config, None, Changes)
                prof.disable()
                pstats.Stats(prof).sort_stats("tottime").print_stats(35)


if __name__ == "__main__":
    main()
