"""Neural similarity as *supporting* evidence for one paraphrased content term (docs/prose.md).

With the ``[neural]`` extra and a request that uses the model (``retrieval="fused"``), the
support check (answering/support.py) may count **one** question piece the sentence does not say
(``很多粉丝`` where the sentence says ``不少粉丝``, ``长度`` for ``长约``) as said, when every
other part of the check passes lexically and this deterministic test passes:

1. the *candidates* are the sentence's substrings (inside its word runs) that share at least
   one character with the piece, are at most one character shorter or longer than it, and are
   not the piece itself — at most ``MAX_CANDIDATES``, in order of position;
2. the piece is embedded as a query, the candidates as passages (the same offline model as
   dense retrieval, ``rag_lab.neural``), and the most similar candidate (the first on equal
   similarity) must reach ``PARAPHRASE_MIN`` cosine similarity.

The similarity never decides alone: it is asked only when crediting the piece would make the
whole check pass (every digit/Latin run and every other piece covered, the answer type found),
and a sentence passing this way ranks below every sentence passing without it
(``Support.strength``). The model is the same one that ranks, so its similarity is not a
probability of being right; the threshold was set on the CMRC dev split (benchmarks/README.md).
Embeddings are cached per text inside the object (bounded), so the same sentence pieces are
not embedded twice in one process.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import OrderedDict

import numpy as np
import numpy.typing as npt

from rag_lab.answering.terms import norm
from rag_lab.neural import Embedder

#: cosine similarity (query: piece, passage: candidate) a candidate must reach
PARAPHRASE_MIN = 0.93
#: most candidates embedded for one piece of one sentence
MAX_CANDIDATES = 24
#: embeddings kept per object (oldest dropped first)
CACHE_SIZE = 50_000
_RUN = re.compile(r"[^\W\d_]+")


def candidates(piece: str, text: str) -> list[str]:
    """The sentence's substrings that may say ``piece`` in other words: inside a run of letters
    (CJK or Latin, no digits or punctuation), sharing a character with it, one character shorter
    to one longer (at least one), never the piece itself; first occurrence order, at most
    ``MAX_CANDIDATES``."""
    chars = set(piece)
    lengths = range(max(1, len(piece) - 1), len(piece) + 2)
    found: list[str] = []
    for run in _RUN.finditer(norm(text)):
        word = run.group()
        for start in range(len(word)):
            for length in lengths:
                cand = word[start : start + length]
                if len(cand) == length and cand != piece and chars & set(cand) and cand not in found:
                    found.append(cand)
                    if len(found) == MAX_CANDIDATES:
                        return found
    return found


class Paraphrases:
    """The paraphrase test over one embedder, with its embedding cache."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._cache: OrderedDict[tuple[bool, str], npt.NDArray[np.float32]] = OrderedDict()
        self.embedded = 0  # texts embedded so far (benchmarks report the cost)
        self._lock = threading.Lock()

    def _vectors(self, texts: list[str], query: bool) -> npt.NDArray[np.float32]:
        # The vectors are taken from the cache into ``got`` under the lock, so another thread's
        # eviction between the lookup and the stack cannot lose one (a server asks in threads).
        with self._lock:
            got = {t: self._cache[(query, t)] for t in texts if (query, t) in self._cache}
        need = [t for t in dict.fromkeys(texts) if t not in got]
        if need:
            made = self.embedder.queries(need) if query else self.embedder.passages(need)
            with self._lock:
                self.embedded += len(need)
                for text, vector in zip(need, made, strict=True):
                    got[text] = self._cache[(query, text)] = np.asarray(vector, dtype=np.float32)
                while len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
        return np.stack([got[t] for t in texts])

    def said_as(self, piece: str, text: str) -> tuple[str, float] | None:
        """The candidate of ``text`` that says ``piece`` (``candidates``) with its similarity, when
        the most similar one reaches ``PARAPHRASE_MIN``; otherwise None."""
        found = candidates(norm(piece), text)
        if not found:
            return None
        query = self._vectors([norm(piece)], query=True)[0]
        scores = self._vectors(found, query=False) @ query
        best = int(np.argmax(scores))  # the first of equal scores
        score = float(scores[best])
        return (found[best], score) if score >= PARAPHRASE_MIN else None


_BY_EMBEDDER: weakref.WeakKeyDictionary[Embedder, Paraphrases] = weakref.WeakKeyDictionary()


def paraphrases_for(embedder: Embedder) -> Paraphrases:
    """One :class:`Paraphrases` (and so one embedding cache) per embedder object, kept while the
    embedder lives: a server or a benchmark asking many questions embeds each piece once."""
    try:
        found = _BY_EMBEDDER.get(embedder)
        if found is None:
            found = _BY_EMBEDDER[embedder] = Paraphrases(embedder)
    except TypeError:  # an embedder that cannot be weakly referenced or hashed: a cache per call
        return Paraphrases(embedder)
    return found
