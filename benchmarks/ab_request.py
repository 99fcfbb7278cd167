"""A/B of the request's CPU: this checkout against another ``src``, alternated in fresh processes.

    python benchmarks/ab_request.py ROOT --base-src /tmp/base/src [--rounds 3] [--runs 200]

Each round runs ``request_cpu.py ROOT`` once with the other code (``PYTHONPATH=BASE_SRC``) and
once with this checkout, back to back, so both see the same load; prints per question the
median over rounds of each one's CPU p50 / p95 (``time.thread_time``) and wall p50.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(root: Path, src: Path | None, runs: int) -> dict[str, dict[str, float]]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    out = subprocess.run(
        [sys.executable, str(HERE / "request_cpu.py"), str(root), "--runs", str(runs)],
        check=True, capture_output=True, text=True, env=env,
    ).stdout
    rows = {}
    for line in out.splitlines():
        name, _, data = line.partition(" ")
        rows[name] = json.loads(data)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--base-src", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument(
        "--base-root", type=Path, default=None,
        help="a copy of ROOT indexed by the base code (when the two codes' index files differ in schema)",
    )  # fmt: skip
    args = ap.parse_args()
    base_root = args.root if args.base_root is None else args.base_root
    got: dict[str, list[dict[str, dict[str, float]]]] = {"base": [], "this": []}
    for _ in range(args.rounds):
        got["base"].append(run(base_root, args.base_src, args.runs))
        got["this"].append(run(args.root, None, args.runs))
    for name in got["this"][0]:
        line = [name]
        for code in ("base", "this"):
            rows = [r[name] for r in got[code]]
            cells = [statistics.median(r[k] for r in rows) for k in ("cpu_p50_ms", "cpu_p95_ms", "wall_p50_ms")]
            line.append(f"{code} cpu p50 {cells[0]:.2f} p95 {cells[1]:.2f} wall p50 {cells[2]:.2f}")
        print(" | ".join(line), flush=True)
    print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
