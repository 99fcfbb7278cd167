"""Soak: 4 readers ask through ``query_once`` for 30 s while the index is rebuilt (issue 7, item 2).

The experiment is the one in ``tests/reliability/test_rel_readers.py`` (10 s there),
reused as is: ROOT stays fixed, rebuilds alternate the reserved fields (so answers
change), and every result is checked — no reader raises, citations re-hash to the
files, one index version per result, and a result decided while the index file did
not change used the version recorded for that file. Prints one JSON summary line.

Usage::

    python benchmarks/soak_readers.py                  # 30 s, 4 reader threads
    python benchmarks/soak_readers.py --seconds 120 --readers 8
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

HERE = Path(__file__).resolve().parent


def load_experiment() -> ModuleType:
    path = HERE.parent / "tests" / "reliability" / "test_rel_readers.py"
    spec = importlib.util.spec_from_file_location("rel_readers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--readers", type=int, default=4)
    parser.add_argument("--pause", type=float, default=0.05, help="seconds between rebuilds")
    args = parser.parse_args(argv)
    readers = load_experiment()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="soak-readers-") as tmp:
        root = Path(tmp) / "corpus"
        readers.write_corpus(root)
        run = readers.run_readers(root, args.seconds, readers=args.readers, pause_s=args.pause)
        seen = readers.check_run(root, run)
    summary = {
        "seconds": round(time.perf_counter() - started, 1),
        "readers": args.readers,
        "rebuilds": run.rebuilds,
        "results": len(run.observations),
        "errors": len(run.errors),
        "decided_on_P": seen["P"],
        "decided_on_R": seen["R"],
        "index_unchanged_during_call": seen["stable"],
        "index_replaced_during_call": len(run.observations) - seen["stable"],
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
