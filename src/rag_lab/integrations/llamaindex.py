"""A LlamaIndex retriever that returns only re-verified evidence (needs the ``llamaindex`` extra).

``RagLabRetriever(root).retrieve("借阅台 开放时间")`` returns one ``NodeWithScore`` per
citation of the answer: the node's text is the quoted original line, its ``id_`` the
evidence id, its metadata the record of :func:`rag_lab.integrations.evidence.retrieve_verified`
(source, line, span in code points, sha256, evidence_id, support_type, verified, question,
status, reason, answer). When rag_lab does not answer, the first node is a refusal note
(``metadata["is_refusal"] is True``, its text the explanation) — or, with
``on_refusal="raise"``, :class:`~rag_lab.integrations.evidence.RefusedError` is raised —
never arbitrary documents. Scores are ``None``: rag_lab's evidence is decided, not ranked.
"""

from __future__ import annotations

import os
from datetime import date

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from rag_lab.data.access import Principal
from rag_lab.integrations.evidence import RefusedError, retrieve_verified
from rag_lab.retrieval.pack import DEFAULT_BUDGET

__all__ = ["RagLabRetriever", "RefusedError"]

#: Metadata kept out of the text an LLM or an embedding sees (still on the node).
HIDDEN_FROM_MODEL = [
    "sha256",
    "span",
    "evidence_id",
    "verification",
    "checked_at",
    "is_refusal",
    "modality",
    "quote",
    "message",
]


class RagLabRetriever(BaseRetriever):
    """Verified evidence for a question from the corpus at ``root`` (see module docstring)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        index_path: str | os.PathLike[str] | None = None,
        top_k: int = 5,
        budget: int = DEFAULT_BUDGET,
        as_of: date | None = None,
        principal: Principal | None = None,
        on_refusal: str = "note",
    ) -> None:
        super().__init__()
        self.root, self.index_path, self.top_k, self.budget = root, index_path, top_k, budget
        self.as_of, self.principal, self.on_refusal = as_of, principal, on_refusal

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        items = retrieve_verified(
            query_bundle.query_str,
            self.root,
            index_path=self.index_path,
            top_k=self.top_k,
            budget=self.budget,
            as_of=self.as_of,
            principal=self.principal,
            on_refusal=self.on_refusal,
        )
        return [
            NodeWithScore(
                node=TextNode(
                    id_=node_id,
                    text=text,
                    metadata=metadata,
                    excluded_llm_metadata_keys=HIDDEN_FROM_MODEL,
                    excluded_embed_metadata_keys=HIDDEN_FROM_MODEL,
                ),
                score=None,
            )
            for node_id, text, metadata in items
        ]
