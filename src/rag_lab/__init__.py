"""rag_lab: answers only what its sources support, with citations anyone can re-check.

The pipeline is the architecture: ``data`` (files → evidence units) → ``index`` (SQLite
snapshot, same-key map, postings) → ``retrieval`` (rank, pack, verify, decide) →
``evaluation``; ``cli`` and ``server`` are thin shells over these.

Every public name below is importable from here as always; each is imported on first use
(module ``__getattr__``), so that ``rag-lab index`` does not pay for retrieval, evaluation
and the image library it never runs (≈ 0.4 s of CPU per command: benchmarks/README.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag_lab._lazy import lazy_attributes
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


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)


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
