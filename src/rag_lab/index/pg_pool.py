"""A small bounded pool of connections per PostgreSQL index location, per process.

Opening a connection costs a TCP handshake, authentication and a new server process; a
request then needs a handful of short statements. So :class:`rag_lab.index.pg_store.PgStore`
borrows a connection from here and gives it back when it is closed:

* at most :data:`POOL_SIZE` connections to one location are out at once in one process; a
  request that finds them all busy waits up to :data:`POOL_WAIT_S` seconds, then gets a typed
  error (nothing is opened beyond the bound, so N server processes never become N×threads);
* a connection comes back only clean: its generation lock released
  (``pg_advisory_unlock_all()``, so an idle connection never keeps a generation alive), not
  inside a transaction, not broken. Anything else is closed, not kept;
* a kept connection that the server has closed meanwhile (restart, ``pg_terminate_backend``,
  a dropped database) fails on its first statement; the store then discards it and borrows
  again (:meth:`Pool.borrow` says whether the connection was kept from before);
* pools are per process: after ``fork`` the child starts with none and never uses or closes
  the parent's connections (psycopg does not close a connection collected in another process).

This module is the one process-wide cache of the PostgreSQL store; :func:`close_pools` empties
it (tests, a server shutting down). psycopg's own ``psycopg_pool`` package does the same and
more (background refill, health checks, resizing); docs/dependencies.md says why this is enough.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from typing import TYPE_CHECKING, Any

from rag_lab.errors import IndexError_
from rag_lab.index.backend import shown_location

if TYPE_CHECKING:
    import psycopg

POOL_SIZE = 8
"""Connections to one location open at once in one process (busy or idle)."""
POOL_WAIT_S = 30.0
"""How long a request waits for a connection when all :data:`POOL_SIZE` are busy."""


class Pool:
    """Connections to one ``location`` (see module docstring). Thread-safe."""

    def __init__(self, location: str, size: int) -> None:
        if size < 1:
            raise ValueError(f"a connection pool needs a size of at least 1, got {size}")
        self.location = location
        self.size = size
        self._idle: list[psycopg.Connection[Any]] = []
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()

    def borrow(self, *, timeout_s: float | None = None) -> tuple[psycopg.Connection[Any], bool]:
        """A connection (kept from before when one is idle, else new) and whether it was kept."""
        from rag_lab.index.pg_store import connect

        wait = POOL_WAIT_S if timeout_s is None else timeout_s
        started = time.monotonic()
        if not self._slots.acquire(timeout=wait):
            raise IndexError_(
                f"all {self.size} connections to the index database {shown_location(self.location)!r} "
                f"stayed busy for {time.monotonic() - started:.0f} s; retry, or lower the number of "
                "concurrent requests (rag_lab.index.pg_pool.POOL_SIZE bounds them per process)"
            )
        try:
            while True:
                with self._lock:
                    conn = self._idle.pop() if self._idle else None
                if conn is None:
                    return connect(self.location), False
                if not conn.closed and not conn.broken:
                    return conn, True
                conn.close()
        except BaseException:
            self._slots.release()
            raise

    def give_back(self, conn: psycopg.Connection[Any]) -> None:
        """Keep ``conn`` for the next request if it is clean (its locks released), else close it."""
        try:
            keep = False
            if not conn.closed and not conn.broken:
                from psycopg.pq import TransactionStatus

                try:
                    conn.execute("SELECT pg_advisory_unlock_all()")
                    keep = conn.info.transaction_status == TransactionStatus.IDLE
                except Exception:  # noqa: BLE001 - any failure: the connection is not reused
                    keep = False
            if keep:
                with self._lock:
                    self._idle.append(conn)
            else:
                conn.close()
        finally:
            self._slots.release()

    def discard(self, conn: psycopg.Connection[Any]) -> None:
        """Close a borrowed connection that must not be reused (it failed, or its owner was lost)."""
        try:
            conn.close()
        finally:
            self._slots.release()

    def idle(self) -> int:
        with self._lock:
            return len(self._idle)

    def close(self) -> None:
        """Close the idle connections (borrowed ones close when given back)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


_pools: dict[tuple[int, str], Pool] = {}
_inherited: list[Pool] = []  # a parent's pools after fork: never used, never closed, never collected
_pools_lock = threading.Lock()
_at_exit: list[object] = []  # close_pools, once registered (a forked child inherits it)


def pool_for(location: str) -> Pool:
    """This process's pool for ``location`` (created on first use with :data:`POOL_SIZE`)."""
    key = (os.getpid(), location)
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            for other in [k for k in _pools if k[0] != key[0]]:  # inherited through fork
                _inherited.append(_pools.pop(other))
            if not _at_exit:  # idle connections end cleanly at exit, without a ResourceWarning
                _at_exit.append(atexit.register(close_pools))
            pool = _pools[key] = Pool(location, POOL_SIZE)
        return pool


def close_pools() -> None:
    """Close every idle connection of this process and forget the pools."""
    with _pools_lock:
        mine = [p for k, p in _pools.items() if k[0] == os.getpid()]
        _pools.clear()
    for pool in mine:
        pool.close()


__all__ = ["POOL_SIZE", "POOL_WAIT_S", "Pool", "close_pools", "pool_for"]
