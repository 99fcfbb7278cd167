"""A stream of new key questions on one open index, asked in passes: what the postings cache keeps.

    python benchmarks/request_stream.py ROOT [--questions 480] [--passes 2] [--cache-mib 64] [--base-src SRC --rounds 3]

``ROOT``: a ``gen_corpus.py`` corpus with its index built and ``ROOT.manifest.json`` beside it
(nothing is written to it). One fresh process opens the index with a postings cache of
``--cache-mib``, asks 20 of the manifest's single-source questions to warm up (imports, unit
lengths), then its first ``--questions`` others once each, ``--passes`` times over: the first
pass meets every question's terms for the first time (a new question), later passes find in the
cache what it kept. Prints the CPU p50 / mean (``time.thread_time``, ms) of each pass and the
cache's bytes at the end. ``--base-src``: the same for another ``src``, alternated with this
checkout round by round (both see the same load), then the medians over ``--rounds``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_request_goals import run_child  # noqa: E402

CHILD = r"""
import json, statistics, sys, time
from datetime import date
from pathlib import Path
from rag_lab.index import Changes, Index, default_index_path
from rag_lab.retrieval import query
root, count, passes, cache = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
config = query.request_config(5, query.DEFAULT_BUDGET, "codepoints", None, "relevance", True, date(2026, 12, 1))
manifest = json.loads(Path(f"{root}.manifest.json").read_text())
asked = [f"{k['subject']}的{k['field']}是什么？" for k in manifest["single_source_sample"]]
warm, stream = asked[-20:], asked[: max(0, min(count, len(asked) - 20))]
out = {"questions": len(stream), "passes": []}
with Index(default_index_path(root), postings_cache_bytes=cache) as index:
    for question in warm:
        query.run_request(question, root, index, config, None, Changes)
    for _ in range(passes):
        cpu = []
        for question in stream:
            began = time.thread_time()
            query.run_request(question, root, index, config, None, Changes)
            cpu.append((time.thread_time() - began) * 1e3)
        out["passes"].append({"p50": statistics.median(cpu), "mean": statistics.fmean(cpu)})
    out["cached_mib"] = index._postings_cache.cached_bytes / 2**20
print(json.dumps(out))
"""


def child(root: Path, src: Path | None, questions: int, passes: int, cache_bytes: int) -> dict[str, Any]:
    return run_child(CHILD, [str(root), str(questions), str(passes), str(cache_bytes)], src)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--questions", type=int, default=480)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--cache-mib", type=float, default=64)
    ap.add_argument("--base-src", type=Path, default=None)
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    if not Path(f"{args.root}.manifest.json").is_file():
        raise SystemExit(f"no manifest at {args.root}.manifest.json: make the corpus with gen_corpus.py --manifest")
    codes = (["base"] if args.base_src else []) + ["this"]
    runs: dict[str, list[dict[str, Any]]] = {code: [] for code in codes}
    for _ in range(args.rounds):
        for code in codes:
            src = args.base_src if code == "base" else None
            runs[code].append(child(args.root, src, args.questions, args.passes, int(args.cache_mib * 2**20)))
    for code in codes:
        rows = runs[code]
        cells = "  ".join(
            f"pass {k + 1} p50 {statistics.median(r['passes'][k]['p50'] for r in rows):.2f}"
            f" mean {statistics.median(r['passes'][k]['mean'] for r in rows):.2f}"
            for k in range(args.passes)
        )
        cached = statistics.median(r["cached_mib"] for r in rows)
        print(f"{code}: {rows[0]['questions']} questions, CPU ms (medians of {len(rows)}): {cells}  cached {cached:.1f} MiB")


if __name__ == "__main__":
    main()
