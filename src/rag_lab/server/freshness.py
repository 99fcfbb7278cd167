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

from rag_lab.index import Changes, Index
from rag_lab.index.freshness import file_changed


def verdict(root: Path, index: Index, path: str) -> tuple[str | None, bool]:
    """(``"added"``/``"deleted"``/``"modified"``/``None``, whether the file was re-hashed)."""
    snap = index.snapshot_of(path)
    full = root / path
    try:
        st = full.stat()
        on_disk = not full.is_dir()
    except OSError:
        st, on_disk = None, False
    if full.is_symlink():
        try:
            inside = full.resolve().is_relative_to(root.resolve()) and full.resolve().is_file()
        except OSError:
            inside = False
        if not inside:
            # The walk reports such a file as an error file; unchanged if indexed as one.
            return (
                None if snap is not None and snap[5] is not None else "added" if snap is None else "modified"
            ), False
    if snap is None:
        return ("added" if on_disk else None), False
    if not on_disk or st is None:
        return "deleted", False
    if (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino) == tuple(snap[:4]):
        return None, False
    return ("modified" if file_changed(root, path, snap) else None), True


def changes_for_paths(root: str | os.PathLike[str], index: Index, paths: Iterable[str]) -> Changes:
    """The :class:`Changes` among ``paths`` only (sorted lists, like ``check_freshness``)."""
    base = Path(root)
    changes = Changes()
    for path in sorted(set(paths)):
        kind, rehashed = verdict(base, index, path)
        changes.rehashed += int(rehashed)
        if kind is not None:
            getattr(changes, kind).append(path)
    return changes
