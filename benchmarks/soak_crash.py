"""Soak: SIGKILL `rag-lab index ROOT` at random moments, 2,000 times (issue 7, item 1).

The experiment is the one in ``tests/reliability/test_rel_crash.py`` (200 trials there),
reused as is: after every kill the index opens, holds completely version A or completely
version B of the corpus (by content), passes ``PRAGMA integrity_check``, and every
successful build leaves no ``*.tmp-*`` file. Any violation stops the run with the
assertion. Prints one JSON summary line.

Usage::

    python benchmarks/soak_crash.py                       # 2,000 trials, real `rag-lab index`
    python benchmarks/soak_crash.py --mode fork --trials 5000 --seed 3
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
    path = HERE.parent / "tests" / "reliability" / "test_rel_crash.py"
    spec = importlib.util.spec_from_file_location("rel_crash", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument(
        "--mode",
        choices=("exec", "fork"),
        default="exec",
        help="exec: the installed rag-lab script; fork: the CLI in a forked child",
    )
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--docs", type=int, default=300, help="documents in version A")
    parser.add_argument(
        "--spread",
        type=float,
        default=1.4,
        help="delays are uniform in [0, spread x build time]; <= 1 kills nearly every build",
    )
    args = parser.parse_args(argv)
    crash = load_experiment()
    started = time.perf_counter()

    def report(trial: int, stats: object) -> None:
        if (trial + 1) % 100 == 0:
            print(
                f"{trial + 1}/{args.trials} trials, {time.perf_counter() - started:.0f} s: {stats}",
                file=sys.stderr,
                flush=True,
            )

    with tempfile.TemporaryDirectory(prefix="soak-crash-") as tmp:
        stats = crash.crash_trials(
            Path(tmp),
            args.trials,
            mode=args.mode,
            seed=args.seed,
            docs=args.docs,
            spread=args.spread,
            report=report,
        )
    summary = {
        "mode": args.mode,
        "seed": args.seed,
        "docs": args.docs,
        "spread": args.spread,
        "seconds": round(time.perf_counter() - started, 1),
        **stats.as_dict(),
    }
    print(json.dumps(summary, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
