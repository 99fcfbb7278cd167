"""The PostgreSQL schema of an index (docs/stores.md). Bump PG_LAYOUT_VERSION on change.

One database holds one corpus's index. The schema ``rag_lab`` holds the catalogue:
``generations`` (one row per complete index) and ``current`` (one row: the generation readers
open). Each generation lives in its own schema ``rag_lab_g<N>`` with the same tables as an
SQLite index file, so each is as immutable as a file that is only ever replaced: a build
writes a new schema and switches ``current`` in the same transaction; a crash rolls all of it
back. Every text column that is sorted or compared is ``COLLATE "C"`` (byte order of UTF-8 =
code-point order, SQLite's BINARY), so both stores order names, paths and ties identically.
"""

from __future__ import annotations

PG_LAYOUT_VERSION = 1
CATALOGUE = "rag_lab"
GENERATION_PREFIX = "rag_lab_g"
# advisory lock keys (two int4 form): (LOCK_CLASS, 0) serialises builds; (LOCK_CLASS, N) is
# held shared by every reader of generation N and taken exclusively to drop it.
LOCK_CLASS = 0x7261_6C62 & 0x7FFF_FFFF  # "ralb"

CATALOGUE_DDL = f"""
CREATE SCHEMA IF NOT EXISTS {CATALOGUE};
CREATE TABLE IF NOT EXISTS {CATALOGUE}.generations (
    id BIGINT PRIMARY KEY, layout INTEGER NOT NULL, built_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    files BIGINT NOT NULL, units BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS {CATALOGUE}.current (
    one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    generation BIGINT NOT NULL REFERENCES {CATALOGUE}.generations (id)
);
CREATE SEQUENCE IF NOT EXISTS {CATALOGUE}.generation_ids;
"""

# Unqualified names: the build sets search_path to the new generation's schema.
GENERATION_DDL = """
CREATE TABLE meta (key TEXT COLLATE "C" PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
    path TEXT COLLATE "C" NOT NULL, kind TEXT NOT NULL, size BIGINT, sha256 TEXT,
    mtime_ns BIGINT, ctime_ns BIGINT, inode BIGINT, error TEXT, acl TEXT COLLATE "C" NOT NULL
);
CREATE TABLE file_warnings (path TEXT COLLATE "C" NOT NULL, line INTEGER NOT NULL, message TEXT NOT NULL,
                            ord BIGINT NOT NULL);  -- the build's order, for ties
CREATE TABLE warning_lines (path TEXT COLLATE "C" NOT NULL, line INTEGER NOT NULL, text TEXT NOT NULL,
                            name TEXT COLLATE "C" NOT NULL, subject_line INTEGER NOT NULL);
CREATE TABLE units (
    id BIGINT NOT NULL, evidence_id TEXT COLLATE "C" NOT NULL, source TEXT COLLATE "C" NOT NULL,
    sha256 TEXT NOT NULL, span_start INTEGER, span_end INTEGER, line INTEGER, text TEXT NOT NULL,
    subject TEXT COLLATE "C", field TEXT COLLATE "C", value TEXT NOT NULL, modality TEXT NOT NULL,
    valid_from TEXT, valid_to TEXT, extra TEXT, acl TEXT COLLATE "C" NOT NULL
);
CREATE TABLE names (name TEXT COLLATE "C" NOT NULL, kind TEXT NOT NULL, acl TEXT COLLATE "C" NOT NULL,
                    units INTEGER NOT NULL);
CREATE TABLE images (id BIGINT NOT NULL, color TEXT, size TEXT, shape TEXT, acl TEXT COLLATE "C" NOT NULL);
-- BM25 postings per (term, visibility label): unit ids, term frequencies and unit lengths
-- (little-endian int32 each), so a caller's scores use only the units it may see.
CREATE TABLE postings (term BIGINT NOT NULL, acl TEXT COLLATE "C" NOT NULL, df INTEGER NOT NULL,
                       ids BYTEA NOT NULL, tfs BYTEA NOT NULL, lens BYTEA NOT NULL);
CREATE TABLE folded_names (folded TEXT COLLATE "C" NOT NULL, name TEXT COLLATE "C" NOT NULL,
                           kind TEXT NOT NULL, acl TEXT COLLATE "C" NOT NULL);
CREATE TABLE field_vectors (name TEXT COLLATE "C" PRIMARY KEY, vector BYTEA NOT NULL);
CREATE TABLE acl_stats (acl TEXT COLLATE "C" PRIMARY KEY, units BIGINT NOT NULL, total_len BIGINT NOT NULL);
CREATE TABLE vectors (id BIGINT PRIMARY KEY, vec BYTEA NOT NULL);
"""

# Built after the bulk load (cheaper than maintaining them row by row). Every lookup filters
# on plain equality of columns the application passes (acl = ANY(labels)): no row-level
# security, so the planner keeps every index (docs/stores.md, "Permissions").
GENERATION_INDEXES = """
ALTER TABLE files ADD PRIMARY KEY (path);
ALTER TABLE units ADD PRIMARY KEY (id);
CREATE UNIQUE INDEX units_evidence ON units (evidence_id);
CREATE INDEX units_key ON units (subject, field, acl);   -- the same-key map
CREATE INDEX units_field ON units (field, subject);      -- subjects that have a field (clarifications)
CREATE INDEX units_source ON units (source);
CREATE INDEX file_warnings_path ON file_warnings (path);
CREATE INDEX warning_lines_name ON warning_lines (name);
ALTER TABLE names ADD PRIMARY KEY (name, kind, acl);
ALTER TABLE images ADD PRIMARY KEY (id);
CREATE INDEX images_attrs ON images (color, size, shape);
ALTER TABLE postings ADD PRIMARY KEY (term, acl);
ALTER TABLE folded_names ADD PRIMARY KEY (folded, name, kind, acl);
"""


def generation_schema(generation: int) -> str:
    return f"{GENERATION_PREFIX}{int(generation)}"
