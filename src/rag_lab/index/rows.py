"""The fast path of a build: units-table rows straight from a document's bytes, for the common shape.

Most documents are only ``主题：…`` lines, ``字段：值`` lines and blank lines. For them,
:func:`field_rows` gives exactly what ``parse_document`` (data/documents.py) and the build's
``_unit_row`` together give — the same rows, search texts and name counts, in the same order —
without a unit dict per line. Anything else (a line that could be prose, a table, a warning, a
validity date, an access label, a BOM, a CR, undecodable bytes) returns None and the document
takes the full path. tests/index/test_index_fast_rows.py holds the two paths equal on generated
documents.
"""

from __future__ import annotations

import functools
import hashlib
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rag_lab.data.access import ACCESS_FIELD
from rag_lab.data.documents import BOM, DATE_FIELDS
from rag_lab.index.terms import _MARK, _NON_WORD, codes_of_points, unit_terms
from rag_lab.records import FULLWIDTH_COLON, SUBJECT_FIELD

_FULL_PATH_FIELDS = frozenset([*DATE_FIELDS, ACCESS_FIELD])  # lines whose meaning parse_document decides


def compact_text(text: str) -> str | bytes:
    """``text`` as stored: UTF-8 TEXT, or a UTF-16-LE BLOB when that is shorter (most Chinese)."""
    if text.isascii():
        return text
    # 2 bytes per character in UTF-16 (4 for the rare astral ones: then at worst not the shorter)
    return text.encode("utf-16-le") if 2 * len(text) < len(text.encode("utf-8")) else text


def field_rows(
    source: str, data: bytes, sha256: str, file_id: int, acl: str
) -> tuple[list[tuple[Any, ...]], list[str]] | None:
    """The unit rows (index/build.py ``_unit_row``'s layout) and search texts of a document of
    field lines and blank lines only; None when it is of any other shape (nothing is decided then)."""
    if b"\0" in data or b"\r" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text.startswith(BOM):
        return None
    found: list[tuple[int, int, str, int, str]] = []
    subject: str | None = None
    start = 0
    for number, line in enumerate(text.split("\n"), 1):
        colon = line.find(FULLWIDTH_COLON)
        if colon < 0:
            if line and not line.isspace():
                return None  # prose, a table row, or a line to warn about
        elif (
            colon == 0
            or colon == len(line) - 1  # an empty value
            or line[0] == BOM
            or line[0].isspace()
            or line[-1].isspace()
            or line[colon - 1].isspace()
            or line[colon + 1].isspace()
        ):
            return None
        else:
            name = line[:colon]
            if name == SUBJECT_FIELD:
                subject = line[colon + 1 :]
            elif subject is None or name in _FULL_PATH_FIELDS:
                return None
            else:
                found.append((number, start, line, colon, subject))
        start += len(line) + 1
    rows: list[tuple[Any, ...]] = []
    texts: list[str] = []
    head, tail = f"{source}\0", f"\0{sha256}"
    sha = hashlib.sha256
    for number, at, line, colon, subject in found:
        # schema 7: the text is ``field：value``, so only the value is stored (value_at NULL) and the
        # span's end is its start + the text's length (span_end NULL) — build._unit_row's rules
        rows.append(
            (
                sha(f"{head}{at}:{at + len(line)}{tail}".encode()).digest()[:12], file_id, at, None, number,
                compact_text(line[colon + 1 :]), subject, line[:colon], None, None, 0, None, None, None, acl,
            )
        )  # fmt: skip
        texts.append(f"{subject} {line}")
    return rows, texts


@functools.cache
def _bmp_words() -> npt.NDArray[np.bool_]:
    r"""Which code points of the Basic Multilingual Plane are word characters for the terms (``[^\W_]``)."""
    every = "".join(map(chr, range(0x10000)))
    flags = _NON_WORD.sub(lambda m: "\0" * len(m.group()), every)
    words: npt.NDArray[np.bool_] = np.frombuffer(flags.encode("utf-32-le", "surrogatepass"), dtype=np.uint32) != 0
    return words


def _is_word(cps: npt.NDArray[np.uint32]) -> npt.NDArray[np.bool_]:
    r"""``[^\W_]`` per code point: a table lookup, and the regular expression for the rare astral ones."""
    astral = cps >= 0x10000
    found = _bmp_words()[np.where(astral, 0, cps)]
    if astral.any():
        rare = np.unique(cps[astral])
        flags = np.array([_NON_WORD.fullmatch(chr(cp)) is None for cp in rare.tolist()], dtype=np.bool_)
        found[astral] = flags[np.searchsorted(rare, cps[astral])]
    return found


def batch_terms(texts: Sequence[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """``unit_terms(texts)`` (index/terms.py), with the word/non-word split done by one table lookup
    per code point instead of a regular-expression substitution over the joined texts."""
    if any("\0" in t or _MARK in t for t in texts):
        return unit_terms(texts)
    points = np.frombuffer(_MARK.join(texts).encode("utf-32-le"), dtype=np.uint32).copy()
    wide = (points >= 0xFF01) & (points <= 0xFF5E)  # full-width ASCII forms: NFKC's own mapping,
    points[wide] -= 0xFEE0  # done first so that NFKC's quick check passes (terms.py, _WIDE)
    points[points == 0x3000] = 0x20
    joined = points.tobytes().decode("utf-32-le")
    joined = unicodedata.normalize("NFKC", joined).casefold()
    cps = np.frombuffer((joined + "\0").encode("utf-32-le"), dtype=np.uint32)
    mark = cps == ord(_MARK)
    owner = np.cumsum(mark)
    codes, valid = codes_of_points(np.where(_is_word(cps), cps, 0).astype(np.uint32))
    return codes[valid], np.bincount(owner[valid], minlength=len(texts)).astype(np.int64)
