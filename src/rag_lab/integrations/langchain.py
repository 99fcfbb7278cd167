"""A LangChain retriever that returns only re-verified evidence (needs the ``langchain`` extra).

``RagLabRetriever(root="ROOT").invoke("借阅台 开放时间")`` returns one ``Document`` per
citation of the answer: ``page_content`` is the quoted original line, ``id`` the evidence
id, ``metadata`` the record of :func:`rag_lab.integrations.evidence.retrieve_verified`
(source, line, span in code points, sha256, evidence_id, support_type, verified, question,
status, reason, answer). When rag_lab does not answer, the first document is a refusal
note (``metadata["is_refusal"] is True``, its content the explanation) — or, with
``on_refusal="raise"``, :class:`~rag_lab.integrations.evidence.RefusedError` is raised —
never arbitrary documents.
"""

from __future__ import annotations

import os
from datetime import date
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from rag_lab.data.access import Principal
from rag_lab.integrations.evidence import RefusedError, retrieve_verified
from rag_lab.retrieval.pack import DEFAULT_BUDGET

__all__ = ["RagLabRetriever", "RefusedError"]


class RagLabRetriever(BaseRetriever):
    """Verified evidence for a question from the corpus at ``root`` (see module docstring)."""

    root: str | os.PathLike[str]
    index_path: str | os.PathLike[str] | None = None
    top_k: int = 5
    budget: int = DEFAULT_BUDGET
    as_of: date | None = None
    principal: Principal | None = None
    on_refusal: str = "note"

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        items = retrieve_verified(
            query,
            self.root,
            index_path=self.index_path,
            top_k=self.top_k,
            budget=self.budget,
            as_of=self.as_of,
            principal=self.principal,
            on_refusal=self.on_refusal,
        )
        return [
            Document(id=node_id, page_content=text, metadata=metadata) for node_id, text, metadata in items
        ]
