"""Files → evidence units: documents (field lines) and images (measured pixels).

``extract_documents(root)`` is the seed API: every field unit of every document, in
sorted path then line order. ``extract_corpus(root)`` is what the index uses: units of
documents *and* images, plus one :class:`FileRecord` per corpus file (errors included).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rag_lab.data.access import NOBODY, PUBLIC, AccessRules
from rag_lab.data.aliases import ALIAS_FILE, AliasFileError, parse_aliases
from rag_lab.data.corpus import CorpusFile, Fingerprint, check_root, sha256_hex, walk
from rag_lab.data.documents import BOM, _content, evidence_id, parse_document
from rag_lab.errors import SourceFileError
from rag_lab.limits import MAX_FILE_BYTES
from rag_lab.records import Modality, Unit

Progress = Callable[[int, int], None]
WARNED_LINE_CHARS = 200  # a warned line's text is kept (for notes) up to this many code points


@dataclass
class FileRecord:
    """One corpus file as the snapshot keeps it."""

    path: str
    kind: str
    sha256: str | None
    fingerprint: Fingerprint | None
    error: str | None = None
    warnings: list[tuple[int, str]] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)
    access: list[str] = field(default_factory=list)
    acl: str = PUBLIC  # data/access.py
    warning_lines: dict[int, str] = field(default_factory=dict)  # warned line number → its stripped text


def image_unit(source: str, sha256: str, features: dict[str, object]) -> Unit:
    unit: Unit = {
        "evidence_id": evidence_id(source, None, sha256),
        "source": source,
        "sha256": sha256,
        "span": None,
        "line": None,
        "text": features["text"],
        "subject": None,
        "field": None,
        "value": features["text"],
        "modality": str(Modality.IMAGE),
    }
    unit.update({k: v for k, v in features.items() if k != "text"})
    return unit


def read_record(
    root: Path, item: CorpusFile, rules: AccessRules | None = None, max_file_bytes: int = MAX_FILE_BYTES
) -> FileRecord:
    """Read, hash and parse one corpus file; a bad file becomes an error record.

    A file that cannot be parsed cannot show its label, so it is hidden (fail closed).
    A file over ``max_file_bytes`` is an error record, decided from its size before reading
    (and never read past the limit, should it grow meanwhile).
    """
    return labelled(_read_record(root, item, max_file_bytes), rules)


def labelled(record: FileRecord, rules: AccessRules | None = None) -> FileRecord:
    """``record`` with its access label (and a warning when the label cannot be read)."""
    if record.kind in ("access", "aliases"):
        return record
    inline = record.access if record.error is None else []
    acl, problem = (rules or AccessRules([])).label(record.path, inline)
    record.acl = NOBODY if record.error is not None else acl
    if problem is not None:
        record.warnings.append((0, f"access: {problem}"))
    if record.acl != PUBLIC:
        for unit in record.units:
            unit["acl"] = record.acl
    return record


def too_large(size: int | None, limit: int) -> str:
    """The error of a file of ``size`` bytes (None: it grew while read) over the per-file ``limit``."""
    what = "file grew past" if size is None else f"file is {size:,} bytes, over"
    return (
        f"{what} the per-file limit of {limit:,} bytes; it is not indexed: split it, or raise the "
        "limit (`rag-lab index ROOT --max-file-bytes N`)"
    )


def _read_record(root: Path, item: CorpusFile, limit: int = MAX_FILE_BYTES) -> FileRecord:
    record, data = read_bytes(root, item, limit)
    return record if data is None else parsed_record(record, data)


def read_bytes(root: Path, item: CorpusFile, limit: int = MAX_FILE_BYTES) -> tuple[FileRecord, bytes | None]:
    """Read and hash one corpus file: its record (SHA-256 set) and bytes, or (its error record, None)."""
    record = FileRecord(item.path, item.kind, None, item.fingerprint, item.error)
    if item.error is not None:
        return record, None
    if item.fingerprint is not None and item.fingerprint.size > limit:
        record.error = too_large(item.fingerprint.size, limit)
        return record, None
    try:
        data = _read_at_most(os.path.join(root, item.path), limit + 1, item.fingerprint)
    except OSError as exc:
        record.error = f"cannot read: {exc.strerror}"
        return record, None
    if len(data) > limit:  # it grew after the walk: never read (or hold) more than the limit
        record.error = too_large(None, limit)
        return record, None
    record.sha256 = sha256_hex(data)
    return record, data


def _read_at_most(path: str, most: int, fingerprint: Fingerprint | None) -> bytes:
    """The file's bytes, at most ``most`` of them. Plain ``os.read`` calls sized from the walk's
    stat (a buffered ``read(most)`` allocates ``most`` bytes first: 16 MiB per small file)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        parts, left = [], most
        size = min(most, (0 if fingerprint is None else fingerprint.size) + 1)  # + 1: sees a file that grew
        while left > 0:
            part = os.read(fd, size)
            if not part:
                break
            parts.append(part)
            left -= len(part)
            size = min(left, max(size, 1 << 16))
    finally:
        os.close(fd)
    return parts[0] if len(parts) == 1 else b"".join(parts)  # b"": an empty file


def parsed_record(record: FileRecord, data: bytes) -> FileRecord:
    """``record`` (from :func:`read_bytes`) with the units, warnings and access lines of ``data``,
    or with its parse error; not yet labelled (:func:`labelled`)."""
    assert record.sha256 is not None
    try:
        if record.kind == "access":
            return record
        if record.kind == "aliases":  # ROOT/aliases.tsv: validated here, so the index reports it
            try:
                parse_aliases(data, ALIAS_FILE)
            except AliasFileError as exc:
                raise SourceFileError(record.path, str(exc).removeprefix(f"{ALIAS_FILE}: ")) from None
            return record
        if record.kind == "document":
            parsed = parse_document(record.path, data, record.sha256)
            record.units, record.warnings, record.access = parsed.units, parsed.warnings, parsed.access
            if parsed.warnings:  # parse_document decoded the bytes: this decode cannot fail
                record.warning_lines = _lines_of(data.decode("utf-8"), {line for line, _ in parsed.warnings})
        else:
            from rag_lab.data.images import ImageMeasureError, measure_png

            try:
                record.units = [image_unit(record.path, record.sha256, measure_png(data))]
            except ImageMeasureError as exc:
                raise SourceFileError(record.path, str(exc)) from None
    except SourceFileError as exc:
        record.error = exc.detail
    return record


def _lines_of(text: str, wanted: set[int]) -> dict[int, str]:
    """The stripped text of the ``wanted`` line numbers (``documents.iter_lines`` numbering),
    found by scanning for line ends: no list of every line of a large file is built."""
    found: dict[int, str] = {}
    start, number = (1 if text.startswith(BOM) else 0), 1
    for target in sorted(n for n in wanted if n >= 1):
        while number < target:
            end = text.find("\n", start)
            if end < 0:
                return found
            start, number = end + 1, number + 1
        end = text.find("\n", start)
        found[target] = _content(text[start : end if end >= 0 else len(text)])[1][:WARNED_LINE_CHARS]
    return found


def iter_records(
    root: str | os.PathLike[str], progress: Progress | None = None, max_file_bytes: int = MAX_FILE_BYTES
) -> Iterator[FileRecord]:
    base = check_root(root)
    items = list(walk(base))
    rules = AccessRules.load(base)
    for done, item in enumerate(items, 1):
        yield read_record(base, item, rules, max_file_bytes)
        if progress is not None:
            progress(done, len(items))


def extract_corpus(root: str | os.PathLike[str], progress: Progress | None = None) -> list[FileRecord]:
    """Every corpus file with its units (documents and images) or its error."""
    return list(iter_records(root, progress))


def extract_documents(root: str | os.PathLike[str]) -> list[Unit]:
    """Seed API: the field units of every ``ROOT/documents/**/*.md``, sorted by path then line."""
    return [
        u for rec in iter_records(root) if rec.kind == "document" for u in rec.units if "kind" not in u
    ]


__all__ = ["FileRecord", "extract_corpus", "extract_documents", "image_unit", "read_record", "too_large"]
