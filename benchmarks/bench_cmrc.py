"""Prose answering on real Chinese prose: the CMRC 2018 trial set (third-party, read only).

    python benchmarks/bench_cmrc.py                 # lexical only
    python benchmarks/bench_cmrc.py --neural        # also dense and fused (needs the [neural] extra)
    python benchmarks/bench_cmrc.py --show-failures 20   # print dev failures (never held-out ones)

Data: ``../shared/data/cmrc2018-trial/cmrc2018_trial.json`` (256 articles, one paragraph
each, 1,002 questions with gold spans). Nothing derived from it is written into the repo: the
corpora live in a temporary folder and only aggregate figures are printed.

Each article becomes one document ``documents/<id>.md`` = ``# <title>`` + its paragraph.

- **Positives**: every question against a corpus holding only its article (``query_once``,
  top_k 5). *Correct*: answered and a gold answer is inside the answer (the cited sentence);
  *wrong*: answered without it; otherwise refused.
- **Negatives** (SQuAD 2.0 style, two kinds): the question against (a) its own article with
  every sentence that holds a gold answer removed, and (b) the other article that lexical
  retrieval over the whole collection ranks highest for it. Any answer is wrong.
- **Recall@k** over the whole collection (one corpus of all 256 articles): document level (a
  top-k unit comes from the gold article) and sentence level (a top-k unit holds a gold
  answer), for lexical, dense and fused rankings.
- **Split**: articles are dev or held-out by the first hex digit of sha256(article id) (< 8:
  dev). Failures are printed for dev only; thresholds were set looking at dev only.
- **Timing**: index build of the whole collection with and without vectors as a ratio to the
  read+hash floor of the same files, and ``query_once`` p50 per retrieval mode.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rag_lab.answering.answer_types import answer_type
from rag_lab.data.prose import split_sentences
from rag_lab.index import Index, build_index
from rag_lab.retrieval import query_once
from rag_lab.retrieval.rank import rank


def default_data() -> Path:
    """``../shared/data/…`` beside the checkout (or beside the main checkout of a worktree)."""
    here = Path(__file__).resolve().parents[1]
    for base in (here.parent, here.parent.parent):
        candidate = base / "shared" / "data" / "cmrc2018-trial" / "cmrc2018_trial.json"
        if candidate.exists():
            return candidate
    return here.parent / "shared" / "data" / "cmrc2018-trial" / "cmrc2018_trial.json"


KS = (1, 5, 10)


class CachingEmbedder:
    """The shared model with a text → vector memo, so a sentence or question is embedded once
    per run although many small indexes and two retrieval modes use it."""

    def __init__(self, inner: Any, cache: Path | None = None) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self._memo: dict[tuple[bool, str], Any] = {}
        self.seconds = 0.0
        self.cache = cache  # a file outside the repo (vectors of third-party text are never kept in it)
        if cache is not None and cache.exists():
            with np.load(cache, allow_pickle=False) as saved:
                for flag, text, row in zip(saved["query"], saved["text"], saved["rows"], strict=True):
                    self._memo[(bool(flag), str(text))] = row

    def save(self) -> None:
        if self.cache is None or not self._memo:
            return
        keys = sorted(self._memo)
        np.savez(
            self.cache,
            query=np.array([k[0] for k in keys]),
            text=np.array([k[1] for k in keys]),
            rows=np.stack([self._memo[k] for k in keys]),
        )

    def _get(self, texts: Sequence[str], query: bool) -> Any:
        missing = [t for t in dict.fromkeys(texts) if (query, t) not in self._memo]
        if missing:
            started = time.perf_counter()
            rows = self.inner.queries(missing) if query else self.inner.passages(missing)
            self.seconds += time.perf_counter() - started
            self._memo.update({(query, t): r for t, r in zip(missing, rows, strict=True)})
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self._memo[(query, t)] for t in texts])

    def queries(self, texts: Sequence[str]) -> Any:
        return self._get(texts, True)

    def passages(self, texts: Sequence[str]) -> Any:
        return self._get(texts, False)


def is_dev(article_id: str) -> bool:
    return hashlib.sha256(article_id.encode()).hexdigest()[0] < "8"


def load(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    articles = []
    for article in sorted(data, key=lambda a: a["id"]):
        [paragraph] = article["paragraphs"]
        questions = [
            {
                "id": qa["id"],
                "question": qa["question"],
                "answers": sorted({a["text"] for a in qa["answers"]}),
                "spans": sorted(
                    {(a["answer_start"], a["answer_start"] + len(a["text"])) for a in qa["answers"]}
                ),
            }
            for qa in paragraph["qas"]
            if qa["question"].strip()  # the trial set holds an empty question; it cannot be asked
        ]
        articles.append(
            {
                "id": article["id"],
                "title": article["title"],
                "context": paragraph["context"],
                "qas": questions,
            }
        )
    return articles


def document(article: dict[str, Any], drop: Sequence[str] = (), spans: Sequence[tuple[int, int]] = ()) -> str:
    """The article as a document; sentences holding any of ``drop`` or overlapping any of
    ``spans`` (code points of the context) are left out."""
    lines, offset = [], 0
    for line in article["context"].split("\n"):
        kept = [
            line[a:b]
            for a, b in split_sentences(line)
            if not any(d in line[a:b] for d in drop)
            and not any(s < offset + b and offset + a < e for s, e in spans)
        ]
        lines.append("".join(kept))
        offset += len(line) + 1
    return f"# {article['title']}\n\n" + "\n".join(lines) + "\n"


def write_corpus(root: Path, docs: dict[str, str]) -> Path:
    for name, text in docs.items():
        path = root / "documents" / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:  # a kept --work corpus stays fresh
            path.write_text(text, encoding="utf-8")
    return root


def read_hash_floor(root: Path) -> float:
    started = time.perf_counter()
    for path in sorted((root / "documents").rglob("*.md")):
        hashlib.sha256(path.read_bytes()).hexdigest()
    return time.perf_counter() - started


def outcome(result: dict[str, Any], answers: Sequence[str]) -> str:
    """correct: a gold answer is inside the answer; partial: the answer is one sentence of a
    gold answer that spans several; wrong: neither; refused."""
    if result["status"] != "answered":
        return "refused"
    text = result["answer"] or ""
    if any(a in text for a in answers):
        return "correct"
    return "partial" if any(text in a for a in answers) else "wrong"


def miss_kind(root: Path, article_id: str, qa: dict[str, Any], result: dict[str, Any]) -> str:
    """Why a dev question came out as it did (lexical): which sentence-level step failed."""
    from rag_lab.answering.prose import support_check

    out = outcome(result, qa["answers"])
    with Index(root / ".rag_lab" / "index.sqlite") as index:
        units = index.units_of_source(f"documents/{article_id}.md")
        top = [c["evidence"] for c in rank(qa["question"], index, 5)[0]]
    gold = [u for u in units if any(a in u["text"] for a in qa["answers"])]
    gold_top = [u for u in top if u in gold]
    checks = [support_check(qa["question"], u) for u in gold_top]
    if out in ("correct", "partial"):
        return out
    if out == "wrong":
        if not gold:
            return "wrong: gold crosses sentences"
        return "wrong: other sentence passed" + (" (gold passes too)" if any(c.ok for c in checks) else "")
    if not gold:
        return "refused: no single sentence holds the gold span"
    if not gold_top:
        return "refused: retrieval miss (no gold sentence in top 5)"
    if any(c.problem == "answer_type" for c in checks):
        return "refused: gold sentence fails answer type"
    return "refused: gold sentence fails " + str(next((c.problem for c in checks if c.problem), "decision"))


def answered_by(result: dict[str, Any]) -> str:
    """How an answer passed: ``paraphrase`` (a piece credited by the model), ``two sentences``
    (a reason joined with the sentence before), ``lexical``; "" when not answered."""
    if result["status"] != "answered":
        return ""
    checks = [c for e in result["trace"]["events"] if e["step"] == "support_check" for c in e["checks"]]
    cited = {c["evidence_id"] for c in result["citations"]}
    passing = [c for c in checks if c["ok"] and c["evidence_id"] in cited and not c.get("audit")]
    if any(c.get("joined") for c in passing):
        return "two sentences"
    return "paraphrase" if passing and all(c.get("paraphrased") for c in passing) else "lexical"


def ask(root: Path, question: str, mode: str, embedder: Any) -> tuple[dict[str, Any], float]:
    started = time.perf_counter()
    result = query_once(question, root, top_k=5, retrieval=mode, embedder=embedder)
    return result, time.perf_counter() - started


def recall(whole: Path, articles: list[dict[str, Any]], modes: list[str], embedder: Any) -> dict[str, Any]:
    from rag_lab.retrieval.dense import dense_order
    from rag_lab.retrieval.fuse import fused_rank

    hits: dict[tuple[str, str, str, int], int] = {}
    total = {"dev": 0, "held_out": 0}
    with Index(whole / ".rag_lab" / "index.sqlite") as index:
        for article in articles:
            split = "dev" if is_dev(article["id"]) else "held_out"
            for qa in article["qas"]:
                total[split] += 1
                ranked: dict[str, list[dict[str, Any]]] = {}
                ranked["lexical"] = [c["evidence"] for c in rank(qa["question"], index, max(KS))[0]]
                if "fused" in modes:
                    ids = dense_order(qa["question"], index, max(KS), embedder)
                    units = index.units_by_ids(ids)
                    ranked["dense"] = [units[i] for i in ids]
                    ranked["fused"] = [
                        c["evidence"]
                        for c in fused_rank(qa["question"], index, max(KS), embedder=embedder)[0]
                    ]
                source = f"documents/{article['id']}.md"
                for name, units_ in ranked.items():
                    for k in KS:
                        top = units_[:k]
                        doc = any(u["source"] == source for u in top)
                        sent = any(
                            u["source"] == source and any(a in u["text"] for a in qa["answers"]) for u in top
                        )
                        hits[(name, split, "document", k)] = hits.get((name, split, "document", k), 0) + doc
                        hits[(name, split, "sentence", k)] = hits.get((name, split, "sentence", k), 0) + sent
    return {
        f"{name}/{split}/{level}@{k}": round(count / total[split], 4)
        for (name, split, level, k), count in sorted(hits.items())
    }


def _build_once(root: Path, embedder: Any) -> None:
    """Build the small per-question index, or keep the one a previous ``--work`` run built."""
    if not (root / ".rag_lab" / "index.sqlite").exists():
        build_index(root, vectors=embedder is not None, embedder=embedder)


def run(args: argparse.Namespace) -> dict[str, Any]:
    articles = load(Path(args.data))
    if args.limit:
        articles = articles[: args.limit]
    embedder = None
    modes = ["lexical"]
    if args.neural:
        from rag_lab.neural import require_embedder

        embedder = CachingEmbedder(
            require_embedder(), Path(args.vector_cache) if args.vector_cache else None
        )
        modes.append("fused")
    report: dict[str, Any] = {"articles": len(articles), "questions": sum(len(a["qas"]) for a in articles)}
    with tempfile.TemporaryDirectory(prefix="bench-cmrc-") as tmp:
        base = Path(args.work) if args.work else Path(tmp)
        whole = write_corpus(base / "whole", {a["id"]: document(a) for a in articles})
        floor = min(read_hash_floor(whole) for _ in range(3))
        started = time.perf_counter()
        build_index(whole)
        lexical_s = time.perf_counter() - started
        report["index"] = {
            "floor_s": round(floor, 4),
            "lexical_s": round(lexical_s, 3),
            "lexical_x": round(lexical_s / floor, 1),
        }
        if embedder is not None:
            started = time.perf_counter()
            build_index(whole, vectors=True, embedder=embedder)
            vectors_s = time.perf_counter() - started
            embedder.save()
            with Index(whole / ".rag_lab" / "index.sqlite") as index:
                report["index"]["vector_units"] = index.config["vectors"]["units"]
            report["index"].update(vectors_s=round(vectors_s, 1), vectors_x=round(vectors_s / floor, 1))
        # the other article lexical retrieval ranks highest for each question
        nearest: dict[str, str] = {}
        with Index(whole / ".rag_lab" / "index.sqlite") as index:
            for article in articles:
                for qa in article["qas"]:
                    own = f"documents/{article['id']}.md"
                    for cand in rank(qa["question"], index, 50)[0]:
                        if cand["evidence"]["source"] != own:
                            nearest[qa["id"]] = Path(cand["evidence"]["source"]).stem
                            break
        report["recall"] = recall(whole, articles, modes, embedder)
        single = {}
        for article in articles:
            root = write_corpus(base / "one" / article["id"], {article["id"]: document(article)})
            _build_once(root, embedder)
            single[article["id"]] = root
        rows: list[dict[str, Any]] = []
        for article in articles:
            split = "dev" if is_dev(article["id"]) else "held_out"
            for qa in article["qas"]:
                removed = write_corpus(
                    base / "removed" / qa["id"],
                    {article["id"]: document(article, qa["answers"], qa["spans"])},
                )
                _build_once(removed, embedder)
                other = single.get(nearest.get(qa["id"], ""))
                for mode in modes:
                    result, seconds = ask(single[article["id"]], qa["question"], mode, embedder)
                    row = {"type": str(answer_type(qa["question"])[0]), "split": split, "mode": mode, "id": qa["id"], "question": qa["question"],
                           "answers": qa["answers"], "outcome": outcome(result, qa["answers"]),
                           "reason": result["reason"], "answer": result["answer"], "message": result["message"],
                           "seconds": seconds, "by": answered_by(result)}  # fmt: skip
                    if split == "dev" and mode == "lexical":
                        row["kind"] = miss_kind(single[article["id"]], article["id"], qa, result)
                    neg = ask(removed, qa["question"], mode, embedder)[0]
                    row["neg_removed"] = neg["status"] != "answered"
                    row["neg_removed_answer"] = neg["answer"]
                    if other is not None:
                        row["neg_other"] = (
                            ask(other, qa["question"], mode, embedder)[0]["status"] != "answered"
                        )
                    rows.append(row)
        report["answering"] = summarise(rows, modes)
        if args.rows:
            Path(args.rows).write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
        if embedder is not None:
            report["embedding_s"] = round(embedder.seconds, 1)
            embedder.save()
        if args.show_failures:
            show_failures(rows, args.show_failures)
    return report


def summarise(rows: list[dict[str, Any]], modes: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode in modes:
        for split in ("dev", "held_out", "all"):
            part = [r for r in rows if r["mode"] == mode and (split == "all" or r["split"] == split)]
            if not part:
                continue
            n = len(part)
            others = [r["neg_other"] for r in part if "neg_other" in r]
            out[f"{mode}/{split}"] = {
                "questions": n,
                "correct": round(sum(r["outcome"] == "correct" for r in part) / n, 4),
                "partial": round(sum(r["outcome"] == "partial" for r in part) / n, 4),
                "wrong": round(sum(r["outcome"] == "wrong" for r in part) / n, 4),
                "refused": round(sum(r["outcome"] == "refused" for r in part) / n, 4),
                "neg_removed_refused": round(sum(r["neg_removed"] for r in part) / n, 4),
                "neg_other_refused": round(sum(others) / len(others), 4) if others else None,
                "query_p50_ms": round(statistics.median(r["seconds"] for r in part) * 1000, 1),
                "answered_by_paraphrase": round(sum(r.get("by") == "paraphrase" for r in part) / n, 4),
                "answered_by_two_sentences": round(sum(r.get("by") == "two sentences" for r in part) / n, 4),
            }
    dev = [r for r in rows if "kind" in r]
    if dev:
        kinds = sorted({r["kind"] for r in dev})
        out["lexical/dev"]["breakdown"] = {
            k: round(sum(r["kind"] == k for r in dev) / len(dev), 4) for k in kinds
        }
    for mode in modes:
        for kind in sorted({r["type"] for r in rows}):
            part = [r for r in rows if r["mode"] == mode and r["type"] == kind]
            n = len(part)
            out[f"{mode}/type={kind}"] = {
                "questions": n,
                "correct": round(sum(r["outcome"] == "correct" for r in part) / n, 4),
                "wrong": round(sum(r["outcome"] == "wrong" for r in part) / n, 4),
                "neg_removed_refused": round(sum(r["neg_removed"] for r in part) / n, 4),
            }
    return out


def show_failures(rows: list[dict[str, Any]], limit: int) -> None:
    dev = [r for r in rows if r["split"] == "dev" and r["mode"] == "lexical"]
    for label, chosen in (
        ("wrong", [r for r in dev if r["outcome"] == "wrong"]),
        ("refused", [r for r in dev if r["outcome"] == "refused"]),
        ("negative answered", [r for r in dev if not r["neg_removed"]]),
    ):
        print(f"\n## dev {label}: {len(chosen)}", file=sys.stderr)
        for r in chosen[:limit]:
            said = r["neg_removed_answer"] if label.startswith("negative") else r["answer"]
            print(f"  [{r['type']}] {r['question']} gold={r['answers']} → {said!r}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=str(default_data()))
    parser.add_argument("--neural", action="store_true", help="also dense and fused retrieval")
    parser.add_argument("--limit", type=int, default=0, help="first N articles only (for a quick look)")
    parser.add_argument(
        "--show-failures", type=int, default=0, metavar="N", help="print N dev failures of each kind"
    )
    parser.add_argument(
        "--vector-cache",
        metavar="FILE.npz",
        help="keep embeddings between runs in FILE (outside the repo; index times then exclude embedding)",
    )
    parser.add_argument(
        "--work",
        metavar="DIR",
        help="keep the per-question corpora and indexes in DIR (outside the repo) and reuse them on the "
        "next run (only when ingest is unchanged; one DIR per --neural setting)",
    )
    parser.add_argument("--rows", metavar="FILE", help="write every question's outcome to FILE (outside the repo)")
    report = run(parser.parse_args())
    print(json.dumps(report, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
