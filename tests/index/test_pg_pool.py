"""The PostgreSQL store's connection pool (index/pg_pool.py): connections are reused, come back
clean (no generation lock, the next request pins the generation current then), are replaced
when the server dropped them, and at most POOL_SIZE idle ones are kept per process."""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rag_lab.errors import IndexError_
from rag_lab.index import build_index, pg_pool
from rag_lab.index.backend import open_store
from rag_lab.retrieval import query_once

psycopg = pytest.importorskip("psycopg", reason="the PostgreSQL store tests need psycopg: pip install '.[test]'")

from rag_lab.index.pg_store import PgStore  # noqa: E402

QUESTION = "借阅台 开放时间"


@pytest.fixture(autouse=True)
def fresh_pools() -> Iterator[None]:
    pg_pool.close_pools()
    yield
    pg_pool.close_pools()


def backend_pid(store: Any) -> int:
    return int(store._query("SELECT pg_backend_pid()")[0][0])


def advisory_locks(url: str, pid: int) -> list[tuple[int, int]]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT classid::int8, objid::int8 FROM pg_locks WHERE locktype = 'advisory' AND pid = %s", (pid,)
        ).fetchall()
    return [(int(a), int(b)) for a, b in rows]


def test_a_connection_is_reused_and_comes_back_without_its_lock(
    demo_root: Path, pg_database: Callable[[], str]
) -> None:
    url = pg_database()
    build_index(demo_root, url)
    with open_store(url) as store:
        first = backend_pid(store)
        assert advisory_locks(url, first) != []  # the generation is pinned while the store is open
    assert advisory_locks(url, first) == []  # idle in the pool: it pins nothing
    assert pg_pool.pool_for(url).idle() == 1
    assert query_once(QUESTION, demo_root, index_path=url)["answer"] == "周二至周五十四点到十七点。"
    with open_store(url) as store:
        assert backend_pid(store) == first  # the same server process: no new connection
    assert pg_pool.pool_for(url).idle() == 1


def test_a_reused_connection_pins_the_generation_current_now(
    make_corpus: Callable[..., Path], pg_database: Callable[[], str]
) -> None:
    root = make_corpus({"documents/a.md": "主题：甲\n地点：一楼\n"})
    url = pg_database()
    build_index(root, url)
    reader = PgStore(url)  # in flight across the rebuild: keeps its generation
    with open_store(url) as idle_later:
        kept_pid = backend_pid(idle_later)
    (root / "documents" / "a.md").write_text("主题：甲\n地点：二楼\n", encoding="utf-8")
    build_index(root, url)
    try:
        assert [u["value"] for u in reader.units_for_key("甲", "地点")] == ["一楼"]
        with open_store(url) as store:  # the kept connection, pinned afresh
            assert backend_pid(store) == kept_pid
            assert store.generation == reader.generation + 1
            assert [u["value"] for u in store.units_for_key("甲", "地点")] == ["二楼"]
        assert [u["value"] for u in reader.units_for_key("甲", "地点")] == ["一楼"]  # still its own
    finally:
        reader.close()
    with pytest.raises(IndexError_, match="was read after it was closed"):
        reader.units_for_key("甲", "地点")


def test_a_connection_the_server_closed_is_replaced(demo_root: Path, pg_database: Callable[[], str]) -> None:
    url = pg_database()
    build_index(demo_root, url)
    with open_store(url) as store:
        gone = backend_pid(store)
    with psycopg.connect(url, autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", (gone,)).fetchone() == (True,)
    with open_store(url) as store:  # the kept one fails on its first statement: a new one instead
        assert backend_pid(store) != gone
        assert store.unit_count > 0


def test_idle_connections_are_bounded_and_busy_ones_never_wait(
    demo_root: Path, pg_database: Callable[[], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """More concurrent stores than the pool keeps each get a connection at once (a request
    holds its connection through the freshness walk: waiting for one would wait for whole
    requests); given back, only POOL_SIZE stay open."""
    url = pg_database()
    build_index(demo_root, url)
    monkeypatch.setattr(pg_pool, "POOL_SIZE", 2)
    stores = [open_store(url) for _ in range(3)]
    pids = {backend_pid(s) for s in stores}
    assert len(pids) == 3
    for store in stores:
        store.close()
    assert pg_pool.pool_for(url).idle() == 2
    with psycopg.connect(url, autocommit=True) as admin:
        alive = {int(r[0]) for r in admin.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")}
    assert len(pids & alive) == 2  # the third was closed, not kept
    leaked = open_store(url)
    leaked_pid = backend_pid(leaked)
    del leaked  # never closed: its connection is closed when it is collected, not kept or leaked
    gc.collect()
    assert pg_pool.pool_for(url).idle() == 1  # not given back: closed
    with psycopg.connect(url, autocommit=True) as admin:
        for _ in range(100):  # the server notices the closed socket at once; allow it a moment
            row = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (leaked_pid,)).fetchone()
            if row == (0,):
                break
            time.sleep(0.05)
    assert row == (0,) and advisory_locks(url, leaked_pid) == []


def test_a_forked_child_opens_its_own_connections(demo_root: Path, pg_database: Callable[[], str]) -> None:
    url = pg_database()
    build_index(demo_root, url)
    with open_store(url) as store:
        parent_pid = backend_pid(store)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: never return into pytest
        code = 1
        try:
            os.close(read)
            with open_store(url) as store:
                os.write(write, str(backend_pid(store)).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        child_backend = int(pipe.read() or b"0")
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert child_backend not in (0, parent_pid)
    with open_store(url) as store:  # the parent's kept connection still works
        assert backend_pid(store) == parent_pid
