"""Deterministic realistic question-understanding benchmark (standard library only).

    python benchmarks/realistic/generate.py OUT_DIR [--subjects 20000] [--questions 2000] [--seed 0]

writes

- ``OUT_DIR/corpus/documents/<kind>/NNN/<kind>_NNNNNN.md`` (primary documents) and
  ``OUT_DIR/corpus/documents/copies/NNN/copies_NNNNNN.md`` (second to fourth documents of
  a subject), at most 1000 files per folder, lines ``字段：值`` (spec section 1);
- ``OUT_DIR/questions.jsonl``: one question per line with its label and expected result;
- ``OUT_DIR/subjects.jsonl``: the ground truth per subject (kind, documents, agreeing
  values, conflicting values with every side).

The same arguments always give byte-identical files (``random.Random(seed)`` only, no
set-order dependence; also under a different ``PYTHONHASHSEED``). A JSON summary goes to
stdout, the elapsed time to stderr. See README.md for the overlap patterns and labels.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from random import Random
from typing import Any

if __package__:
    from ._names import subject_specs
    from ._questions import make_questions
    from ._world import World, build_world, document_text
else:  # python benchmarks/realistic/generate.py, or loaded from its file path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _names import subject_specs  # type: ignore[no-redef,import-not-found]
    from _questions import make_questions  # type: ignore[no-redef,import-not-found]
    from _world import World, build_world, document_text  # type: ignore[no-redef,import-not-found]

OUTPUTS = ("corpus", "questions.jsonl", "subjects.jsonl")


def build(
    n_subjects: int = 20000, n_questions: int = 2000, seed: int = 0
) -> tuple[World, list[dict[str, Any]]]:
    rng = Random(seed)
    world = build_world(subject_specs(n_subjects, rng), rng)
    return world, make_questions(world, n_questions, rng)


def subject_record(world: World, name: str) -> dict[str, Any]:
    s = world.subjects[name]
    return {
        "subject": name,
        "kind": s.kind,
        "documents": s.paths,
        "fields": {f: s.values(f)[0] for f in s.agreeing()},
        "shared_fields": s.shared(),
        "conflicting_fields": {f: s.values(f) for f in s.conflicting()},
        "inner_subjects": world.inner[name],
        "field_inside_name": world.deliberate.get(name),
    }


def _jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def write(
    out_dir: Path, world: World, questions: list[dict[str, Any]], overwrite: bool = False
) -> dict[str, Any]:
    """Write corpus, questions and ground truth; return a deterministic summary."""
    existing = [out_dir / name for name in OUTPUTS if (out_dir / name).exists()]
    if existing and not overwrite:
        raise FileExistsError(f"{existing[0]} exists; pass --overwrite to replace it")
    for path in existing:
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    digest = hashlib.sha256()
    n_docs = 0
    for subject in world.subjects.values():
        for i, rel in enumerate(subject.paths):
            path = out_dir / "corpus" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            data = document_text(subject, i).encode("utf-8")
            path.write_bytes(data)
            digest.update(rel.encode() + b"\0" + data)
            n_docs += 1
    texts = {
        "questions.jsonl": _jsonl(questions),
        "subjects.jsonl": _jsonl([subject_record(world, s) for s in world.subjects]),
    }
    for name, text in texts.items():
        data = text.encode("utf-8")
        (out_dir / name).write_bytes(data)
        digest.update(name.encode() + b"\0" + data)
    return {
        "subjects": len(world.subjects),
        "documents": n_docs,
        "fields": len(world.fields),
        "multi_document_subjects": sum(len(s.docs) > 1 for s in world.subjects.values()),
        "conflicting_subjects": sum(bool(s.conflicting()) for s in world.subjects.values()),
        "questions": len(questions),
        "labels": dict(sorted(Counter(q["label"] for q in questions).items())),
        "templates_used": len({q["template"] for q in questions}),
        "sha256": digest.hexdigest(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--subjects", type=int, default=20000)
    parser.add_argument("--questions", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--overwrite", action="store_true", help="replace earlier outputs")
    args = parser.parse_args(argv)
    existing = [args.out_dir / n for n in OUTPUTS if (args.out_dir / n).exists()]
    if existing and not args.overwrite:
        print(f"error: {existing[0]} exists; pass --overwrite to replace it", file=sys.stderr)
        return 2
    start = time.perf_counter()
    world, questions = build(args.subjects, args.questions, args.seed)
    summary = write(args.out_dir, world, questions, overwrite=args.overwrite)
    summary["seed"] = args.seed
    print(json.dumps(summary, ensure_ascii=False, indent=1))
    print(f"elapsed {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
