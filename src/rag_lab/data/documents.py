"""Markdown documents → field evidence units, with code-point spans into the original.

A *line* ends only at ``\\n`` (a preceding ``\\r`` is part of the line terminator);
U+2028, U+0085, form feed and a lone ``\\r`` do not end lines. A leading BOM is code
point 0 of the decoded text and is never part of a unit. See docs/corpus-format.md.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from rag_lab.data.access import ACCESS_FIELD
from rag_lab.data.dates import parse_date
from rag_lab.errors import SourceFileError
from rag_lab.records import FULLWIDTH_COLON, SUBJECT_FIELD, Modality, Unit

BOM = "\ufeff"
VALID_FROM_FIELD = "生效日期"
VALID_TO_FIELD = "失效日期"
DATE_FIELDS = {VALID_FROM_FIELD: "valid_from", VALID_TO_FIELD: "valid_to"}
#: Unit key set on every unit of a document whose validity window cannot be read (its units
#: stay in the index; a question about them is refused ``validity_unreadable``).
VALIDITY_UNREADABLE = "validity_unreadable"
_TEXT = str(Modality.TEXT)
# A line that would be a field line but for an ASCII colon: a short name holding a CJK
# character and no space, slash or colon, then ':' (not '://'), then a value.
_ASCII_FIELD_LINE = re.compile(r"[^\s:/：]{0,15}[\u3400-\u9fff\uf900-\ufaff][^\s:/：]{0,15}:(?!//)\s*\S")
ASCII_COLON_WARNING = "ASCII colon ':' where a field line needs the full-width colon; write 字段：值 (U+FF1A)"


@dataclass
class ParsedDocument:
    """The units of one document plus its per-line warnings (line, message)."""

    units: list[Unit]
    warnings: list[tuple[int, str]] = field(default_factory=list)
    access: list[str] = field(default_factory=list)  # raw 权限 values (data/access.py)
    field_lines: set[int] = field(default_factory=set)  # lines that are never prose (data/prose.py)


def evidence_id(source: str, span: tuple[int, int] | None, sha256: str) -> str:
    """Stable id from (source path, span, file sha256): same bytes → same id."""
    where = "-" if span is None else f"{span[0]}:{span[1]}"
    digest = hashlib.sha256(f"{source}\0{where}\0{sha256}".encode()).hexdigest()
    return "ev_" + digest[:24]


def decode_document(source: str, data: bytes) -> str:
    """Decode UTF-8 strictly; name the byte offset of the first bad byte."""
    nul = data.find(b"\0")
    if nul >= 0:
        raise SourceFileError(
            source, f"binary data: NUL byte at byte offset {nul}; documents must be UTF-8 text"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceFileError(
            source,
            f"invalid UTF-8 at byte offset {exc.start} ({exc.reason}); save the file as UTF-8",
        ) from None


def iter_lines(text: str) -> list[tuple[int, int, str]]:
    """``(line_number, start, line)`` for every line, splitting on ``\\n`` only."""
    lines: list[tuple[int, int, str]] = []
    start = 1 if text.startswith(BOM) else 0
    for number, line in enumerate((text[1:] if start else text).split("\n"), 1):
        lines.append((number, start, line))
        start += len(line) + 1
    return lines


def _content(line: str) -> tuple[int, str]:
    """``(offset, text)`` of a line without surrounding whitespace and without leading BOMs.

    A U+FEFF at the start of a line in mid-file is a byte-order mark left by concatenating
    files (``cat a.md b.md``); it is not part of the field name.
    """
    if line and not line[0].isspace() and line[0] != BOM:
        return 0, line.rstrip()
    rest = line
    while True:
        trimmed = rest.lstrip().lstrip(BOM)
        if trimmed == rest:
            return len(line) - len(rest), rest.rstrip()
        rest = trimmed


def warned_name(line: str) -> tuple[str, bool] | None:
    """The name a warned line is about: ``(field name it was probably meant to have, False)``,
    or for a broken ``主题`` line ``(the subject it meant to name, True)``; None if neither.

    Used to tell a user why a question about that name found nothing (rag_lab.retrieval.notes).
    """
    parts = re.split("[:：]", _content(line)[1], maxsplit=1)
    if len(parts) < 2:
        return None
    head, rest = parts[0].strip(), parts[1].strip()
    if head == SUBJECT_FIELD:
        return (rest, True) if 0 < len(rest) <= 64 else None
    return (head, False) if 0 < len(head) <= 32 else None


def headless_field_warning(number: int) -> str:
    """The warning about a ``字段：值`` line (line ``number``) above any ``主题`` line; it stays prose."""
    return f"field line before any 主题 line; add 主题：… above line {number}"


#: a malformed field line before any 主题 line holding one of these is a paragraph of prose, not a field
_SENTENCE_STOPS = "。！？"


def split_field_line(stripped: str) -> tuple[str, str] | None | str:
    """Split ``字段：值``. Returns (field, value), None (not a field line) or a warning."""
    colon = stripped.find(FULLWIDTH_COLON)
    if colon <= 0:
        return None
    name, value = stripped[:colon], stripped[colon + 1 :]
    if name != name.rstrip() or value != value.lstrip():
        return "whitespace next to the full-width colon; write 字段：值 without spaces"
    if not value:
        return f"field {name!r} has an empty value; the line is not an evidence unit"
    return name, value


def parse_document(source: str, data: bytes, sha256: str) -> ParsedDocument:
    """Parse one document's bytes into field units (see module docstring)."""
    text = decode_document(source, data)
    lone_cr = re.search(r"\r(?!\n)", text)
    parsed = ParsedDocument(units=[])
    subject: str | None = None
    headless_dates: list[Unit] = []  # date lines above the first 主题 still bound the document
    dated = False  # any 生效日期/失效日期 line: only then is there a window to apply
    lines = iter_lines(text)
    for number, start, line in lines:
        if FULLWIDTH_COLON not in line:
            if ":" in line and _ASCII_FIELD_LINE.match(_content(line)[1]):
                parsed.warnings.append((number, ASCII_COLON_WARNING))
            continue  # not a field line
        lead, stripped = _content(line)
        if not stripped:
            continue
        split = split_field_line(stripped)
        if split is None:
            continue
        if isinstance(split, str):
            head = stripped.split(FULLWIDTH_COLON, 1)[0].strip()
            prose = any(stop in stripped for stop in _SENTENCE_STOPS)
            if subject is None and prose and head not in DATE_FIELDS and head != ACCESS_FIELD:
                # before any 主题 line a malformed field line holding sentences is prose like any other field
                # line there (a paragraph ending in a colon, …。…的数值（单位/米）：; a space beside one,
                # 耶利米（希伯来文： …）是…。); a bare 地点： stays a warned field line
                parsed.warnings.append((number, headless_field_warning(number)))
                continue
            parsed.field_lines.add(number)
            if head in DATE_FIELDS:
                # a window we cannot read must not silently widen to "always valid"
                dated = True
                rest = stripped.split(FULLWIDTH_COLON, 1)[1].strip()
                headless_dates.append({"field": head, "value": rest, "line": number, "problem": split})
            if head == ACCESS_FIELD:
                parsed.access.append("")  # a label we cannot read must not leave the file public
            parsed.warnings.append((number, split))
            continue
        name, value = split
        if name != SUBJECT_FIELD and subject is None and name not in DATE_FIELDS and name != ACCESS_FIELD:
            parsed.warnings.append((number, headless_field_warning(number)))
            continue  # kept as prose (data/prose.py)
        parsed.field_lines.add(number)
        if name == SUBJECT_FIELD:
            subject = value
            continue
        if name == ACCESS_FIELD:
            parsed.access.append(value)
            continue
        if name in DATE_FIELDS:
            dated = True
            if subject is None:
                headless_dates.append({"field": name, "value": value, "line": number})
                continue
        span = (start + lead, start + lead + len(stripped))
        parsed.units.append(
            {
                "evidence_id": evidence_id(source, span, sha256),
                "source": source,
                "sha256": sha256,
                "span": [span[0], span[1]],
                "line": number,
                "text": stripped,
                "subject": subject,
                "field": name,
                "value": value,
                "modality": _TEXT,
            }
        )
    if lone_cr is not None:
        cr_line = text.count("\n", 0, lone_cr.start()) + 1
        parsed.warnings.append(
            (
                cr_line,
                f"lone CR (U+000D) at code point {lone_cr.start()} does not end a line; "
                "save the file with LF or CRLF line endings",
            )
        )
    _add_prose(source, sha256, lines, parsed)
    if dated:
        _apply_validity(parsed, headless_dates)
    return parsed


def _add_prose(source: str, sha256: str, lines: list[tuple[int, int, str]], parsed: ParsedDocument) -> None:
    """Tables and sentences of every line that is not a field line (data/tables.py, data/prose.py);
    ``lines``: the document's ``iter_lines``."""
    from rag_lab.data.prose import prose_units
    from rag_lab.data.tables import table_units

    skip = parsed.field_lines
    if all(not line.strip() for number, _start, line in lines if number not in skip):
        return  # nothing but field lines and blank ones: no table, no sentence
    tables, table_lines = table_units(source, sha256, lines, parsed.field_lines)
    sentences = prose_units(source, sha256, lines, parsed.field_lines | table_lines, parsed.warnings)
    if tables or sentences:
        parsed.units = sorted(parsed.units + tables + sentences, key=lambda u: (u["span"][0], -u["span"][1]))


def _apply_validity(parsed: ParsedDocument, dates: list[Unit]) -> None:
    """Copy the document's 生效日期/失效日期 onto every unit of the document (as ISO dates).

    Dates are read by :func:`rag_lab.data.dates.parse_date`. A window that cannot be read
    (a value that is no date, a malformed date line, two different values of one field, an
    end before the start) never drops the file: every unit instead carries
    ``validity_unreadable`` (line, field, value, problem) and the line is a warning.
    """
    window: dict[str, str] = {}
    problem: dict[str, Any] | None = None
    for unit in sorted(dates + parsed.units, key=lambda u: u["line"]):
        key = DATE_FIELDS.get(unit["field"])
        if key is None:
            continue
        day = None if "problem" in unit else parse_date(unit["value"])
        why = unit.get("problem")
        if why is None and day is None:
            why = "not a date; write YYYY-MM-DD, YYYY/M/D, YYYY.M.D or YYYY年M月D日"
        elif day is not None and key in window and window[key] != day.isoformat():
            why = f"a second, different {unit['field']} in one document (the first says {window[key]})"
        if why is not None:
            where = {"line": unit["line"], "field": unit["field"], "value": unit["value"]}
            problem = problem or {**where, "problem": why}
            continue
        assert day is not None
        window[key] = day.isoformat()
    if problem is None and window.get("valid_to", "9999-12-31") < window.get("valid_from", "0001-01-01"):
        line = next(u["line"] for u in dates + parsed.units if u["field"] == VALID_TO_FIELD)
        problem = {
            "line": line,
            "field": VALID_TO_FIELD,
            "value": window["valid_to"],
            "problem": f"失效日期 {window['valid_to']} is before 生效日期 {window['valid_from']}",
        }
    if problem is not None:
        parsed.warnings.append(
            (
                problem["line"],
                f"validity window unreadable: {problem['field']} {problem['value']!r}: {problem['problem']}; "
                "questions about this document are refused (validity_unreadable) until it is fixed",
            )
        )
        for unit in parsed.units:
            unit[VALIDITY_UNREADABLE] = dict(problem)
        return
    for unit in parsed.units:
        unit.update(window)
