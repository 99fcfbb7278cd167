"""Lexical terms for Chinese: character bigrams (and lone characters) over normalised text.

Ranking only — spans and answers are always taken from the original bytes. Text is
NFKC-normalised and case-folded; runs of letters and digits yield one term per
adjacent pair of characters, a run of one character yields that character. A term is
packed into one integer: ``first << 21 | second`` (``second = 0`` for a lone character).
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np
import numpy.typing as npt

_NON_WORD = re.compile(r"[\W_]+")
_SHIFT = np.int64(21)


def normalise(text: str) -> str:
    """Word runs separated by single NULs (NUL never occurs inside a run)."""
    return _NON_WORD.sub("\0", unicodedata.normalize("NFKC", text).casefold()).strip("\0")


def codes_of(joined: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """Term codes at every position of a NUL-separated string, and which are real terms."""
    cps = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    if cps.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.bool_)
    nxt = np.append(cps[1:], 0)
    prev = np.insert(cps[:-1], 0, 0)
    is_char = cps != 0
    bigram = is_char & (nxt != 0)
    lone = is_char & (nxt == 0) & (prev == 0)
    codes = (cps << _SHIFT) | np.where(bigram, nxt, 0)
    return codes, bigram | lone


def query_terms(text: str) -> list[int]:
    """The distinct terms of a question, in first-occurrence order."""
    codes, valid = codes_of(normalise(text))
    seen: dict[int, None] = {}
    for code in codes[valid].tolist():
        seen.setdefault(int(code), None)
    return list(seen)


def search_text(unit: dict[str, object]) -> str:
    """What ranking sees of a unit: subject plus its line (images: the measured phrase)."""
    subject = unit.get("subject")
    return f"{subject} {unit['text']}" if subject else str(unit["text"])
