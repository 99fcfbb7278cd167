"""rag_lab: answers only what its sources support."""
