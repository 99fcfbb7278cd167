"""A small pool of idle connections per PostgreSQL index location, per process.

Opening a connection costs a TCP handshake, authentication and a new server process; a
request then needs a handful of short statements. So :class:`rag_lab.index.pg_store.PgStore`
borrows a connection from here and gives it back when it is closed:

* at most :data:`POOL_SIZE` idle connections to one location are kept per process; a request
  that finds none idle opens its own, and one given back to a full pool is closed. There is
  no wait and no limit on connections in use: a request holds its connection from start to
  end (its generation stays pinned through the freshness walk, which takes tens of seconds
  on 1M files), so a bound on them made the 17th of 16+ concurrent requests wait for whole
  requests and time out (measured at 1M documents, 16 clients). The server's
  ``max_connections`` stays the limit, as it was before the pool;
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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

POOL_SIZE = 8
"""Idle connections to one location kept per process for the next requests."""


class Pool:
    """Connections to one ``location`` (see module docstring). Thread-safe."""

    def __init__(self, location: str, size: int) -> None:
        if size < 1:
            raise ValueError(f"a connection pool needs a size of at least 1, got {size}")
        self.location = location
        self.size = size
        self._idle: list[psycopg.Connection[Any]] = []
        self._lock = threading.Lock()

    def borrow(self) -> tuple[psycopg.Connection[Any], bool]:
        """A connection (kept from before when one is idle, else new) and whether it was kept."""
        from rag_lab.index.pg_store import connect

        while True:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                return connect(self.location), False
            if not conn.closed and not conn.broken:
                return conn, True
            conn.close()

    def give_back(self, conn: psycopg.Connection[Any]) -> None:
        """Keep ``conn`` for the next request if it is clean (its locks released) and the pool
        has room, else close it."""
        keep = False
        if not conn.closed and not conn.broken:
            from psycopg.pq import TransactionStatus

            with self._lock:
                room = len(self._idle) < self.size
            try:
                if room:
                    conn.execute("SELECT pg_advisory_unlock_all()")
                    keep = conn.info.transaction_status == TransactionStatus.IDLE
            except Exception:  # noqa: BLE001 - any failure: the connection is not reused
                keep = False
        if keep:
            with self._lock:
                keep = len(self._idle) < self.size
                if keep:
                    self._idle.append(conn)
        if not keep:
            conn.close()  # ends the session: its generation lock goes with it

    def discard(self, conn: psycopg.Connection[Any]) -> None:
        """Close a borrowed connection that must not be reused (it failed, or its owner was lost)."""
        conn.close()

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


__all__ = ["POOL_SIZE", "Pool", "close_pools", "pool_for"]
