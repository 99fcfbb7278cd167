"""Lexical terms for Chinese: character bigrams (and lone characters) over normalised text.

Ranking only — spans and answers are always taken from the original bytes. Text is
NFKC-normalised and case-folded; runs of letters and digits yield one term per
adjacent pair of characters, a run of one character yields that character. A term is
packed into one integer: ``first << 21 | second`` (``second = 0`` for a lone character).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from rag_lab.text import nfkc_fold

_NON_WORD = re.compile(r"[\W_]+")
_MARK = "\x01"  # separates texts in unit_terms; a non-word character NFKC and casefold leave alone
_NON_WORD_BUT_MARK = re.compile(r"[^\w\x01]+")
_SHIFT = np.int64(21)


def normalise(text: str) -> str:
    """Word runs separated by single NULs (NUL never occurs inside a run)."""
    return _NON_WORD.sub("\0", nfkc_fold(text)).strip("\0")


def codes_of(joined: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """Term codes at every position of a NUL-separated string, and which are real terms."""
    return codes_of_points(np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32))


def codes_of_points(points: npt.NDArray[np.uint32]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """``codes_of`` for code points already in an array (0 separates word runs)."""
    cps = points.astype(np.int64)
    if cps.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.bool_)
    nxt = np.append(cps[1:], 0)
    prev = np.insert(cps[:-1], 0, 0)
    is_char = cps != 0
    bigram = is_char & (nxt != 0)
    lone = is_char & (nxt == 0) & (prev == 0)
    codes = (cps << _SHIFT) | np.where(bigram, nxt, 0)
    return codes, bigram | lone


def unit_terms(texts: Sequence[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The terms of many texts at once: every text's term codes, concatenated in text order,
    and how many terms each text has.

    Same terms as ``codes_of(normalise(text))`` per text, but normalised, case-folded and
    split in one call over all texts joined by U+0001 (a starter that composes with
    nothing, so NFKC of the joined string is the join of the NFKC forms). Texts that
    already hold U+0000 or U+0001 take the one-at-a-time path.
    """
    if any("\0" in t or _MARK in t for t in texts):
        return _unit_terms_one_by_one(texts)
    joined = nfkc_fold(_MARK.join(texts)).replace("_", " ")
    joined = _NON_WORD_BUT_MARK.sub("\0", joined) + "\0"
    cps = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    mark = cps == ord(_MARK)
    owner = np.cumsum(mark)
    codes, valid = codes_of_points(np.where(mark, 0, cps))
    return codes[valid], np.bincount(owner[valid], minlength=len(texts)).astype(np.int64)


def _unit_terms_one_by_one(texts: Sequence[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    parts = [codes[valid] for codes, valid in (codes_of(normalise(t)) for t in texts)]
    counts = np.fromiter((p.size for p in parts), dtype=np.int64, count=len(parts))
    return (np.concatenate(parts) if parts else np.zeros(0, np.int64)), counts


def query_terms(text: str) -> list[int]:
    """The distinct terms of a question, in first-occurrence order: ``codes_of(normalise(text))``'s
    valid codes, computed in Python (a question is short: cheaper than numpy's calls)."""
    seen: dict[int, None] = {}
    for run in normalise(text).split("\0"):
        if len(run) == 1:
            seen.setdefault(ord(run) << 21, None)
        else:
            for first, second in zip(run, run[1:], strict=False):  # each character and the next
                seen.setdefault(ord(first) << 21 | ord(second), None)
    return list(seen)


def search_text(unit: dict[str, object]) -> str:
    """What ranking sees of a unit: subject plus its line (images: the measured phrase;
    sentences and table rows: the document title and innermost heading, then the text)."""
    if unit.get("kind") in ("sentence", "table_row"):
        headings = unit.get("headings")
        last = str(headings[-1]) if isinstance(headings, list) and headings else ""
        context = [str(unit.get("title") or ""), last]
        caption = str(unit.get("caption") or "")
        return " ".join(p for p in [*dict.fromkeys(context), caption, str(unit["text"])] if p)
    subject = unit.get("subject")
    return f"{subject} {unit['text']}" if subject else str(unit["text"])
