"""Markdown documents → field evidence units, with code-point spans into the original.

A *line* ends only at ``\\n`` (a preceding ``\\r`` is part of the line terminator);
U+2028, U+0085, form feed and a lone ``\\r`` do not end lines. A leading BOM is code
point 0 of the decoded text and is never part of a unit. See docs/corpus-format.md.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import date

from rag_lab.data.access import ACCESS_FIELD
from rag_lab.errors import SourceFileError
from rag_lab.records import FULLWIDTH_COLON, SUBJECT_FIELD, Modality, Unit

BOM = "\ufeff"
VALID_FROM_FIELD = "生效日期"
VALID_TO_FIELD = "失效日期"
DATE_FIELDS = {VALID_FROM_FIELD: "valid_from", VALID_TO_FIELD: "valid_to"}
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
    for number, start, line in iter_lines(text):
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
            parsed.field_lines.add(number)
            head = stripped.split(FULLWIDTH_COLON, 1)[0].strip()
            if head in DATE_FIELDS:
                # a window we cannot read must not silently widen to "always valid"
                raise SourceFileError(source, f"line {number}: {head} line is malformed: {split}")
            if head == ACCESS_FIELD:
                parsed.access.append("")  # a label we cannot read must not leave the file public
            parsed.warnings.append((number, split))
            continue
        name, value = split
        if name != SUBJECT_FIELD and subject is None and name not in DATE_FIELDS and name != ACCESS_FIELD:
            parsed.warnings.append(
                (number, f"field line before any 主题 line; add 主题：… above line {number}")
            )
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
    _add_prose(source, sha256, text, parsed)
    if dated:
        _apply_validity(source, parsed, headless_dates)
    return parsed


def _add_prose(source: str, sha256: str, text: str, parsed: ParsedDocument) -> None:
    """Tables and sentences of every line that is not a field line (data/tables.py, data/prose.py)."""
    from rag_lab.data.prose import prose_units
    from rag_lab.data.tables import table_units

    lines = iter_lines(text)
    tables, table_lines = table_units(source, sha256, lines, parsed.field_lines)
    sentences = prose_units(source, sha256, lines, parsed.field_lines | table_lines, parsed.warnings)
    if tables or sentences:
        parsed.units = sorted(parsed.units + tables + sentences, key=lambda u: (u["span"][0], -u["span"][1]))


def _apply_validity(source: str, parsed: ParsedDocument, headless: list[Unit]) -> None:
    """Copy the document's 生效日期/失效日期 (ISO dates) onto every unit of the document."""
    window: dict[str, str] = {}
    for unit in sorted(headless + parsed.units, key=lambda u: u["line"]):
        key = DATE_FIELDS.get(unit["field"])
        if key is None:
            continue
        try:
            value = date.fromisoformat(unit["value"]).isoformat()
        except ValueError:
            value = ""
        if value != unit["value"] or len(unit["value"]) != 10:
            raise SourceFileError(
                source,
                f"line {unit['line']}: {unit['field']} {unit['value']!r} is not an ISO date; "
                "write YYYY-MM-DD",
            )
        if key in window and window[key] != value:
            raise SourceFileError(
                source, f"line {unit['line']}: a second, different {unit['field']} in one document"
            )
        window[key] = value
    if "valid_from" in window and "valid_to" in window and window["valid_to"] < window["valid_from"]:
        raise SourceFileError(source, "失效日期 is before 生效日期; the document is never valid")
    for unit in parsed.units:
        unit.update(window)
