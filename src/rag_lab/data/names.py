"""How subject and field names are compared when not verbatim: NFKC + case folding.

:func:`fold` works code point by code point, so a folded question can be mapped back to
the original question's positions (``spans``); answer values are never folded — they
stay the verbatim bytes of the source.
"""

from __future__ import annotations

import functools
import unicodedata


@functools.lru_cache(maxsize=65536)
def fold(text: str) -> str:
    """NFKC then case folding, code point by code point (``ＣＰＵ类型`` → ``cpu类型``)."""
    return "".join(unicodedata.normalize("NFKC", ch).casefold() for ch in text)


@functools.lru_cache(maxsize=65536)
def squash(text: str) -> str:
    """:func:`fold` without white space and punctuation (``导 演`` → ``导演``)."""
    return "".join(
        ch for ch in fold(text) if not ch.isspace() and not unicodedata.category(ch).startswith(("P", "Z"))
    )


def folded_positions(text: str) -> tuple[str, list[int]]:
    """``fold(text)`` and, for each of its code points, the index in ``text`` it came from."""
    out: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        piece = fold(ch)
        out.append(piece)
        origin.extend([i] * len(piece))
    return "".join(out), origin


__all__ = ["fold", "folded_positions", "squash"]
