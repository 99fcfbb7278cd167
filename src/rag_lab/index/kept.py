"""Open index files kept across ``query_once`` calls in one process, per file identity.

``query_once`` opens the index for every question, and a freshly opened :class:`Index` pays
its first-use costs again: meta and statistics, the unit lengths, the first decode of the
common terms, SQLite's cold pages (≈ 4 ms CPU at 10,000 documents, more than the rest of the
request; benchmarks/README.md). An index file is never changed in place — a rebuild renames a
new file over it (docs/index-format.md) — so an open ``Index`` may answer the next call as
long as the path still names the *same file, unchanged*. Before every use the path is
``os.stat``'ed and compared with the identity recorded when the index was opened: device,
inode, size, mtime and ctime (ns). Any difference — a rebuild's rename, an edit in place, a
deleted or replaced file — and the kept index is dropped (closed once its last user is done)
and the file opened anew, so a changed or swapped index is never served. An inode cannot be
reused by a new file while it is kept open.

File times have the kernel clock's coarse resolution, so an edit in place within the same
tick as the build would keep the same mtime and ctime. An index is therefore kept only when
its file is at least :data:`SETTLED_SECONDS` old when opened (git's rule for "racily clean"
files): any later write gives it a newer time. A just-built index is opened per call, as
before.

At most :data:`KEPT` indexes (by path and principal) are kept, least recently used dropped
first; each keeps what an open ``Index`` keeps (a postings cache of at most 64 MiB, bounded
memos). :func:`close_kept` closes them all. A forked child starts with none (its parent's
connections are not used). Only SQLite files are kept; a PostgreSQL store is opened per call
(its generation is pinned per open).
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rag_lab.data.access import Principal
from rag_lab.index.store import Index

KEPT = 2
"""How many open indexes (by path and principal) a process keeps."""
SETTLED_SECONDS = 2.0
"""An index file younger than this when opened is not kept (see module docstring)."""

Identity = tuple[int, int, int, int, int]


class _Entry:
    __slots__ = ("dropped", "identity", "index", "users")

    def __init__(self, index: Index, identity: Identity | None) -> None:
        self.index, self.identity = index, identity
        self.users = 1
        self.dropped = identity is None  # not kept: closed after this use


_lock = threading.Lock()
_kept: OrderedDict[tuple[str, object], _Entry] = OrderedDict()


def _identity(path: str) -> Identity | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _drop(entry: _Entry) -> bool:
    """Mark ``entry`` dropped; True when nobody uses it (the caller closes it, outside the lock)."""
    entry.dropped = True
    return entry.users == 0


@contextmanager
def kept_index(path: str | os.PathLike[str], principal: Principal | None = None) -> Iterator[Index]:
    """The open :class:`Index` of ``path`` for ``principal``: a kept one when the file is the
    one it was opened from, else a newly opened one (kept when settled; see module docstring)."""
    where = os.path.abspath(path)
    key = (where, None if principal is None else (principal.name, principal.groups))
    identity = _identity(where)
    to_close: list[_Entry] = []
    entry: _Entry | None = None
    with _lock:
        found = _kept.get(key)
        if found is not None:
            if identity is not None and found.identity == identity:
                found.users += 1
                _kept.move_to_end(key)
                entry = found
            else:  # another file, or changed: never served again
                del _kept[key]
                if _drop(found):
                    to_close.append(found)
    for old in to_close:
        old.index.close()
    if entry is None:
        entry = _open(where, Path(path), principal, key, identity)
    try:
        yield entry.index
    finally:
        with _lock:
            entry.users -= 1
            done = entry.dropped and entry.users == 0
        if done:
            entry.index.close()


def _open(
    where: str, path: Path, principal: Principal | None, key: tuple[str, object], identity: Identity | None
) -> _Entry:
    index = Index(path, principal)  # raises for a missing, damaged or other-version file
    settled = identity is not None and time.time_ns() - max(identity[3], identity[4]) >= SETTLED_SECONDS * 1e9
    keep = settled and _identity(where) == identity  # the file opened is the one stat'ed
    entry = _Entry(index, identity if keep else None)
    if not keep:
        return entry
    to_close: list[_Entry] = []
    with _lock:
        old = _kept.pop(key, None)
        if old is not None and _drop(old):
            to_close.append(old)
        _kept[key] = entry
        while len(_kept) > KEPT:
            _, evicted = _kept.popitem(last=False)
            if _drop(evicted):
                to_close.append(evicted)
    for item in to_close:
        item.index.close()
    return entry


def close_kept() -> None:
    """Close every kept index (one still in use is closed when its call ends)."""
    with _lock:
        entries = list(_kept.values())
        _kept.clear()
        idle = [e for e in entries if _drop(e)]
    for entry in idle:
        entry.index.close()


def kept_count() -> int:
    """How many indexes are kept now."""
    return len(_kept)


_orphans: list[_Entry] = []


def _forget_in_child() -> None:
    global _lock
    _lock = threading.Lock()
    _orphans.extend(_kept.values())  # the parent's connections: neither used nor closed here
    _kept.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
