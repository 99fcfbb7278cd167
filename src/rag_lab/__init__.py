"""rag_lab: answers only what its sources support, with citations anyone can re-check.

The pipeline is the architecture: ``data`` (files → evidence units) → ``index`` (SQLite
snapshot, same-key map, postings) → ``retrieval`` (rank, pack, verify, decide) →
``evaluation``; ``cli`` and ``server`` are thin shells over these.
"""

from rag_lab.data import extract_documents
from rag_lab.data.access import Principal
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
from rag_lab.evaluation import evaluate, evaluate_file, load_questions
from rag_lab.index import Index, build_index, check_freshness
from rag_lab.records import Modality, Reason, Status, SupportType
from rag_lab.retrieval import answer, pack_context, query_once, retrieve

__version__ = "0.1.0"

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
