"""The ``rag-lab`` command: thin verbs over the library.

Exit codes: 0 ok / answered, 1 error, 2 usage, 3 refused / needs clarification /
partial, 4 evaluation below a given bar, 5 replay differs.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from rag_lab.data.access import Principal, parse_groups
from rag_lab.errors import ConfigError, RagLabError
from rag_lab.evaluation.bars import BARS, BarOutcome, check_bars, describe

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_REFUSED, EXIT_BELOW_BAR, EXIT_REPLAY_DIFFERS = 0, 1, 2, 3, 4, 5

DEMO_QUESTIONS = (
    "借阅台 开放时间",
    "借阅台的开放时间是几点？",
    "相机箱 存放位置",
    "测试台 开放时间",
    "新台 开放时间",
    "红色 小 圆形",
    "红色 小 圆形 材质",
    "便笺 原文",
    "什么时候能借东西",
    "借阅台 和 测试台 的 开放时间",
)


def _emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def _progress_bar(label: str) -> Any:
    state = {"shown": -1}

    def report(done: int, total: int) -> None:
        if total < 1000:
            return
        percent = done * 100 // total
        if percent != state["shown"] and (percent % 5 == 0 or done == total):
            state["shown"] = percent
            bar = "#" * (percent // 5)
            sys.stderr.write(f"\r{label} [{bar:<20}] {percent:3d}% {done}/{total}")
            if done == total:
                sys.stderr.write("\n")
            sys.stderr.flush()

    return report


def _as_of(text: str | None) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"--as-of {text!r} is not a date; write YYYY-MM-DD") from None


def _principal(args: argparse.Namespace) -> Principal | None:
    name, groups = getattr(args, "as_name", None), getattr(args, "groups", None)
    if name is None:
        if groups:
            raise ConfigError("--groups needs --as NAME")
        return None
    wanted = [g for g in (groups or "").split(",") if g]
    acl = parse_groups(wanted) if wanted else ""
    if acl is None:
        raise ConfigError(f"--groups {groups!r}: group names are letters, digits, _ . - separated by commas")
    return Principal(name, frozenset(acl.split(",")) if acl else frozenset())


def cmd_index(args: argparse.Namespace) -> int:
    from rag_lab.index import build_index

    summary = build_index(args.root, args.index, progress=_progress_bar("indexing"))
    data = summary.as_dict()
    if args.json:
        _emit_json(data)
        return EXIT_OK
    print(
        f"indexed {data['files']} files, {data['units']} units, {len(data['errors'])} errors, "
        f"{data['warnings']} warnings in {data['seconds']:.2f} s → {data['index']}"
    )
    for err in data["errors"]:
        print(f"  error: {err['path']}: {err['error']}", file=sys.stderr)
    return EXIT_OK


def _ask(args: argparse.Namespace, question: str, root: Path) -> dict[str, Any]:
    from rag_lab.retrieval import query_once

    return query_once(
        question,
        root,
        index_path=args.index,
        top_k=args.top_k,
        budget=args.budget,
        budget_unit=args.budget_unit,
        ordering=args.ordering,
        dedup=not args.no_dedup,
        as_of=_as_of(args.as_of),
        principal=_principal(args),
    )


def cmd_ask(args: argparse.Namespace) -> int:
    from rag_lab.render import render_result, render_trace

    root = Path(args.root)
    result = _ask(args, args.question, root)
    if args.json:
        _emit_json(result)
    else:
        print(render_result(result, root))
        if args.show_context:
            package = next((e for e in result["trace"]["events"] if e["step"] == "package"), None)
            print("\ncontext:")
            print(package["text"] if package else "(no context: the request stopped before packing)", end="")
        if args.trace:
            print("\ntrace:")
            print(render_trace(result["trace"]))
    return EXIT_OK if result["status"] == "answered" else EXIT_REFUSED


def cmd_demo(args: argparse.Namespace) -> int:
    from rag_lab.demo import corpus_path
    from rag_lab.index import build_index
    from rag_lab.render import render_result

    # With --json, stdout holds only the JSON document; the progress lines go to stderr.
    notes = sys.stderr if args.json else sys.stdout
    with tempfile.TemporaryDirectory(prefix="rag-lab-demo-") as tmp:
        root = Path(tmp) / "corpus"
        shutil.copytree(corpus_path(), root)
        print(f"copied the demo corpus to {root}", file=notes)
        summary = build_index(root).as_dict()
        print(f"indexed {summary['files']} files, {summary['units']} units, {len(summary['errors'])} errors", file=notes)
        args.root, args.index, args.as_of = str(root), None, None
        results = []
        for question in DEMO_QUESTIONS:
            result = _ask(args, question, root)
            results.append(result)
            if not args.json:
                print(f"\n? {question}")
                print(render_result(result, root))
    if args.json:
        _emit_json({"index": summary, "results": results})
    return EXIT_OK


def cmd_eval(args: argparse.Namespace) -> int:
    from rag_lab.evaluation import evaluate_demo, evaluate_file, render_report

    if args.demo:
        report = evaluate_demo()
    else:
        if args.root is None or args.questions is None:
            raise ConfigError("give ROOT and QUESTIONS.jsonl, or --demo")
        report = evaluate_file(args.root, args.questions, index_path=args.index, principal=_principal(args))
    report["bars"] = check_bars(report, {bar.option: getattr(args, bar.dest) for bar in BARS})
    if args.json:
        _emit_json(report)
    else:
        print(render_report(report))
    for checked in report["bars"]:
        if checked["outcome"] != BarOutcome.MET:
            print(describe(checked), file=sys.stderr)
    return EXIT_BELOW_BAR if any(c["outcome"] == BarOutcome.MISSED for c in report["bars"]) else EXIT_OK


def cmd_replay(args: argparse.Namespace) -> int:
    from rag_lab.retrieval.replay import differences, load_trace, replay

    saved_trace, saved_result = load_trace(args.trace_file)
    after = replay(saved_trace, args.root, args.index)
    diffs = differences(saved_result, saved_trace, after)
    if args.json:
        _emit_json({"identical": not diffs, "differences": diffs, "result": after})
    elif diffs:
        print("replay differs:")
        for line in diffs:
            print(f"  {line}")
    else:
        print(
            " ".join(
                str(x) for x in ("replay identical:", after["status"], after["reason"], after["answer"]) if x
            )
        )
    return EXIT_OK if not diffs else EXIT_REPLAY_DIFFERS


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        run = importlib.import_module("rag_lab.server").run
    except ImportError as exc:
        raise ConfigError(
            f"the server needs the serve extra ({exc.name} is missing): pip install 'rag-lab[serve]'"
        ) from None
    run(
        args.root,
        host=args.host,
        port=args.port,
        index_path=args.index,
        owner=args.owner,
        trust_principals=args.trust_principals,
    )
    return EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    try:
        run = importlib.import_module("rag_lab.integrations.mcp_server").run
    except ImportError as exc:
        raise ConfigError(
            f"the MCP server needs the mcp extra ({exc.name} is missing): pip install 'rag-lab[mcp]'"
        ) from None
    run(
        args.root,
        index_path=args.index,
        owner=args.owner,
        principal=_principal(args),
        trust_principals=args.trust_principals,
        http_port=args.http,
    )
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag-lab",
        description="Answer questions from a folder of source files, with citations anyone can re-check.",
        epilog="Exit codes: 0 ok/answered, 1 error, 2 usage, 3 refused or needs clarification, "
        "4 evaluation below a given bar, 5 replay differs.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    fmt = argparse.RawDescriptionHelpFormatter

    p = sub.add_parser(
        "index",
        help="build the index of a corpus",
        formatter_class=fmt,
        description="Build ROOT/.rag_lab/index.sqlite atomically.\n\nExample:\n  rag-lab index ./corpus --json",
    )
    p.add_argument("root", help="corpus folder holding documents/ and images/")
    p.add_argument("--index", help="index file (default ROOT/.rag_lab/index.sqlite)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser(
        "ask",
        help="ask one question",
        formatter_class=fmt,
        description="Answer or refuse, with citations.\n\nExample:\n  rag-lab ask ./corpus '借阅台 开放时间' --json",
    )
    p.add_argument("root")
    p.add_argument("question")
    _ask_options(p)
    p.add_argument("--json", action="store_true", help="print exactly the result object")
    p.add_argument("--trace", action="store_true", help="print the request's trace in causal order")
    p.add_argument("--show-context", action="store_true", help="print the evidence package (E1, E2, …)")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser(
        "replay",
        help="recompute a saved decision against the current files",
        formatter_class=fmt,
        description="Replay a saved `ask --json` result (or bare trace) from its fixed candidates; "
        "prints any difference. Exit 0 identical, 5 different.\n\nExample:\n"
        "  rag-lab ask ./corpus '借阅台 开放时间' --json > r.json && rag-lab replay r.json ./corpus",
    )
    p.add_argument("trace_file", metavar="TRACE.json")
    p.add_argument("root")
    p.add_argument("--index")
    p.add_argument("--json", action="store_true", help="print the recomputed result and the differences")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser(
        "demo",
        help="index the bundled demo corpus and ask the seed questions",
        formatter_class=fmt,
        description="Copy the demo corpus to a temporary folder, index it, ask the seed questions."
        "\n\nExamples:\n  rag-lab demo\n  rag-lab demo --json",
    )
    _ask_options(p, with_as_of=False)
    p.add_argument(
        "--json", action="store_true", help='print {"index": the build summary, "results": [one result per question]}'
    )
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser(
        "eval",
        help="run a question set and report answering and refusing separately",
        formatter_class=fmt,
        description="Evaluate a corpus with a JSONL question set (docs/evaluation.md).\n\nExamples:\n"
        "  rag-lab eval --demo --json\n  rag-lab eval ./corpus questions.jsonl --min-coverage 0.9",
    )
    p.add_argument("root", nargs="?")
    p.add_argument("questions", nargs="?")
    p.add_argument("--demo", action="store_true", help="the shipped question set on a fresh demo corpus")
    p.add_argument("--index")
    p.add_argument("--json", action="store_true")
    for bar in BARS:  # a bar on a metric with nothing to count is reported as not applicable
        p.add_argument(bar.option, type=bar.parse, help=bar.help)
    _principal_options(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser(
        "serve",
        help="start the HTTP API and web page",
        formatter_class=fmt,
        description="Serve ROOT over HTTP (needs the serve extra).\n\nExample:\n  rag-lab serve ./corpus --port 8000",
    )
    p.add_argument("root")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument(
        "--owner",
        action="store_true",
        help="answer requests that name no principal as the corpus owner (default: anonymous, public only)",
    )
    p.add_argument(
        "--trust-principals",
        action="store_true",
        help="accept a principal named in requests (only behind an authenticating front)",
    )
    p.add_argument("--index")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser(
        "mcp",
        help="serve the corpus to an MCP client (an agent) over stdio",
        formatter_class=fmt,
        description="Model Context Protocol server over stdio with the tools ask, open_citation and "
        "index_status (needs the mcp extra). Callers are anonymous (public files only) unless told "
        "otherwise.\n\nExample:\n  rag-lab mcp ./corpus --owner",
    )
    p.add_argument("root")
    p.add_argument("--index", help="index file (default ROOT/.rag_lab/index.sqlite)")
    p.add_argument("--owner", action="store_true", help="answer as the corpus owner (sees every file)")
    p.add_argument(
        "--trust-principals",
        action="store_true",
        help="accept a principal named in tool calls (only when the client authenticates its users)",
    )
    p.add_argument(
        "--http",
        type=int,
        metavar="PORT",
        help="serve streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio (loopback only)",
    )
    _principal_options(p)
    p.set_defaults(func=cmd_mcp)
    return parser


def _ask_options(p: argparse.ArgumentParser, *, with_as_of: bool = True) -> None:
    p.add_argument("--top-k", type=int, default=5, help="candidates to retrieve (default 5)")
    p.add_argument("--budget", type=int, default=1200, help="context budget in code points (default 1200)")
    p.add_argument("--index", help="index file (default ROOT/.rag_lab/index.sqlite)")
    p.add_argument("--budget-unit", choices=("codepoints", "tokens"), default="codepoints")
    p.add_argument("--ordering", choices=("relevance", "by_slot", "ends"), default="relevance")
    p.add_argument("--no-dedup", action="store_true", help="keep byte-identical copies in the context")
    if with_as_of:
        p.add_argument("--as-of", help="date for validity windows, YYYY-MM-DD (default today)")
        _principal_options(p)


def _principal_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--as", dest="as_name", metavar="NAME", help="ask as this caller (sees public + its groups)"
    )
    p.add_argument("--groups", help="the caller's groups, comma-separated (with --as)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
        return code
    except RagLabError as exc:
        print(f"rag-lab: error: {exc}", file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, ConfigError) else EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
