"""Generator benchmark: the composer vs. a real model endpoint on the same fixed evidence packages.

    python benchmarks/bench_generation.py --endpoint http://127.0.0.1:8080/v1 --model NAME
    python benchmarks/bench_generation.py --gguf MODEL.gguf [--server-python PY] [--threads 2]

On a fresh copy of the demo corpus: run the shipped question set once with the composer and
save its evidence packages, then replay those packages with the endpoint as generator (no
re-ranking, so only the generator differs). Prints, per generator, the refusal outcomes next to
the claim metrics (resolvable ids, supported claims, weighted coverage, repairs), the seconds
per generated answer, and every claim the verifier deleted with the reason.

``--gguf`` starts ``python -m llama_cpp.server`` (llama-cpp-python's OpenAI-compatible server,
from ``--server-python``'s environment) on a free local port for the run and stops it after.
Benchmark only: never a default, never needed by the tests (they use a scripted endpoint).
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from rag_lab.demo import corpus_path, questions_path
from rag_lab.evaluation import evaluate_file, load_packages, render_comparison
from rag_lab.generation.openai import ChatEndpointGenerator
from rag_lab.index import build_index


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_llama_server(python: str, gguf: str, threads: int, timeout_s: float) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    proc = subprocess.Popen(
        [python, "-m", "llama_cpp.server", "--model", gguf, "--host", "127.0.0.1", "--port", str(port),
         "--n_ctx", "4096", "--n_threads", str(threads)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"llama_cpp.server exited with {proc.returncode}; is llama-cpp-python[server] installed?")
        try:
            with urllib.request.urlopen(url + "/models", timeout=2):
                return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit(f"llama_cpp.server did not answer on {url} within {timeout_s} s")


def deleted_claims(traces: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for qid, trace in traces.items():
        for event in trace["events"]:
            if event.get("step") == "repair" and event.get("action") in ("delete_claim", "reject_id"):
                out.append({"question": qid, **{k: event.get(k) for k in ("action", "text", "id", "missing")}})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--endpoint", help="an OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--model", default="local", help="model name sent to the endpoint")
    parser.add_argument("--gguf", help="start llama_cpp.server with this GGUF file instead of --endpoint")
    parser.add_argument("--server-python", default=sys.executable, help="python with llama-cpp-python[server]")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per generated answer")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.endpoint and not args.gguf:
        parser.error("give --endpoint URL or --gguf FILE")
    server = None
    if args.gguf:
        server, args.endpoint = start_llama_server(args.server_python, args.gguf, args.threads, 120)
    try:
        with tempfile.TemporaryDirectory(prefix="rag-lab-bench-gen-") as tmp:
            root = Path(tmp) / "corpus"
            shutil.copytree(corpus_path(), root)
            build_index(root)
            packages_file = Path(tmp) / "packages.jsonl"
            composer = evaluate_file(root, questions_path(), save_packages_to=packages_file)
            packages = load_packages(packages_file)
            generator = ChatEndpointGenerator(args.endpoint, args.model, timeout_s=args.timeout)
            started = time.monotonic()
            traces_file = Path(tmp) / "model_traces.jsonl"
            model = evaluate_file(
                root, questions_path(), packages=packages, generator=generator, save_packages_to=traces_file
            )
            seconds = time.monotonic() - started
            model_traces = load_packages(traces_file)
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
    model["claims"]["generator"] = f"openai:{args.endpoint}#{args.model}"
    summary = {
        "composer": composer["claims"],
        "model": model["claims"],
        "model_seconds_total": round(seconds, 1),
        "answers_generated": sum(1 for t in model_traces.values() for e in t["events"]
                                 if e.get("step") == "generate" and e.get("used")),
        "deleted": deleted_claims(model_traces),
    }
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, indent=2))
    else:
        print(render_comparison([composer, model]))
        print(f"\nmodel run: {summary['model_seconds_total']} s for {len(packages)} questions")
        for item in summary["deleted"]:
            print(f"  {item['question']} {item['action']}: {item.get('text') or item.get('id')!r} {item.get('missing') or ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
