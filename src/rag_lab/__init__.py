"""rag_lab: answers only what its sources support, with citations anyone can re-check.

The pipeline is the architecture: ``data`` (files → evidence units) → ``index`` (SQLite
snapshot, same-key map, postings) → ``retrieval`` (rank, pack, verify, decide) →
``evaluation``; ``cli`` and ``server`` are thin shells over these.

Every public name below is importable from here as always; each is imported on first use
(module ``__getattr__``), so that ``rag-lab index`` does not pay for retrieval, evaluation
and the image library it never runs (≈ 0.4 s of CPU per command: benchmarks/README.md).
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

from rag_lab.errors import (
    ConfigError,
    CorpusError,
    IndexError_,
    QuestionError,
    QuestionSetError,
    RagLabError,
    SourceFileError,
    TraceError,
)
from rag_lab.records import Modality, Reason, Status, SupportType

if TYPE_CHECKING:
    from rag_lab.data import extract_documents
    from rag_lab.data.access import Principal
    from rag_lab.evaluation import evaluate, evaluate_file, load_questions
    from rag_lab.index import Index, build_index, check_freshness
    from rag_lab.retrieval import pack_context, query_once, retrieve
    from rag_lab.retrieval.answer import answer

__version__ = "0.1.0"

_LAZY = {
    "extract_documents": "rag_lab.data",
    "Principal": "rag_lab.data.access",
    "evaluate": "rag_lab.evaluation",
    "evaluate_file": "rag_lab.evaluation",
    "load_questions": "rag_lab.evaluation",
    "Index": "rag_lab.index",
    "build_index": "rag_lab.index",
    "check_freshness": "rag_lab.index",
    "answer": "rag_lab.retrieval",
    "pack_context": "rag_lab.retrieval",
    "query_once": "rag_lab.retrieval",
    "retrieve": "rag_lab.retrieval",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:  # a subpackage (``rag_lab.index``…), as the eager imports used to set it
        if name.startswith("_") or importlib.util.find_spec(f"rag_lab.{name}") is None:
            raise AttributeError(f"module 'rag_lab' has no attribute {name!r}")
        return importlib.import_module(f"rag_lab.{name}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # imported once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "ConfigError",
    "CorpusError",
    "Index",
    "IndexError_",
    "Modality",
    "Principal",
    "QuestionError",
    "QuestionSetError",
    "RagLabError",
    "Reason",
    "SourceFileError",
    "Status",
    "SupportType",
    "TraceError",
    "__version__",
    "answer",
    "build_index",
    "check_freshness",
    "evaluate",
    "evaluate_file",
    "extract_documents",
    "load_questions",
    "pack_context",
    "query_once",
    "retrieve",
]
