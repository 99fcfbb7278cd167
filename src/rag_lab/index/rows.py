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
import json
import re
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

import numpy as np
import numpy.typing as npt

from rag_lab.data import WARNED_LINE_CHARS
from rag_lab.data.access import ACCESS_FIELD
from rag_lab.data.documents import (
    _ASCII_FIELD_LINE,
    ASCII_COLON_WARNING,
    BOM,
    DATE_FIELDS,
    headless_field_warning,
    split_field_line,
)
from rag_lab.data.prose import _MARKER, MAX_SENTENCES, SENTENCE, heading_of, sentence_spans
from rag_lab.index.schema import document_name
from rag_lab.index.terms import _MARK, _NON_WORD, codes_of_points, unit_terms
from rag_lab.records import FULLWIDTH_COLON, SUBJECT_FIELD
from rag_lab.text import nfkc_fold

_FULL_PATH_FIELDS = frozenset([*DATE_FIELDS, ACCESS_FIELD])  # lines whose meaning parse_document decides


def compact_text(text: str) -> str | bytes:
    """``text`` as stored: UTF-8 TEXT, or a UTF-16-LE BLOB when that is shorter (most Chinese)."""
    if text.isascii():
        return text
    # 2 bytes per character in UTF-16 (4 for the rare astral ones: then at worst not the shorter)
    return text.encode("utf-16-le") if 2 * len(text) < len(text.encode("utf-8")) else text


# A document of blank lines and lines ``name：value`` only, as _field_rows takes them: a blank line
# is whitespace alone; a field line's name starts with no whitespace or BOM and ends with no
# whitespace, holds no full-width colon (the first one splits), and its value neither starts nor
# ends with whitespace and is not empty (``\s`` is str.isspace's whitespace). Each line is an
# atomic group (the field line tried first: the blank one also matches nothing): a line that
# fails is never retried by backtracking into the lines before it.
_FIELD_LINE = r"(?>[^\s\ufeff：][^：\n]*(?<=\S)：\S(?:[^\n]*\S)?|[^\S\n]*)"
_FIELD_DOCUMENT = re.compile(f"{_FIELD_LINE}(?:\n{_FIELD_LINE})*")


def _plain_text(data: bytes) -> str | None:
    """``data`` decoded, when it has no NUL, no CR, no BOM and is valid UTF-8 (what both fast paths need)."""
    if b"\0" in data or b"\r" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if text.startswith(BOM) else text


#: a line the parser warns about but keeps as prose: (line number, warning, the line as
#: data/__init__.py ``_lines_of`` gives it — stripped, at most WARNED_LINE_CHARS)
Warned = tuple[int, str, str]


def fast_rows(
    source: str, data: bytes, sha256: str, file_id: int, acl: str
) -> tuple[list[tuple[Any, ...]], list[str], bool, list[Warned]] | None:
    """:func:`field_rows` or :func:`prose_rows` of a document, whichever answers, whether its
    rows are field lines (which name a subject and a field), and its warnings (prose only);
    None when neither answers."""
    text = _plain_text(data)
    if text is None:
        return None
    found = _field_rows(text, source, sha256, file_id, acl)
    if found is not None:
        return (*found, True, [])
    prose = _prose_rows(text, source, sha256, file_id, acl)
    return None if prose is None else (prose[0], prose[1], False, prose[2])


def field_rows(
    source: str, data: bytes, sha256: str, file_id: int, acl: str
) -> tuple[list[tuple[Any, ...]], list[str]] | None:
    """The unit rows (index/build.py ``_unit_row``'s layout) and search texts of a document of
    field lines and blank lines only; None when it is of any other shape (nothing is decided then)."""
    text = _plain_text(data)
    return None if text is None else _field_rows(text, source, sha256, file_id, acl)


def _field_rows(
    text: str, source: str, sha256: str, file_id: int, acl: str
) -> tuple[list[tuple[Any, ...]], list[str]] | None:
    if not _FIELD_DOCUMENT.fullmatch(text):
        return None  # prose, a table row, or a line to warn about
    rows: list[tuple[Any, ...]] = []
    texts: list[str] = []
    head, tail = f"{source}\0", f"\0{sha256}"
    sha = hashlib.sha256
    subject: str | None = None
    start = 0
    for number, line in enumerate(text.split("\n"), 1):
        name, colon, value = line.partition(FULLWIDTH_COLON)
        if not colon:
            pass  # a blank line
        elif name == SUBJECT_FIELD:
            subject = value
        elif subject is None or name in _FULL_PATH_FIELDS:
            return None
        else:
            # schema 7: the text is ``field：value``, so only the value is stored (value_at NULL) and
            # the span's end is its start + the text's length (span_end NULL) — build._unit_row's rules
            stored: str | bytes = value  # compact_text, inline
            if not value.isascii() and 2 * len(value) < len(value.encode()):
                stored = value.encode("utf-16-le")
            rows.append((
                sha(f"{head}{start}:{start + len(line)}{tail}".encode()).digest()[:12], file_id, start, None, number,
                stored, subject, name, None, None, 0, None, None, None, acl,
            ))  # fmt: skip
            texts.append(f"{subject} {line}")
        start += len(line) + 1
    return rows, texts


def prose_rows(
    source: str, data: bytes, sha256: str, file_id: int, acl: str
) -> tuple[list[tuple[Any, ...]], list[str], list[Warned]] | None:
    """The unit rows, search texts and warnings of a document of Markdown headings, prose lines
    and blank lines only — what ``parse_document`` (its ``prose_units``), ``_unit_row`` and
    ``search_text`` give, without a unit dict per sentence. Prose lines the field parser warns
    about and keeps as prose (``他说：好`` before any ``主题`` line, an ASCII-colon line that looks
    like a field line) are prose here too, with the same warnings. None when the document is of
    any other shape: a line the field parser takes (a ``主题``, access or date line, a line with
    whitespace next to its first full-width colon or nothing after it), a ``|`` (a table could
    start there), a BOM, a CR, a NUL, undecodable bytes, more than ``MAX_SENTENCES`` sentences."""
    text = _plain_text(data)
    return None if text is None else _prose_rows(text, source, sha256, file_id, acl)


_FIELD_LINE_NAMES = frozenset([SUBJECT_FIELD, *_FULL_PATH_FIELDS])  # lines that change parse_document's state


def _prose_warnings(lines: list[str]) -> list[Warned] | None:
    """parse_document's warnings about the lines of a document without 主题 lines, when each of
    them leaves its line prose; None when a line is one the field parser takes."""
    warned: list[Warned] = []
    for number, line in enumerate(lines, 1):
        if FULLWIDTH_COLON in line:
            stripped = line.strip()
            if stripped.find(FULLWIDTH_COLON) <= 0:
                continue  # no name before the colon: prose
            split = split_field_line(stripped)
            if not isinstance(split, tuple) or split[0] in _FIELD_LINE_NAMES:
                return None  # a warned field line (not prose), or one that sets a subject, label or date
            warned.append((number, headless_field_warning(number), stripped[:WARNED_LINE_CHARS]))
        elif ":" in line and _ASCII_FIELD_LINE.match(line.strip()):
            warned.append((number, ASCII_COLON_WARNING, line.strip()[:WARNED_LINE_CHARS]))
    return warned


def _prose_rows(
    text: str, source: str, sha256: str, file_id: int, acl: str
) -> tuple[list[tuple[Any, ...]], list[str], list[Warned]] | None:
    if "|" in text or BOM in text:
        return None
    lines = text.split("\n")
    found = _prose_warnings(lines) if FULLWIDTH_COLON in text or ":" in text else []
    if found is None:
        return None  # a line parse_document takes as a field line
    warned: list[Warned] = found
    title: str | None = None  # data/prose.py document_title: the first non-empty heading, else the stem
    for line in lines:
        if line.lstrip().startswith("#"):
            title = heading_of(line.strip())
            if title:
                break
    if not title:
        title = PurePosixPath(source).stem
    dumps = functools.partial(json.dumps, ensure_ascii=False)
    title_json = dumps(title)
    rows: list[tuple[Any, ...]] = []
    texts: list[str] = []
    headings: list[tuple[int, str]] = []
    # per heading path: the sentence's search-text prefix (search_text) and its extras JSON up to
    # the paragraph span (_unit_row: json.dumps of headings, kind, parent_span, title, keys sorted;
    # schema 9: no title when it is the file's document name, no span when it is the sentence's own)
    prefix = " ".join(p for p in dict.fromkeys([title, ""]) if p)
    extra_head = f'{{"headings": [], "kind": "{SENTENCE}"'
    extra_tail = "}" if title == document_name(source) else f', "title": {title_json}}}'
    paragraph: list[tuple[int, int, str, list[tuple[int, int]]]] = []  # (line start, number, line, sentence spans)
    bounds = [0, 0]  # the paragraph's span: its first sentence's line body start, its last one's line end
    count = 0
    head, tail = f"{source}\0", f"\0{sha256}"
    sha = hashlib.sha256

    def close_paragraph() -> None:
        first = paragraph[0]
        if len(paragraph) == 1 and len(first[3]) == 1 and [first[0] + a for a in first[3][0]] == bounds:
            extra = compact_text(extra_head + extra_tail)  # one sentence: its paragraph is its span
        else:
            extra = compact_text(f'{extra_head}, "parent_span": [{bounds[0]}, {bounds[1]}]{extra_tail}')
        add, add_text = rows.append, texts.append
        for at_line, number, line, spans in paragraph:
            for a, b in spans:
                sentence = line[a:b]
                a += at_line
                stored: str | bytes = sentence  # compact_text, inline
                if not sentence.isascii() and 2 * len(sentence) < len(sentence.encode()):
                    stored = sentence.encode("utf-16-le")
                add((  # SENTENCE_TAIL spelt out: a tuple display is built faster than an unpacking
                    sha(f"{head}{a}:{at_line + b}{tail}".encode()).digest()[:12], file_id, a, None, number, stored,
                    None, None, 0, None, 0, None, None, extra, acl,
                ))  # fmt: skip
                add_text(f"{prefix} {sentence}" if prefix else sentence)
        paragraph.clear()

    start = 0
    for number, line in enumerate(lines, 1):
        at_line = start
        start += len(line) + 1
        content = line.strip()
        if not content:
            if paragraph:
                close_paragraph()
            continue
        heading = heading_of(content)
        if heading is not None:
            if paragraph:
                close_paragraph()
            level = len(content) - len(content.lstrip("#"))
            headings = [h for h in headings if h[0] < level] + [(level, heading)]
            names = [h for _, h in headings]
            prefix = " ".join(p for p in dict.fromkeys([title, names[-1]]) if p)
            extra_head = f'{{"headings": {dumps(names)}, "kind": "{SENTENCE}"'
            continue
        lead = len(line) - len(line.lstrip())
        marker = _MARKER.match(line, lead)
        body_at = marker.end() if marker else lead
        spans = sentence_spans(line, body_at)
        if not spans:
            continue
        count += len(spans)
        if count > MAX_SENTENCES:
            return None  # the full path warns about the line where it stopped
        if not paragraph:
            bounds[0] = at_line + body_at
        bounds[1] = at_line + len(line.rstrip())  # the body's end: the line has a sentence past body_at
        paragraph.append((at_line, number, line, spans))
    if paragraph:
        close_paragraph()
    return rows, texts, warned


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
    joined = nfkc_fold(_MARK.join(texts))
    cps = np.frombuffer((joined + "\0").encode("utf-32-le"), dtype=np.uint32)
    mark = cps == ord(_MARK)
    owner = np.cumsum(mark)
    codes, valid = codes_of_points(np.where(_is_word(cps), cps, 0).astype(np.uint32))
    return codes[valid], np.bincount(owner[valid], minlength=len(texts)).astype(np.int64)
