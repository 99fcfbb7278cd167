"""The warnings of an index file, stored compactly (schema 8, docs/index-format.md).

``file_warnings`` holds one row per file with warnings: their line numbers and message codes
in the order the parser gave them, each packed as little-endian unsigned integers of the
narrowest width (1, 2 or 4 bytes) that fits; ``n`` is how many, so a width is
``len(blob) / n``. Message code 0 is the warning about a ``字段：值`` line above any ``主题``
line, whose text is made from its line number (:func:`~rag_lab.data.documents.headless_field_warning`);
any other message is stored once in ``warning_messages`` and its code is its id there. A code
is 0 only when that function gives the message byte for byte, so every message reads back as
the parser wrote it.

``warning_lines`` keeps the text of a warned line only when it is not the text of the line's
units joined (cut at WARNED_LINE_CHARS, as the line is): a prose line, which the parser warns
about but keeps, is the concatenation of its sentences when nothing stands between them.
Then the text is NULL and a reader joins the units of that file and line, in span order
(:func:`derived_texts` decides it at build time from the very rows the index stores, with the
rule the reader applies).
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterable, Sequence
from typing import Any

from rag_lab.data import WARNED_LINE_CHARS
from rag_lab.data.documents import headless_field_warning

HEADLESS = 0
"""Message code of ``headless_field_warning(line)``."""

_CODES = {1: "B", 2: "H", 4: "I"}  # struct codes of the widths


def message_code(line: int, message: str, codes: dict[str, int]) -> tuple[int, bool]:
    """``message``'s code and whether it is new in ``codes`` (message → id, filled here: ids 1..)."""
    if message == headless_field_warning(line):
        return HEADLESS, False
    code = codes.get(message)
    if code is not None:
        return code, False
    codes[message] = code = len(codes) + 1
    return code, True


def pack(values: Sequence[int]) -> bytes:
    """``values`` (non-negative, < 2**32) as little-endian integers of the narrowest width that fits."""
    try:
        return bytes(values)  # each < 256: one byte each (most files, most lines)
    except ValueError:
        pass
    top = max(values)
    width = 1 if top < 1 << 8 else 2 if top < 1 << 16 else 4
    return struct.pack(f"<{len(values)}{_CODES[width]}", *values)


def unpack(blob: bytes, n: int) -> tuple[int, ...]:
    """The ``n`` integers :func:`pack` wrote into ``blob``."""
    if n == 1:  # most files warn once
        return (int.from_bytes(blob, "little"),)
    return _layout(n, len(blob)).unpack(blob) if n else ()


@functools.lru_cache(maxsize=256)
def _layout(n: int, size: int) -> struct.Struct:
    return struct.Struct(f"<{n}{_CODES[size // n]}")


def decoded(n: int, lines: bytes, codes: bytes, messages: dict[int, str]) -> list[tuple[int, str]]:
    """A ``file_warnings`` row's (line, message) pairs in stored order; ``messages``: id → text."""
    if n == 1:
        line, code = int.from_bytes(lines, "little"), int.from_bytes(codes, "little")
        return [(line, headless_field_warning(line) if code == HEADLESS else messages[code])]
    return [
        (line, headless_field_warning(line) if code == HEADLESS else messages[code])
        for line, code in zip(unpack(lines, n), unpack(codes, n), strict=True)
    ]


def joined_text(texts: Iterable[str]) -> str:
    """A warned line's text from the texts of its units in span order (the reader's rule)."""
    return "".join(texts)[:WARNED_LINE_CHARS]


def derived_texts(rows: Iterable[tuple[Any, ...]], wanted: dict[int, str]) -> set[int]:
    """The lines of ``wanted`` (line → its warned text) whose text the reader gets back from
    ``rows`` (one file's unit rows as stored: ``build._unit_row``'s columns) by
    :func:`joined_text` over the units of that line ordered by span start. Only lines whose
    units all store their whole text (``value_at`` not NULL) with strictly increasing span
    starts qualify, so the reader's ``ORDER BY span_start`` meets them in this order."""
    pieces: dict[int, list[str]] = {}
    last: dict[int, int] = {}
    spoilt: set[int] = set()
    for row in rows:
        line = row[4]
        if line not in wanted or line in spoilt:
            continue
        start, stored, value_at = row[2], row[5], row[8]
        if value_at is None or start is None or (line in last and start <= last[line]):
            spoilt.add(line)
            continue
        last[line] = start
        pieces.setdefault(line, []).append(stored if isinstance(stored, str) else stored.decode("utf-16-le"))
    return {line for line, texts in pieces.items() if line not in spoilt and joined_text(texts) == wanted[line]}
