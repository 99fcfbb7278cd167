"""Prose → ``sentence`` units, each with its parent paragraph and heading path (SPEC §9).

Rules (docs/corpus-format.md, "Prose"):

- A document's lines are classified one by one: a field line (``字段：值`` that became a unit,
  or a 主题/权限/date line) is never prose; a Markdown heading (``#`` … ``######`` then a
  space) opens a section; a Markdown table (tables.py) is not prose; a blank line ends a
  paragraph; every other line is a prose line of the current paragraph.
- A sentence ends at 。！？；!? (a run of them counts as one end) and at every line end.
  Closing quotes and brackets right after the end stay with their sentence
  (``他说：“好。”`` is one sentence). List markers (``-``, ``*``, ``+``, ``1.``, ``1、``)
  and quote markers (``>``) at the start of a line are not part of a sentence.
- A sentence is stripped of surrounding whitespace; its span ``[start, end)`` is in code
  points of the decoded file, and ``decoded[start:end] == text`` exactly. A piece holding
  no letter or digit (``——``) is not a sentence.
- Each sentence carries ``parent_span`` (its paragraph: first prose line's start to last
  prose line's end, stripped), ``headings`` (the heading path above it, outermost first)
  and ``title`` (the document's first heading, else its file name without extension).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath

from rag_lab.data.documents import evidence_id
from rag_lab.records import Modality, Unit

SENTENCE = "sentence"
TABLE_ROW = "table_row"
TABLE_CELL = "table_cell"
FIELD_LINE = "field_line"
#: unit kinds whose span reads exactly their ``text`` (field lines read ``field：value``)
VERBATIM_KINDS = frozenset({SENTENCE, TABLE_ROW, TABLE_CELL})

TERMINATORS = "。！？；!?"
CLOSERS = "”’」』）)]】》〉\"'"
_HEADING = re.compile(r"#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$")
_MARKER = re.compile(r"(?:[-*+][ \t]+|\d{1,3}[.)、][ \t]*|>[ \t]*)+")
_WORD = re.compile(r"\w")
# One sentence piece, stripped: after the whitespace that starts it (possessive: never given back),
# either everything up to and including a run of terminators and the closers right after it, or —
# when no terminator is left in the line — the rest of the line, less its trailing whitespace
# (``\s`` and ``str.strip`` agree on what is whitespace).
_T, _C = re.escape(TERMINATORS), re.escape(CLOSERS)
_PIECE = re.compile(rf"\s*+(?:([^{_T}]*[{_T}]+[{_C}]*)|([^{_T}]+?)\s*\Z)")
#: sentences of one document that become units; past it a warning names the line (memory bound)
MAX_SENTENCES = 50_000


def unit_kind(unit: Unit) -> str:
    """``field_line`` for units without a ``kind`` (field lines and images predate kinds)."""
    return str(unit.get("kind", FIELD_LINE))


def heading_of(content: str) -> str | None:
    """The heading text of a Markdown heading line, else None."""
    if not content.startswith("#"):  # what _HEADING needs first; most lines fail here, cheaply
        return None
    found = _HEADING.fullmatch(content)
    return found.group(1).strip() if found else None


def split_sentences(line: str, offset: int = 0) -> list[tuple[int, int]]:
    """Spans ``[start, end)`` (plus ``offset``) of the sentences of one line (rules above)."""
    return [(a + offset, b + offset) for a, b in sentence_spans(line)]


def sentence_spans(line: str, at: int = 0) -> list[tuple[int, int]]:
    """Spans ``[start, end)`` in ``line`` of the sentences of ``line[at:]``.

    A sentence ends after each run of terminators and the closers right after it (the two sets
    share no character, and neither holds whitespace), and at the line's end; each piece between
    two ends is stripped and kept when it holds a letter or digit — one regular expression finds
    the stripped pieces, left to right, as a scan per character would."""
    out = []
    word = _WORD.search
    for piece in _PIECE.finditer(line, at):
        a, b = piece.span(piece.lastindex or 0)
        if word(line, a, b):
            out.append((a, b))
    return out


def document_title(source: str, lines: Iterable[tuple[int, int, str]]) -> str:
    for _number, _start, line in lines:
        heading = heading_of(line.strip().lstrip("\ufeff"))
        if heading:
            return heading
    return PurePosixPath(source).stem


def prose_units(
    source: str,
    sha256: str,
    lines: list[tuple[int, int, str]],
    skip: set[int],
    warnings: list[tuple[int, str]] | None = None,
) -> list[Unit]:
    """Sentence units of every prose line not in ``skip`` (line numbers of field lines and
    table lines). ``lines`` are ``(number, start, line)`` from ``documents.iter_lines``.
    At most ``MAX_SENTENCES``; the line where that stopped is added to ``warnings``."""
    title: str | None = None  # taken when the first sentence needs it (most lines are not prose)
    units: list[Unit] = []
    headings: list[tuple[int, str]] = []  # (level, text)
    names: list[str] = []  # the texts of ``headings``, outermost first
    paragraph: list[Unit] = []
    bounds = [0, 0]  # the paragraph's span: its first sentence's line start, its last one's line end

    def close_paragraph() -> None:
        if paragraph:
            for unit in paragraph:
                unit["parent_span"] = list(bounds)
            paragraph.clear()

    for number, start, raw in lines:
        if number in skip:
            close_paragraph()
            continue
        line = raw.rstrip("\r")
        content = line.strip().lstrip("\ufeff").strip()
        if not content:
            close_paragraph()
            continue
        heading = heading_of(content)
        if heading is not None:
            close_paragraph()
            level = len(content) - len(content.lstrip("#"))
            headings = [h for h in headings if h[0] < level] + [(level, heading)]
            names = [h for _, h in headings]
            continue
        lead = len(line) - len(line.lstrip().lstrip("\ufeff").lstrip())
        marker = _MARKER.match(line, lead)
        body_at = marker.end() if marker else lead
        body = line[body_at:]
        line_from, line_to = start + body_at, start + body_at + len(body.rstrip())
        for a, b in split_sentences(body, start + body_at):
            if len(units) >= MAX_SENTENCES:
                if warnings is not None:
                    warnings.append(
                        (
                            number,
                            f"more than {MAX_SENTENCES} sentences; prose from line {number} on is not indexed",
                        )
                    )
                close_paragraph()
                return units
            text = line[a - start : b - start]
            if title is None:
                title = document_title(source, lines)
            unit: Unit = {
                "evidence_id": evidence_id(source, (a, b), sha256),
                "source": source,
                "sha256": sha256,
                "span": [a, b],
                "line": number,
                "text": text,
                "subject": None,
                "field": None,
                "value": text,
                "modality": str(Modality.TEXT),
                "kind": SENTENCE,
                "headings": list(names),
                "title": title,
            }
            units.append(unit)
            if not paragraph:
                bounds[0] = line_from
            bounds[1] = line_to
            paragraph.append(unit)
    close_paragraph()
    return units
