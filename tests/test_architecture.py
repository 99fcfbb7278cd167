"""The package's shape: the curated public API, one-way imports, documented commands and reasons."""

from __future__ import annotations

import ast
from pathlib import Path

import rag_lab
from rag_lab.cli import build_parser
from rag_lab.records import Reason

ROOT = Path(__file__).resolve().parents[1]  # the checkout, also when rag_lab is installed elsewhere
SRC = ROOT / "src" / "rag_lab"
LAYERS = [
    "_lazy", "errors", "records", "text", "limits", "neural", "data", "index", "answering", "generation",
    "retrieval", "evaluation", "render", "integrations", "cli", "server", "demo",
]
# Each stage may import only stages to its left (plus itself); cli and server import anything below them.
ALLOWED = {
    "_lazy": set(),  # the packages' first-use names (module __getattr__); imports nothing of ours
    "errors": set(),
    "records": {"errors"},
    "text": set(),  # nfkc_fold: NFKC + case folding for every stage that compares text
    "limits": {"errors"},
    "neural": {"errors"},
    "data": {"errors", "records", "text", "limits"},
    "index": {"errors", "records", "text", "data", "limits", "neural"},
    # answering: the per-kind decisions that retrieval/answer.py dispatches to (no I/O of its own)
    "answering": {"errors", "records", "text", "data", "index", "limits", "neural"},
    # generation (generator protocol, composer, endpoint client, verifier) sees only the value types;
    # the request hook in retrieval hands it the decided result and the evidence.
    "generation": {"errors", "records", "text"},
    "retrieval": {"errors", "records", "text", "data", "index", "answering", "generation", "limits", "neural"},
    "evaluation": {"_lazy", "errors", "records", "text", "data", "index", "generation", "retrieval", "demo", "limits"},
    "render": {"records"},
    "demo": {"errors", "records", "text", "data", "index", "retrieval"},
    "integrations": {"errors", "records", "text", "data", "index", "retrieval", "limits"},
    "cli": set(LAYERS) - {"server"},
    "server": set(LAYERS) - {"cli"},
}


def test_public_api_is_pinned() -> None:
    assert rag_lab.__all__ == sorted(rag_lab.__all__)
    assert rag_lab.__all__ == [
        "ConfigError", "CorpusError", "Index", "IndexError_", "Modality", "Principal", "QuestionError",
        "QuestionSetError", "RagLabError", "Reason", "SourceFileError", "Status", "SupportType", "TraceError",
        "__version__", "answer", "build_index", "check_freshness", "evaluate", "evaluate_file",
        "extract_documents", "load_questions", "pack_context", "query_once", "retrieve",
    ]
    for name in rag_lab.__all__:
        assert hasattr(rag_lab, name), name


def _stage(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py")


def test_imports_point_one_way() -> None:
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        stage = _stage(path)
        if stage == "__init__":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rag_lab."):
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.startswith("rag_lab.")]
            for name in names:
                target = name.split(".")[1]
                if target != stage and target not in ALLOWED.get(stage, set()):
                    problems.append(f"{path.relative_to(SRC)} imports {name}")
    assert problems == []


def test_every_cli_command_is_in_the_readme_or_docs() -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert set(commands) == {"index", "ask", "demo", "eval", "replay", "serve", "mcp"}
    for command in commands:
        assert f"rag-lab {command}" in text, command
        assert "Example" in commands[command].description, command


def test_every_refusal_reason_is_documented() -> None:
    text = (ROOT / "docs" / "refusals.md").read_text(encoding="utf-8")
    for reason in Reason:
        assert f"`{reason.value}`" in text, reason
