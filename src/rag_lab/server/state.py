"""The server's state: the open index version, the paths the watcher saw, rebuilds.

* One :class:`Index` is opened per index *version* and shared by every request until a
  rebuild (through ``POST /api/index`` or ``rag-lab index ROOT`` from outside — the
  index file's inode is checked on every request) swaps in the next version. Requests
  that hold the old version finish on it; it is closed when the last one lets go.
* ``_events`` maps each corpus path the watcher reported to the sequence number of its
  last event. At request time only those paths are compared with the snapshot
  (:func:`changes_for_paths`); a path found unchanged (e.g. ``touch``) is forgotten, a
  changed one keeps the index stale until a rebuild. A folder event sets ``_rescan``:
  the next request walks the whole corpus once and turns what it finds into paths.
* At start-up the watcher is started first, then the whole corpus is walked once, so
  no change can fall between the two. Without a watcher (``watch=False``) every
  request walks the corpus, exactly like ``query_once``.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rag_lab import neural
from rag_lab.data.access import SIDECAR, Principal
from rag_lab.data.corpus import check_root
from rag_lab.errors import IndexError_
from rag_lab.index import Changes, build_index, check_freshness
from rag_lab.index.backend import Store, resolve_location, shown_location
from rag_lab.index.freshness import hide_invisible
from rag_lab.index.postings import PostingsBudget
from rag_lab.limits import SERVER_POSTINGS_BYTES
from rag_lab.server.cache import CachedStore, open_cached
from rag_lab.server.freshness import verdict
from rag_lab.server.problems import ApiError, ErrorType, from_library
from rag_lab.server.watch import CorpusWatcher

#: Principal-scoped views kept open per index version (least recently used closed first).
VIEWS_PER_VERSION = 32


class _View:
    """A principal's view of one version, with the requests using it right now."""

    __slots__ = ("evicted", "index", "users")

    def __init__(self, index: CachedStore) -> None:
        self.index = index
        self.users = 0
        self.evicted = False


class IndexVersion:
    """One opened index file, counted while requests use it, with its principals' views.

    ``index`` is the owner's view (no principal). A principal's view is the same file
    opened with that principal (its visible ACLs, unit count and caches differ); views
    are keyed by (name, groups) and evicted least recently used. Requests run in worker
    threads, so each view counts its users: an evicted view is closed when the last
    request using it lets go, never under a running one.
    """

    def __init__(self, index: CachedStore, number: int, inode: int, budget: PostingsBudget) -> None:
        self.index = index
        self.number = number
        self.inode = inode
        self.budget = budget  # the postings bound its views share with every other view of the server
        self.users = 0
        self.retired = False
        self._views: OrderedDict[tuple[str, frozenset[str]], _View] = OrderedDict()
        self._lock = threading.Lock()

    @contextmanager
    def using(self, principal: Principal | None) -> Iterator[CachedStore]:
        """The view of ``principal`` (the owner's for ``None``), held for the ``with`` block."""
        if principal is None:
            yield self.index
            return
        view = self._take((principal.name, principal.groups), principal)
        try:
            yield view.index
        finally:
            with self._lock:
                view.users -= 1
                close = view.evicted and view.users == 0
            if close:
                view.index.close()

    def _take(self, key: tuple[str, frozenset[str]], principal: Principal) -> _View:
        with self._lock:
            found = self._views.get(key)
            if found is not None:
                self._views.move_to_end(key)
                found.users += 1
                return found
        opened = _View(open_cached(self.index.location, principal, self.budget))
        closing: list[CachedStore] = []
        with self._lock:
            found = self._views.get(key)
            if found is not None:  # another request opened it meanwhile
                closing.append(opened.index)
                opened = found
            else:
                self._views[key] = opened
            opened.users += 1
            while len(self._views) > VIEWS_PER_VERSION:
                old = self._views.popitem(last=False)[1]
                old.evicted = True
                if old.users == 0:
                    closing.append(old.index)
        for index in closing:
            index.close()
        return opened

    def close(self) -> None:
        """Close every view (called when the version is retired and no request holds it)."""
        with self._lock:
            views, self._views = list(self._views.values()), OrderedDict()
        for view in views:
            view.evicted = True
        for index in [self.index, *(v.index for v in views)]:
            index.close()


class ServerState:
    def __init__(
        self,
        root: str | os.PathLike[str],
        index_path: str | os.PathLike[str] | None,
        watch: bool,
        postings_cache_bytes: int = SERVER_POSTINGS_BYTES,
    ) -> None:
        self.root = check_root(root)
        #: what every open view (each version's owner and principals) keeps of the postings, together
        self.postings = PostingsBudget(postings_cache_bytes)
        #: a file path or a postgresql:// URL (docs/stores.md); index_path is None for a database
        self.location = resolve_location(self.root, index_path)
        self.index_path: Path | None = self.location if isinstance(self.location, Path) else None
        self._catalogue: Any = None  # a database's connection for the current generation number
        self._catalogue_lock = threading.Lock()
        self.watch = watch
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()
        self._current: IndexVersion | None = None
        self._versions = 0
        self._seq = 0
        self._events: dict[str, int] = {}
        self._rescan: int | None = None
        self._verdicts: dict[str, tuple[int, int, str | None]] = {}
        self.watcher: CorpusWatcher | None = None

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        if self.watch:
            self.watcher = CorpusWatcher(self.root, self.on_paths)
            try:
                self.watcher.start()
            except (OSError, RuntimeError) as exc:  # e.g. the inotify watch limit
                self.watcher.error = f"cannot watch {self.root}: {exc}; every request walks the corpus"
                self.watch = False
                return
            with self._lock:
                self._seq += 1
                self._rescan = self._seq
            try:
                with self.reading() as version:
                    self.changes(version)
            except ApiError:
                pass  # no index yet: /api/ask answers 503 until one is built

    def stop(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
        with self._lock:
            current, self._current = self._current, None
        if current is not None:
            self._retire(current)
        with self._catalogue_lock:
            if self._catalogue is not None:
                self._catalogue.close()
                self._catalogue = None

    @property
    def watching(self) -> bool:
        """True while the watcher runs; otherwise every request walks the corpus."""
        return self.watch and self.watcher is not None and self.watcher.running

    def on_paths(self, found: set[str | None]) -> None:
        """Called by the watcher thread with corpus paths (``None``: walk everything)."""
        with self._lock:
            self._seq += 1
            for path in found:
                if path is None:
                    self._rescan = self._seq
                else:
                    self._events[path] = self._seq

    # -- index versions ----------------------------------------------------------------
    def _inode(self) -> int | None:
        """What identifies the current index version: the file's inode, or the database's
        current generation (None: there is no index)."""
        if self.index_path is not None:
            try:
                return os.stat(self.index_path).st_ino
            except OSError:
                return None
        return self._generation()

    def _generation(self) -> int | None:
        from rag_lab.index.pg_store import connect, current_generation

        assert isinstance(self.location, str)
        with self._catalogue_lock:
            for attempt in (1, 2):  # a dropped connection is opened again once
                try:
                    if self._catalogue is None or self._catalogue.closed:
                        self._catalogue = connect(self.location)
                    return current_generation(self._catalogue)
                except IndexError_ as exc:
                    raise from_library(exc) from None
                except Exception:  # noqa: BLE001 - psycopg's errors: reconnect, then report
                    self._catalogue = None
                    if attempt == 2:
                        raise ApiError(
                            ErrorType.INDEX_UNREADABLE,
                            f"the index database {shown_location(self.location)!r} cannot be read",
                        ) from None
        return None

    @contextmanager
    def reading(self) -> Iterator[IndexVersion]:
        """The current index version, held for the ``with`` block."""
        version = self._acquire()
        try:
            yield version
        finally:
            with self._lock:
                version.users -= 1
                close = version.retired and version.users == 0
            if close:
                version.close()

    def _acquire(self) -> IndexVersion:
        inode = self._inode()
        with self._lock:
            current = self._current
            if current is not None and current.inode == inode:
                current.users += 1
                return current
        if inode is None:
            raise ApiError(
                ErrorType.INDEX_MISSING,
                f"no index at {str(self.index_path or self.shown_index_path)!r}; build it with "
                "`rag-lab index ROOT` or POST /api/index",
            )
        self._install(self._open())
        return self._acquire()

    def _open(self) -> tuple[CachedStore, int]:
        """Open the index file; its inode is read *before* opening, so a file replaced
        in between is noticed (and reopened) by the next request, never missed."""
        inode = self._inode()
        try:
            return open_cached(str(self.location), None, self.postings), -1 if inode is None else inode
        except IndexError_ as exc:
            raise from_library(exc, self.index_path) from None

    def _install(self, opened: tuple[CachedStore, int]) -> IndexVersion:
        index, inode = opened
        with self._lock:
            self._versions += 1
            version = IndexVersion(index, self._versions, inode, self.postings)
            old, self._current = self._current, version
            self._verdicts.clear()
        if old is not None:
            self._retire(old)
        return version

    def _retire(self, version: IndexVersion) -> None:
        with self._lock:
            version.retired = True
            close = version.users == 0
        if close:
            version.close()

    def rebuild(self, principal: Principal | None = None) -> dict[str, Any]:
        """Build a new index beside the old one, swap it in; readers keep answering meanwhile.

        The summary is what ``principal`` may see (:meth:`summary_for`); the owner
        (``None``) gets the build's own summary.
        """
        if not self._build_lock.acquire(blocking=False):
            raise ApiError(
                ErrorType.REBUILD_IN_PROGRESS, "an index rebuild is already running; retry when it ends"
            )
        try:
            with self._lock:
                before = self._seq
            summary = build_index(self.root, self.location, vectors=self._keeps_vectors())
            version = self._install(self._open())
            with self._lock:
                # The build walked the corpus after `before`: earlier events are in it.
                self._events = {p: s for p, s in self._events.items() if s > before}
                if self._rescan is not None and self._rescan <= before:
                    self._rescan = None
            if principal is None:
                out = summary.as_dict()
                out["index"] = self.shown_index_path
            else:
                out = self.summary_for(version, principal)
            out["index_version"] = version.number
            return out
        finally:
            self._build_lock.release()

    def _keeps_vectors(self) -> bool:
        """Whether a rebuild embeds too: when the index in use was built with vectors (field
        matching's neural step reads them) and the ``[neural]`` extra is here to embed what is
        new; the rest is taken from the index being replaced (index/vectors.py)."""
        if not neural.available():
            return False
        try:
            with self.reading() as version:
                return bool(version.index.config.get("vectors"))
        except ApiError:  # no index yet, or one that cannot be opened: a plain first build
            return False

    def summary_for(self, version: IndexVersion, principal: Principal) -> dict[str, Any]:
        """The build summary as ``principal`` sees it: only corpus files it may read are counted
        or named (a file that failed closed is readable by nobody; the access sidecar is not a
        corpus file), and no timing, which would grow with hidden files."""
        with version.using(principal) as view:
            acl_of = {path: snap[6] for path, snap in view.snapshot().items()}
            visible = set(view.visible)
            # The access sidecar is not a corpus file: whether it exists is not the caller's business.
            mine = {path for path, acl in acl_of.items() if acl in visible and path != SIDECAR}
            problems = [p for p in view.file_problems() if p["path"] in mine]
            return {
                "index": self.shown_index_path,
                "files": len(mine),
                "units": view.unit_count,
                "errors": [
                    {"path": p["path"], "error": p["message"]} for p in problems if p["severity"] == "error"
                ],
                "warnings": sum(1 for p in problems if p["severity"] == "warning"),
            }

    @property
    def shown_index_path(self) -> str:
        """The index file as callers see it: relative to ROOT, never an absolute path."""
        if self.index_path is None:
            return shown_location(self.location)
        return shown_path(self.index_path, self.root)

    def public(self, message: str) -> str:
        """``message`` with the absolute paths of the index and of ROOT replaced."""
        for path, shown in ((self.index_path, self.shown_index_path), (self.root, "ROOT")):
            if path is None:
                continue
            for form in {str(path.resolve()), str(path.absolute())}:
                message = message.replace(form, shown)
        return message

    # -- freshness -----------------------------------------------------------------------
    def changes(self, version: IndexVersion, view: Store | None = None) -> Changes:
        """What changed since ``version``'s snapshot, paying only for reported paths.

        With a principal's ``view``, changes to files that principal may not read are
        left out, as ``check_freshness`` does for it.
        """
        if not self.watching:
            return check_freshness(self.root, view or version.index)
        changes, rehashed = self._owner_changes(version)
        if view is not None:
            hide_invisible(self.root, view, changes)
            # Count only re-hashes of files this caller may read: the count must not
            # reveal that a hidden file was touched.
            visible = set(view.visible)
            changes.rehashed = sum(
                1 for path in rehashed if (snap := view.snapshot_of(path)) is not None and snap[6] in visible
            )
        return changes

    def _owner_changes(self, version: IndexVersion) -> tuple[Changes, list[str]]:
        """Changes among the watched paths, and the paths re-hashed to decide them."""
        with self._lock:
            rescan = self._rescan
            seen = self._seq
        if rescan is not None:
            walked = check_freshness(self.root, version.index)
            with self._lock:
                for path in walked.paths():
                    self._events.setdefault(path, seen)
                if self._rescan == rescan:
                    self._rescan = None
        with self._lock:
            events = dict(self._events)
            cached = dict(self._verdicts)
        changes = Changes()
        rehashed: list[str] = []
        forget: list[tuple[str, int]] = []
        fresh: dict[str, tuple[int, int, str | None]] = {}
        for path in sorted(events):
            seq = events[path]
            hit = cached.get(path)
            if hit is not None and hit[0] == seq and hit[1] == version.number:
                kind = hit[2]
            else:
                kind, hashed = verdict(self.root, version.index, path)
                if hashed:
                    rehashed.append(path)
                fresh[path] = (seq, version.number, kind)
            if kind is None:
                forget.append((path, seq))
            else:
                getattr(changes, kind).append(path)
        with self._lock:
            if self._current is version:
                self._verdicts.update(fresh)
                for path, seq in forget:
                    if self._events.get(path) == seq:
                        del self._events[path]
                        self._verdicts.pop(path, None)
        changes.rehashed = len(rehashed)
        return changes, rehashed

    def health(self, principal: Principal | None = None) -> dict[str, Any]:
        """Index state, and staleness as ``principal`` sees it (hidden files are neither named
        nor counted; no absolute path). ``status`` is ``degraded`` when no index can be read."""
        error = self.watcher.error if self.watcher else None
        out: dict[str, Any] = {
            "status": "ok",
            "index_file": self.shown_index_path,
            "watching": self.watching,
            "watcher_error": None if error is None else self.public(error),
        }
        try:
            with self.reading() as version, version.using(principal) as view:
                changes = self.changes(version, view if principal is not None else None)
                out.update(
                    index="ready",
                    index_version=version.number,
                    units=view.unit_count,
                    stale=changes.stale,
                    changed=changes.as_dict(),
                )
        except ApiError as exc:
            out.update(status="degraded", index=str(exc.kind), message=self.public(exc.message), stale=None)
        return out


def shown_path(path: Path, root: Path) -> str:
    """``ROOT/…`` for a path inside ROOT, else only the file's name."""
    try:
        return "ROOT/" + path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.name
