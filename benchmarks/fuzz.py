"""Longer fuzzing of the `字段：值` parser and the question parser (issue 7, item 5).

Runs the targets of ``tests/reliability/test_rel_fuzz.py`` (a few seconds there) with
many more examples. A failure prints hypothesis's minimal falsifying example and exits 1.

Usage::

    python benchmarks/fuzz.py                          # 20,000 documents, 3,000 questions
    python benchmarks/fuzz.py --documents 200000 --questions 20000 --seed 1
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

from hypothesis import HealthCheck, given, seed, settings

from rag_lab.index import Index, default_index_path

HERE = Path(__file__).resolve().parent


def load_targets() -> ModuleType:
    path = HERE.parent / "tests" / "reliability" / "test_rel_fuzz.py"
    spec = importlib.util.spec_from_file_location("rel_fuzz", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--documents", type=int, default=20_000, help="examples for the document parser")
    parser.add_argument("--questions", type=int, default=3_000, help="examples for the question parser")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    targets = load_targets()
    quiet = [HealthCheck.too_slow, HealthCheck.data_too_large]
    timings = {}

    started = time.perf_counter()

    @seed(args.seed)
    @settings(max_examples=args.documents, deadline=None, suppress_health_check=quiet, database=None)
    @given(targets.DOC_BYTES)
    def fuzz_documents(data: bytes) -> None:
        targets.check_parse(data)

    fuzz_documents()
    timings["documents_s"] = round(time.perf_counter() - started, 1)

    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        root = targets.make_small_root(Path(tmp))
        with Index(default_index_path(root)) as index:
            started = time.perf_counter()

            @seed(args.seed)
            @settings(max_examples=args.questions, deadline=None, suppress_health_check=quiet, database=None)
            @given(targets.QUESTION_TEXT)
            def fuzz_questions(question: str) -> None:
                targets.check_question_text(question, root, index)

            fuzz_questions()
            timings["questions_s"] = round(time.perf_counter() - started, 1)
    print(
        json.dumps({"documents": args.documents, "questions": args.questions, "seed": args.seed, **timings})
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
