"""A stand-in for the ``[neural]`` model (the one part of a build outside the project), for tests
of rag_lab's own side of embedding: deterministic vectors by text, every text recorded."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from rag_lab.neural import Vectors

DIM = 8


class Recording:
    """A vector made from the SHA-256 of each text (so each text has its own); ``seen`` holds every
    text embedded, in order."""

    def __init__(self, name: str = "stand-in-model", dim: int = DIM) -> None:
        self.name, self.dim = name, dim
        self.seen: list[str] = []

    def passages(self, texts: Sequence[str]) -> Vectors:
        self.seen.extend(texts)
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[: self.dim], np.uint8) for t in texts]
        vectors = np.asarray(rows, np.float32).reshape(len(texts), self.dim) + 1.0
        normalised: Vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        return normalised

    queries = passages
