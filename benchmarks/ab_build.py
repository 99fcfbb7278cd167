"""A/B of the build's CPU and wall time: ``rag-lab index ROOT`` with two ``src`` folders, alternated.

    python benchmarks/ab_build.py ROOT BASE_SRC THIS_SRC [--runs 4]

Each run builds ROOT's default index in a fresh process with ``PYTHONPATH=SRC`` (base, then
this, back to back, so both see the same load) and records the CPU of that process and its
workers (``getrusage(RUSAGE_CHILDREN)``) and its wall time; prints each run, then the medians. No floors, no
digests, no questions: for comparing two codes' build CPU when ``bench_compact.py``'s runs are
too noisy. The index in ROOT is overwritten.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = (
    "import resource, subprocess, sys, time\n"
    "began = time.perf_counter()\n"
    "subprocess.run([sys.executable, '-m', 'rag_lab.cli', 'index', sys.argv[1]], check=True,"
    " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "wall = time.perf_counter() - began\n"
    "ru = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(ru.ru_utime + ru.ru_stime, wall)\n"
)


def build_cpu(root: Path, src: Path) -> tuple[float, float]:
    """(CPU s, wall s) of one ``rag-lab index ROOT`` run with ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(root)], env=env, capture_output=True, text=True, check=True)
    cpu, wall = out.stdout.split()
    return float(cpu), float(wall)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("base_src", type=Path)
    ap.add_argument("this_src", type=Path)
    ap.add_argument("--runs", type=int, default=4)
    args = ap.parse_args()
    got: dict[str, list[tuple[float, float]]] = {"base": [], "this": []}
    for run in range(args.runs):
        for name, src in (("base", args.base_src), ("this", args.this_src)):
            got[name].append(build_cpu(args.root, src.resolve()))
            cpu, wall = got[name][-1]
            print(f"run {run + 1} {name}: {cpu:.2f} s CPU, {wall:.2f} s wall (load {os.getloadavg()[0]:.1f})", flush=True)
    for name, runs in got.items():
        cpus, walls = [c for c, _ in runs], [w for _, w in runs]
        print(
            f"{name}: median {statistics.median(cpus):.2f} s CPU ({' / '.join(f'{c:.2f}' for c in cpus)}), "
            f"{statistics.median(walls):.2f} s wall ({' / '.join(f'{w:.2f}' for w in walls)})"
        )


if __name__ == "__main__":
    main()
