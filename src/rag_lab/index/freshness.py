"""Has the corpus changed since the index snapshot?

Policy (like git's index): walk the corpus and compare each file's stat fingerprint
(size, mtime_ns, ctime_ns, inode) with the snapshot. Equal fingerprints mean
unchanged. Any difference — including a same-size edit whose mtime was restored,
which still moves ctime — makes us re-hash the file; it is *modified* only if the
SHA-256 differs (a bare ``touch`` is not a change). Files in the snapshot but not on
disk are *deleted*; files on disk but not in the snapshot are *added*.

The fast path: the build stores the SHA-256 of its own walk (every path in walk order and its
fingerprint as read, ``meta.walk_digest``). A question's walk computes the same digest; when it
is equal, every file has the fingerprint of the snapshot, so nothing changed, and no
fingerprint is loaded or compared one by one. Any difference (or a symlink, a file that
cannot be stat'ed, a directory listed in another order) takes the comparison above.
"""

from __future__ import annotations

import hashlib
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

from rag_lab.data import read_record
from rag_lab.data.access import NOBODY, SIDECAR, AccessRules
from rag_lab.data.aliases import ALIAS_FILE
from rag_lab.data.corpus import KINDS, CorpusFile, Fingerprint, sha256_of_file, walk, walk_one, walk_stats
from rag_lab.index.backend import Store


@dataclass
class Changes:
    added: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    rehashed: int = 0

    @property
    def stale(self) -> bool:
        return bool(self.added or self.deleted or self.modified)

    def paths(self) -> list[str]:
        return sorted(self.added + self.deleted + self.modified)

    def as_dict(self) -> dict[str, object]:
        return {"added": self.added, "deleted": self.deleted, "modified": self.modified}


def file_changed(root: Path, path: str, snap: tuple[object, ...]) -> bool:
    """Re-hash one file and compare with its snapshot row (used for cited files too)."""
    try:
        digest = sha256_of_file(root / path)  # in chunks: a huge file costs no memory
    except OSError:
        return snap[4] is not None
    return digest != snap[4]


def check_freshness(root: str | os.PathLike[str], index: Store) -> Changes:
    """Compare the corpus on disk with the index snapshot (see module docstring).

    With a principal, only changes to files that principal may read (before or after
    the change) are reported: a hidden file's edits are neither named nor counted.
    One pass over the walk compares plain stat tuples; only a file whose fingerprint
    differs has its full snapshot row read and its bytes re-hashed.
    """
    base = Path(root)
    # an index without a walk digest (another store, or a corpus changed while it was read)
    # takes the comparison below
    expected = getattr(index, "walk_digest", lambda: "")()
    if expected:
        walked = fast_walk(base)
        if walked is not None and digest_of(*walked) == expected:
            return Changes()
    fingerprints = index.fingerprints()
    changes = Changes()
    on_disk = walk_stats(base, sort=False)
    for path, _kind, stat, error in on_disk:
        known = fingerprints.get(path, False)
        if known is False:
            changes.added.append(path)
        elif stat is None or stat != known:
            snap = index.snapshot_of(path)
            assert snap is not None
            if stat is None:
                if error != snap[5]:
                    changes.modified.append(path)
                continue
            if index.principal is None or snap[6] in index.visible:
                changes.rehashed += 1  # a hidden file's re-hash is not the caller's business
            if file_changed(base, path, snap):
                changes.modified.append(path)
    changes.added.sort()
    changes.modified.sort()
    if len(on_disk) - len(changes.added) != len(fingerprints):  # some indexed path is gone
        changes.deleted = sorted(set(fingerprints) - {item[0] for item in on_disk})
    hide_invisible(base, index, changes)
    return changes


def hide_invisible(base: Path, index: Store, changes: Changes) -> None:
    """Drop the changes ``index``'s principal may not see (before or after the change)."""
    if index.principal is None or not changes.stale:
        return
    rules = AccessRules.load(base)
    visible = set(index.visible)

    def current_acl(path: str) -> str:
        item = next((i for i in walk_one(base, path)), None)
        return NOBODY if item is None else read_record(base, item, rules).acl

    def seen_by_caller(path: str) -> bool:
        if path == SIDECAR:
            return True
        old = index.snapshot_of(path)
        return (old is not None and old[6] in visible) or (
            path not in changes.deleted and current_acl(path) in visible
        )

    changes.added = [p for p in changes.added if seen_by_caller(p)]
    changes.modified = [p for p in changes.modified if seen_by_caller(p)]
    changes.deleted = [p for p in changes.deleted if seen_by_caller(p)]


FINGERPRINT = struct.Struct("<QqqQ")  # inodes may use all 64 bits; times may be negative
"""A file's (size, mtime_ns, ctime_ns, inode) in the walk digest."""


_BY_FD = os.scandir in os.supports_fd and hasattr(os, "O_DIRECTORY")


def fast_walk(base: Path) -> tuple[list[str], bytes] | None:
    """Every corpus path (the files ``walk_stats`` finds, in its unsorted order) and their
    (size, mtime_ns, ctime_ns, inode) packed as 64-bit little-endian integers (``FINGERPRINT``); None at
    the first symlink or file that cannot be stat'ed (the careful path handles those).

    Each folder is listed through a descriptor where the platform allows it, so a file's stat
    resolves its name in that folder only, not its whole path again; a regular file is told
    by one check; each fingerprint is packed as it is stat'ed. (The Python per file is most of
    what this walk adds to the bare stat walk, the request's floor: benchmarks/README.md.)"""
    paths: list[str] = []
    found: list[bytes] = []  # packed at once: 1M stat_result objects held until the end were ≈ 0.3 GB
    add_path, add_stat, pack = paths.append, found.append, FINGERPRINT.pack

    for top, suffix in KINDS.items():
        stack = [(os.path.join(base, top), top + "/")]
        while stack:
            folder, prefix = stack.pop()
            try:
                fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY) if _BY_FD else -1
                listing = os.scandir(fd if fd >= 0 else folder)
            except (FileNotFoundError, NotADirectoryError):
                continue
            try:
                with listing:
                    for entry in listing:
                        if entry.is_file(follow_symlinks=False):  # a regular file: the common case
                            name = entry.name
                            if name.endswith(suffix):
                                st = entry.stat()
                                add_stat(pack(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
                                add_path(prefix + name)
                        elif entry.is_dir(follow_symlinks=False):
                            stack.append((os.path.join(folder, entry.name), prefix + entry.name + "/"))
                        elif entry.is_symlink():
                            return None
                        elif entry.name.endswith(suffix):  # neither file, folder nor link: as walk_stats
                            st = entry.stat()
                            add_stat(pack(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
                            add_path(prefix + entry.name)
            except OSError:
                return None
            finally:
                if fd >= 0:
                    os.close(fd)
    stats = bytearray(b"".join(found))
    del found
    for name in (SIDECAR, ALIAS_FILE):
        try:
            st = os.stat(os.path.join(base, name), follow_symlinks=False)
        except FileNotFoundError:
            continue
        except OSError:
            return None
        if not os.path.isfile(os.path.join(base, name)) or os.path.islink(os.path.join(base, name)):
            return None
        paths.append(name)
        stats += pack(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    return paths, bytes(stats)



def build_walk(base: Path) -> tuple[list[CorpusFile], str]:
    """The build's one walk: every corpus file in sorted path order, exactly as
    ``data.corpus.walk`` lists them, and the walk digest of that same walk ("" when ``fast_walk``
    cannot describe the corpus: a symlink, a file that cannot be stat'ed — ``walk`` lists those).

    Storing the digest of the walk whose stats are the snapshot's fingerprints is what the fast
    freshness check needs: a later walk with an equal digest lists the same paths with the same
    fingerprints, which is exactly when the full comparison finds nothing to re-hash. A file
    changed after this walk (while the build read it, or later) has another fingerprint from
    then on (ctime moves with every change), so no later walk matches this digest and the
    check takes the full comparison, as for any change. (Builds before this walked a second
    time after reading to store "" in that case; the answers are the same either way.)"""
    try:
        walked = fast_walk(base)
    except OSError:  # a folder that cannot be listed: walk() reports it as it always did
        walked = None
    if walked is None:
        return list(walk(base)), ""
    paths, stats = walked
    items = [
        CorpusFile(path, _kind_of(path), Fingerprint(*fingerprint))
        for path, fingerprint in zip(paths, FINGERPRINT.iter_unpack(stats), strict=True)
    ]
    items.sort(key=lambda item: item.path)
    return items, digest_of(paths, stats)


def _kind_of(path: str) -> str:
    if path.startswith("documents/"):
        return "document"
    if path.startswith("images/"):
        return "image"
    return "aliases" if path == ALIAS_FILE else "access"


def digest_of(paths: list[str], stats: bytes) -> str:
    """SHA-256 over the paths in order and their fingerprints (``fast_walk``'s result)."""
    digest = hashlib.sha256("\0".join(paths).encode("utf-8", "surrogateescape"))
    digest.update(b"\1" + len(paths).to_bytes(8, "little"))
    digest.update(stats)
    return digest.hexdigest()
