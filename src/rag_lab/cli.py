"""The ``rag-lab`` command: thin verbs over the library.

Exit codes: 0 ok / answered, 1 error, 2 usage (bad settings, unaskable questions), 3 refused /
needs clarification / partial, 4 evaluation below a given bar, 5 replay differs.

Library messages say `rag-lab index ROOT` (the server must not show paths); the CLI names
the ROOT the user gave instead.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shlex
import shutil
import sys
import tempfile
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any, TextIO

from rag_lab.data.access import Principal, parse_groups
from rag_lab.errors import ConfigError, QuestionError, RagLabError
from rag_lab.evaluation.bars import BARS, BarOutcome, check_bars, describe
from rag_lab.limits import MAX_FILE_BYTES, MAX_QUESTION_CHARS, SERVER_POSTINGS_BYTES

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
DEMO_PROSE_QUESTIONS = ("新图书馆位于哪里？", "报告厅A共有多少个座位？", "新馆的停车场有多少个车位？")


WARNINGS_SHOWN = 100  # warnings printed by `rag-lab index` (all are in the index; --json lists 1000)


def _name_root(text: str, root: str | None) -> str:
    """Library messages say `rag-lab index ROOT`; name the real one."""
    if root is None:
        return text
    return text.replace("rag-lab index ROOT", f"rag-lab index {shlex.quote(root)}")


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

    summary = build_index(
        args.root,
        args.index,
        progress=_progress_bar("indexing"),
        max_file_bytes=args.max_file_bytes,
        vectors=args.vectors,
        embedding_progress=_progress_bar("embedding") if args.vectors else None,
    )
    data = summary.as_dict()
    empty = summary.empty_reason()
    if args.json:
        _emit_json({**data, "warning_list": summary.warning_list, "empty_reason": empty})
    else:
        print(
            f"indexed {data['files']} files, {data['units']} units, {len(data['errors'])} errors, "
            f"{data['warnings']} warnings in {data['seconds']:.2f} s → {data['index']}"
        )
        if summary.vectors is not None:
            found = summary.vectors
            print(
                f"vectors: {found['units']} prose units ({found['units_reused']} taken from the previous index), "
                f"{found['field_names']} field names ({found['field_names_reused']} taken)"
            )
        for warning in summary.warning_list[:WARNINGS_SHOWN]:
            where = warning["path"] + (f":{warning['line']}" if warning["line"] else "")
            print(f"  warning: {where}: {_name_root(warning['message'], args.root)}", file=sys.stderr)
        if summary.warnings > WARNINGS_SHOWN:
            print(
                f"  … and {summary.warnings - WARNINGS_SHOWN} more warnings (`rag-lab index --json` lists "
                f"{len(summary.warning_list)})",
                file=sys.stderr,
            )
        for err in data["errors"]:
            print(f"  error: {err['path']}: {_name_root(err['error'], args.root)}", file=sys.stderr)
        if empty is not None:
            print(f"note: {empty}", file=sys.stderr)
    if args.strict and data["errors"]:
        print(
            f"rag-lab: error: {len(data['errors'])} file(s) failed (--strict); the index was built without them",
            file=sys.stderr,
        )
        return EXIT_ERROR
    return EXIT_OK


def _question(args: argparse.Namespace) -> str:
    """The question from argv, or from stdin for `-`; bytes that are not UTF-8 are a QuestionError."""
    if args.question == "-":
        limit = MAX_QUESTION_CHARS * 4 + 2  # the longest question in UTF-8, and a line end
        raw = sys.stdin.buffer.read(limit + 1)
        if len(raw) > limit:
            raise QuestionError(
                f"the question on stdin is over {limit} bytes; the limit is {MAX_QUESTION_CHARS} code points"
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise QuestionError(
                f"the question on stdin is not UTF-8: byte 0x{raw[exc.start]:02x} at byte offset {exc.start}; "
                "send UTF-8 text"
            ) from None
        line = text[:-1] if text.endswith("\n") else text
        return line[:-1] if line.endswith("\r") else line
    question: str = args.question
    for offset, char in enumerate(question):
        if 0xD800 <= ord(char) <= 0xDFFF:  # argv bytes that were not UTF-8 (surrogateescape)
            at = len(question[:offset].encode("utf-8", "surrogateescape"))
            shown = f"byte 0x{ord(char) - 0xDC00:02x}" if ord(char) >= 0xDC80 else f"U+{ord(char):04X}"
            raise QuestionError(
                f"the question is not UTF-8 text: {shown} at byte offset {at}; "
                "pass UTF-8 (or read the question from stdin with `-`)"
            )
    return question


def _generator(args: argparse.Namespace) -> Any:
    """``--generator composer`` (default) or ``openai:URL`` with ``--model``."""
    spec = getattr(args, "generator", None) or "composer"
    if spec == "composer":
        if getattr(args, "model", None):
            raise ConfigError("--model is for --generator openai:URL; the composer has no model")
        return None
    if spec.startswith("openai:"):
        from rag_lab.generation.openai import ChatEndpointGenerator

        if not getattr(args, "model", None):
            raise ConfigError("--generator openai:URL needs --model NAME (the endpoint's model name)")
        return ChatEndpointGenerator(spec.removeprefix("openai:"), args.model, timeout_s=args.timeout)
    raise ConfigError(f"--generator {spec!r}: write composer or openai:URL (e.g. openai:http://127.0.0.1:8080/v1)")


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
        retrieval=getattr(args, "retrieval", "lexical"),
        generator=_generator(args),
    )


def cmd_ask(args: argparse.Namespace) -> int:
    from rag_lab.data.corpus import check_corpus_root
    from rag_lab.index import default_index_path
    from rag_lab.render import render_result, render_trace

    root = Path(args.root)
    question = _question(args)
    if args.index is None and not default_index_path(root).exists():
        check_corpus_root(root)  # ROOT/documents given? say so before "no index"
    result = _ask(args, question, root)
    result["message"] = _name_root(result["message"], args.root)
    if result.get("text"):
        result["text"] = _name_root(result["text"], args.root)
    for slot in result.get("slots", []):
        slot["message"] = _name_root(slot["message"], args.root)
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
        prose = _demo_prose(args, Path(tmp) / "prose", notes)
    if args.json:
        _emit_json({"index": summary, "results": results, "prose": prose})
    return EXIT_OK


def _demo_prose(args: argparse.Namespace, root: Path, notes: TextIO) -> list[dict[str, Any]]:
    from rag_lab.demo import prose_corpus_path
    from rag_lab.index import build_index
    from rag_lab.render import render_result

    shutil.copytree(prose_corpus_path(), root)
    summary = build_index(root).as_dict()
    print(f"\ncopied the prose demo corpus to {root}: {summary['files']} files, {summary['units']} units", file=notes)
    args.root = str(root)
    results = []
    for question in DEMO_PROSE_QUESTIONS:
        result = _ask(args, question, root)
        results.append(result)
        if not args.json:
            print(f"\n? {question}")
            print(render_result(result, root))
    return results


def _generators(args: argparse.Namespace) -> list[Any]:
    specs = args.generator or ["composer"]
    out = []
    for spec in specs:
        one = argparse.Namespace(generator=spec, model=args.model if spec != "composer" else None, timeout=args.timeout)
        out.append(_generator(one))
    return out


def _report_name(generator: Any) -> str:
    return "composer" if generator is None else f"{generator.name}:{generator.url}#{generator.model}"


def cmd_eval(args: argparse.Namespace) -> int:
    from rag_lab.evaluation import (
        evaluate_demo,
        evaluate_file,
        load_packages,
        render_comparison,
        render_report,
    )
    from rag_lab.evaluation.gate import compare_evidence, load_evidence, save_evidence

    baseline = load_evidence(args.compare_evidence) if args.compare_evidence else None
    packages = load_packages(args.packages) if args.packages else None
    sets: dict[str, Any] = {}  # the evidence sets of the first generator's run (release gate)
    reports = []
    for number, generator in enumerate(_generators(args)):
        options: dict[str, Any] = {"generator": generator, "packages": packages, "retrieval": args.retrieval}
        if number == 0:
            options["evidence"] = sets
            if args.save_packages:
                options["save_packages_to"] = args.save_packages
        if args.demo or args.demo_prose:
            report = evaluate_demo(prose=args.demo_prose, **options)
        else:
            if args.root is None or args.questions is None:
                raise ConfigError("give ROOT and QUESTIONS.jsonl, or --demo")
            report = evaluate_file(
                args.root, args.questions, index_path=args.index, principal=_principal(args), **options
            )
        report["claims"]["generator"] = _report_name(generator)
        report["bars"] = check_bars(report, {bar.option: getattr(args, bar.dest) for bar in BARS})
        reports.append(report)
    report = reports[0]
    if args.save_evidence:
        save_evidence(args.save_evidence, report["questions"], sets)
    if args.json:
        _emit_json(report if len(reports) == 1 else {"generators": reports})
    else:
        print("\n\n".join(render_report(r) for r in reports))
        if len(reports) > 1:
            print("\n" + render_comparison(reports))
    below = False
    for r in reports:
        name = r["claims"]["generator"] + ": " if len(reports) > 1 else ""
        for checked in r["bars"]:
            if checked["outcome"] != BarOutcome.MET:
                print(name + describe(checked), file=sys.stderr)
        below = below or any(c["outcome"] == BarOutcome.MISSED for c in r["bars"])
    if baseline is not None:
        failures, evidence_notes = compare_evidence(baseline, sets)
        for line in evidence_notes:
            print(f"evidence: {line}", file=sys.stderr)
        for line in failures:
            print(f"below the bar: {line}", file=sys.stderr)
        below = below or bool(failures)
    return EXIT_BELOW_BAR if below else EXIT_OK


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
        allowed_hosts=args.allow_host,
        postings_cache_bytes=args.cache_mib * 2**20,
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
        description="Build ROOT/.rag_lab/index.sqlite atomically; prints each warning as file:line.\n\n"
        "Example:\n  rag-lab index ./corpus --strict",
    )
    p.add_argument("root", help="corpus folder holding documents/ and images/")
    p.add_argument("--index", help="index file (default ROOT/.rag_lab/index.sqlite)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON (with warning_list)")
    p.add_argument("--strict", action="store_true", help="exit 1 when any file failed (the index is still built)")
    p.add_argument(
        "--vectors", action="store_true", help="also embed prose units (for --retrieval fused) and field names (field matching's neural step); needs [neural]"
    )
    p.add_argument(
        "--max-file-bytes",
        type=_positive,
        default=MAX_FILE_BYTES,
        metavar="N",
        help=f"larger files are per-file errors, never read (default {MAX_FILE_BYTES})",
    )
    p.set_defaults(func=cmd_index)

    p = sub.add_parser(
        "ask",
        help="ask one question",
        formatter_class=fmt,
        description="Answer or refuse, with citations. QUESTION `-` reads it from stdin (UTF-8).\n\n"
        "Examples:\n  rag-lab ask ./corpus '借阅台 开放时间' --json\n  echo '借阅台 开放时间' | rag-lab ask ./corpus -",
    )
    p.add_argument("root")
    p.add_argument("question", help="the question, or - to read it from stdin")
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
        "  rag-lab eval --demo --json\n  rag-lab eval ./corpus questions.jsonl --min-coverage 0.9\n"
        "  rag-lab eval ./corpus q.jsonl --save-evidence sets.json   # later: --compare-evidence sets.json\n"
        "  rag-lab eval ./corpus q.jsonl --save-packages p.jsonl\n"
        "  rag-lab eval ./corpus q.jsonl --packages p.jsonl --generator composer "
        "--generator openai:http://127.0.0.1:8080/v1 --model qwen",
    )
    p.add_argument("root", nargs="?")
    p.add_argument("questions", nargs="?")
    p.add_argument("--demo", action="store_true", help="the shipped question set on a fresh demo corpus")
    p.add_argument("--demo-prose", action="store_true", help="the prose demo's question set on a fresh copy")
    p.add_argument("--save-evidence", metavar="FILE", help="write each question's evidence set (release gate)")
    p.add_argument(
        "--compare-evidence",
        metavar="FILE",
        help="exit 4 when a slot covered in FILE is lost or a verified answer changed; print the differences",
    )
    p.add_argument("--index")
    p.add_argument("--json", action="store_true")
    for bar in BARS:  # a bar on a metric with nothing to count is reported as not applicable
        p.add_argument(bar.option, type=bar.parse, help=bar.help)
    p.add_argument(
        "--generator",
        action="append",
        metavar="composer|openai:URL",
        help="generator to evaluate (repeat to compare several; default composer)",
    )
    p.add_argument("--model", help="model name for openai:URL generators")
    p.add_argument("--timeout", type=float, default=60.0, help="endpoint timeout in seconds (default 60)")
    p.add_argument("--save-packages", metavar="FILE", help="write each question's trace (fixed evidence) to FILE")
    p.add_argument(
        "--packages", metavar="FILE", help="replay the saved packages of FILE instead of retrieving (no re-ranking)"
    )
    p.add_argument(
        "--retrieval",
        choices=("lexical", "fused"),
        default="lexical",
        help="lexical (BM25, default) or fused with dense vectors (ROOT indexed with --vectors; "
        "--demo/--demo-prose index their copy with vectors); needs [neural]",
    )
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
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="also answer requests whose Host is NAME (any port) or NAME:PORT, e.g. the name a proxy "
        "in front uses (repeatable; loopback names and --host are always allowed)",
    )
    p.add_argument(
        "--cache-mib",
        type=_positive,
        default=SERVER_POSTINGS_BYTES // 2**20,
        metavar="MIB",
        help="memory for the postings the server keeps between questions, shared by every caller's "
        "view of the index (default %(default)s; a long stream of new questions on a million documents "
        "uses ≈ 250)",
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
    _add_store_options(parser)
    return parser


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return value


def _ask_options(p: argparse.ArgumentParser, *, with_as_of: bool = True) -> None:
    p.add_argument("--top-k", type=int, default=5, help="candidates to retrieve (default 5)")
    p.add_argument("--budget", type=int, default=1200, help="context budget in code points (default 1200)")
    p.add_argument("--index", help="index file (default ROOT/.rag_lab/index.sqlite)")
    p.add_argument("--budget-unit", choices=("codepoints", "tokens"), default="codepoints")
    p.add_argument("--ordering", choices=("relevance", "by_slot", "ends"), default="relevance")
    p.add_argument("--no-dedup", action="store_true", help="keep byte-identical copies in the context")
    p.add_argument(
        "--retrieval",
        choices=("lexical", "fused"),
        default="lexical",
        help="lexical (BM25, default) or fused with dense vectors (index built with --vectors)",
    )
    _generator_options(p)
    if with_as_of:
        p.add_argument("--as-of", help="date for validity windows, YYYY-MM-DD (default today)")
        _principal_options(p)


def _generator_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--generator",
        default="composer",
        metavar="composer|openai:URL",
        help="who writes the answer's text: the deterministic composer (default) or an "
        "OpenAI-compatible chat endpoint, e.g. openai:http://127.0.0.1:8080/v1 (docs/generation.md)",
    )
    p.add_argument("--model", help="model name for --generator openai:URL")
    p.add_argument("--timeout", type=float, default=60.0, help="endpoint timeout in seconds (default 60)")


def _principal_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--as", dest="as_name", metavar="NAME", help="ask as this caller (sees public + its groups)"
    )
    p.add_argument("--groups", help="the caller's groups, comma-separated (with --as)")


def _add_store_options(parser: argparse.ArgumentParser) -> None:
    """``--store URL`` on every command that takes ``--index`` (docs/stores.md)."""
    for action in parser._subparsers._group_actions if parser._subparsers else []:
        for command in getattr(action, "choices", {}).values():
            if any("--index" in a.option_strings for a in command._actions):
                command.add_argument(
                    "--store",
                    metavar="URL",
                    help="use the index in this PostgreSQL database (postgresql://…; the [postgresql] "
                    "extra) instead of the SQLite file; see docs/stores.md",
                )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    store = getattr(args, "store", None)
    if store is not None:
        from rag_lab.index.backend import DATABASE_SCHEMES, is_database

        if args.index is not None:
            parser.error("give --index FILE or --store URL, not both")
        if not is_database(store):
            parser.error(f"--store takes a database URL starting with {' or '.join(DATABASE_SCHEMES)}")
        args.index = store
    try:
        code: int = args.func(args)
        return code
    except RagLabError as exc:
        print(f"rag-lab: error: {_name_root(str(exc), getattr(args, 'root', None))}", file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, ConfigError | QuestionError) else EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
