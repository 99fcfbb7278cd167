"""Markdown tables → ``table_row`` and ``table_cell`` units (SPEC §9).

A table is a header line holding ``|``, then a separator line (``|---|:--:|``), then every
following line that holds ``|`` (docs/corpus-format.md, "Tables"). Cells are split on ``|``
(``\\|`` is a literal bar); each cell's span is its stripped text.

- A header cell ``名称（单位）`` or ``名称(单位)`` names column ``名称`` with unit ``单位``.
- The caption is the nearest non-blank line above the table (a heading's text, or a prose
  line of at most ``CAPTION_MAX`` code points), else None.
- ``table_row``: one per body row; ``text`` = the stripped row, with ``header``, ``cells``,
  ``units``, ``caption`` and ``row_key`` (the first cell).
- ``table_cell``: one per non-empty body cell after the first, addressable as
  ``(row key, column)``: ``subject`` = the row key, ``field`` = the column name, ``value`` =
  ``text`` = the cell's verbatim text, ``unit`` = its column's unit. It answers like a
  field line: the same-key audit compares every cell of that key in the corpus.
"""

from __future__ import annotations

import re

from rag_lab.data.documents import evidence_id
from rag_lab.data.prose import TABLE_CELL, TABLE_ROW, document_title, heading_of
from rag_lab.records import Modality, Unit

CAPTION_MAX = 60
_SEPARATOR = re.compile(r"\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?")
_UNIT = re.compile(r"(.+?)\s*[（(]([^()（）]{1,10})[)）]")


def split_cells(line: str) -> list[tuple[int, int]]:
    """Spans of a row's cells inside ``line`` (stripped; outer bars are not cells)."""
    bounds = [-1]
    i = 0
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line):
            i += 2
            continue
        if line[i] == "|":
            bounds.append(i)
        i += 1
    bounds.append(len(line))
    cells = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        piece = line[a + 1 : b]
        lead = len(piece) - len(piece.lstrip())
        end = a + 1 + len(piece.rstrip())
        cells.append((min(a + 1 + lead, end), end))
    if line.strip().startswith("|"):
        cells = cells[1:]
    if line.strip().endswith("|") and not line.rstrip().endswith("\\|"):
        cells = cells[:-1]
    return cells


def column_name(header: str) -> tuple[str, str | None]:
    """``(name, unit)`` of a header cell."""
    found = _UNIT.fullmatch(header)
    return (found.group(1).strip(), found.group(2).strip()) if found else (header, None)


def _caption(lines: list[tuple[int, int, str]], at: int) -> str | None:
    for _number, _start, raw in reversed(lines[:at]):
        content = raw.strip().lstrip("\ufeff").strip()
        if not content:
            continue
        heading = heading_of(content)
        if heading is not None:
            return heading
        return content if len(content) <= CAPTION_MAX and "|" not in content else None
    return None


def table_units(
    source: str, sha256: str, lines: list[tuple[int, int, str]], skip: set[int]
) -> tuple[list[Unit], set[int]]:
    """Units of every table in ``lines`` (not starting on a line in ``skip``), and the line
    numbers the tables occupy."""
    units: list[Unit] = []
    used: set[int] = set()
    title: str | None = None
    i = 0
    while i + 1 < len(lines):
        number, _start, raw = lines[i]
        sep = lines[i + 1][2].rstrip("\r").strip()
        if number in skip or "|" not in raw or not _SEPARATOR.fullmatch(sep) or "|" not in sep:
            i += 1
            continue
        title = title or document_title(source, lines)
        header_line = raw.rstrip("\r")
        columns = [column_name(header_line[a:b]) for a, b in split_cells(header_line)]
        caption = _caption(lines, i)
        used.update({number, lines[i + 1][0]})
        j = i + 2
        while j < len(lines) and "|" in lines[j][2] and lines[j][0] not in skip:
            row_number, row_start, row_raw = lines[j]
            used.add(row_number)
            units.extend(_row_units(source, sha256, row_number, row_start, row_raw, columns, caption, title))
            j += 1
        i = j
    return units, used


def _row_units(
    source: str,
    sha256: str,
    number: int,
    start: int,
    raw: str,
    columns: list[tuple[str, str | None]],
    caption: str | None,
    title: str,
) -> list[Unit]:
    line = raw.rstrip("\r")
    cells = split_cells(line)
    texts = [line[a:b] for a, b in cells]
    if not any(texts):
        return []
    lead = len(line) - len(line.lstrip())
    row_span = [start + lead, start + len(line.rstrip())]
    row_text = line[lead : len(line.rstrip())]
    common = {"source": source, "sha256": sha256, "line": number, "modality": str(Modality.TEXT)}
    row: Unit = {
        "evidence_id": evidence_id(source, (row_span[0], row_span[1]), sha256),
        **common,
        "span": row_span,
        "text": row_text,
        "subject": None,
        "field": None,
        "value": row_text,
        "kind": TABLE_ROW,
        "header": [name for name, _ in columns],
        "units": [unit for _, unit in columns],
        "cells": texts,
        "caption": caption,
        "row_key": texts[0],
        "title": title,
    }
    out = [row]
    key = texts[0]
    for position, (a, b) in enumerate(cells[1:], 1):
        if not key or position >= len(columns) or a == b:
            continue
        name, unit_name = columns[position]
        if not name:
            continue
        span = (start + a, start + b)
        out.append(
            {
                "evidence_id": evidence_id(source, span, sha256),
                **common,
                "span": [span[0], span[1]],
                "text": texts[position],
                "subject": key,
                "field": name,
                "value": texts[position],
                "kind": TABLE_CELL,
                "unit": unit_name,
                "caption": caption,
                "row_span": row_span,
                "title": title,
            }
        )
    return out
