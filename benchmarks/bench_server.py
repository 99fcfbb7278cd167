"""Latency of ``POST /api/ask`` on loopback, by corpus size, and a bounded load run.

    python benchmarks/bench_server.py [--sizes 1000,10000,100000] [--requests 400]
                                      [--load-seconds 30] [--clients 4] [--work DIR] [--json]

For each size: generate the corpus with ``gen_corpus.py`` (seed 0), build its index,
start ``rag_lab.server.run`` in a subprocess on 127.0.0.1 (a free port), then send
``--requests`` sequential asks over one keep-alive connection, cycling through the
generator's 500 sampled single-source keys ("<subject> <field>", all answerable), after
a warm-up. The median is client-side wall time per request (HTTP included). For
contrast, ``query_once`` (which walks the corpus for freshness on every call) is timed
in-process on the same corpus. The load run (at the largest size) has ``--clients``
threads, each with its own connection, asking in a loop for ``--load-seconds``: p50/p99,
requests/s and the error count (non-200 or transport error). Traffic goes to
127.0.0.1 only and every loop is bounded in time and count.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
MAX_LOAD_REQUESTS = 2_000_000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def prepare(work: Path, docs: int) -> tuple[Path, list[str], dict[str, Any]]:
    from rag_lab.index import build_index

    root = work / f"corpus_{docs}"
    manifest = work / f"manifest_{docs}.json"
    if not manifest.exists():
        subprocess.run(
            [
                sys.executable,
                str(HERE / "gen_corpus.py"),
                str(root),
                "--docs",
                str(docs),
                "--seed",
                "0",
                "--manifest",
                str(manifest),
                "--overwrite",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    summary = build_index(root).as_dict()
    sample = json.loads(manifest.read_text(encoding="utf-8"))["single_source_sample"]
    questions = [f"{item['subject']} {item['field']}" for item in sample]
    return root, questions, summary


class Client:
    """One keep-alive HTTP/1.1 connection (stdlib ``http.client``: the lightest client, so
    the figures are mostly the server's)."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def ask(self, question: str) -> tuple[int, bytes]:
        body = json.dumps({"question": question}, ensure_ascii=False).encode()
        self.connection.request("POST", "/api/ask", body, {"Content-Type": "application/json"})
        response = self.connection.getresponse()
        return response.status, response.read()

    def close(self) -> None:
        self.connection.close()


class Server:
    """``rag_lab.server.run`` in a child process on 127.0.0.1."""

    def __init__(self, root: Path, log: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        code = f"from rag_lab.server import run; run({str(root)!r}, host='127.0.0.1', port={self.port})"
        self._log = open(log, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen([sys.executable, "-c", code], stdout=self._log, stderr=self._log)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}; see {log}")
            try:
                if httpx.get(self.base + "/api/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("server did not start within 120 s")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()


def sequential(port: int, questions: list[str], count: int, warmup: int = 30) -> dict[str, Any]:
    timings: list[float] = []
    statuses: dict[str, int] = {}
    client = Client(port)
    try:
        for i in range(warmup + count):
            question = questions[i % len(questions)]
            started = time.perf_counter()
            status, body = client.ask(question)
            elapsed = time.perf_counter() - started
            if i >= warmup:
                timings.append(elapsed * 1000)
                key = str(json.loads(body).get("status")) if status == 200 else str(status)
                statuses[key] = statuses.get(key, 0) + 1
    finally:
        client.close()
    return {
        "requests": count,
        "median_ms": round(statistics.median(timings), 3),
        "p90_ms": round(percentile(timings, 0.90), 3),
        "p99_ms": round(percentile(timings, 0.99), 3),
        "statuses": statuses,
    }


def load(port: int, questions: list[str], clients: int, seconds: float) -> dict[str, Any]:
    timings: list[list[float]] = [[] for _ in range(clients)]
    errors = [0] * clients
    deadline = time.monotonic() + seconds

    def worker(n: int) -> None:
        client = Client(port)
        i = n
        while time.monotonic() < deadline and len(timings[n]) < MAX_LOAD_REQUESTS:
            started = time.perf_counter()
            try:
                status, _ = client.ask(questions[i % len(questions)])
                ok = status == 200
            except (OSError, http.client.HTTPException):
                ok = False
                client.close()
                client = Client(port)
            timings[n].append((time.perf_counter() - started) * 1000)
            errors[n] += 0 if ok else 1
            i += clients
        client.close()

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 60)
    wall = time.monotonic() - started
    every = [t for per in timings for t in per]
    return {
        "clients": clients,
        "seconds": round(wall, 1),
        "requests": len(every),
        "errors": sum(errors),
        "requests_per_s": round(len(every) / wall, 1),
        "p50_ms": round(percentile(every, 0.50), 3),
        "p99_ms": round(percentile(every, 0.99), 3),
    }


def time_query_once(root: Path, questions: list[str], count: int) -> float:
    from rag_lab.retrieval import query_once

    timings = []
    for i in range(count):
        started = time.perf_counter()
        query_once(questions[i % len(questions)], root)
        timings.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(timings), 3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--load-seconds", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--query-once", type=int, default=10, help="query_once calls per size (0: skip)")
    parser.add_argument("--work", type=Path, help="where corpora go (default: a temporary folder)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_server_"))
    work.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    report: dict[str, Any] = {"sizes": [], "cpu_count": os.cpu_count()}
    for docs in sizes:
        root, questions, built = prepare(work, docs)
        server = Server(root, work / f"server_{docs}.log")
        try:
            row = {"docs": docs, "units": built["units"], "build_s": built["seconds"]}
            row.update(sequential(server.port, questions, args.requests))
            if docs == sizes[-1] and args.load_seconds > 0:
                report["load"] = {
                    "docs": docs,
                    **load(server.port, questions, args.clients, args.load_seconds),
                }
        finally:
            server.stop()
        if args.query_once:
            row["query_once_median_ms"] = time_query_once(root, questions, args.query_once)
        report["sizes"].append(row)
        print(json.dumps(row, ensure_ascii=False), file=sys.stderr)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
    else:
        print("| docs | units | median ms | p90 ms | p99 ms | query_once median ms |")
        print("|---:|---:|---:|---:|---:|---:|")
        for row in report["sizes"]:
            print(
                f"| {row['docs']:,} | {row['units']:,} | {row['median_ms']} | {row['p90_ms']} | "
                f"{row['p99_ms']} | {row.get('query_once_median_ms', '–')} |"
            )
        if "load" in report:
            load_row = report["load"]
            print(
                f"\nload at {load_row['docs']:,} docs: {load_row['clients']} clients × {load_row['seconds']} s, "
                f"{load_row['requests']} requests ({load_row['requests_per_s']}/s), p50 {load_row['p50_ms']} ms, "
                f"p99 {load_row['p99_ms']} ms, errors {load_row['errors']}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
