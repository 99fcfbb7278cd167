"""Watching the corpus with inotify (through ``watchfiles``' Rust backend) in one daemon thread.

The watcher only *collects paths*: every event on ``documents/**/*.md``,
``images/**/*.png`` or the access sidecar ``access.json`` under ROOT is handed to ``on_paths`` as a relative POSIX path.
An event on anything else under ``documents/`` or ``images/`` that may hide corpus
files (a folder created, moved or deleted) is handed over as ``None``: "walk the
whole corpus once". Whether a path really changed is decided later, at request time,
by comparing it with the index snapshot (see :mod:`rag_lab.server.freshness`).

``RustNotify`` is constructed synchronously in :meth:`CorpusWatcher.start`, so once
``start`` returns every later change is seen; a full walk done after ``start``
therefore leaves no gap.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from watchfiles._rust_notify import RustNotify

from rag_lab.data.access import SIDECAR
from rag_lab.data.aliases import ALIAS_FILE
from rag_lab.data.corpus import KINDS

DEBOUNCE_MS = 400
STEP_MS = 20
TIMEOUT_MS = 500

OnPaths = Callable[[set[str | None]], None]


def classify(root: Path, path: str) -> str | None | bool:
    """One event path → a corpus path, ``None`` (walk everything once) or ``False`` (ignore)."""
    try:
        rel = Path(path).relative_to(root)
    except ValueError:
        return False
    parts = rel.parts
    if rel.as_posix() in (SIDECAR, ALIAS_FILE):
        return rel.as_posix()
    if not parts or parts[0] not in KINDS:
        return False
    full = root / rel
    if len(parts) == 1 or full.is_dir():
        return None
    if rel.name.endswith(KINDS[parts[0]]):
        return PurePosixPath(*parts).as_posix()
    if full.exists():
        return False
    return None  # something gone that cannot be told apart from a deleted folder


class CorpusWatcher:
    """inotify on ROOT (recursive), reporting corpus paths to ``on_paths``."""

    def __init__(self, root: str | Path, on_paths: OnPaths) -> None:
        self.root = Path(root).resolve()
        self.on_paths = on_paths
        self._stop = threading.Event()
        self._notify: RustNotify | None = None
        self._thread: threading.Thread | None = None
        self.error: str | None = None

    def start(self) -> None:
        # ROOT, not ROOT/documents and ROOT/images: a kind folder created later is seen too.
        self._notify = RustNotify([str(self.root)], False, False, 300, True, True)
        self._thread = threading.Thread(target=self._loop, name="rag-lab-watch", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _loop(self) -> None:
        assert self._notify is not None
        try:
            while not self._stop.is_set():
                events = self._notify.watch(DEBOUNCE_MS, STEP_MS, TIMEOUT_MS, self._stop)
                if isinstance(events, str):
                    if events == "stop":
                        return
                    continue
                found: set[str | None] = set()
                for _, path in events:
                    kind = classify(self.root, path)
                    if kind is not False:
                        found.add(kind)  # type: ignore[arg-type]
                if found:
                    self.on_paths(found)
        except Exception as exc:  # the watcher died: every later request must walk instead
            self.error = f"{type(exc).__name__}: {exc}"
            self.on_paths({None})

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._notify is not None:
            self._notify.close()
            self._notify = None
