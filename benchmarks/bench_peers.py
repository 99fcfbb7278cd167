"""rag_lab next to other retrievers on the same generated corpus and the same questions.

    python benchmarks/bench_peers.py [--sizes 10000 100000] [--questions 500]
                                     [--peers rag_lab,tantivy,fts5] [--build-only] [--out benchmarks/out]

Peers (each runs in its own child process, so its peak RSS is its own):

* **rag_lab** — ``rag-lab index ROOT`` (a fresh process; wall time and peak RSS of that process);
  the index file's bytes. Questions on one open index: ``rank`` (parse, BM25, named keys
  first, fetch the top 5 units) and ``rank`` with ``named_keys_first=False`` (BM25 alone, the
  engine-to-engine comparison); the whole request without the freshness walk (``run_request``:
  rank, pack, verify, audit, decide); and ``query_once`` (walk included) on the first 20 questions.
* **tantivy** (``pip install -r benchmarks/requirements.txt``; skipped when not installed) —
  tantivy's ``ngram(2, 2)`` tokenizer + lowercase on the same unit text rag_lab ranks (the
  subject, a space, the field line), term frequencies without positions; the unit's source
  and field stored in the index. A question is a BooleanQuery of SHOULD term queries, one per
  distinct character pair of the lowercased question; the top 5 hits' stored fields are read.
* **fts5** (SQLite FTS5 from the standard library) — ``unicode61`` over the unit text split into
  NFKC-casefolded character bigrams (FTS5's ``trigram`` tokenizer cannot match 2-character
  terms); a question is the OR of its bigrams, ``ORDER BY rank LIMIT 5``. Slow: only the first
  100 questions are timed.

Peers' builds walk the corpus, read every file and split it into the same units (subject +
field line) in Python; they do not hash. Every build is compared with the same floor: walk +
read + SHA-256 of every file, taken in the same run.

Questions: the generator's 500 sampled single-source keys, ``{subject}的{field}是什么？``; a hit
at k is a top-k unit with exactly the labelled (source file, field). Reported: build s,
build ÷ floor (wall, and CPU ÷ the floor's CPU: steadier on a shared machine), index bytes ÷ corpus
bytes, peak RSS, query p50 / p95 (ms) and CPU p50, recall@1, @5.
``--build-only`` skips the questions (for 1M documents).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_index import build_command, cli_command, code_state, ensure_corpus, floor_read_hash, run_child  # noqa: E402

PEERS = ("rag_lab", "tantivy", "fts5")
QUERY_ONCE_QUESTIONS = 20
FTS5_QUESTIONS = 100
_NON_WORD = re.compile(r"[\W_]+")

Key = tuple[str, str]  # (source file, field)


def questions(out: Path, docs: int, limit: int) -> list[tuple[str, Key]]:
    manifest = json.loads((out / f"corpus_{docs}.manifest.json").read_text())
    return [
        (f"{k['subject']}的{k['field']}是什么？", (k["source"], k["field"]))
        for k in manifest["single_source_sample"][:limit]
    ]


def corpus_units(root: Path) -> Iterator[tuple[str, str, str]]:
    """(source, field, text) for every field line, text = subject + " " + line (what rag_lab ranks)."""
    base = str(root)
    stack = [os.path.join(base, "documents")]
    files: list[str] = []
    while stack:
        folder = stack.pop()
        with os.scandir(folder) as it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.name.endswith(".md"):
                    files.append(entry.path)
    files.sort()
    cut = len(base) + 1
    for path in files:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8")
        subject = ""
        for line in text.split("\n"):
            name, sep, _value = line.partition("：")
            if not sep:
                continue
            if name == "主题":
                subject = _value.strip()
                continue
            yield path[cut:], name.strip(), f"{subject} {line.strip()}"


def recall(results: list[list[Key]], gold: list[Key]) -> dict[str, float]:
    n = len(gold) or 1
    return {
        "recall_at_1": sum(1 for r, g in zip(results, gold, strict=True) if g in r[:1]) / n,
        "recall_at_5": sum(1 for r, g in zip(results, gold, strict=True) if g in r[:5]) / n,
    }


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


def timed_queries(search: Callable[[str], list[Key]], qs: list[tuple[str, Key]]) -> dict[str, Any]:
    for question, _ in qs[:5]:  # warm-up
        search(question)
    times, cpus, results = [], [], []
    for question, _ in qs:
        began, cpu = time.perf_counter(), time.process_time()
        results.append(search(question))
        times.append(time.perf_counter() - began)
        cpus.append(time.process_time() - cpu)
    return {
        "questions": len(qs),
        "p50_ms": statistics.median(times) * 1e3,
        "p95_ms": pct(times, 0.95) * 1e3,
        "cpu_p50_ms": statistics.median(cpus) * 1e3,  # steadier than wall time on a shared machine
        "cpu_p95_ms": pct(cpus, 0.95) * 1e3,
        **recall(results, [g for _, g in qs]),
    }


def dir_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# -- peers (each runs in a child process) --------------------------------------------------------------


def cpu_seconds() -> float:
    """CPU of this process (all threads) and of its reaped children (a CLI build and its workers)."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run_rag_lab(root: Path, qs: list[tuple[str, Key]], build_only: bool) -> dict[str, Any]:
    cli = cli_command()
    cpu = cpu_seconds()
    wall, peak, _ = run_child(build_command(root, cli))
    cpu = cpu_seconds() - cpu
    from rag_lab.index import Changes, Index, default_index_path

    path = default_index_path(root)
    out: dict[str, Any] = {"build_s": wall, "build_cpu_s": cpu, "peak_rss_mib": peak / 2**20,
                           "index_bytes": path.stat().st_size}
    if build_only:
        return out
    query = importlib.import_module("rag_lab.retrieval.query")
    rank = importlib.import_module("rag_lab.retrieval.rank").rank

    def key_of(candidates: list[dict[str, Any]]) -> list[Key]:
        return [(c["evidence"]["source"], c["evidence"]["field"]) for c in candidates]

    with Index(path) as index:
        out["queries"] = timed_queries(lambda q: key_of(rank(q, index, 5)[0]), qs)
        out["queries_bm25_only"] = timed_queries(lambda q: key_of(rank(q, index, 5, named_keys_first=False)[0]), qs)
        config = query.request_config(5, query.DEFAULT_BUDGET, "codepoints", None, "relevance", True, _day())
        answered: list[bool] = []

        def request(q: str) -> list[Key]:
            result = query.run_request(q, root, index, config, None, Changes)
            answered.append(result["status"] == "answered")
            return [(c["source"], s["field"]) for s in result["slots"] for c in s["citations"]]

        out["request_no_walk"] = timed_queries(request, qs)
        out["request_no_walk"]["answered"] = sum(answered[-len(qs):]) / len(qs)
    sub = qs[:QUERY_ONCE_QUESTIONS]
    out["query_once"] = timed_queries(
        lambda q: [
            (c["source"], s["field"]) for s in query.query_once(q, root, as_of=_day())["slots"] for c in s["citations"]
        ],
        sub,
    )
    return out


def _day() -> Any:
    from datetime import date

    return date(2026, 12, 1)


def run_tantivy(root: Path, qs: list[tuple[str, Key]], build_only: bool, work: Path) -> dict[str, Any]:
    import tantivy

    folder = work / "tantivy"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    began, cpu = time.perf_counter(), cpu_seconds()
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("text", stored=False, tokenizer_name="bigram", index_option="freq")
    builder.add_bytes_field("key", stored=True, indexed=False, fast=False)
    schema = builder.build()
    analyzer = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.ngram(2, 2, False)).filter(tantivy.Filter.lowercase()).build()
    index = tantivy.Index(schema, path=str(folder))
    index.register_tokenizer("bigram", analyzer)
    writer = index.writer(heap_size=256_000_000)
    units = 0
    for source, field, text in corpus_units(root):
        writer.add_document(tantivy.Document(text=text, key=f"{source}\t{field}".encode()))
        units += 1
    writer.commit()
    writer.wait_merging_threads()
    build = time.perf_counter() - began
    out: dict[str, Any] = {"build_s": build, "build_cpu_s": cpu_seconds() - cpu, "units": units,
                           "index_bytes": dir_bytes(folder)}
    if build_only:
        return out
    index = tantivy.Index.open(str(folder))
    index.register_tokenizer("bigram", analyzer)
    index.reload()
    searcher = index.searcher()
    should = tantivy.Occur.Should

    def search(question: str) -> list[Key]:
        low = question.lower()
        grams = dict.fromkeys(low[i : i + 2] for i in range(len(low) - 1))
        q = tantivy.Query.boolean_query([(should, tantivy.Query.term_query(schema, "text", g)) for g in grams])
        keys = []
        for _score, address in searcher.search(q, 5, count=False).hits:
            source, field = bytes(searcher.doc(address)["key"][0]).decode().split("\t")
            keys.append((source, field))
        return keys

    out["queries"] = timed_queries(search, qs)
    return out


def _bigrams(text: str) -> list[str]:
    runs = _NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).split()
    return [r[i : i + 2] for r in runs for i in range(max(len(r) - 1, 1))]


def run_fts5(root: Path, qs: list[tuple[str, Key]], build_only: bool, work: Path) -> dict[str, Any]:
    path = work / "fts5.sqlite"
    path.unlink(missing_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    began, cpu = time.perf_counter(), cpu_seconds()
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("CREATE VIRTUAL TABLE u USING fts5(text, source UNINDEXED, field UNINDEXED, tokenize='unicode61')")
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO u VALUES (?, ?, ?)", ((" ".join(_bigrams(t)), s, f) for s, f, t in corpus_units(root))
    )
    db.execute("COMMIT")
    db.execute("INSERT INTO u(u) VALUES ('optimize')")
    db.close()
    out: dict[str, Any] = {"build_s": time.perf_counter() - began, "build_cpu_s": cpu_seconds() - cpu,
                           "index_bytes": path.stat().st_size}
    if build_only:
        return out
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)

    def search(question: str) -> list[Key]:
        terms = " OR ".join(f'"{g}"' for g in dict.fromkeys(_bigrams(question)))
        rows = db.execute("SELECT source, field FROM u WHERE u MATCH ? ORDER BY rank LIMIT 5", (terms,)).fetchall()
        return [(s, f) for s, f in rows]

    out["queries"] = timed_queries(search, qs[:FTS5_QUESTIONS])
    return out


def child(peer: str, root: Path, out: Path, docs: int, limit: int, build_only: bool) -> dict[str, Any]:
    qs = [] if build_only else questions(out, docs, limit)
    work = root / ".peers"
    if peer == "rag_lab":
        return run_rag_lab(root, qs, build_only)
    try:
        if peer == "tantivy":
            return run_tantivy(root, qs, build_only, work)
        return run_fts5(root, qs, build_only, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def installed(peer: str) -> str | None:
    """None when the peer can run, else why not."""
    if peer == "tantivy":
        try:
            importlib.import_module("tantivy")
        except ImportError:
            return "tantivy is not installed (pip install -r benchmarks/requirements.txt)"
    if peer == "fts5":
        try:
            sqlite3.connect(":memory:").execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        except sqlite3.OperationalError:
            return "this Python's SQLite has no FTS5"
    return None


def run_peer(peer: str, root: Path, args: argparse.Namespace, docs: int) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", peer, str(root), "--docs", str(docs),
           "--questions", str(args.questions), "--out", str(args.out)]
    if args.build_only:
        cmd.append("--build-only")
    began = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"peer": peer, "error": proc.stderr[-1500:]}
    row: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    row["peer"] = peer
    row["child_wall_s"] = time.perf_counter() - began
    return row


def child_peak_rss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def fmt(row: dict[str, Any], key: str, floor: float, floor_cpu: float, corpus: int) -> str:
    q = row.get(key)
    label = {"queries": "", "queries_bm25_only": " (BM25 only)", "request_no_walk": " request w/o walk",
             "query_once": " query_once"}[key]
    build = (f"{row['build_s']:.2f} | {row['build_s'] / floor:.1f}× | {row['build_cpu_s'] / floor_cpu:.1f}×"
             if key == "queries" else "| |")
    size = f"{row['index_bytes'] / 1e6:.1f} MB = {row['index_bytes'] / corpus:.2f}×" if key == "queries" else ""
    rss = f"{row['peak_rss_mib']:.0f}" if key == "queries" and "peak_rss_mib" in row else ""
    if q is None:
        return f"| {row['peer']}{label} | {build} | {size} | {rss} | – | – | – | – | – |"
    return (
        f"| {row['peer']}{label} | {build} | {size} | {rss} | {q['p50_ms']:.2f} | {q['p95_ms']:.2f} | "
        f"{q['cpu_p50_ms']:.2f} | {q['recall_at_1']:.3f} | {q['recall_at_5']:.3f} |"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    ap.add_argument("--docs", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--questions", type=int, default=500)
    ap.add_argument("--peers", default=",".join(PEERS))
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--child", nargs=2, metavar=("PEER", "ROOT"), help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.child:
        peer, root = args.child
        result = child(peer, Path(root), args.out, args.docs, args.questions, args.build_only)
        result.setdefault("peak_rss_mib", child_peak_rss_mib())
        print(json.dumps(result))
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    unknown = sorted(set(peers) - set(PEERS))
    if unknown:
        ap.error(f"unknown peer(s) {', '.join(unknown)}; choose from {', '.join(PEERS)}")
    state = code_state()
    report: dict[str, Any] = {"code": state, "python": sys.version.split()[0], "sizes": []}
    for docs in args.sizes:
        root = ensure_corpus(args.out, docs)
        floor_read_hash(root)  # warm the page cache
        floors, floor_cpus = [], []
        for _ in range(3):
            cpu = time.process_time()
            floors.append(floor_read_hash(root))
            floor_cpus.append(time.process_time() - cpu)
        floor = statistics.median(f[0] for f in floors)
        corpus = floors[0][2]
        size: dict[str, Any] = {"docs": docs, "corpus_bytes": corpus, "floor_read_hash_s": floor,
                                "floor_cpu_s": statistics.median(floor_cpus), "peers": []}
        print(f"N={docs}: corpus {corpus / 1e6:.1f} MB, floor (walk + read + SHA-256) {floor:.3f} s", flush=True)
        for peer in peers:
            why = installed(peer)
            if why is not None:
                print(f"  {peer}: skipped — {why}", flush=True)
                size["peers"].append({"peer": peer, "skipped": why})
                continue
            load = os.getloadavg()[0]
            row = run_peer(peer, root, args, docs)
            row["loadavg_before"] = load
            size["peers"].append(row)
            if "error" in row:
                print(f"  {peer}: FAILED\n{row['error']}", flush=True)
            else:
                print(f"  {peer}: build {row['build_s']:.2f} s, index {row['index_bytes'] / 1e6:.1f} MB, "
                      f"load {load:.1f}", flush=True)
        report["sizes"].append(size)
    report["loadavg_end"] = os.getloadavg()[0]
    report["code_changed_during_run"] = code_state() != state
    print()
    print("| docs | peer | build s | build ÷ floor | build CPU ÷ floor CPU | index on disk ÷ corpus | peak RSS MiB "
          "| p50 ms | p95 ms | CPU p50 ms | recall@1 | recall@5 |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in report["sizes"]:
        for row in size["peers"]:
            if "skipped" in row or "error" in row:
                print(f"| {size['docs']:,} | {row['peer']} | skipped: {row.get('skipped') or 'error'} |||||||||")
                continue
            keys = [k for k in ("queries", "queries_bm25_only", "request_no_walk", "query_once") if k in row]
            for key in keys or ["queries"]:
                print(f"| {size['docs']:,} "
                      + fmt(row, key, size["floor_read_hash_s"], size["floor_cpu_s"], size["corpus_bytes"]))
    path = args.json or args.out / "peers.json"
    path.write_text(json.dumps(report, ensure_ascii=False, indent=2))
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
