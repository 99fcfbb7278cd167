"""Query latency benchmark: ``query_once`` split into freshness and the rest, vs. a stat-walk floor.

    python benchmarks/bench_query.py [--sizes 1000 10000 100000] [--runs 30] [--out benchmarks/out]

Uses the cached corpora of ``bench_index.py`` (``OUT/corpus_<N>``, ``gen_corpus.py --seed 0``)
and their default index ``ROOT/.rag_lab/index.sqlite`` (built first if missing or stale).
Three questions per size, taken from the generator's manifest:

* **answered** — a single-source key: ``{S}的{F}是什么？``
* **conflicting** — a repeated key whose two documents disagree: ``{S}的{F}是什么？``
* **unknown** — a made-up subject with a known field: ``临渊村琉璃阁的{F}是什么？``

Per question, ``--runs`` timed repetitions (after 2 warm-ups), interleaved:

* **whole** — ``query_once(question, root)`` end to end;
* **pieces** — the same steps query_once runs, timed one by one: open the Index,
  ``check_freshness``, ``retrieve`` (top_k 5), ``pack_context`` (default budget),
  ``answer`` (parse + verify + same-key audit + decision); "rest" = open + retrieve + pack
  + answer of that same piecewise call.

Floor: a bare stat walk of the corpus (recursive ``os.scandir`` + ``DirEntry.stat()``),
median of ``--runs`` repetitions interleaved with the queries. Goals: whole ≤ 2× floor;
rest < 20 ms and flat in corpus size.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

from rag_lab.index import Index, check_freshness, default_index_path
from rag_lab.retrieval import pack_context, query_once
from rag_lab.retrieval.answer import answer
from rag_lab.retrieval.pack import DEFAULT_BUDGET
from rag_lab.retrieval.rank import retrieve
from rag_lab.retrieval.trace import Trace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_index import code_state, ensure_corpus  # noqa: E402

HERE = Path(__file__).resolve().parent
UNKNOWN_SUBJECT = "临渊村琉璃阁"


def stat_walk(root: Path) -> int:
    count = 0
    stack = [str(root / "documents"), str(root / "images")]
    while stack:
        folder = stack.pop()
        try:
            it = os.scandir(folder)
        except FileNotFoundError:
            continue
        with it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    entry.stat()
                    count += 1
    return count


def questions_for(out: Path, docs: int) -> dict[str, str]:
    manifest = json.loads((out / f"corpus_{docs}.manifest.json").read_text())
    single = manifest["single_source_sample"][0]
    conflict = next(k for k in manifest["repeated_keys"] if k["kind"] == "conflicting")
    return {
        "answered": f"{single['subject']}的{single['field']}是什么？",
        "conflicting": f"{conflict['subject']}的{conflict['field']}是什么？",
        "unknown": f"{UNKNOWN_SUBJECT}的{single['field']}是什么？",
    }


def ensure_index(root: Path) -> None:
    path = default_index_path(root)
    if path.exists():
        try:
            with Index(path) as index:
                if not check_freshness(root, index).stale:
                    return
        except Exception as exc:  # e.g. an index of an older schema version: rebuild it
            print(f"rebuilding {path}: {exc}", flush=True)
    code = "import sys; from rag_lab.index import build_index; build_index(sys.argv[1])"
    subprocess.run([sys.executable, "-c", code, str(root)], check=True)


def timed_pieces(question: str, root: Path, day: date) -> tuple[dict[str, float], dict[str, object]]:
    """The steps of query_once, each timed (seconds)."""
    t0 = time.perf_counter()
    with Index(default_index_path(root)) as index:
        trace = Trace({"top_k": 5, "budget": DEFAULT_BUDGET, "as_of": day.isoformat()})
        t1 = time.perf_counter()
        changes = check_freshness(root, index)
        trace.add("freshness", stale=changes.stale, **changes.as_dict(), rehashed=changes.rehashed)
        t2 = time.perf_counter()
        candidates = retrieve(question, index, 5)
        trace.add("retrieve", candidates=[c["evidence"]["evidence_id"] for c in candidates])
        t3 = time.perf_counter()
        kept, report = pack_context(candidates, DEFAULT_BUDGET)
        trace.add("pack", **report)
        t4 = time.perf_counter()
        result = answer(question, kept, root, index, retrieved=candidates, as_of=day, trace=trace)
        t5 = time.perf_counter()
    t6 = time.perf_counter()
    return {
        "open": (t1 - t0) + (t6 - t5),
        "freshness": t2 - t1,
        "retrieve": t3 - t2,
        "pack": t4 - t3,
        "answer": t5 - t4,
    }, result


def ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 3)


def bench_size(out: Path, docs: int, runs: int) -> dict[str, object]:
    root = ensure_corpus(out, docs)
    ensure_index(root)
    day = date.today()
    qs = questions_for(out, docs)
    rows: dict[str, object] = {}
    floors: list[float] = []
    files = stat_walk(root)
    for label, question in qs.items():
        for _ in range(2):  # warm-up
            query_once(question, root)
            timed_pieces(question, root, day)
        whole: list[float] = []
        whole_fresh: list[float] = []
        pieces: dict[str, list[float]] = {}
        result: dict[str, object] = {}
        for _ in range(runs):
            t = time.perf_counter()
            stat_walk(root)
            floors.append(time.perf_counter() - t)
            t = time.perf_counter()
            result = query_once(question, root)
            whole.append(time.perf_counter() - t)
            ev = result["trace"]["events"]  # type: ignore[index]
            assert ev[0]["step"] == "freshness" and not ev[0]["stale"], ev[0]
            split, _ = timed_pieces(question, root, day)
            for key, value in split.items():
                pieces.setdefault(key, []).append(value)
            whole_fresh.append(split["freshness"])
        # "rest" = everything query_once does besides freshness, timed piecewise on one call
        # (open + retrieve + pack + answer); whole − freshness of *different* calls is too noisy.
        rest = [sum(v[i] for k, v in pieces.items() if k != "freshness") for i in range(runs)]
        rows[label] = {
            "question": question,
            "status": result["status"],
            "reason": result["reason"],
            "whole_ms": ms(whole),
            "freshness_ms": ms(pieces["freshness"]),
            "rest_ms": ms(rest),
            "pieces_ms": {k: ms(v) for k, v in pieces.items()},
            "pieces_total_ms": ms([sum(v[i] for v in pieces.values()) for i in range(runs)]),
            "whole_p90_ms": round(sorted(whole)[int(0.9 * (runs - 1))] * 1000, 3),
        }
    floor = statistics.median(floors)
    for row in rows.values():
        row["whole_over_floor"] = round(row["whole_ms"] / (floor * 1000), 2)  # type: ignore[index]
    return {"docs": docs, "files": files, "runs": runs, "stat_walk_ms": ms(floors), "questions": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    state = code_state()
    sizes = []
    for docs in args.sizes:
        row = bench_size(args.out, docs, args.runs)
        sizes.append(row)
        print(f"N={docs}: stat walk {row['stat_walk_ms']} ms", flush=True)
        for label, q in row["questions"].items():  # type: ignore[union-attr]
            print(
                f"  {label:11} {q['status']:>10}/{q['reason']}: whole {q['whole_ms']} ms, "
                f"freshness {q['freshness_ms']} ms, rest {q['rest_ms']} ms, pieces {q['pieces_ms']}",
                flush=True,
            )
    print()
    print(
        "| docs | question | status / reason | whole ms | stat walk ms | whole / walk | freshness ms "
        "| rest ms (all but freshness) | open | retrieve | pack | answer |"
    )
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in sizes:
        for label, q in row["questions"].items():  # type: ignore[union-attr]
            p = q["pieces_ms"]
            print(
                f"| {row['docs']:,} | {label} | {q['status']} / {q['reason']} | {q['whole_ms']:.1f} | "
                f"{row['stat_walk_ms']:.1f} | {q['whole_over_floor']:.1f}× | {q['freshness_ms']:.1f} | "
                f"{q['rest_ms']:.1f} | {p['open']:.1f} | {p['retrieve']:.1f} | {p['pack']:.2f} | {p['answer']:.1f} |"
            )
    report = {
        "code": state,
        "code_changed_during_run": code_state() != state,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "loadavg_end": os.getloadavg(),
        "sizes": sizes,
    }
    path = args.json or args.out / "query.json"
    path.write_text(json.dumps(report, ensure_ascii=False, indent=2))
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
