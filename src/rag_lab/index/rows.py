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

import hashlib
from typing import Any

from rag_lab.data.access import ACCESS_FIELD
from rag_lab.data.documents import BOM, DATE_FIELDS
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
        end = at + len(line)
        rows.append(
            (
                sha(f"{head}{at}:{end}{tail}".encode()).digest()[:12], file_id, at, end, number,
                compact_text(line), subject, line[:colon], colon + 1, None, 0, None, None, None, acl,
            )
        )  # fmt: skip
        texts.append(f"{subject} {line}")
    return rows, texts
