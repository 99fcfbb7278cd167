"""Compare rag_lab's ranking with SQLite FTS5 on one generated corpus (docs/retrieval.md).

Usage::

    python benchmarks/gen_corpus.py /tmp/c10k --docs 10000 --manifest /tmp/c10k.json
    python benchmarks/compare_ranking.py /tmp/c10k /tmp/c10k.json --questions 300 [--json]

Rankers, all over the same evidence units and the same text per unit (subject + line,
``rag_lab.index.terms.search_text``):

- ``rag_lab``: BM25 over NFKC-casefolded character bigrams, postings as blobs in SQLite
  (``rag_lab.retrieval.retrieve(..., named_keys_first=False)`` on a freshly built index),
  and the default ``retrieve``, which puts the units of the keys the question names first
  (listed for reference: it does not compare rankers, it shows what the parser adds);
- ``fts5_trigram``: SQLite FTS5 with the ``trigram`` tokenizer; the question becomes an OR
  of its character trigrams, ranked by FTS5's ``bm25()``;
- ``fts5_bigram``: SQLite FTS5 ``unicode61`` over text pre-split into space-separated
  bigrams (the same terms as rag_lab), an OR of the question's bigrams, ``bm25()``.

Questions are ``<subject>的<field>是什么？`` for keys from the generator's manifest (single-
source samples and repeated keys, fixed seed). A question is a hit at k when a unit of the
asked (subject, field) is among the top k. Latency is wall time per question for ranking
only (index already open, warm page cache), top 5. Everything is written to a temporary
folder and deleted afterwards; the corpus folder is not modified.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rag_lab.data import extract_corpus
from rag_lab.index import Index, build_index
from rag_lab.index.terms import normalise, search_text
from rag_lab.retrieval import retrieve

Key = tuple[str, str]
Ranker = Callable[[str, int], list[Key]]


def make_questions(manifest: dict[str, Any], count: int, seed: int) -> list[Key]:
    rng = random.Random(seed)
    repeated = sorted({(k["subject"], k["field"]) for k in manifest["repeated_keys"]})
    single = sorted({(k["subject"], k["field"]) for k in manifest["single_source_sample"]})
    take_repeated = min(len(repeated), count // 5)
    keys = rng.sample(repeated, take_repeated) + rng.sample(single, min(len(single), count - take_repeated))
    rng.shuffle(keys)
    return keys


def grams(text: str, n: int) -> list[str]:
    out: list[str] = []
    for run in normalise(text).split("\0"):
        if len(run) < n:
            out.append(run)
        out.extend(run[i : i + n] for i in range(len(run) - n + 1))
    return list(dict.fromkeys(g for g in out if g))


def fts_query(terms: list[str]) -> str:
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def build_fts(path: Path, units: list[dict[str, Any]], kind: str) -> float:
    started = time.perf_counter()
    db = sqlite3.connect(path)
    tokenizer = "trigram" if kind == "trigram" else "unicode61"
    db.execute(f"CREATE VIRTUAL TABLE fts USING fts5(body, tokenize='{tokenizer}')")
    if kind == "trigram":
        rows = ((i, normalise(search_text(u)).replace("\0", " ")) for i, u in enumerate(units))
    else:
        rows = ((i, " ".join(grams(search_text(u), 2))) for i, u in enumerate(units))
    db.executemany("INSERT INTO fts (rowid, body) VALUES (?, ?)", rows)
    db.execute("INSERT INTO fts(fts) VALUES ('optimize')")
    db.commit()
    db.close()
    return time.perf_counter() - started


def fts_ranker(path: Path, units: list[dict[str, Any]], n: int) -> tuple[Ranker, sqlite3.Connection]:
    db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)

    def rank(question: str, k: int) -> list[Key]:
        terms = grams(question, n)
        if not terms:
            return []
        rows = db.execute(
            "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY bm25(fts), rowid LIMIT ?", (fts_query(terms), k)
        ).fetchall()
        return [(units[r[0]]["subject"], units[r[0]]["field"]) for r in rows]

    return rank, db


def evaluate(name: str, rank: Ranker, questions: list[Key]) -> dict[str, Any]:
    hits1 = hits5 = 0
    times = []
    for subject, field in questions:
        question = f"{subject}的{field}是什么？"
        started = time.perf_counter()
        ranked = rank(question, 5)
        times.append(time.perf_counter() - started)
        hits1 += (subject, field) in ranked[:1]
        hits5 += (subject, field) in ranked[:5]
    times.sort()
    return {
        "ranker": name,
        "questions": len(questions),
        "recall@1": round(hits1 / len(questions), 4),
        "recall@5": round(hits5 / len(questions), 4),
        "median_ms": round(statistics.median(times) * 1000, 3),
        "p95_ms": round(times[int(0.95 * (len(times) - 1))] * 1000, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="a corpus written by benchmarks/gen_corpus.py")
    parser.add_argument("manifest", type=Path, help="its --manifest JSON file")
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args(argv)

    manifest = json.loads(args.manifest.read_text(encoding="utf-8"))
    questions = make_questions(manifest, args.questions, args.seed)
    units = [u for rec in extract_corpus(args.corpus) for u in rec.units]
    results: list[dict[str, Any]] = []
    builds: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        ours = Path(tmp) / "index.sqlite"
        started = time.perf_counter()
        build_index(args.corpus, ours)
        builds["rag_lab"] = {"build_s": time.perf_counter() - started, "bytes": ours.stat().st_size}
        with Index(ours) as index:

            for label, named_keys_first in (
                ("rag_lab (BM25, bigram postings blobs)", False),
                ("rag_lab retrieve (named keys first, then BM25)", True),
            ):

                def rank_ours(question: str, k: int, first: bool = named_keys_first) -> list[Key]:
                    ranked = retrieve(question, index, k, named_keys_first=first)
                    return [(c["evidence"]["subject"], c["evidence"]["field"]) for c in ranked]

                results.append(evaluate(label, rank_ours, questions))
        for kind, n, label in (("trigram", 3, "fts5 trigram (OR of trigrams)"), ("bigram", 2, "fts5 unicode61 over bigrams")):
            path = Path(tmp) / f"{kind}.sqlite"
            seconds = build_fts(path, units, kind)
            builds[label] = {"build_s": seconds, "bytes": path.stat().st_size}
            rank, db = fts_ranker(path, units, n)
            try:
                results.append(evaluate(label, rank, questions))
            finally:
                db.close()
    for row in results:
        key = "rag_lab" if row["ranker"].startswith("rag_lab") else row["ranker"]
        row["build_s"] = round(builds[key]["build_s"], 2)
        row["index_mb"] = round(builds[key]["bytes"] / 1e6, 1)
    out = {"corpus": str(args.corpus), "units": len(units), "seed": args.seed, "results": results}
    if args.json:
        json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    else:
        print(f"{len(units)} units, {len(questions)} questions")
        header = ["ranker", "recall@1", "recall@5", "median_ms", "p95_ms", "build_s", "index_mb"]
        print(" | ".join(header))
        for row in results:
            print(" | ".join(str(row[h]) for h in header))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
