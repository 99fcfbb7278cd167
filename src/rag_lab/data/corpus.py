"""Walking a corpus root: which files belong to it, their bytes, hashes and stat fingerprints.

Corpus files are ``ROOT/documents/**/*.md`` and ``ROOT/images/**/*.png``; paths are
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
from rag_lab.errors import CorpusError

KINDS = {"documents": ".md", "images": ".png"}


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


def _is_inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def walk(root: str | os.PathLike[str]) -> Iterator[CorpusFile]:
    """Every corpus file in sorted path order (see module docstring)."""
    base = check_root(root)
    real_root = base.resolve()
    found: list[tuple[str, str, os.DirEntry[str]]] = []
    for top, suffix in KINDS.items():
        kind = "document" if top == "documents" else "image"
        stack = [base / top]
        while stack:
            folder = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except (FileNotFoundError, NotADirectoryError):
                continue
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif entry.is_symlink() and entry.is_dir(follow_symlinks=True):
                    rel = Path(entry.path).relative_to(base).as_posix()
                    found.append((rel, kind, entry))  # reported below as an error file
                elif entry.name.endswith(suffix):
                    rel = Path(entry.path).relative_to(base).as_posix()
                    found.append((rel, kind, entry))
    for entry in os.scandir(base):
        if entry.name == SIDECAR and entry.is_file(follow_symlinks=False):
            found.append((SIDECAR, "access", entry))
    found.sort(key=lambda item: item[0])
    for rel, kind, entry in found:
        if entry.is_symlink() and entry.is_dir(follow_symlinks=True):
            yield CorpusFile(rel, kind, None, "directory symlink is not followed; its files are not indexed")
            continue
        if entry.is_symlink():
            target = Path(entry.path).resolve()
            if not _is_inside(target, real_root) or not target.is_file():
                yield CorpusFile(rel, kind, None, "symlink points outside ROOT or to no file; not indexed")
                continue
        try:
            yield CorpusFile(rel, kind, Fingerprint.of(entry.stat(follow_symlinks=True)))
        except OSError as exc:
            yield CorpusFile(rel, kind, None, f"cannot stat: {exc.strerror}")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def walk_one(root: Path, path: str) -> Iterator[CorpusFile]:
    """The corpus entry for one relative path, if that file (still) exists."""
    full = root / path
    kind = (
        "document" if path.startswith("documents/") else "image" if path.startswith("images/") else "access"
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
