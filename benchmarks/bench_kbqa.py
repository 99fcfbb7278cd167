"""Real questions as people ask them: the NLPCC 2016 KBQA training split through ``run_request``.

    python benchmarks/bench_kbqa.py [--data /work/shared/data/nlpcc2016-kbqa-train] [--work DIR]
                                    [--part dev|held_out|both] [--no-neural] [--json FILE] [--limit N]
                                    [--reuse]

The data is third-party (``/work/shared/data/README.md``): it is read from where it lies,
the corpus is built in a temporary folder, and nothing derived from it is written into the
repository.

1. Every block ``<question id=N>`` / ``<triple id=N> S ||| P ||| O`` is read.
2. **Absent subjects**: the subjects whose SHA-256 (salted ``kbqa-absent:``, of the name
   folded and without punctuation, so that ``《X》`` and ``X`` share their fate) starts
   below ``ABSENT_BYTE`` (≈ 5 %) are left out of the corpus. Their questions must never be
   answered (an answer would come from another subject).
3. **Corpus**: one ``主题：S`` document per present subject holding every ``P：O`` the split
   knows for S (duplicates once; several objects for one (S, P) are a conflict). Lines that
   cannot be field lines are left out and their questions counted as ``not_representable``:
   an empty or colon-holding predicate, the control fields 主题 / 权限 / 生效日期 / 失效日期
   (their values here are not ISO dates and would make the whole file an error file).
4. **Split**: by SHA-256 of the question id (salted ``kbqa-split:``): ``dev`` (looked at,
   failures listed) and ``held_out`` (only scored: its failures are never printed).
5. Every question of the chosen part is asked through ``run_request`` on one open index
   (freshness skipped: the corpus is not edited). Scored per question:

   * present subject: ``correct`` = answered with exactly O (stripped, as the line is);
     ``wrong`` = answered (or partial) with anything else; otherwise refused / clarification
     by reason;
   * absent subject: ``absent_answered`` when answered or partial (must be 0).

   Split by ``field_match.method`` and by whether P occurs verbatim in the question.

``--no-neural`` hides the ``[neural]`` extra (as if it were not installed) for the build
and the questions; run once with and once without.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

DATA = Path("/work/shared/data/nlpcc2016-kbqa-train")
FILE = "nlpcc-iccpol-2016.kbqa.training-data"
ABSENT_BYTE = 13  # of 256: ≈ 5 % of subjects left out of the corpus
#: ``--simulate-absent SALT:BYTE`` (dev only): other subjects left out, to look for absent-subject
#: answers without looking at the held-out part's
SIMULATED: list[tuple[str, int]] = []
DEV_BYTE = 128  # of 256: ≈ 50 % of questions in the part we look at
SKIPPED_FIELDS = ("主题", "权限", "生效日期", "失效日期")


@dataclass(frozen=True)
class Question:
    qid: int
    text: str
    subject: str
    predicate: str
    obj: str

    @property
    def part(self) -> str:
        return "dev" if _byte("kbqa-split:", str(self.qid)) < DEV_BYTE else "held_out"


def _byte(salt: str, text: str) -> int:
    return hashlib.sha256((salt + text).encode("utf-8")).digest()[0]


def name_key(subject: str) -> str:
    """One key for the spellings of one name: ``《美女与野兽》`` and ``美女与野兽`` are one name."""
    import unicodedata

    folded = unicodedata.normalize("NFKC", subject).casefold()
    return "".join(ch for ch in folded if not ch.isspace() and not unicodedata.category(ch).startswith("P"))


def absent(subject: str) -> bool:
    """Left out of the corpus, with every spelling of the same name (:func:`name_key`).

    A question naming ``《美女与野兽》`` while the corpus holds ``美女与野兽`` names a subject
    the corpus has; if the knowledge base means another entity by the bracketed name, an
    answer from 美女与野兽 is scored ``wrong``, not hidden as an absent-subject question.
    """
    key = name_key(subject)
    return _byte("kbqa-absent:", key) < ABSENT_BYTE or any(_byte(salt, key) < cut for salt, cut in SIMULATED)


def load(data: Path) -> list[Question]:
    text = (data / FILE).read_text(encoding="utf-8")
    found: list[Question] = []
    for block in text.split("=" * 50):
        lines = [ln for ln in block.strip("\n").split("\n") if ln.strip()]
        if len(lines) < 2:
            continue
        head, question = lines[0].split("\t", 1)
        triple = lines[1].split("\t", 1)[1].split(" ||| ")
        if len(triple) != 3:
            continue
        qid = int(head.removeprefix("<question id=").removesuffix(">"))
        found.append(Question(qid, question.strip(), triple[0].strip(), triple[1].strip(), triple[2].strip()))
    return found


def representable(q: Question) -> bool:
    return bool(q.subject and q.predicate and q.obj) and "：" not in q.predicate and (
        q.predicate not in SKIPPED_FIELDS
    ) and "\n" not in q.obj and "\n" not in q.subject


def write_corpus(root: Path, questions: list[Question]) -> dict[str, int]:
    lines: dict[str, dict[tuple[str, str], None]] = {}
    for q in questions:
        if absent(q.subject) or not representable(q):
            continue
        lines.setdefault(q.subject, {})[(q.predicate, q.obj)] = None
    for i, subject in enumerate(sorted(lines)):
        folder = root / "documents" / f"{i // 1000:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "".join(f"{p}：{o}\n" for p, o in lines[subject])
        (folder / f"{i:06d}.md").write_text(f"主题：{subject}\n{body}", encoding="utf-8")
    return {"documents": len(lines), "lines": sum(len(v) for v in lines.values())}


def method_of(result: dict[str, Any]) -> str:
    match = result.get("field_match")
    if isinstance(match, dict):
        return str(match.get("method"))
    slots = result.get("slots") or []
    if slots and isinstance(slots[0], dict) and isinstance(slots[0].get("field_match"), dict):
        return str(slots[0]["field_match"].get("method"))
    return "none"


def score(q: Question, r: dict[str, Any]) -> str:
    status = r["status"]
    if absent(q.subject):
        return "absent_answered" if status in ("answered", "partial") else "absent_not_answered"
    if not representable(q):
        return "not_representable"
    if status in ("answered", "partial"):
        return "correct" if status == "answered" and r["answer"] == q.obj else "wrong"
    return f"{status}/{r['reason']}"


def rate(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.2f} %)" if d else "0/0"


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.no_neural:
        from rag_lab import neural

        neural.available = lambda: False  # type: ignore[assignment]
        neural.load_embedder.cache_clear()
    from rag_lab.index import Changes, Index, build_index, default_index_path
    from rag_lab.retrieval.query import request_config, run_request

    questions = load(args.data)
    work = Path(args.work or tempfile.mkdtemp(prefix="kbqa-"))
    corpus = work / "corpus"
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_index import floor_read_hash

    reuse = bool(args.reuse and args.work and default_index_path(corpus).exists())
    if reuse:  # the corpus and index of an earlier run (same data): only the questions are asked again
        print(f"reusing the corpus and index in {corpus} (index time not measured)", flush=True)
        sizes = {"documents": sum(1 for _ in (corpus / "documents").rglob("*.md")), "lines": 0}
        index_s, floor_s = float("nan"), float("nan")
    else:
        if corpus.exists():
            shutil.rmtree(corpus)
        corpus.mkdir(parents=True)
        t = time.perf_counter()
        sizes = write_corpus(corpus, questions)
        write_s = time.perf_counter() - t
        floor_read_hash(corpus)  # warm the page cache
        floor_s = floor_read_hash(corpus)[0]
        summary = build_index(corpus, vectors=not args.no_neural)
        index_s = summary.seconds
        print(
            f"corpus: {sizes['documents']} documents, {sizes['lines']} lines ({write_s:.1f} s); "
            f"index {summary.seconds:.1f} s, {summary.units} units, {len(summary.errors)} error files; "
            f"read+hash floor {floor_s:.2f} s (index / floor {summary.seconds / floor_s:.1f}x)",
            flush=True,
        )
    parts = ("dev", "held_out") if args.part == "both" else (args.part,)
    asked = [q for q in questions if q.part in parts]
    if args.limit:
        asked = asked[: args.limit]
    config = request_config(5, 1200, "codepoints", None, "relevance", True, date(2026, 12, 1))
    records: list[dict[str, Any]] = []
    latencies: list[float] = []
    with Index(default_index_path(corpus)) as index:
        for i, q in enumerate(asked, 1):
            t = time.perf_counter()
            r = run_request(q.text, corpus, index, config, None, Changes)
            latencies.append(time.perf_counter() - t)
            records.append(
                {
                    "q": q,
                    "outcome": score(q, r),
                    "method": method_of(r),
                    "verbatim": q.predicate in q.text,
                    "status": r["status"],
                    "reason": r["reason"],
                    "answer": r["answer"],
                    "message": r["message"],
                }
            )
            if i % 1000 == 0:
                print(f"  {i}/{len(asked)} asked, median {statistics.median(latencies) * 1000:.1f} ms", flush=True)
        extra = field_matching_cost(asked[: args.timing], index)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    out = report(records, latencies, index_s, sizes, args)
    out.update(extra, floor_seconds=round(floor_s, 3), index_over_floor=round(index_s / floor_s, 1))
    print(f"field matching adds {extra['field_matching_median_ms']} ms median "
          f"(p90 {extra['field_matching_p90_ms']} ms) per question over the verbatim parse; "
          f"index / read+hash floor = {out['index_over_floor']}x")
    return out


def field_matching_cost(questions: list[Question], index: Any) -> dict[str, float]:
    """Median extra time of the full parse over the verbatim name parse, per question (ms).

    Both run on the same open index, the verbatim parse first, so the full parse pays for
    matching only (name lookups come from SQLite's page cache either way).
    """
    from rag_lab.retrieval import question as qmod

    extra: list[float] = []
    for q in questions:
        t = time.perf_counter()
        qmod._parse_names(q.text, index)
        names = time.perf_counter() - t
        t = time.perf_counter()
        qmod.parse_text_question(q.text, index)
        extra.append(max(time.perf_counter() - t - names, 0.0))
    extra.sort()
    return {
        "field_matching_median_ms": round(statistics.median(extra) * 1000, 2) if extra else 0.0,
        "field_matching_p90_ms": round(extra[int(0.9 * (len(extra) - 1))] * 1000, 2) if extra else 0.0,
        "field_matching_questions": len(extra),
    }


def table(records: list[dict[str, Any]]) -> dict[str, Any]:
    present = [r for r in records if r["outcome"] not in ("absent_answered", "absent_not_answered")]
    present = [r for r in present if r["outcome"] != "not_representable"]
    outcomes = Counter(r["outcome"] for r in present)
    by_method: dict[str, Counter[str]] = defaultdict(Counter)
    by_verbatim: dict[str, Counter[str]] = defaultdict(Counter)
    for r in present:
        kind = "correct" if r["outcome"] == "correct" else "wrong" if r["outcome"] == "wrong" else "other"
        by_method[r["method"]][kind] += 1
        by_verbatim["field named verbatim" if r["verbatim"] else "field in other words"][kind] += 1
    absent_qs = [r for r in records if r["outcome"].startswith("absent")]
    return {
        "questions": len(records),
        "present": len(present),
        "correct": outcomes["correct"],
        "wrong": outcomes["wrong"],
        "not_answered": {k: v for k, v in sorted(outcomes.items()) if k not in ("correct", "wrong")},
        "not_representable": sum(1 for r in records if r["outcome"] == "not_representable"),
        "absent_subject_questions": len(absent_qs),
        "absent_answered": sum(1 for r in absent_qs if r["outcome"] == "absent_answered"),
        "by_method": {k: dict(v) for k, v in sorted(by_method.items())},
        "by_verbatim": {k: dict(v) for k, v in sorted(by_verbatim.items())},
    }


def report(
    records: list[dict[str, Any]], latencies: list[float], index_s: float, sizes: dict[str, int], args: argparse.Namespace
) -> dict[str, Any]:
    from rag_lab import neural

    out: dict[str, Any] = {
        "neural": neural.available(),
        "index_seconds": round(index_s, 2),
        "corpus": sizes,
        "median_ms": round(statistics.median(latencies) * 1000, 2) if latencies else None,
        "p90_ms": round(sorted(latencies)[int(0.9 * (len(latencies) - 1))] * 1000, 2) if latencies else None,
        "parts": {},
    }
    for part in ("dev", "held_out"):
        mine = [r for r in records if r["q"].part == part]
        if not mine:
            continue
        out["parts"][part] = table(mine)
        t = out["parts"][part]
        print(f"\n== {part} (neural extra: {out['neural']}) ==")
        print(f"present-subject questions: {t['present']}  correct {rate(t['correct'], t['present'])}  "
              f"wrong {rate(t['wrong'], t['present'])}")
        print(f"absent-subject questions: {t['absent_subject_questions']}  answered {t['absent_answered']}")
        print(f"not representable (left out of the corpus): {t['not_representable']}")
        print("not answered:", json.dumps(t["not_answered"], ensure_ascii=False))
        print("by method:", json.dumps(t["by_method"], ensure_ascii=False))
        print("by verbatim:", json.dumps(t["by_verbatim"], ensure_ascii=False))
        if part == "dev":  # the held-out part is only scored: its failures are never shown
            bad = [r for r in mine if r["outcome"] in ("wrong", "absent_answered")]
            out["dev_wrong"] = [
                {"id": r["q"].qid, "question": r["q"].text, "expect": [r["q"].subject, r["q"].predicate, r["q"].obj],
                 "answer": r["answer"], "method": r["method"], "message": r["message"]}
                for r in bad
            ]
            for item in out["dev_wrong"]:
                print("  WRONG", json.dumps(item, ensure_ascii=False))
            misses = [r for r in mine if r["outcome"] not in ("correct", "wrong", "not_representable")
                      and not r["outcome"].startswith("absent")]
            out["dev_misses"] = [
                {"id": r["q"].qid, "question": r["q"].text, "expect": [r["q"].subject, r["q"].predicate, r["q"].obj],
                 "outcome": r["outcome"], "message": r["message"]}
                for r in misses
            ]
            if args.show:
                for r in misses[: args.show]:
                    print("  miss", r["q"].qid, r["q"].text, "|", r["q"].predicate, "|", r["outcome"], "|", r["message"][:120])
    print(f"\nmedian {out['median_ms']} ms, p90 {out['p90_ms']} ms per question; index {out['index_seconds']} s")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--work", type=Path, default=None, help="keep the corpus here (default: a temp dir, deleted)")
    ap.add_argument("--reuse", action="store_true",
                    help="with --work: ask again on the corpus and index an earlier run left there (no rebuild)")
    ap.add_argument("--simulate-absent", action="append", default=[], metavar="SALT:BYTE",
                    help="dev only: also leave out subjects whose salted hash starts below BYTE (of 256)")
    ap.add_argument("--part", choices=("dev", "held_out", "both"), default="both")
    ap.add_argument("--no-neural", action="store_true")
    ap.add_argument("--show", type=int, default=0, help="dev only: print the first N non-answers")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--timing", type=int, default=2000, help="questions timed for the cost of field matching")
    args = ap.parse_args(argv)
    if not (args.data / FILE).exists():
        print(f"no {FILE} under {args.data}; see /work/shared/data/README.md", file=sys.stderr)
        return 2
    for spec in args.simulate_absent:
        if args.part != "dev":
            print("--simulate-absent is for the dev part only (--part dev)", file=sys.stderr)
            return 2
        salt, _, cut = spec.rpartition(":")
        SIMULATED.append((salt, int(cut)))
    out = run(args)
    if args.json:
        args.json.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
