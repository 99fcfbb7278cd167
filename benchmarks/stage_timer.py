"""Exclusive per-stage wall time for a run of rag_lab code, without editing rag_lab.

``StageTimer.wrap(owner, name, label)`` replaces ``owner.name`` (a module global or a class
attribute) with a wrapper that charges the time spent inside it to ``label``, minus the
time of wrapped calls nested inside it (each thread has its own stack, so a function run
in a worker thread is charged to its own label and overlaps the main thread's stages).
``restore()`` puts every original back. Overhead: about a microsecond per wrapped call.
Besides wall time, each stage's CPU time of the calling thread (``time.thread_time``) is
charged the same way (``cpu``): on a shared machine it barely moves with the load.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any


class StageTimer:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self._local = threading.local()
        self._patched: list[tuple[Any, str, Any]] = []

    def reset(self) -> None:
        self.seconds, self.cpu, self.calls = {}, {}, {}

    def _stack(self) -> list[list[float]]:
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def charge(self, label: str, started: tuple[float, float]) -> None:
        """Close a timed region begun at ``started`` (what ``begin`` returned)."""
        stack = self._stack()
        elapsed = time.perf_counter() - started[0]
        used = time.thread_time() - started[1]
        nested = stack.pop()
        self.seconds[label] = self.seconds.get(label, 0.0) + elapsed - nested[0]
        self.cpu[label] = self.cpu.get(label, 0.0) + used - nested[1]
        self.calls[label] = self.calls.get(label, 0) + 1
        if stack:
            stack[-1][0] += elapsed
            stack[-1][1] += used

    def begin(self) -> tuple[float, float]:
        self._stack().append([0.0, 0.0])
        return time.perf_counter(), time.thread_time()

    def timed(self, label: str, func: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = self.begin()
            try:
                return func(*args, **kwargs)
            finally:
                self.charge(label, started)

        wrapper.__wrapped__ = func  # type: ignore[attr-defined]
        return wrapper

    def timed_iter(self, label: str, iterable: Iterator[Any]) -> Iterator[Any]:
        """Charge the time spent producing each item of ``iterable`` to ``label``."""
        it = iter(iterable)
        while True:
            started = self.begin()
            try:
                item = next(it)
            except StopIteration:
                self.charge(label, started)
                return
            self.charge(label, started)
            yield item

    def wrap(self, owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)
        self._patched.append((owner, name, original))
        setattr(owner, name, self.timed(label, original))

    def replace(self, owner: Any, name: str, value: Any) -> None:
        self._patched.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    def restore(self) -> None:
        for owner, name, original in reversed(self._patched):
            setattr(owner, name, original)
        self._patched = []


class TimedConnection:
    """An sqlite3 connection whose execute/executemany are charged by the statement's kind."""

    def __init__(self, inner: Any, timer: StageTimer, classify: Callable[[str], str]) -> None:
        self._inner, self._timer, self._classify = inner, timer, classify

    def execute(self, sql: str, *args: Any) -> Any:
        return self._timer.timed(self._classify(sql), self._inner.execute)(sql, *args)

    def executemany(self, sql: str, rows: Any) -> Any:
        return self._timer.timed(self._classify(sql), self._inner.executemany)(sql, rows)

    def executescript(self, sql: str) -> Any:
        return self._timer.timed("schema (DDL)", self._inner.executescript)(sql)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class ModuleProxy:
    """Stands in for a module inside another module's globals; selected attributes are timed."""

    def __init__(self, inner: Any, timer: StageTimer, labels: dict[str, str]) -> None:
        self._inner = inner
        for name, label in labels.items():
            setattr(self, name, timer.timed(label, getattr(inner, name)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
