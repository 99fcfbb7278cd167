"""What a rebuild with vectors costs once most of the corpus was embedded before (index/vectors.py).

    python benchmarks/bench_vector_rebuild.py [--docs 120] [--changed 2] [--out benchmarks/out] [--json FILE]
    python benchmarks/bench_vector_rebuild.py --model stand-in ...   # the same steps without the [neural] extra

On a ``gen_prose_corpus.py`` corpus of ``--docs`` articles (seed 0, written under ``--out``), in
this order, each build in this process with the model loaded and warmed first:

* **floor** — read + SHA-256 of every corpus file (bench_index.py), best of 3;
* **lexical** — ``build_index(root)``, no vectors;
* **first** — ``build_index(root, vectors=True)`` with no index before it: every prose unit and
  field name embedded;
* **changed** — one sentence of each of ``--changed`` articles rewritten, then rebuilt: only what
  changed is embedded, the rest taken from the index the build replaces;
* **same** — rebuilt again with nothing changed.

Prints each build's wall and CPU seconds, its ratio to the floor and to the lexical build, and
the summary's counts (units, units taken; field names, names taken). ``--model stand-in`` uses a
hash-based stand-in (8 dimensions, no model time) to check the steps where the extra is not
installed; the figures that matter are the shipped model's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_index import floor_read_hash  # noqa: E402

import rag_lab.index.field_vectors  # noqa: E402
from rag_lab.index import build_index  # noqa: E402


class StandIn:
    """Vectors from the SHA-256 of each text: the steps without the model's time."""

    name, dim = "stand-in", 8

    def passages(self, texts: Sequence[str]) -> Any:
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:8], np.uint8) for t in texts]
        vectors = np.asarray(rows, np.float32).reshape(len(texts), 8) + 1.0
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    queries = passages


def corpus(out: Path, docs: int) -> Path:
    root = out / f"prose_vec_{docs}"
    if not (root / "documents").is_dir():
        shutil.rmtree(root, ignore_errors=True)
        gen = [sys.executable, str(HERE / "gen_prose_corpus.py"), str(root), "--docs", str(docs), "--seed", "0"]
        subprocess.run(gen, check=True, capture_output=True)
    shutil.rmtree(root / ".rag_lab", ignore_errors=True)
    return root


def rewrite(root: Path, count: int) -> list[str]:
    """One sentence of each of the first ``count`` articles (in path order) says something else."""
    changed = []
    for path in sorted((root / "documents").rglob("*.md"))[:count]:
        text = path.read_text(encoding="utf-8")
        at = text.index("。", text.index("\n\n") + 2)
        path.write_text(text[:at] + "，此句已修订" + text[at:], encoding="utf-8")
        changed.append(path.relative_to(root).as_posix())
    return changed


def timed_build(root: Path, embedder: Any | None) -> dict[str, Any]:
    rag_lab.index.field_vectors._cache.clear()  # a new process would start without it (as `rag-lab index` does)
    wall, cpu = time.perf_counter(), time.process_time()
    summary = build_index(root, vectors=embedder is not None, embedder=embedder)
    return {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu, "vectors": summary.vectors,
            "units": summary.units}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=120)
    ap.add_argument("--changed", type=int, default=2)
    ap.add_argument("--model", choices=("shipped", "stand-in"), default="shipped")
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    if args.model == "shipped":
        from rag_lab.neural import require_embedder

        embedder: Any = require_embedder()
        embedder.passages(["预热"])  # the model's load is not a build's cost
    else:
        embedder = StandIn()
    root = corpus(args.out, args.docs)
    floor = min(floor_read_hash(root)[0] for _ in range(3))
    report: dict[str, Any] = {"docs": args.docs, "model": embedder.name, "floor_s": floor}
    report["lexical"] = timed_build(root, None)
    shutil.rmtree(root / ".rag_lab")
    report["first"] = timed_build(root, embedder)
    report["changed_files"] = rewrite(root, args.changed)
    report["changed"] = timed_build(root, embedder)
    report["same"] = timed_build(root, embedder)
    lexical = report["lexical"]["wall_s"]
    print(f"{args.docs} articles, model {embedder.name}; floor (read + SHA-256) {floor:.3f} s")
    print("| build | wall s | CPU s | ÷ floor | ÷ lexical build | prose units (taken) | field names (taken) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for step in ("lexical", "first", "changed", "same"):
        row, found = report[step], report[step]["vectors"] or {}
        units = f"{found['units']} ({found['units_reused']})" if found else "—"
        names = f"{found['field_names']} ({found['field_names_reused']})" if found else "—"
        print(f"| {step} | {row['wall_s']:.2f} | {row['cpu_s']:.2f} | {row['wall_s'] / floor:.0f}× | "
              f"{row['wall_s'] / lexical:.1f}× | {units} | {names} |")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
