"""Whole results of this checkout against another ``src``: every request's JSON hashed, compared.

    python benchmarks/same_results.py ROOT --base-src /tmp/base/src [--questions 150]

``ROOT``: a ``gen_corpus.py`` corpus with its index and ``ROOT.manifest.json`` beside it
(nothing is written to it); ``--base-root COPY``: the base code asks a copy of it, indexed by
the base code (two schema versions cannot share one index file); the schema version each
trace names, and the config hash over it, are then left out of the comparison. One fresh process per code asks, on one open index, the three
questions of ``bench_query.questions_for`` and ``--questions`` more made from the manifest
(answered keys, agreeing and conflicting repeated keys, an unknown subject with a known field,
a subject alone, a field alone, a question naming nothing), each twice — the second time
everything the open index remembers is warm — then the first ten once more through
``query_once`` (a fresh index and the freshness walk). Each result (trace included) is
serialised with ``json.dumps`` and hashed; the script prints how many requests hash equal
and exits 1 naming the first question whose result differs. ``--prose-questions FILE``: ROOT is a
prose corpus (``gen_prose_corpus.py``); its questions (``FILE``, ``--questions`` output) are asked
instead, the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import hashlib, json, sys
from datetime import date
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from bench_query import questions_for
from rag_lab.index import Changes, Index, default_index_path
from rag_lab.retrieval import query
root, count = Path(sys.argv[2]), int(sys.argv[3])
today = date(2026, 12, 1)
if sys.argv[5]:  # a prose corpus: its questions file (gen_prose_corpus.py --questions)
    asked = [item["question"] for item in json.loads(Path(sys.argv[5]).read_text())]
else:
    docs = int(root.name.rsplit("_", 1)[1])
    manifest = json.loads((root.parent / f"corpus_{docs}.manifest.json").read_text())
    asked = list(questions_for(root.parent, docs).values())
    single, repeated = manifest["single_source_sample"], manifest["repeated_keys"]
    per = max(count // 6, 1)
    asked += [f"{k['subject']}的{k['field']}是什么？" for k in single[:per]]
    asked += [f"{k['subject']}的{k['field']}是什么？" for k in repeated[:per]]
    asked += [f"{k['subject']}和{k['field']}" for k in single[per : 2 * per]]
    asked += [f"{k['subject']}？" for k in single[2 * per : 2 * per + per // 2]]
    asked += [f"{k['field']}是什么？" for k in single[3 * per : 3 * per + per // 2]]
    asked += [f"无名楼的{k['field']}是什么？" for k in single[4 * per : 4 * per + per // 2]]
    asked += ["今天天气怎么样？", "What are the opening hours?", f"{single[0]['value']}"]
config = query.request_config(5, query.DEFAULT_BUDGET, "codepoints", None, "relevance", True, today)
unversioned = sys.argv[4] == "1"
def without_version(value):  # the trace's index schema version and the config hash that covers it
    if isinstance(value, dict):
        return {k: None if k in ("schema_version", "config_hash") else without_version(v) for k, v in value.items()}
    return [without_version(v) for v in value] if isinstance(value, list) else value
def digest(result):
    if unversioned:
        result = without_version(json.loads(json.dumps(result, ensure_ascii=False, default=str)))
    return hashlib.sha256(json.dumps(result, ensure_ascii=False, default=str).encode()).hexdigest()
out = []
with Index(default_index_path(root)) as index:
    for rnd in range(2):
        for q in asked:
            out.append([f"run {rnd}: {q}", digest(query.run_request(q, root, index, config, None, Changes))])
for q in asked[:10]:
    out.append([f"query_once: {q}", digest(query.query_once(q, root, as_of=today))])
print(json.dumps(out, ensure_ascii=False))
"""


def child(
    root: Path, src: Path | None, questions: int, unversioned: bool = False, prose: Path | None = None
) -> list[list[str]]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(HERE), str(root), str(questions), "1" if unversioned else "0",
         "" if prose is None else str(prose)],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"the measuring process failed:\n{proc.stderr}")
    rows: list[list[str]] = json.loads(proc.stdout.splitlines()[-1])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--base-src", type=Path, required=True)
    ap.add_argument("--questions", type=int, default=150)
    ap.add_argument(
        "--base-root", type=Path, default=None,
        help="a copy of ROOT (same name, its manifest beside it) indexed by the base code: "
        "when the two codes' index files differ in schema",
    )  # fmt: skip
    ap.add_argument(
        "--prose-questions", type=Path, default=None,
        help="ROOT is a prose corpus (gen_prose_corpus.py): ask the questions of this file instead",
    )  # fmt: skip
    args = ap.parse_args()
    base_root = args.root if args.base_root is None else args.base_root
    unversioned = args.base_root is not None  # then each result's trace names its own schema version: not compared
    base = child(base_root, args.base_src, args.questions, unversioned, args.prose_questions)
    this = child(args.root, None, args.questions, unversioned, args.prose_questions)
    if [q for q, _ in base] != [q for q, _ in this]:
        raise SystemExit("the two codes asked different questions")
    differ = [q for (q, a), (_, b) in zip(base, this, strict=True) if a != b]
    print(f"{len(this) - len(differ)} of {len(this)} requests hash equal")
    if differ:
        print(f"first differing: {differ[0]}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
