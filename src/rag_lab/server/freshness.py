"""Freshness for a known set of paths: what ``check_freshness`` decides, without the walk.

The watcher says *which* paths may have changed; this module decides, for those paths
only, whether each is added, deleted or modified with the same policy as
:func:`rag_lab.index.check_freshness`: an equal stat fingerprint means unchanged, any
difference means re-hash, and only a different SHA-256 is a modification (a bare
``touch`` is not a change).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from rag_lab.data.corpus import walk_one
from rag_lab.index import Changes
from rag_lab.index.backend import Store
from rag_lab.index.freshness import file_changed


def verdict(root: Path, index: Store, path: str) -> tuple[str | None, bool]:
    """(``"added"``/``"deleted"``/``"modified"``/``None``, whether the file was re-hashed)."""
    snap = index.snapshot_of(path)
    item = next(iter(walk_one(root, path)), None)
    if item is None:
        return ("deleted" if snap is not None else None), False
    if snap is None:
        return "added", False
    fp = item.fingerprint
    if fp is None:
        return ("modified" if item.error != snap[5] else None), False
    if (fp.size, fp.mtime_ns, fp.ctime_ns, fp.inode) == tuple(snap[:4]):
        return None, False
    return ("modified" if file_changed(root, path, snap) else None), True


def changes_for_paths(root: str | os.PathLike[str], index: Store, paths: Iterable[str]) -> Changes:
    """The :class:`Changes` among ``paths`` only (sorted lists, like ``check_freshness``)."""
    base = Path(root)
    changes = Changes()
    for path in sorted(set(paths)):
        kind, rehashed = verdict(base, index, path)
        changes.rehashed += int(rehashed)
        if kind is not None:
            getattr(changes, kind).append(path)
    return changes
