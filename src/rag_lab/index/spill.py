"""Bounded memory for a build: pieces of the new index's rows parked in one temporary file.

A build must give units ids in evidence-id order over the whole corpus and write each
term's postings whole, so it cannot write anything of a unit before every file is read.
Holding every row until then made peak memory grow with the corpus; instead the build
parks units in a :class:`SpillFile` (one anonymous temporary file beside the index,
unlinked while open, so a killed build leaves nothing behind) in *buckets* by the top
bits of their evidence digest, reads one bucket back at a time in digest order, and
parks each bucket's postings keys as a sorted run; :func:`merged` merges the runs.
"""

from __future__ import annotations

import itertools
import operator
import os
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

MERGE_KEYS = 1 << 20  # keys held by a merge at a time, over all runs (8 MiB of int64)


class SpillFile:
    """Byte strings appended to one temporary file and read back by (offset, length)."""

    def __init__(self, folder: Path, prefix: str) -> None:
        # O_TMPFILE where the file system has it (never visible); otherwise created and unlinked
        # at once, named like the build's temporary index so that the next build removes it
        self._file = tempfile.TemporaryFile(dir=folder, prefix=prefix)  # noqa: SIM115 - closed by close()
        self._fd = self._file.fileno()
        self._end = 0

    def put(self, data: Any) -> tuple[int, int]:
        """Append ``data`` (bytes or any contiguous buffer, e.g. a numpy array); returns (offset, length)."""
        view = memoryview(data).cast("B")
        at = self._end
        while view:
            written = os.pwrite(self._fd, view, self._end)
            self._end += written
            view = view[written:]
        return at, self._end - at

    def get(self, offset: int, length: int) -> bytes:
        parts = []
        while length > 0:
            part = os.pread(self._fd, length, offset)
            if not part:
                raise OSError(f"spill file ended {length} bytes early at offset {offset}")
            parts.append(part)
            offset += len(part)
            length -= len(part)
        return b"".join(parts)

    @property
    def size(self) -> int:
        return self._end

    def close(self) -> None:
        self._file.close()


def merged(
    spill: SpillFile, runs: list[tuple[int, int]], budget: int | None = None
) -> Iterator[npt.NDArray[np.int64]]:
    """The int64 keys of sorted ``runs`` (spilled (offset, length) of raw keys) in one sorted
    stream, a block at a time; at most ``budget`` keys (and the blocks taken) in memory."""
    block = max(16, (MERGE_KEYS if budget is None else budget) // max(len(runs), 1))
    ends = [offset + length for offset, length in runs]
    at = [offset for offset, _ in runs]

    def read(r: int) -> npt.NDArray[np.int64]:
        length = min(block * 8, ends[r] - at[r])
        data = spill.get(at[r], length)
        at[r] += length
        return np.frombuffer(data, dtype=np.int64)

    held = [read(r) for r in range(len(runs))]
    while True:
        live = [r for r in range(len(runs)) if held[r].size]
        if not live:
            return
        # keys up to the smallest last key of a run that has more on disk are final
        open_runs = [int(held[r][-1]) for r in live if at[r] < ends[r]]
        limit = min(open_runs) if open_runs else None
        taken = []
        for r in live:
            cut = held[r].size if limit is None else int(np.searchsorted(held[r], limit, side="right"))
            if cut:
                taken.append(held[r][:cut])
                held[r] = held[r][cut:]
            if not held[r].size and at[r] < ends[r]:
                held[r] = read(r)
        out = np.concatenate(taken) if len(taken) > 1 else taken[0]
        if len(taken) > 1:
            out.sort(kind="stable")  # timsort: merges the sorted pieces
        yield out


def whole_terms(
    blocks: Iterator[npt.NDArray[np.int64]], width: int, size: int
) -> Iterator[npt.NDArray[np.int64]]:
    """Sorted key ``blocks`` regrouped into slices of about ``size`` keys that never split a term
    (``key // width``); a slice is longer only when one term is."""
    keys = np.zeros(0, np.int64)
    for block in blocks:
        keys = np.concatenate((keys, block)) if keys.size else block
        start = 0
        while keys.size - start > size:
            first = int(keys[start + size]) // width * width  # the term that would be cut
            stop = int(np.searchsorted(keys, first, side="left"))
            if stop <= start:  # that term is longer than a slice: all of it, if it is all here
                stop = int(np.searchsorted(keys, first + width, side="left"))
                if stop == keys.size:
                    break
            yield keys[start:stop]
            start = stop
        keys = keys[start:]
    if keys.size:
        yield keys


# A worker's unit rows, parked in its own SQLite file (the build's ``_unit_row`` layout, with
# subject, field and ACL still strings). Batches are appended to ``u`` (a rowid table: appending
# is cheap, where inserting into a table keyed by a hash touches a random page per row); after
# its last batch the worker sorts them once into ``s``, keyed by evidence digest, so the parent
# copies every worker's rows into ``units`` in evidence-id order with one INSERT … SELECT that
# merges the already ordered files (index/build.py ``_copy_units``): the rows never pass
# through the parent's Python. Column types and affinities are those of ``units`` (schema.py),
# so each value is stored there exactly as an ``executemany`` of the same row would store it.
# ``seq`` (the row's position in ``u``, in path order) breaks ties between equal digests as the
# parent's stable sort does. A row's ``extra`` is the id, in ``x``, of its extra-keys JSON: each
# batch's distinct JSONs are stored there once (a paragraph's sentences share theirs), so the
# parent sorts the distinct values of ``x`` into ``extras``, not one value per unit.
_ROW_COLUMNS_DDL = """
    file INTEGER NOT NULL, span_start INTEGER, span_end INTEGER, line INTEGER, text NOT NULL,
    subject TEXT, field TEXT, value_at INTEGER, value TEXT, modality INTEGER NOT NULL,
    valid_from TEXT, valid_to TEXT, extra, acl TEXT NOT NULL"""
ROWS_DDL = f"""
CREATE TABLE u (eid BLOB NOT NULL, {_ROW_COLUMNS_DDL});
CREATE TABLE s (eid BLOB NOT NULL, seq INTEGER NOT NULL, {_ROW_COLUMNS_DDL}, PRIMARY KEY (eid, seq)) WITHOUT ROWID;
CREATE TABLE x (id INTEGER PRIMARY KEY, extra NOT NULL);
"""
_AFTER_EID = (
    "file, span_start, span_end, line, text, subject, field, value_at, value, modality, valid_from, valid_to, extra, acl"
)
ROW_COLUMNS = f"eid, {_AFTER_EID}"


_PLAIN_TAIL = (None, 0, None, None, None)  # value, modality, valid_from, valid_to, extra of a field line's row
# bound of a field line's row (index/rows.py): its span_end and value_at are NULL (schema 7) and are
# written as literals too — sqlite3 binds None through its adapter lookup, slower than an int
_BOUND = operator.itemgetter(0, 1, 2, 4, 5, 6, 7, 14)


def _plain(row: tuple[Any, ...]) -> bool:
    return row[3] is None and row[8] is None and row[9:14] == _PLAIN_TAIL and type(row[10]) is int


# a prose sentence's row (index/rows.py prose_rows, build._unit_row): span_end, subject, field,
# value, valid_from and valid_to NULL, value_at and modality 0 — literals; 7 values bound per row
SENTENCE_TAIL = (None, None, 0, None, 0, None, None)  # subject … valid_to


def _sentence(row: tuple[Any, ...]) -> bool:
    return (
        row[3] is None and row[6:13] == SENTENCE_TAIL and type(row[8]) is int and type(row[10]) is int
        and row[13] is not None
    )  # fmt: skip


def _kind(row: tuple[Any, ...]) -> int:
    """0: a field line's row, 1: a sentence's, 2: any other (:meth:`RowFile.put`)."""
    return 0 if _plain(row) else 1 if _sentence(row) else 2


_PLAIN_INSERT = "INSERT INTO u VALUES (?, ?, ?, NULL, ?, ?, ?, ?, NULL, NULL, 0, NULL, NULL, NULL, ?)"
_SENTENCE_INSERT = "INSERT INTO u VALUES (?, ?, ?, NULL, ?, ?, NULL, NULL, 0, NULL, 0, NULL, NULL, ?, ?)"
_FULL_INSERT = "INSERT INTO u VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


class RowFile:
    """Unit rows appended to one SQLite file, committed after each :meth:`put`; :meth:`finish`
    (after the last) orders them by evidence digest into the table the build copies from.
    :meth:`create` makes the empty file before the workers are forked, so that the build's
    connection can attach it before its first transaction. The file is named like the build's
    temporary index: the next build removes it if this one is killed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._extras = 0  # ids given in ``x`` so far

    @staticmethod
    def create(path: Path) -> RowFile:
        path.unlink(missing_ok=True)
        db = sqlite3.connect(path, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode = OFF")
            db.executescript(ROWS_DDL)
        finally:
            db.close()
        return RowFile(path)

    def put(self, rows: list[tuple[Any, ...]]) -> None:
        if not rows:
            return
        if self._db is None:
            self._db = sqlite3.connect(self.path, isolation_level=None)
            self._db.execute("PRAGMA journal_mode = OFF")
            self._db.execute("PRAGMA synchronous = OFF")
        self._db.execute("BEGIN")
        ids: dict[str | bytes, int] = {}  # this batch's distinct extras → their id in ``x``
        # field-line rows (index/rows.py) bind 8 values per row, sentences 7, others all 15; runs of
        # one kind at a time, in the batch's order (``u``'s rowid breaks ties between equal digests)
        if all(map(_plain, rows)):
            self._db.executemany(_PLAIN_INSERT, map(_BOUND, rows))
        elif all(map(_sentence, rows)):
            self._db.executemany(_SENTENCE_INSERT, self._sentences(rows, ids))
        else:
            for kind, run in itertools.groupby(rows, _kind):
                if kind == 0:
                    self._db.executemany(_PLAIN_INSERT, map(_BOUND, run))
                elif kind == 1:
                    self._db.executemany(_SENTENCE_INSERT, self._sentences(run, ids))
                else:
                    self._db.executemany(_FULL_INSERT, self._by_id(run, ids))
        if ids:
            self._db.executemany("INSERT INTO x VALUES (?, ?)", [(i, extra) for extra, i in ids.items()])
            self._extras += len(ids)
        self._db.execute("COMMIT")

    def _sentences(self, rows: Iterable[tuple[Any, ...]], ids: dict[str | bytes, int]) -> Iterator[tuple[Any, ...]]:
        """The 7 bound values of sentence ``rows`` (``_SENTENCE_INSERT``), extras as ids in ``x``."""
        first = self._extras + 1
        get = ids.get
        for row in rows:
            extra = row[13]
            at = get(extra)
            if at is None:
                at = ids[extra] = first + len(ids)
            yield row[0], row[1], row[2], row[4], row[5], at, row[14]

    def _by_id(self, rows: Iterable[tuple[Any, ...]], ids: dict[str | bytes, int]) -> Iterator[tuple[Any, ...]]:
        """``rows`` with their extra JSON (column 13) replaced by its id in ``x`` (new ones added to ``ids``)."""
        first = self._extras + 1
        for row in rows:
            extra = row[13]
            if extra is None:
                yield row
                continue
            at = ids.get(extra)
            if at is None:
                at = ids[extra] = first + len(ids)
            yield (*row[:13], at, row[14])

    def finish(self) -> None:
        """Order the rows put so far by (digest, position) into ``s`` (one sort, in C)."""
        if self._db is None:
            return
        self._db.execute("BEGIN")
        self._db.execute(f"INSERT INTO s SELECT eid, rowid, {_AFTER_EID} FROM u ORDER BY eid, rowid")
        self._db.execute("COMMIT")

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
