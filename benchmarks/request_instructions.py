"""Instructions per request (valgrind's callgrind), this checkout against another ``src``.

    python benchmarks/request_instructions.py ROOT [--base-src /tmp/base/src] [--runs 20]

On a machine shared by other work, CPU time per request moves with the load (other processes
evict the caches between two requests); the number of instructions a request executes does
not. Per code, one process runs under ``valgrind --tool=callgrind`` (needs valgrind): it opens
the index of ``ROOT`` (a ``gen_corpus.py`` corpus with its index and ``ROOT.manifest.json``
beside it), asks each question of ``bench_query.questions_for`` 10 times (warm-up), then
``--runs`` times each between markers (a call of ``os.getppid``, where callgrind dumps its
counters: ``--dump-before=getppid``); prints instructions per request per question and the
ratio of this checkout to the base. Instructions are not time (a cache miss costs more than
an instruction), but an instruction saved is saved at any load. About a minute per code at
100k documents.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAMES = ("answered", "conflicting", "unknown")

CHILD = r"""
import os, sys
from datetime import date
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from bench_query import questions_for
from rag_lab.index import Changes, Index, default_index_path
from rag_lab.retrieval import query
root, runs = Path(sys.argv[2]), int(sys.argv[3])
docs = int(root.name.rsplit("_", 1)[1])
questions = questions_for(root.parent, docs)
config = query.request_config(5, query.DEFAULT_BUDGET, "codepoints", None, "relevance", True, date(2026, 12, 1))
with Index(default_index_path(root)) as index:
    for question in questions.values():
        for _ in range(10):
            query.run_request(question, root, index, config, None, Changes)
    for name in ("answered", "conflicting", "unknown"):  # NAMES
        os.getppid()  # callgrind dumps the counters here
        for _ in range(runs):
            query.run_request(questions[name], root, index, config, None, Changes)
    os.getppid()
"""


def instructions(root: Path, src: Path | None, runs: int) -> dict[str, float]:
    """Instructions per request of each question, for the code at ``src`` (None: this checkout)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "cg.out"
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--dump-before=getppid", f"--callgrind-out-file={out}",
             sys.executable, "-c", CHILD, str(HERE), str(root), str(runs)],
            check=True, capture_output=True, text=True, env=env,
        )
        dumps = sorted(Path(work).glob("cg.out.*"), key=lambda p: int(p.suffix[1:]))
        totals = [_total(p) for p in dumps]
    # dump 1: start and warm-up; dumps 2–4: the questions in NAMES order
    return {name: total / runs for name, total in zip(NAMES, totals[1:4], strict=True)}


def _total(dump: Path) -> int:
    for line in dump.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise SystemExit(f"{dump}: no totals line")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--base-src", type=Path, default=None)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    this = instructions(args.root, None, args.runs)
    base = instructions(args.root, args.base_src, args.runs) if args.base_src else None
    for name in NAMES:
        line = f"{name}: this {this[name] / 1e6:.3f} M instructions per request"
        if base is not None:
            line += f", base {base[name] / 1e6:.3f} M, this ÷ base {this[name] / base[name]:.3f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
