"""How fast one question's postings come out of SQLite: page size and mmap, fresh connection per question.

    python benchmarks/probe_reads.py [--docs 100000] [--runs 15] [--out benchmarks/out]

``query_once`` opens the index for every question, so SQLite's own page cache is always
cold and each postings blob of a common bigram (hundreds of KiB) is read as a chain of
overflow pages, one ``pread`` per page. Compared, on a fresh read-only immutable connection
per question (as ``Index`` opens it): today's file (4 KiB pages), the same with
``PRAGMA mmap_size``, and a copy with 64 KiB pages (``VACUUM INTO``), plain and with mmap.
Prints the median wall and CPU ms of fetching the three bench_query questions' postings rows.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_index import ensure_corpus, require_schema  # noqa: E402
from bench_query import questions_for  # noqa: E402


def fetch(path: Path, terms: list[int], mmap: bool) -> tuple[float, float]:
    """(wall, CPU) seconds: CPU time is steadier when the machine is shared."""
    began, cpu = time.perf_counter(), time.process_time()
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    if mmap:
        db.execute("PRAGMA mmap_size = 1073741824")
    marks = ",".join("?" * len(terms))
    db.execute(f"SELECT ids, tfs, lens FROM postings WHERE term IN ({marks})", terms).fetchall()
    db.close()
    return time.perf_counter() - began, time.process_time() - cpu


def main() -> int:
    from rag_lab.index.terms import query_terms

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=100000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    args = ap.parse_args()
    root = ensure_corpus(args.out, args.docs)
    today = root / ".rag_lab" / "index.sqlite"
    require_schema(today, (3, 4), "probe_reads.py")
    big = args.out / f"pages64k_{args.docs}.sqlite"
    if not big.exists():
        big.unlink(missing_ok=True)
        db = sqlite3.connect(today)
        db.execute("PRAGMA page_size = 65536")
        db.execute("VACUUM INTO ?", (str(big),))
        db.close()
    print(f"load {os.getloadavg()[0]:.1f}; sizes: 4 KiB pages {today.stat().st_size / 1e6:.1f} MB, "
          f"64 KiB pages {big.stat().st_size / 1e6:.1f} MB")
    qs = questions_for(args.out, args.docs)
    for label, question in qs.items():
        terms = query_terms(question)
        row = []
        for name, path, mmap in [("4K", today, False), ("4K+mmap", today, True), ("64K", big, False),
                                 ("64K+mmap", big, True)]:
            fetch(path, terms, mmap)
            samples = [fetch(path, terms, mmap) for _ in range(args.runs)]
            wall = statistics.median(s[0] for s in samples) * 1e3
            cpu = statistics.median(s[1] for s in samples) * 1e3
            row.append(f"{name} {wall:.1f} ms (CPU {cpu:.1f})")
        print(f"{label:12} " + "  ".join(row))
    print(f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
