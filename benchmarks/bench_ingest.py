"""Per-file cost of ingest and verification (docs: benchmarks/README.md, "Ingest and verification").

Two measurements, each in a fresh subprocess so peak RSS is the build's own:

- ``memory``: peak RSS of ``build_index`` on a corpus holding one document of SIZE MB made
  of field lines (``字段N：值N``, the dense case: one unit per ~25 bytes), beside two small
  documents; with the default per-file limit and with the limit raised above SIZE.
- ``verify``: ``query_once`` on one ~2 MB document whose units all answer one subject,
  ``top_k`` 200 and the largest budget, so 200 units of one file are verified per request.

    python benchmarks/bench_ingest.py memory --mb 50
    python benchmarks/bench_ingest.py verify --repeat 5

Run with ``PYTHONPATH=/path/to/other/src`` to measure another checkout the same way.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUILD = """
import json, resource, sys, time
from rag_lab.index import build_index
kwargs = {} if sys.argv[2] == "default" else {"max_file_bytes": int(sys.argv[2])}
t = time.perf_counter()
s = build_index(sys.argv[1], **kwargs)
print(json.dumps({"units": s.units, "errors": len(s.errors), "seconds": round(time.perf_counter() - t, 2),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))
"""


def _small(root: Path) -> None:
    (root / "documents").mkdir(parents=True)
    (root / "documents/a.md").write_text("主题：借阅台\n开放时间：九点。\n", encoding="utf-8")
    (root / "documents/b.md").write_text("主题：咨询台\n地点：一楼\n", encoding="utf-8")


def memory(mb: int, raised: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "corpus"
        _small(root)
        with open(root / "documents/dense.md", "wb") as out:
            out.write("主题：大文件\n".encode())
            i = 0
            while out.tell() < mb * 1024 * 1024:
                out.write("".join(f"字段{n}：值{n}\n" for n in range(i, i + 10000)).encode())
                i += 10000
        size = (root / "documents/dense.md").stat().st_size
        small = Path(tmp) / "small"
        _small(small)
        for label, path, limit in (
            ("two small documents only", small, "default"),
            (f"+ {size / 2**20:.0f} MB dense document, default limit", root, "default"),
            (f"+ {size / 2**20:.0f} MB dense document, limit raised", root, str(size + 1)),
        )[: 3 if raised else 2]:
            out = subprocess.run([sys.executable, "-c", BUILD, str(path), limit], capture_output=True, text=True)
            print(label, out.stdout.strip() or out.stderr.strip().splitlines()[-1])


def verify(repeat: int) -> None:
    from rag_lab.index import build_index
    from rag_lab.retrieval import query_once

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "corpus"
        _small(root)
        lines = "".join(f"字段{n}：{'值' * 40}{n}\n" for n in range(16000))
        (root / "documents/big.md").write_text("主题：大文件\n" + lines, encoding="utf-8")
        size = (root / "documents/big.md").stat().st_size
        build_index(root)
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            result = query_once("大文件 字段1", root, top_k=200, budget=100_000)
            times.append(time.perf_counter() - started)
        verified = sum(1 for e in result["trace"]["events"] if e["step"] == "verify")
        print(json.dumps({"file_mb": round(size / 2**20, 2), "verified_units": verified,
                          "status": result["status"], "best_s": round(min(times), 3),
                          "median_s": round(sorted(times)[len(times) // 2], 3)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    mem = sub.add_parser("memory")
    mem.add_argument("--mb", type=int, default=50)
    mem.add_argument("--raised", action="store_true", help="also build with the limit raised above the file")
    sub.add_parser("verify").add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    memory(args.mb, args.raised) if args.what == "memory" else verify(args.repeat)


if __name__ == "__main__":
    main()
