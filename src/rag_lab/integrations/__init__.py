"""Entry points for the places people already work (docs/integrations.md).

* :mod:`rag_lab.integrations.evidence` — the shared, dependency-free part: a result's
  citations as re-verified evidence records, one citation opened with its context,
  the index status, and a refusal in plain words.
* :mod:`rag_lab.integrations.mcp_server` — ``rag-lab mcp ROOT``, a Model Context Protocol
  server (extra ``mcp``).
* :mod:`rag_lab.integrations.llamaindex` and :mod:`rag_lab.integrations.langchain` —
  retrievers (extras ``llamaindex`` and ``langchain``).

Nothing is imported here: each framework module needs its own extra.
"""
