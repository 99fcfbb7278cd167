"""NFKC + case folding, exact and fast for Chinese text: :func:`nfkc_fold`.

``nfkc_fold(text) == unicodedata.normalize("NFKC", text).casefold()`` for every string. It
first replaces each full-width ASCII form U+FF01–FF5E by its ``<wide>`` decomposition (the
ASCII character 0xFEE0 below it) and the ideographic space U+3000 by U+0020 (its ``<wide>``
decomposition too), then asks ``unicodedata``. Why that changes nothing:

- NFKC(x) is the canonical composition of the canonical reordering of the *full compatibility
  decomposition* of x, and that decomposition is the concatenation of each character's own.
  The decomposition of a replaced character is the single character put in its place, whose
  own decomposition is itself. So x and the replaced x have the same full decomposition,
  character for character, and reordering and composition, which see only that
  decomposition, give the same result: NFKC applies the replacement itself, wherever the
  character stands, whatever stands around it. That a replaced character could now "compose
  with what precedes it" does not arise: NFKC composes after decomposing, so it already sees
  the ASCII character there (and no ASCII character is the second of a canonical composition).
- Case folding then gets the same string.

What it buys: Chinese text is mostly CJK ideographs and full-width punctuation (，。？：（）).
The ideographs pass NFKC's quick check, the full-width forms fail it, and a failed check makes
``unicodedata`` decompose and recompose every character (≈ 2,300 instructions a character).
After the replacement the quick check passes and ``normalize`` returns its input after one scan.
How the characters are replaced, by instructions measured (benchmarks/README.md, "one shared
NFKC + casefold"): up to ``_LONG`` characters, each distinct one found by a regular-expression
search is replaced by ``str.replace`` (``str.translate`` with a dict costs ≈ 800 instructions
a character on non-ASCII text, a third of a full normalisation); from ``_LONG`` on (the build's
batches of joined unit texts), a pass over the code points as a numpy array costs less. A regular-expression
gate that skipped ``unicodedata`` for text of known-inert characters (generation/verify.py before)
cost more instructions than the quick check it saved, at every length measured.

tests/test_text.py checks it against ``unicodedata`` for every BMP character alone, after a base
letter and before a combining mark, and for generated texts mixing full-width forms with
combining marks, jamo, ligatures, compatibility ideographs, ß, İ and astral characters, short
and of ``_LONG`` characters or more.
"""

from __future__ import annotations

import functools
import re
import unicodedata

#: a full-width ASCII form or the ideographic space
_WIDE_RE = re.compile("[\uff01-\uff5e\u3000]")
#: each such character and its ``<wide>`` decomposition (one ASCII character)
_NARROW = {chr(code): chr(code - 0xFEE0) for code in range(0xFF01, 0xFF5F)} | {"\u3000": " "}
#: from this many characters on, the replacement is done on a numpy array of the code points
_LONG = 4096


def nfkc_fold(text: str) -> str:
    """``unicodedata.normalize("NFKC", text).casefold()``, with the full-width forms and U+3000
    mapped to ASCII first (the module's docstring says why the result is the same)."""
    narrow = _narrow_long(text) if len(text) >= _LONG else _narrow(text)
    return unicodedata.normalize("NFKC", narrow).casefold()


def _narrow(text: str) -> str:
    found = _WIDE_RE.search(text)
    while found:
        wide = found.group()
        text = text.replace(wide, _NARROW[wide])  # a one-character string for another: same positions
        found = _WIDE_RE.search(text, found.end())
    return text


def _narrow_long(text: str) -> str:
    import numpy as np  # here, not at the top: the request path's short texts never need it

    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).copy()
    points[(points >= 0xFF01) & (points <= 0xFF5E)] -= 0xFEE0
    points[points == 0x3000] = 0x20
    return points.tobytes().decode("utf-32-le", "surrogatepass")


#: :func:`nfkc_fold` memoised, shared by the request path's stages (the prose support check's
#: ``answering.terms.norm`` and the claim verifier's ``generation.verify.normalize``): one prose
#: request normalises its question ≈ 150 times and each candidate sentence up to 6 times, and the
#: verifier each claim and name again. Not for the build's long batches (nothing repeats there).
nfkc_fold_memo = functools.lru_cache(maxsize=8192)(nfkc_fold)

__all__ = ["nfkc_fold", "nfkc_fold_memo"]
