"""Retrieve → pack → verify → decide. The seed API lives here."""

from rag_lab.retrieval.answer import answer
from rag_lab.retrieval.pack import pack_context
from rag_lab.retrieval.query import query_once
from rag_lab.retrieval.rank import retrieve

__all__ = ["answer", "pack_context", "query_once", "retrieve"]
