"""Issue 18's goals, before and after a format change, measured in one run against its floors.

    python benchmarks/bench_compact.py --docs 100000 --runs 3 --base-src /tmp/base/src
    python benchmarks/bench_compact.py --docs 10000 --runs 3          # this checkout only

``--base-src``: a ``src`` folder of another commit (``git archive COMMIT src | tar -x -C DIR``);
its rows are measured in the same run, interleaved with this checkout's (run i of each back to
back), so both see the same load. Per run and code: the floors (read + SHA-256 of every corpus
file; a bare stat walk), ``rag-lab index ROOT`` in a fresh process (wall, CPU of the process and
its workers, peak RSS), the index bytes, then in a fresh process per code: ``query_once`` for
the three questions of ``bench_query.questions_for`` (each run paired with a stat walk just
before it), and the request without the walk (``run_request`` on one open index) p50 / p95.
Medians over runs. Writes ``benchmarks/out/compact_<docs>.json``.

After each build the SHA-256 of every table's rows (and of the whole file) is recorded, and the
run ends by saying whether every build of every code wrote the same tables (a build change
must not alter one stored byte), and whether every unit and the snapshot, read back by each
code's own ``Index``, are the same (what must hold across a schema change too). ``--no-questions``: time the builds only.

Any corpus (e.g. ``gen_prose_corpus.py``'s): ``--root DIR`` instead of ``--docs``; ``--vectors``
builds with ``rag-lab index --vectors``; ``--prose-questions FILE`` (``gen_prose_corpus.py
--questions``) times ``query_once`` over those questions (p50 / p95 over all of them, each
asked ``--query-runs`` times) and counts the answers that are the expected sentence.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_index import ensure_corpus  # noqa: E402
from bench_query import questions_for, stat_walk  # noqa: E402

QUESTION_SCRIPT = r"""
import json, statistics, sys, time
from datetime import date
from pathlib import Path
sys.path.insert(0, sys.argv[4])
from bench_query import stat_walk
from rag_lab.index import Changes, Index, default_index_path
from rag_lab.retrieval import query
root, runs, questions = Path(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
today = date(2026, 12, 1)
config = query.request_config(5, query.DEFAULT_BUDGET, "codepoints", None, "relevance", True, today)
out = {}
for name, question in questions.items():
    query.query_once(question, root, as_of=today)
    walks, whole = [], []
    for _ in range(runs):
        t = time.perf_counter(); stat_walk(root); walks.append(time.perf_counter() - t)
        t = time.perf_counter(); result = query.query_once(question, root, as_of=today)
        whole.append(time.perf_counter() - t)
    plain = []
    with Index(default_index_path(root)) as index:
        for _ in range(20):
            query.run_request(question, root, index, config, None, Changes)
        for _ in range(300):
            t = time.perf_counter(); query.run_request(question, root, index, config, None, Changes)
            plain.append(time.perf_counter() - t)
    plain.sort()
    out[name] = {
        "status": f"{result['status']} / {result['reason']}",
        "query_once_ms": statistics.median(whole) * 1e3,
        "stat_walk_ms": statistics.median(walks) * 1e3,
        "ratio": statistics.median(w / s for w, s in zip(whole, walks)),
        "rest_p50_ms": plain[len(plain) // 2] * 1e3,
        "rest_p95_ms": plain[int(len(plain) * 0.95)] * 1e3,
    }
print(json.dumps(out))
"""


def read_hash_floor(root: Path) -> tuple[float, float]:
    began, cpu = time.perf_counter(), time.process_time()
    for folder, _dirs, files in os.walk(root / "documents"):
        for name in files:
            with open(os.path.join(folder, name), "rb") as handle:
                hashlib.sha256(handle.read()).digest()
    return time.perf_counter() - began, time.process_time() - cpu


def corpus_bytes(root: Path) -> int:
    return sum(os.path.getsize(os.path.join(f, n)) for f, _d, names in os.walk(root / "documents") for n in names)


def env_for(src: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def table_digests(index: Path) -> dict[str, str]:
    """SHA-256 of every table's rows in key order (what the two codes' builds must share), and of the file."""
    import sqlite3

    db = sqlite3.connect(f"{index.resolve().as_uri()}?mode=ro", uri=True)
    try:
        names = [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        out = {}
        for name in names:
            digest = hashlib.sha256()
            for row in db.execute(f"SELECT * FROM {name} ORDER BY 1, 2"):
                digest.update(repr(row).encode())
            out[name] = digest.hexdigest()[:16]
    finally:
        db.close()
    with open(index, "rb") as handle:
        out["(file bytes)"] = hashlib.file_digest(handle, "sha256").hexdigest()[:16]
    return out


DECODED_SCRIPT = r"""
import hashlib, json, sys
from rag_lab.data.access import Principal
from rag_lab.index import Index
groups = frozenset(g for label in json.loads(sys.argv[2]) for g in label.split(","))
with Index(sys.argv[1], Principal("bench", groups)) as index:
    units = hashlib.sha256()
    for start in range(1, index.unit_count + 1, 5000):
        found = index.units_by_ids(range(start, min(start + 5000, index.unit_count + 1)))
        for i in sorted(found):
            units.update(json.dumps(found[i], ensure_ascii=False, sort_keys=True).encode())
    files = hashlib.sha256(repr(sorted(index.snapshot().items())).encode())
    warnings = hashlib.sha256(json.dumps(index.file_problems(), ensure_ascii=False).encode())
    import sqlite3
    db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
    names = sorted(n for (n,) in db.execute("SELECT DISTINCT name FROM warning_lines"))
    subjects = [n for (n,) in db.execute("SELECT name FROM strings")] if names else []
    db.close()
    lines = sorted({w for i in range(0, len(names), 500) for w in index.warned_lines_naming(names[i : i + 500], subjects, 10**9)})
    noted = hashlib.sha256(repr(lines).encode())
print(json.dumps({"units": units.hexdigest()[:16], "snapshot": files.hexdigest()[:16],
                  "warnings": warnings.hexdigest()[:16], "warned_lines": f"{noted.hexdigest()[:16]} ({len(lines)})"}))
"""


def decoded_digests(index: Path, src: Path | None) -> dict[str, str]:
    """SHA-256 of every unit as the code that built ``index`` reads it back (``Index.units_by_ids``,
    all ACL labels), of its snapshot, of its warnings (``file_problems``) and of the warned lines
    notes may cite (``warned_lines_naming`` of every warned name and every subject): comparable across schema versions, where the table
    digests are not (a format change alters the stored bytes, never the units)."""
    import sqlite3

    db = sqlite3.connect(f"{index.resolve().as_uri()}?mode=ro", uri=True)
    try:
        labels = json.loads(db.execute("SELECT value FROM meta WHERE key = 'acls'").fetchone()[0])
    finally:
        db.close()
    proc = subprocess.run(
        [sys.executable, "-c", DECODED_SCRIPT, str(index), json.dumps(labels)],
        env=env_for(src), capture_output=True, text=True, check=True,
    )  # fmt: skip
    found: dict[str, str] = json.loads(proc.stdout)
    return found


def build(root: Path, src: Path | None, vectors: bool = False) -> dict[str, Any]:
    index = root / ".rag_lab" / "index.sqlite"
    script = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter()\n"
        "subprocess.run([sys.executable, '-m', 'rag_lab.cli', 'index', sys.argv[1], *sys.argv[2:]], check=True,"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "wall = time.perf_counter() - t\n"
        "ru = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(json.dumps({'wall': wall, 'cpu': ru.ru_utime + ru.ru_stime, 'rss_mib': ru.ru_maxrss / 1024}))\n"
    )
    extra = ["--vectors"] if vectors else []
    proc = subprocess.run(
        [sys.executable, "-c", script, str(root), *extra], env=env_for(src), capture_output=True, text=True, check=True
    )
    found: dict[str, Any] = json.loads(proc.stdout)
    found["index_bytes"] = index.stat().st_size
    found["tables"] = table_digests(index)
    found["decoded"] = decoded_digests(index, src)
    return found


def ask(root: Path, src: Path | None, runs: int, questions: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", QUESTION_SCRIPT, str(root), str(runs), json.dumps(questions), str(HERE)],
        env=env_for(src),
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, Any] = json.loads(proc.stdout)
    return found


PROSE_SCRIPT = r"""
import json, sys, time
from datetime import date
from pathlib import Path
from rag_lab.retrieval import query
root, runs, questions = Path(sys.argv[1]), int(sys.argv[2]), json.loads(Path(sys.argv[3]).read_text())
today = date(2026, 12, 1)
times, right, answered = [], 0, 0
for q in questions:
    for i in range(runs + 1):
        t = time.perf_counter(); result = query.query_once(q["question"], root, as_of=today)
        if i:  # the first run warms the page cache
            times.append(time.perf_counter() - t)
    answered += result["status"] == "answered"
    right += result["status"] == "answered" and result.get("answer") == q["answer"]
times.sort()
print(json.dumps({"questions": len(questions), "answered": answered, "right": right,
                  "p50_ms": times[len(times) // 2] * 1e3, "p95_ms": times[int(len(times) * 0.95)] * 1e3}))
"""


def ask_prose(root: Path, src: Path | None, runs: int, questions: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", PROSE_SCRIPT, str(root), str(runs), str(questions)],
        env=env_for(src), capture_output=True, text=True, check=True,
    )  # fmt: skip
    found: dict[str, Any] = json.loads(proc.stdout)
    return found


def median_of(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=100000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--query-runs", type=int, default=7)
    ap.add_argument("--base-src", type=Path, default=None, help="src folder of the code to compare with")
    ap.add_argument(
        "--this-src", type=Path, default=None, help="src folder for 'this' (default: the installed rag_lab)"
    )
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--no-questions", action="store_true", help="the build only (no query_once runs)")
    ap.add_argument("--root", type=Path, default=None, help="this corpus instead of gen_corpus.py's --docs")
    ap.add_argument("--vectors", action="store_true", help="build with rag-lab index --vectors")
    ap.add_argument("--prose-questions", type=Path, default=None, help="gen_prose_corpus.py --questions FILE")
    args = ap.parse_args()
    root = ensure_corpus(args.out, args.docs) if args.root is None else args.root
    label = str(args.docs) if args.root is None else args.root.name + ("_vectors" if args.vectors else "")
    questions = {} if args.no_questions or args.root is not None else questions_for(args.out, args.docs)
    this = None if args.this_src is None else args.this_src.resolve()  # e.g. a snapshot: edits meanwhile do not count
    codes: dict[str, Path | None] = {"this": this}
    if args.base_src is not None:
        codes = {"base": args.base_src.resolve(), "this": this}
    read_hash_floor(root)  # warm the page cache
    report: dict[str, Any] = {"docs": args.docs, "corpus_bytes": corpus_bytes(root), "runs": {c: [] for c in codes}}
    for run in range(args.runs):
        for name, src in codes.items():
            wall, cpu = read_hash_floor(root)
            began = time.perf_counter()
            stat_walk(root)
            walk = time.perf_counter() - began
            row = {"floor_s": wall, "floor_cpu_s": cpu, "stat_walk_s": walk, "load": os.getloadavg()[0]}
            row.update(build(root, src, args.vectors))
            row["questions"] = ask(root, src, args.query_runs, questions) if questions else {}
            if args.prose_questions is not None and not args.no_questions:
                row["prose"] = ask_prose(root, src, args.query_runs, args.prose_questions)
            report["runs"][name].append(row)
            print(f"run {run + 1} {name}: {json.dumps(row)}", flush=True)
    corpus = report["corpus_bytes"]
    print(f"\n{label} docs, corpus {corpus / 1e6:.1f} MB, medians of {args.runs} runs")
    for name, rows in report["runs"].items():
        floor, floor_cpu = median_of(rows, "floor_s"), median_of(rows, "floor_cpu_s")
        print(
            f"{name}: floor {floor:.2f} s ({floor_cpu:.2f} s CPU); build {median_of(rows, 'wall'):.1f} s = "
            f"{statistics.median(r['wall'] / r['floor_s'] for r in rows):.1f}x floor, CPU "
            f"{statistics.median(r['cpu'] / r['floor_cpu_s'] for r in rows):.1f}x floor CPU, peak RSS "
            f"{median_of(rows, 'rss_mib'):.0f} MiB; index {median_of(rows, 'index_bytes') / 1e6:.1f} MB = "
            f"{median_of(rows, 'index_bytes') / corpus:.2f}x corpus"
        )
        if rows[0].get("prose"):
            ps = [r["prose"] for r in rows]
            print(
                f"  prose questions: {ps[0]['right']}/{ps[0]['questions']} right ({ps[0]['answered']} answered); "
                f"query_once p50 {median_of(ps, 'p50_ms'):.1f} ms, p95 {median_of(ps, 'p95_ms'):.1f} ms"
            )
        for q in questions:
            qs = [r["questions"][q] for r in rows]
            print(
                f"  {q:12s} {qs[0]['status']:40s} query_once {median_of(qs, 'query_once_ms'):8.1f} ms, "
                f"walk {median_of(qs, 'stat_walk_ms'):7.1f} ms, ratio {median_of(qs, 'ratio'):.2f}; "
                f"rest p50 {median_of(qs, 'rest_p50_ms'):.2f} / p95 {median_of(qs, 'rest_p95_ms'):.2f} ms"
            )
    decoded = {json.dumps(r["decoded"], sort_keys=True) for rows in report["runs"].values() for r in rows}
    print("units, snapshot and warnings, as each code reads them back, identical across codes and runs:", len(decoded) == 1)
    digests = {json.dumps(r["tables"], sort_keys=True) for rows in report["runs"].values() for r in rows}
    print("index tables identical across codes and runs:", len(digests) == 1)
    if len(digests) != 1:
        for name, rows in report["runs"].items():
            print(f"  {name}: {[r['tables'] for r in rows]}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"compact_{label}.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
