"""The index: an embedded SQLite file with the snapshot, units, same-key map and postings."""

from rag_lab.index.build import BuildSummary, build_index, default_index_path
from rag_lab.index.freshness import Changes, check_freshness
from rag_lab.index.store import Index

__all__ = [
    "BuildSummary",
    "Changes",
    "Index",
    "build_index",
    "check_freshness",
    "default_index_path",
]
