"""Where the time and the bytes go: `rag-lab index` and one question (`query_once`), by stage.

    python benchmarks/profile_stages.py [--docs 100000] [--runs 3] [--query-runs 15]
                                        [--out benchmarks/out] [--json FILE]

Nothing in ``src/rag_lab`` is changed: stages are timed by wrapping rag_lab's own functions
(and its sqlite3 connection and ``os.fsync``/``os.replace``) in the measuring process
(``stage_timer.py``); a stage's time is exclusive of the wrapped stages nested in it.

Per run, in this order (the corpus is ``gen_corpus.py --seed 0``, cached by ``bench_index.py``):

* **floors** — read + SHA-256 of every corpus file, and a bare stat walk (``os.scandir`` +
  ``DirEntry.stat()``), both warm;
* **build, real** — ``rag-lab index ROOT`` in a fresh process: wall time and peak RSS;
* **build, instrumented, parallel** — ``build_index`` in a child process as the CLI runs it
  (two forked workers read, hash, parse and make terms; the parent's stages are timed, and
  its wait for the workers' batches is one stage);
* **build, instrumented, serial** — the same with the workers turned off, so every stage
  (walk, read, SHA-256, parse, terms, rows, staging, units insert, postings, CREATE INDEX,
  commit, fsync, rename) is timed in one process: where the CPU goes.

Then the SQLite file's bytes per table and index (``dbstat``) and per column, and the
question profile: ``query_once`` on three questions (answered, conflicting, unknown
subject), ``--query-runs`` runs each with the stages (open, freshness walk, parse, rank —
postings read, same-key ids, unit fetch —, pack, verify, audit, result) and, on one open
index, the request without the freshness walk (``run_request`` with no changes): p50/p95
unwrapped, and its stages wrapped. Medians of the runs; the 1-minute load average is
recorded before each run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import resource
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_index import (  # noqa: E402
    build_command,
    cli_command,
    code_state,
    ensure_corpus,
    floor_read_hash,
    run_child,
)
from bench_query import questions_for, stat_walk  # noqa: E402
from stage_timer import ModuleProxy, StageTimer, TimedConnection  # noqa: E402

# -- the build, instrumented (runs in a child process) ----------------------------------------


def _classify_sql(sql: str) -> str:
    s = " ".join(sql.split()).upper()
    if "INTO TEMP.STAGING" in s:
        return "units: stage rows (temp table)"
    if s.startswith("INSERT INTO UNITS"):
        return "units: insert in evidence_id order"
    if s.startswith("INSERT INTO MAIN.UNITS"):  # build5: the copy from the workers' row files
        return "units: copy from the row files (INSERT … SELECT, 2nd thread)"
    if "INTO FILES" in s or "INTO FILE_WARNINGS" in s:
        return "files + warnings insert"
    if "INTO POSTINGS" in s:
        return "postings: SQLite insert"
    if "CREATE INDEX" in s:
        name = s.split("CREATE INDEX", 1)[1].split()[0].lower()
        return f"CREATE INDEX {name}"
    if s.startswith("COMMIT"):
        return "commit"
    if s.startswith("DROP TABLE"):
        return "units: drop staging"
    if "INTO NAMES" in s or "INTO IMAGES" in s or "INTO META" in s or "INTO ACL_STATS" in s:
        return "names, images, meta, acl_stats insert"
    return "schema (DDL, pragmas)"


def instrumented_build(root: str, index: str, serial: bool) -> dict[str, Any]:
    import rag_lab.data as data
    import rag_lab.index.build as build

    t = StageTimer()

    class _Sqlite:
        def __getattr__(self, name: str) -> Any:
            return getattr(sqlite3, name)

        @staticmethod
        def connect(*args: Any, **kwargs: Any) -> Any:
            return TimedConnection(sqlite3.connect(*args, **kwargs), t, _classify_sql)

    if hasattr(build, "build_walk"):  # build5: one walk, and the walk digest from it
        t.wrap(build, "build_walk", "walk (scandir + stat, sorted)")
        t.wrap(build.RowFile, "put", "unit rows into the row file (workers)")
    else:
        walk = build.walk
        t.replace(
            build, "walk", lambda base: iter(t.timed("walk (scandir + stat, sorted)", lambda b: list(walk(b)))(base))
        )
    t.replace(build, "sqlite3", _Sqlite())
    t.replace(build, "os", ModuleProxy(os, t, {"fsync": "fsync (file + folder)", "replace": "rename"}))
    t.wrap(build, "read_record", "access label (read_record rest)")
    t.wrap(data, "_read_record", "read (open + read)")
    t.wrap(data, "sha256_hex", "SHA-256")
    t.wrap(data, "parse_document", "parse_document")
    t.wrap(build, "search_text", "unit rows (search_text, _unit_row)")
    t.wrap(build, "_unit_row", "unit rows (search_text, _unit_row)")
    t.wrap(build, "unit_terms" if hasattr(build, "unit_terms") else "batch_terms", "terms (unit_terms)")
    if hasattr(build, "field_rows"):  # the fast path (issue 18, build4): rows without parse_document
        t.wrap(build, "read_bytes", "read (open + read)")
        t.wrap(build, "field_rows", "fast rows (field_rows)")
    if hasattr(build, "fast_rows"):  # build8: field lines or prose, rows without parse_document
        t.wrap(build, "read_bytes", "read (open + read)")
        t.wrap(build, "fast_rows", "fast rows (field_rows, prose_rows)")
    t.wrap(build, "extract_batch", "batch assembly (extract_batch rest)")
    t.wrap(build._Units, "add", "units: batch bookkeeping (parent)")
    t.wrap(build, "_write_units", "units: id order, names, images (rest)")
    t.wrap(build._Units, "_flush", "units: spill (parent)")
    t.wrap(build, "_bucket_keys", "postings: keys + sort (2nd thread, overlaps units insert)")
    rows, slices, progress = build._postings_rows, build._key_slices, build.with_progress
    t.replace(build, "_postings_rows", lambda *a: t.timed_iter("postings: rows (numpy → blobs)", rows(*a)))
    t.replace(build, "_key_slices", lambda *a: t.timed_iter("postings: merge + slices", slices(*a)))
    t.replace(
        build,
        "with_progress",
        lambda *a: t.timed_iter("wait for batches (workers read, hash, parse, make terms)", progress(*a)),
    )
    t.wrap(build, "extract_batches", "fork workers")
    t.wrap(build, "_write", "write (rest)")
    t.wrap(build, "build_index", "build_index (rest)")
    if serial:
        t.replace(build, "_worker_count", lambda files: 0)
    began = time.perf_counter()
    summary = build.build_index(root, index)
    total = time.perf_counter() - began
    t.restore()
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "mode": "serial" if serial else "parallel",
        "build_index_s": total,
        "stages_s": t.seconds,
        "stages_cpu_s": t.cpu,
        "calls": t.calls,
        "units": summary.units,
        "files": summary.files,
        "parent_peak_rss_mib": own.ru_maxrss / 1024,
        "workers_peak_rss_mib": kids.ru_maxrss / 1024,
        "parent_cpu_s": own.ru_utime + own.ru_stime,
        "workers_cpu_s": kids.ru_utime + kids.ru_stime,
    }


def run_instrumented(root: Path, index: Path, serial: bool) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child-build", "serial" if serial else "parallel", str(root), str(index)]
    began = time.perf_counter()
    proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_wall_s"] = time.perf_counter() - began
    index.unlink(missing_ok=True)
    return out


def import_seconds() -> dict[str, float]:
    """Interpreter start alone, and with ``import rag_lab.cli`` (what `rag-lab index` pays first)."""

    def wall(code: str) -> float:
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - began

    bare = statistics.median(wall("pass") for _ in range(5))
    cli = statistics.median(wall("import rag_lab.cli, rag_lab.index.build") for _ in range(5))
    return {"interpreter_s": bare, "interpreter_and_imports_s": cli}


# -- bytes in the SQLite file --------------------------------------------------------------------

TEXT_COLUMNS = {
    "units": ["evidence_id", "eid", "source", "sha256", "text", "subject", "field", "value", "modality", "valid_from", "valid_to", "extra", "acl"],
    "files": ["path", "kind", "sha256", "error", "acl"],
    "postings": ["ids", "deltas", "tfs", "lens", "acl"],
}


def db_bytes(path: Path) -> dict[str, Any]:
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        owner = dict(db.execute("SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')"))
        rows = db.execute(
            "SELECT name, count(*), sum(pgsize), sum(payload), sum(unused) FROM dbstat GROUP BY name "
            "ORDER BY sum(pgsize) DESC"
        ).fetchall()
        objects = [
            {
                "name": name,
                "table": owner.get(name, name.split("_autoindex_")[-1].rsplit("_", 1)[0]),
                "pages": pages,
                "bytes": size,
                "payload": payload,
                "unused": unused,
            }
            for name, pages, size, payload, unused in rows
        ]
        columns: dict[str, dict[str, int]] = {}
        for table, wanted in TEXT_COLUMNS.items():
            present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
            cols = [c for c in wanted if c in present]  # schema 4 or 5
            sums = ", ".join(f"sum(length(CAST({c} AS BLOB)))" for c in cols)
            values = db.execute(f"SELECT {sums} FROM {table}").fetchone()
            columns[table] = {c: int(v or 0) for c, v in zip(cols, values, strict=True)}
        counts = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TEXT_COLUMNS}
        counts["postings_entries"] = db.execute("SELECT sum(df) FROM postings").fetchone()[0]
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
    finally:
        db.close()
    return {
        "file_bytes": path.stat().st_size,
        "page_size": page_size,
        "objects": objects,
        "column_bytes": columns,
        "rows": counts,
    }


# -- one question, by stage -------------------------------------------------------------------


def install_query_timers(t: StageTimer) -> None:
    from rag_lab.index.store import Index

    # by sys.modules: the package rag_lab.retrieval re-exports functions named like its modules
    answer, query, rank = (importlib.import_module(f"rag_lab.retrieval.{m}") for m in ("answer", "query", "rank"))

    t.wrap(query, "open_store", "open index")
    t.wrap(query, "check_freshness", "freshness walk")
    t.wrap(query, "parse_text_question", "parse")
    t.wrap(query, "rank", "rank: rest")
    t.wrap(rank, "bm25", "rank: BM25 (rest)")
    t.wrap(Index, "postings", "rank: read postings (SQLite + decode)")
    if hasattr(Index, "term_postings"):  # since issue 18's request work: read here, decoded lazily in BM25
        t.wrap(Index, "term_postings", "rank: read postings (SQLite + decode)")
    t.wrap(rank, "key_tiers", "rank: key tiers (rest)")
    t.wrap(Index, "unit_ids_for_key", "rank: same-key ids (SQLite)")
    t.wrap(Index, "units_by_ids", "rank: fetch top-k units (SQLite)")
    t.wrap(query, "select_context", "pack (+ order, package)")
    t.wrap(Index, "may_see", "verify: may_see (files row)")
    original_verify = answer.Decider.verify

    def verify(self: Any, unit: Any, purpose: str) -> None:
        t.timed(f"verify: {purpose} (re-hash + span)", original_verify)(self, unit, purpose)

    t.replace(answer.Decider, "verify", verify)
    t.wrap(answer.Decider, "audit", "audit (rest)")
    t.wrap(Index, "units_for_key", "audit: same-key units (SQLite)")
    t.wrap(answer, "_result", "result (assemble, trace)")
    t.wrap(answer, "answer", "answer (rest)")
    t.wrap(query, "run_request", "request (rest)")
    t.wrap(query, "query_once", "query_once (rest)")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def profile_question(root: Path, question: str, runs: int, no_walk_runs: int) -> dict[str, Any]:
    query = importlib.import_module("rag_lab.retrieval.query")
    from rag_lab.index import Changes, Index, default_index_path

    config = query.request_config(5, query.DEFAULT_BUDGET, "codepoints", None, "relevance", True, _today())
    index_path = default_index_path(root)
    # unwrapped: the request without the freshness walk, on one open index
    with Index(index_path) as index:
        for _ in range(5):
            query.run_request(question, root, index, config, None, Changes)
        plain = []
        for _ in range(no_walk_runs):
            began = time.perf_counter()
            result = query.run_request(question, root, index, config, None, Changes)
            plain.append(time.perf_counter() - began)
    status = f"{result['status']} / {result['reason']}"
    t = StageTimer()
    install_query_timers(t)
    try:
        whole, walks, stages, stage_cpu = [], [], [], []
        query.query_once(question, root, as_of=_today())  # warm-up
        for _ in range(runs):
            began = time.perf_counter()
            stat_walk(root)
            walks.append(time.perf_counter() - began)
            t.reset()
            began = time.perf_counter()
            query.query_once(question, root, as_of=_today())
            whole.append(time.perf_counter() - began)
            stages.append(dict(t.seconds))
            stage_cpu.append(dict(t.cpu))
        no_walk, no_walk_cpu = [], []
        with Index(index_path) as index:
            for _ in range(min(no_walk_runs, 100)):
                t.reset()
                query.run_request(question, root, index, config, None, Changes)
                no_walk.append(dict(t.seconds))
    finally:
        t.restore()

    def medians(samples: list[dict[str, float]]) -> dict[str, float]:
        labels = sorted({k for s in samples for k in s})
        return {k: statistics.median(s.get(k, 0.0) for s in samples) for k in labels}

    return {
        "question": question,
        "status": status,
        "query_once_ms": statistics.median(whole) * 1e3,
        "query_once_p95_ms": pct(whole, 0.95) * 1e3,
        "stat_walk_ms": statistics.median(walks) * 1e3,
        "query_once_over_walk": statistics.median(whole) / statistics.median(walks),
        "stages_ms": {k: v * 1e3 for k, v in medians(stages).items()},
        "no_walk_p50_ms": statistics.median(plain) * 1e3,
        "no_walk_p95_ms": pct(plain, 0.95) * 1e3,
        "no_walk_stages_ms": {k: v * 1e3 for k, v in medians(no_walk).items()},
        "stages_cpu_ms": {k: v * 1e3 for k, v in medians(stage_cpu).items()},
        "no_walk_stages_cpu_ms": {k: v * 1e3 for k, v in medians(no_walk_cpu).items()},
    }


def _today() -> Any:
    from datetime import date

    return date(2026, 12, 1)  # fixed: the generated corpus has no validity windows, but keep it deterministic


# -- report ------------------------------------------------------------------------------------------


def median_stages(runs: list[dict[str, Any]], key: str = "stages_s") -> dict[str, float]:
    labels = sorted({k for r in runs for k in r[key]})
    return {k: statistics.median(r[key].get(k, 0.0) for r in runs) for k in labels}


def print_report(report: dict[str, Any]) -> None:
    floor = report["floor_read_hash_s"]
    walk = report["floor_stat_walk_s"]
    print(f"floor CPU (read+SHA-256) {report['floor_cpu_s']:.3f} s")
    print(f"\nfloors: read+SHA-256 {floor:.3f} s, stat walk {walk:.3f} s; corpus {report['corpus_bytes'] / 1e6:.1f} MB")
    print(f"real `rag-lab index`: {report['cli_build_s']:.2f} s = {report['cli_build_s'] / floor:.1f}× floor, "
          f"peak RSS {report['cli_peak_rss_mib']:.0f} MiB, loads {report['loadavg_before_runs']}")
    floor_cpu = report["floor_cpu_s"]
    for mode in ("parallel", "serial"):
        stages = report[f"build_{mode}_stages_s"]
        cpus = report[f"build_{mode}_stages_cpu_s"]
        total = report[f"build_{mode}_s"]
        print(f"\n| build stage ({mode}) | s | × read+hash floor | share | CPU s | CPU × floor CPU |")
        print("|---|---:|---:|---:|---:|---:|")
        for label, sec in sorted(stages.items(), key=lambda kv: -kv[1]):
            c = cpus.get(label, 0.0)
            print(f"| {label} | {sec:.3f} | {sec / floor:.2f}× | {100 * sec / total:.0f} % | {c:.3f} | {c / floor_cpu:.2f}× |")
        print(f"| **build_index total** | **{total:.2f}** | **{total / floor:.1f}×** | |")
    b = report["bytes"]
    print(f"\n| SQLite object | table | MB | share | payload MB |   (file {b['file_bytes'] / 1e6:.1f} MB)")
    print("|---|---|---:|---:|---:|")
    for o in b["objects"]:
        print(f"| {o['name']} | {o['table']} | {o['bytes'] / 1e6:.1f} | {100 * o['bytes'] / b['file_bytes']:.1f} % "
              f"| {o['payload'] / 1e6:.1f} |")
    for q in report["questions"]:
        print(f"\n{q['question']} → {q['status']}: query_once {q['query_once_ms']:.1f} ms "
              f"(p95 {q['query_once_p95_ms']:.1f}), stat walk {q['stat_walk_ms']:.1f} ms, "
              f"{q['query_once_over_walk']:.2f}×; without walk p50 {q['no_walk_p50_ms']:.2f} / p95 {q['no_walk_p95_ms']:.2f} ms")
        for label, v in sorted(q["stages_ms"].items(), key=lambda kv: -kv[1]):
            print(f"   {label:45} {v:9.3f} ms   (no walk: {q['no_walk_stages_ms'].get(label, 0.0):.3f}; "
                  f"CPU {q['no_walk_stages_cpu_ms'].get(label, 0.0):.3f})")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child-build":
        print(json.dumps(instrumented_build(argv[2], argv[3], argv[1] == "serial")))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=100000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--query-runs", type=int, default=15)
    ap.add_argument("--no-walk-runs", type=int, default=300)
    ap.add_argument("--skip-build", action="store_true", help="only bytes and the question profile")
    ap.add_argument("--skip-questions", action="store_true", help="only the build profile and bytes")
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    state = code_state()
    root = ensure_corpus(args.out, args.docs)
    index = root / ".rag_lab" / "index.sqlite"
    probe = root / ".rag_lab" / "profile.sqlite"
    cli = cli_command()
    floor_read_hash(root)  # warm the page cache
    stat_walk(root)
    floors, floor_cpus, walks, loads, cli_builds, cli_rss, par, ser = [], [], [], [], [], [], [], []
    nbytes = 0
    runs = 0 if args.skip_build else args.runs
    for run in range(runs):
        loads.append(os.getloadavg()[0])
        cpu = time.process_time()
        seconds, _, nbytes = floor_read_hash(root)
        floor_cpus.append(time.process_time() - cpu)
        floors.append(seconds)
        began = time.perf_counter()
        stat_walk(root)
        walks.append(time.perf_counter() - began)
        wall, peak, _ = run_child(build_command(root, cli))
        cli_builds.append(wall)
        cli_rss.append(peak / 2**20)
        par.append(run_instrumented(root, probe, serial=False))
        ser.append(run_instrumented(root, probe, serial=True))
        print(
            f"run {run + 1}/{runs}: load {loads[-1]:.1f}  floor {seconds:.3f} s  walk {walks[-1]:.3f} s  "
            f"cli {wall:.2f} s ({peak / 2**20:.0f} MiB)  instrumented parallel {par[-1]['build_index_s']:.2f} s  "
            f"serial {ser[-1]['build_index_s']:.2f} s",
            flush=True,
        )
    if args.skip_build:
        loads.append(os.getloadavg()[0])
        seconds, _, nbytes = floor_read_hash(root)
        floors.append(seconds)
        began = time.perf_counter()
        stat_walk(root)
        walks.append(time.perf_counter() - began)
        if not index.exists():
            run_child(build_command(root, cli))
    report: dict[str, Any] = {
        "docs": args.docs,
        "code": state,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "cpus": os.cpu_count(),
        "corpus_bytes": nbytes,
        "loadavg_before_runs": [round(x, 2) for x in loads],
        "floor_read_hash_s": statistics.median(floors),
        "floor_stat_walk_s": statistics.median(walks),
    }
    if runs:
        report.update(
            {
                "cli_build_s": statistics.median(cli_builds),
                "cli_build_runs_s": cli_builds,
                "cli_peak_rss_mib": statistics.median(cli_rss),
                "imports": import_seconds(),
                "build_parallel_s": statistics.median(r["build_index_s"] for r in par),
                "build_serial_s": statistics.median(r["build_index_s"] for r in ser),
                "build_parallel_stages_s": median_stages(par),
                "build_serial_stages_s": median_stages(ser),
                "build_parallel_stages_cpu_s": median_stages(par, "stages_cpu_s"),
                "build_serial_stages_cpu_s": median_stages(ser, "stages_cpu_s"),
                "floor_cpu_s": statistics.median(floor_cpus),
                "instrumented_runs": par + ser,
            }
        )
    report["bytes"] = db_bytes(index)
    qs = questions_for(args.out, args.docs)
    report["loadavg_before_questions"] = os.getloadavg()[0]
    report["questions"] = (
        [] if args.skip_questions else [profile_question(root, q, args.query_runs, args.no_walk_runs) for q in qs.values()]
    )
    report["loadavg_end"] = os.getloadavg()[0]
    report["code_changed_during_run"] = code_state() != state
    if runs:
        print_report(report)
    else:
        for q in report["questions"]:
            print(json.dumps({k: v for k, v in q.items()}, ensure_ascii=False))
    path = args.json or args.out / f"profile_{args.docs}.json"
    path.write_text(json.dumps(report, ensure_ascii=False, indent=2))
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
