"""Index build benchmark: ``build_index`` vs. a read + SHA-256 floor, at 1k / 10k / 100k docs.

    python benchmarks/bench_index.py [--sizes 1000 10000 100000] [--runs 3] [--runs-large 2]
                                     [--out benchmarks/out] [--json benchmarks/out/index.json]

Corpora come from ``benchmarks/gen_corpus.py --seed 0`` and are cached in
``OUT/corpus_<N>`` (regenerated only when ``OUT/corpus_<N>.summary.json`` is missing).
Per size and run, in the same process and order:

* **floor** — walk ``documents/`` with ``os.scandir``, read every file and SHA-256 it
  (after one untimed warm-up pass, so the page cache is warm);
* **build** — a fresh subprocess: ``rag-lab index ROOT`` when the CLI works, otherwise
  ``python -c "from rag_lab.index import build_index; build_index(ROOT)"``. Wall time of the
  whole subprocess (interpreter start and imports included) and the peak RSS of that child
  (``os.wait4`` rusage ``ru_maxrss``, the per-child value of ``RUSAGE_CHILDREN``).

Reported: medians over runs, ratio build / floor, peak RSS, index size (MB = 10^6 bytes),
and the 1-minute load average before each run (the machine may be shared).
Goals: ratio ≤ 3× and peak RSS < 1 GiB at 100k.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
GIB = 1 << 30


def code_state() -> dict[str, object]:
    """Which code was measured: HEAD, and the uncommitted src/ changes (others edit concurrently)."""
    repo = HERE.parent

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True).stdout.strip()
        except OSError:
            return ""

    diff = git("diff", "HEAD", "--", "src")
    return {
        "head": git("rev-parse", "--short", "HEAD"),
        "dirty_src_files": [
            line.split(maxsplit=1)[-1] for line in git("status", "--short", "--", "src").splitlines()
        ],
        "src_diff_sha256": hashlib.sha256(diff.encode()).hexdigest()[:12] if diff else None,
    }


def ensure_corpus(out: Path, docs: int, seed: int = 0) -> Path:
    root = out / f"corpus_{docs}"
    summary = out / f"corpus_{docs}.summary.json"
    if summary.exists() and (root / "documents").is_dir():
        return root
    cmd = [
        sys.executable,
        str(HERE / "gen_corpus.py"),
        str(root),
        "--docs",
        str(docs),
        "--seed",
        str(seed),
        "--manifest",
        str(out / f"corpus_{docs}.manifest.json"),
        "--overwrite",
    ]
    proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
    summary.write_text(proc.stdout)
    return root


def corpus_files(root: Path) -> list[str]:
    found: list[str] = []
    stack = [str(root / "documents"), str(root / "images")]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            elif entry.name.endswith((".md", ".png")):
                found.append(entry.path)
    return found


def floor_read_hash(root: Path) -> tuple[float, int, int]:
    """Seconds to walk + read + SHA-256 every corpus file; (seconds, files, bytes)."""
    started = time.perf_counter()
    files = corpus_files(root)
    total = 0
    for path in files:
        with open(path, "rb") as handle:
            data = handle.read()
        hashlib.sha256(data).hexdigest()
        total += len(data)
    return time.perf_counter() - started, len(files), total


def require_schema(index: Path, versions: tuple[int, ...], script: str) -> None:
    """Exit with a clear message unless INDEX was built in one of the schema VERSIONS.

    The format probes measured the layouts that led to schema 5; they read those older tables
    directly, so on any other index they would fail with an SQL error half way through.
    """
    import sqlite3

    db = sqlite3.connect(f"{index.resolve().as_uri()}?mode=ro", uri=True)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as error:
        raise SystemExit(f"{script}: {index} is not a rag_lab index ({error})") from None
    finally:
        db.close()
    version = json.loads(meta.get("config", "{}")).get("schema_version")
    if version not in versions:
        wanted = " or ".join(str(v) for v in versions)
        raise SystemExit(
            f"{script}: {index} has index schema {version}; this probe reads schema {wanted} tables. "
            f"Rerun it from the code it measured: `git worktree add /tmp/probe 498bc10^` and build the "
            f"index with that checkout (PYTHONPATH=/tmp/probe/src)."
        )


def cli_command() -> list[str] | None:
    """``rag-lab`` (the real console script, not a pyenv shim) when ``rag-lab --help`` works."""
    candidates = [Path(sys.executable).parent / "rag-lab"]
    which = shutil.which("rag-lab")
    if which:
        candidates.append(Path(which))
    for exe in candidates:
        if not exe.exists():
            continue
        try:
            ok = subprocess.run([str(exe), "--help"], capture_output=True, timeout=60).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        if ok:
            return [str(exe)]
    return None


def build_command(root: Path, cli: list[str] | None) -> list[str]:
    if cli is not None:
        return [*cli, "index", str(root)]
    code = "import sys; from rag_lab.index import build_index; build_index(sys.argv[1])"
    return [sys.executable, "-c", code, str(root)]


def run_child(cmd: list[str]) -> tuple[float, int, str]:
    """(wall seconds, peak RSS bytes of that child, stderr tail); raises on failure."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()  # the child only writes a little; read before waiting
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd} failed ({proc.returncode}): {err.decode(errors='replace')[-2000:]}")
    return wall, usage.ru_maxrss * 1024, err.decode(errors="replace")[-500:]


def bench_size(out: Path, docs: int, runs: int, cli: list[str] | None) -> dict[str, object]:
    root = ensure_corpus(out, docs)
    index = root / ".rag_lab" / "index.sqlite"
    floor_read_hash(root)  # warm the page cache
    floors, builds, rss, sizes, loads = [], [], [], [], []
    files = nbytes = 0
    for run in range(runs):
        loads.append(os.getloadavg()[0])  # 1-minute load before the run: the machine may be shared
        seconds, files, nbytes = floor_read_hash(root)
        floors.append(seconds)
        wall, peak, _ = run_child(build_command(root, cli))
        builds.append(wall)
        rss.append(peak)
        sizes.append(index.stat().st_size)
        print(
            f"  N={docs:>6} run {run + 1}/{runs}: floor {seconds:7.3f} s  build {wall:7.2f} s  "
            f"ratio {wall / seconds:5.1f}x  peak RSS {peak / 2**20:7.1f} MiB  index {sizes[-1] / 1e6:6.1f} MB  "
            f"load {loads[-1]:.1f}",
            flush=True,
        )
    floor = statistics.median(floors)
    build = statistics.median(builds)
    ratios = [b / f for b, f in zip(builds, floors, strict=True)]
    return {
        "docs": docs,
        "files": files,
        "corpus_mb": round(nbytes / 1e6, 2),
        "runs": runs,
        "floor_s": [round(x, 4) for x in floors],
        "build_s": [round(x, 3) for x in builds],
        "floor_median_s": round(floor, 4),
        "build_median_s": round(build, 3),
        "ratio_median": round(statistics.median(ratios), 2),
        "peak_rss_mib": [round(x / 2**20, 1) for x in rss],
        "peak_rss_median_mib": round(statistics.median(rss) / 2**20, 1),
        "index_mb": round(statistics.median(sizes) / 1e6, 1),
        "loadavg_1min_before_runs": [round(x, 2) for x in loads],
        "goal_ratio_le_3": statistics.median(ratios) <= 3.0,
        "goal_rss_lt_1gib": max(rss) < GIB,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--runs", type=int, default=3, help="runs for sizes below 100k")
    ap.add_argument("--runs-large", type=int, default=2, help="runs for sizes ≥ 100k")
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    state = code_state()
    cli = cli_command()
    how = " ".join(build_command(Path("ROOT"), cli))
    print(f"build command: {how}", flush=True)
    rows = []
    for docs in args.sizes:
        runs = args.runs_large if docs >= 100000 else args.runs
        rows.append(bench_size(args.out, docs, runs, cli))
    print()
    print("| docs | corpus MB | floor s (read+sha256) | build s | build / floor | peak RSS MiB | index MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['docs']:,} | {r['corpus_mb']} | {r['floor_median_s']:.3f} | {r['build_median_s']:.2f} | "
            f"{r['ratio_median']:.1f}× | {r['peak_rss_median_mib']:.0f} | {r['index_mb']} |"
        )
    report = {
        "command": how,
        "code": state,
        "code_changed_during_run": code_state() != state,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "loadavg_end": os.getloadavg(),
        "children_maxrss_mib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
        "sizes": rows,
    }
    path = args.json or args.out / "index.json"
    path.write_text(json.dumps(report, ensure_ascii=False, indent=2))
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
