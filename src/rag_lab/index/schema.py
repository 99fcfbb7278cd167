"""The SQLite schema of an index file (one file, no server). Bump SCHEMA_VERSION on change.

Version 5 is the compact layout (docs/index-format.md): nothing a unit row can get from its
file row or its own text is stored again. A unit refers to its file (path, SHA-256, ACL
label) by integer id, to its subject and field by ids into ``strings`` (ids in code-point
order of the names, so ordering by id is ordering by name), keeps its value as an offset
into its text, and its evidence id as the 12 raw bytes of the digest. Texts are stored as
UTF-8 TEXT or, when shorter (most Chinese text), as a UTF-16-LE BLOB. Postings are delta-coded
ids of the narrowest width that fits, term frequencies only where they are not 1, and the
unit lengths once per unit (``unit_lengths``).

Version 6 stores each distinct extra-keys JSON once, in ``extras``: a unit's ``extra`` is the
id of its row there. A prose sentence's extras (kind, title, heading path, paragraph span) are
those of every other sentence of its paragraph, so the prose index no longer repeats them per
sentence.

Version 7 cuts fixed bytes per row: a unit whose text is ``field：value`` (every field line)
stores only its value (``value_at`` NULL: the text is the field's name, a full-width colon and
the stored value), a span that ends where the unit's text ends stores no end (``span_end``
NULL), and a file's kind is its position in :data:`FILE_KINDS` instead of its name.

Version 8 stores warnings compactly (index/warned.py): one ``file_warnings`` row per file with
its line numbers and message codes packed (code 0: the ``主题`` warning made from the line
number, else an id into ``warning_messages``, each distinct message once), and a warned line's
text only when it is not the text of its units joined; ``warning_lines`` refers to its file by
id and is keyed by the name (no separate index).

Version 9 leaves out of a sentence's extras what its file row and its own columns give: its
``title`` when it is the file's document name (:func:`document_name`: a document without a
heading is titled by its file name), its ``parent_span`` when its paragraph is the sentence
alone (the span is the unit's own). The reader (index/store.py ``stored_extra``) puts them
back; a sentence of a generated field-line document with an ASCII-colon line then shares one
``extras`` row with every other such sentence instead of a row each.
"""

from __future__ import annotations

from pathlib import PurePosixPath

SCHEMA_VERSION = 9

FILE_KINDS = ("document", "image", "access", "aliases")
"""The kinds of corpus file (data/corpus.py); ``files.kind`` is a position in this tuple."""

DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
-- the snapshot; id 1.. in path order; kind: position in FILE_KINDS; sha256 as 32 raw bytes
CREATE TABLE files (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, kind INTEGER NOT NULL, size INTEGER, sha256 BLOB,
    mtime_ns INTEGER, ctime_ns INTEGER, inode INTEGER, error TEXT, acl TEXT NOT NULL
);
-- per file with warnings (index/warned.py): n warnings in parser order, their line numbers and
-- message codes as little-endian unsigned integers of width len(blob) / n; code 0: the 主题
-- warning made from the line number (documents.headless_field_warning), else an id in warning_messages
CREATE TABLE file_warnings (file INTEGER PRIMARY KEY, n INTEGER NOT NULL, lines BLOB NOT NULL, codes BLOB NOT NULL);
-- each distinct other message once, id 1.. in the order first met (path order)
CREATE TABLE warning_messages (id INTEGER PRIMARY KEY, message TEXT NOT NULL);
-- the text of each warned line (NULL: the texts of the file's units of that line joined in
-- span order, cut at WARNED_LINE_CHARS; else TEXT or a UTF-16-LE BLOB) and the field name it
-- probably meant, or (subject_line = 1) the subject a broken 主题 line meant to name: notes on
-- refusals (retrieval/notes.py); keyed by the name, which is how it is looked up
CREATE TABLE warning_lines (name TEXT NOT NULL, file INTEGER NOT NULL, line INTEGER NOT NULL, text,
                            subject_line INTEGER NOT NULL, PRIMARY KEY (name, file, line)) WITHOUT ROWID;
-- subject and field names, id 1.. in code-point order
CREATE TABLE strings (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
-- id 1.. in evidence_id order: ties by id == ties by evidence_id, and a unit is found by its
-- evidence id by binary search over ids (no index needed). eid: the evidence id's 12 digest bytes; text: TEXT (UTF-8) or BLOB (UTF-16-LE); value = text[value_at:] unless
-- value is set; value_at NULL: the unit's text is field name + '：' + the stored text, which is the value;
-- span_end NULL (with a span_start): span_start + the text's length; modality 0 text, 1 image;
-- acl: position in meta "acls"; extra: id in ``extras``
-- of the JSON of the keys beyond the columns (kind, title, headings, image features, …), or NULL
CREATE TABLE units (
    id INTEGER PRIMARY KEY, eid BLOB NOT NULL, file INTEGER NOT NULL,
    span_start INTEGER, span_end INTEGER, line INTEGER, text NOT NULL,
    subject INTEGER, field INTEGER, value_at INTEGER, value TEXT, modality INTEGER NOT NULL,
    valid_from TEXT, valid_to TEXT, extra INTEGER, acl INTEGER NOT NULL
);
-- each distinct extra-keys JSON of the units once (TEXT, or a UTF-16-LE BLOB when shorter), id 1..
-- in the order of the stored values (so the ids depend on the corpus only); a sentence's JSON has no
-- "title" when it is document_name(its file's path), no "parent_span" when that is the unit's span
CREATE TABLE extras (id INTEGER PRIMARY KEY, extra NOT NULL);
-- names per kind (0 subject, 1 field) and ACL, with their unit counts
CREATE TABLE names (name INTEGER NOT NULL, kind INTEGER NOT NULL, acl INTEGER NOT NULL, units INTEGER NOT NULL,
                    PRIMARY KEY (name, kind, acl)) WITHOUT ROWID;
-- names whose NFKC + case folding differs from the name (data/names.py), for folded lookups
CREATE TABLE folded_names (folded TEXT NOT NULL, name INTEGER NOT NULL, PRIMARY KEY (folded, name)) WITHOUT ROWID;
CREATE TABLE images (id INTEGER PRIMARY KEY, color TEXT, size TEXT, shape TEXT, acl INTEGER NOT NULL);
-- BM25 postings per (term, ACL), so a caller's scores use statistics of the units it may see
-- and nothing else: ``first`` unit id, then ``deltas`` (ids[1:] - ids[:-1]) as little-endian
-- unsigned integers of width len(deltas) / (df - 1) bytes (1, 2 or 4); ``tfs``: NULL when every
-- term frequency is 1, else (position, tf) int32 pairs of the others
-- (key = term * len(acls) + acl: a rowid table keeps rows of up to a page inline, where a
-- WITHOUT ROWID table spills rows over ~1 KB to partly filled overflow pages)
CREATE TABLE postings (key INTEGER PRIMARY KEY, df INTEGER NOT NULL, first INTEGER NOT NULL,
                       deltas BLOB NOT NULL, tfs BLOB);
-- terms per unit (BM25 length), unit ids chunk * LENGTHS_CHUNK .. as unsigned integers of
-- width len(lengths) / units in the chunk bytes
CREATE TABLE unit_lengths (chunk INTEGER PRIMARY KEY, lengths BLOB NOT NULL);
-- field-name vectors of the neural field-matching step (index/field_vectors.py); empty without the extra
CREATE TABLE field_vectors (name TEXT PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE acl_stats (acl TEXT PRIMARY KEY, units INTEGER NOT NULL, total_len INTEGER NOT NULL) WITHOUT ROWID;
-- optional sentence vectors (index/vectors.py): unit id → float16 blob; empty unless built with vectors
CREATE TABLE vectors (id INTEGER PRIMARY KEY, vec BLOB NOT NULL);
"""

# Built after the bulk insert: cheaper than maintaining them row by row.
INDEXES = """
-- partial (schema 6): only units with a subject / a field — not prose sentences, table rows, images;
-- every lookup through them is ``subject = ?`` / ``field = ?``, which implies the index's WHERE
CREATE INDEX units_key ON units (subject, field) WHERE subject IS NOT NULL;  -- the same-key map (its prefix: fields of a subject)
CREATE INDEX units_field ON units (field, subject) WHERE field IS NOT NULL;  -- subjects with a field
CREATE INDEX units_file ON units (file, span_start); -- units of a file (parent expansion, notes)
CREATE INDEX images_attrs ON images (color, size, shape);
"""

LENGTHS_CHUNK = 1 << 16
"""Unit ids per ``unit_lengths`` row."""


def document_name(path: str) -> str:
    """A corpus file's document name: its file name without the extension (data/prose.py
    ``document_title`` when a document has no heading). A sentence whose ``title`` is this name
    of its file's path stores no title (schema 9)."""
    return PurePosixPath(path).stem
