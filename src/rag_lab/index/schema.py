"""The SQLite schema of an index file (one file, no server). Bump SCHEMA_VERSION on change."""

from __future__ import annotations

SCHEMA_VERSION = 4

DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE files (
    path TEXT PRIMARY KEY, kind TEXT NOT NULL, size INTEGER, sha256 TEXT,
    mtime_ns INTEGER, ctime_ns INTEGER, inode INTEGER, error TEXT, acl TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE file_warnings (path TEXT NOT NULL, line INTEGER NOT NULL, message TEXT NOT NULL);
-- the text of each warned line and the field name it probably meant, or (subject_line = 1)
-- the subject a broken 主题 line meant to name: notes on refusals (retrieval/notes.py)
CREATE TABLE warning_lines (path TEXT NOT NULL, line INTEGER NOT NULL, text TEXT NOT NULL, name TEXT NOT NULL,
                            subject_line INTEGER NOT NULL);
CREATE TABLE units (
    id INTEGER PRIMARY KEY,            -- 1.. in evidence_id order: ties by id == ties by evidence_id
    evidence_id TEXT NOT NULL UNIQUE, source TEXT NOT NULL, sha256 TEXT NOT NULL,
    span_start INTEGER, span_end INTEGER, line INTEGER, text TEXT NOT NULL,
    subject TEXT, field TEXT, value TEXT NOT NULL, modality TEXT NOT NULL,
    valid_from TEXT, valid_to TEXT, extra TEXT, acl TEXT NOT NULL
);
CREATE TABLE names (name TEXT NOT NULL, kind TEXT NOT NULL, acl TEXT NOT NULL, units INTEGER NOT NULL,
                    PRIMARY KEY (name, kind, acl)) WITHOUT ROWID;
CREATE TABLE images (id INTEGER PRIMARY KEY, color TEXT, size TEXT, shape TEXT, acl TEXT NOT NULL);
-- BM25 postings per (term, ACL): unit ids, term frequencies and unit lengths (int32 each),
-- so a caller's scores use statistics of the units it may see, and nothing else.
CREATE TABLE postings (term INTEGER NOT NULL, acl TEXT NOT NULL, df INTEGER NOT NULL,
                       ids BLOB NOT NULL, tfs BLOB NOT NULL, lens BLOB NOT NULL,
                       PRIMARY KEY (term, acl)) WITHOUT ROWID;
-- names whose NFKC + case folding differs from the name (data/names.py), for folded lookups
CREATE TABLE folded_names (folded TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL, acl TEXT NOT NULL,
                           PRIMARY KEY (folded, name, kind, acl)) WITHOUT ROWID;
-- field-name vectors of the neural field-matching step (index/field_vectors.py); empty without the extra
CREATE TABLE field_vectors (name TEXT PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE acl_stats (acl TEXT PRIMARY KEY, units INTEGER NOT NULL, total_len INTEGER NOT NULL) WITHOUT ROWID;
-- optional sentence vectors (index/vectors.py): unit id → float16 blob; empty unless built with vectors
CREATE TABLE vectors (id INTEGER PRIMARY KEY, vec BLOB NOT NULL);
"""

# Built after the bulk insert: cheaper than maintaining them row by row.
INDEXES = """
CREATE INDEX units_key ON units (subject, field);   -- the same-key map
CREATE INDEX units_source ON units (source);
CREATE INDEX warning_lines_name ON warning_lines (name);
CREATE INDEX images_attrs ON images (color, size, shape);
"""
