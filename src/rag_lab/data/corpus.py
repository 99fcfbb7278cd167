"""Walking a corpus root: which files belong to it, their bytes, hashes and stat fingerprints.

Corpus files are ``ROOT/documents/**/*.md`` (and ``*.txt``, prose) and ``ROOT/images/**/*.png``; paths are
relative POSIX strings, sorted. Directory symlinks are not followed; a file symlink
is part of the corpus only while it resolves inside ROOT (otherwise the walk reports
it as an error file). The index folder ``ROOT/.rag_lab`` is never part of the corpus.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rag_lab.data.access import SIDECAR
from rag_lab.data.aliases import ALIAS_FILE
from rag_lab.errors import CorpusError

KINDS: dict[str, str | tuple[str, ...]] = {"documents": (".md", ".txt"), "images": ".png"}


@dataclass(frozen=True)
class Fingerprint:
    """What ``stat`` says of a file; any difference means "re-hash to be sure"."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int

    @classmethod
    def of(cls, st: os.stat_result) -> Fingerprint:
        return cls(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


@dataclass(frozen=True)
class CorpusFile:
    path: str  # relative POSIX path
    kind: str  # "document" or "image"
    fingerprint: Fingerprint | None  # None when the file cannot be stat'ed
    error: str | None = None  # e.g. a symlink escaping ROOT


def check_root(root: str | os.PathLike[str]) -> Path:
    path = Path(root)
    if not path.is_dir():
        raise CorpusError(
            f"corpus root {str(path)!r} is not a folder; pass the folder holding documents/ and images/"
        )
    return path


def check_corpus_root(root: str | os.PathLike[str]) -> Path:
    """``check_root``, and ROOT must hold ``documents/`` or ``images/`` (else nothing is indexed).

    When ROOT itself is ``…/documents`` or ``…/images``, or its parent holds one of them, the
    message suggests the parent.
    """
    path = check_root(root)
    if any((path / top).is_dir() for top in KINDS):
        return path
    parent = path.resolve().parent
    hint = ""
    if any((parent / top).is_dir() for top in KINDS):
        hint = f" (did you mean its parent {str(parent)!r}, which holds {_holds(parent)}?)"
    raise CorpusError(
        f"corpus root {str(path)!r} holds neither documents/ nor images/{hint}; "
        "pass the folder that holds documents/**/*.md and images/**/*.png"
    )


def _holds(folder: Path) -> str:
    return " and ".join(f"{top}/" for top in KINDS if (folder / top).is_dir())


def _is_inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


Stat = tuple[int, int, int, int]  # (size, mtime_ns, ctime_ns, inode): a Fingerprint as a plain tuple


def walk(root: str | os.PathLike[str]) -> Iterator[CorpusFile]:
    """Every corpus file in sorted path order (see module docstring)."""
    for rel, kind, stat, error in walk_stats(root, sort=True):
        yield CorpusFile(rel, kind, None if stat is None else Fingerprint(*stat), error)


def walk_stats(root: str | os.PathLike[str], *, sort: bool) -> list[tuple[str, str, Stat | None, str | None]]:
    """``(path, kind, stat tuple or None, error or None)`` for every corpus file.

    The fast form of ``walk`` for the per-question freshness check: one pass, relative
    paths built as strings while descending (no pathlib per file), plain tuples, and
    nothing sorted unless asked. Symlinks take the slow, careful path.
    """
    base = check_root(root)
    found: list[tuple[str, str, Stat | None, str | None]] = []
    links: list[tuple[str, str, os.DirEntry[str]]] = []
    for top, suffix in KINDS.items():
        kind = "document" if top == "documents" else "image"
        stack = [(os.path.join(base, top), top + "/")]
        while stack:
            folder, prefix = stack.pop()
            try:
                with os.scandir(folder) as listing:
                    entries = list(listing)
            except (FileNotFoundError, NotADirectoryError):
                continue
            for entry in entries:
                name = entry.name
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, prefix + name + "/"))
                elif entry.is_symlink():
                    if name.endswith(suffix) or entry.is_dir(follow_symlinks=True):
                        links.append((prefix + name, kind, entry))  # a directory symlink: an error
                elif name.endswith(suffix):
                    found.append(_stat_entry(prefix + name, kind, entry))
    with os.scandir(base) as listing:
        for entry in listing:
            if entry.name == SIDECAR and entry.is_file(follow_symlinks=False):
                found.append(_stat_entry(SIDECAR, "access", entry))
            elif entry.name == ALIAS_FILE and entry.is_file(follow_symlinks=False):
                found.append(_stat_entry(ALIAS_FILE, "aliases", entry))
    if links:
        real_root = base.resolve()
        for rel, kind, entry in links:
            error = _symlink_problem(Path(entry.path), real_root)
            found.append((rel, kind, None, error) if error else _stat_entry(rel, kind, entry))
    if sort:
        found.sort(key=lambda item: item[0])
    return found


def _stat_entry(rel: str, kind: str, entry: os.DirEntry[str]) -> tuple[str, str, Stat | None, str | None]:
    try:
        st = entry.stat(follow_symlinks=True)
    except OSError as exc:
        return rel, kind, None, f"cannot stat: {exc.strerror}"
    return rel, kind, (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino), None


def _symlink_problem(path: Path, real_root: Path) -> str | None:
    if path.is_dir():
        return "directory symlink is not followed; its files are not indexed"
    target = path.resolve()
    if not _is_inside(target, real_root) or not target.is_file():
        return "symlink points outside ROOT or to no file; not indexed"
    return None


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_of_file(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    """SHA-256 of a file's bytes, read a chunk at a time (memory does not grow with the file)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def walk_one(root: Path, path: str) -> Iterator[CorpusFile]:
    """The corpus entry for one relative path, if that file (still) exists."""
    full = root / path
    kind = (
        "document"
        if path.startswith("documents/")
        else "image"
        if path.startswith("images/")
        else "aliases"
        if path == ALIAS_FILE
        else "access"
    )
    try:
        if full.is_symlink():
            target = full.resolve()
            if not _is_inside(target, root.resolve()) or not target.is_file():
                yield CorpusFile(path, kind, None, "symlink points outside ROOT or to no file; not indexed")
                return
        yield CorpusFile(path, kind, Fingerprint.of(full.stat()))
    except OSError:
        return
