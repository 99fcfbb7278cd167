"""The PostgreSQL store's generations under crashes and concurrent readers (issue 17).

* **kill -9 of a build**: a forked ``rag-lab index ROOT --store URL`` (and the real console
  script) is killed at seeded random moments spread over a measured build. After every kill
  the index opens and is completely version A or completely version B (every (subject,
  field, value) triple and every snapshot hash), no generation schema exists that the
  catalogue does not list (the killed transaction left nothing), and the next build works.
* **readers during rebuilds**: four threads call ``query_once`` while the main thread
  rebuilds, alternating the reserved fields (as tests/reliability/test_rel_readers.py does
  for SQLite); every result is decided on one generation, and when the current generation
  did not change during the call, on that one.
* **a pinned generation stays**: a store opened before two rebuilds still reads its own
  generation, whole; the first build after it closes drops it.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_rel_crash import (
    Triple,
    corpus_version,
    expected_content,
    rag_lab_command,
    switch_corpus,
    wait_child,
)
from test_rel_readers import QUESTIONS, RESERVED_R, Observation, ReaderRun, check_run, write_corpus

from rag_lab.index import build_index
from rag_lab.retrieval import query_once

psycopg = pytest.importorskip("psycopg", reason="the PostgreSQL store tests need psycopg: pip install '.[test]'")

from rag_lab.index.pg_schema import CATALOGUE, GENERATION_PREFIX  # noqa: E402
from rag_lab.index.pg_store import PgStore  # noqa: E402


def catalogue(url: str) -> tuple[int | None, list[int], list[str]]:
    """(current generation, listed generations, generation schemas that exist)."""
    with psycopg.connect(url, autocommit=True) as conn:
        current = conn.execute(f"SELECT generation FROM {CATALOGUE}.current").fetchone()
        listed = [r[0] for r in conn.execute(f"SELECT id FROM {CATALOGUE}.generations ORDER BY id")]
        schemas = [
            r[0]
            for r in conn.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname LIKE %s ORDER BY nspname", (GENERATION_PREFIX + "%",)
            )
        ]
    return (None if current is None else int(current[0])), listed, schemas


def read_content(url: str) -> tuple[frozenset[Triple], dict[str, str], int]:
    with PgStore(url) as store:
        snapshot = {p: row[4] for p, row in store.snapshot().items()}
        rows = store._query("SELECT subject, field, value FROM units")
        return frozenset((s, f, v) for s, f, v in rows), snapshot, store.unit_count


def start_fork(root: Path, url: str) -> int:
    pid = os.fork()
    if pid == 0:  # child: run the CLI verb, never return into pytest
        code = 1
        try:
            sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the child never returns
            from rag_lab.cli import main

            code = main(["index", str(root), "--store", url])
        finally:
            os._exit(code)
    return pid


def run_once(mode: str, root: Path, url: str, delay: float | None) -> str:
    if mode == "fork":
        pid = start_fork(root, url)
        if delay is not None:
            time.sleep(delay)
            os.kill(pid, signal.SIGKILL)
        status = wait_child(pid, timeout_s=120.0)
        if os.WIFSIGNALED(status):
            return "killed"
        assert os.WEXITSTATUS(status) == 0, f"build exited with {os.WEXITSTATUS(status)}"
        return "finished"
    proc = subprocess.Popen(
        [*rag_lab_command(), "index", str(root), "--store", url], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    if delay is not None:
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    if proc.returncode == -signal.SIGKILL:
        return "killed"
    assert proc.returncode == 0, err.decode()
    return "finished"


def crash_trials(root: Path, url: str, trials: int, mode: str, docs: int = 300) -> dict[str, int]:
    versions = {v: corpus_version(v, docs) for v in "AB"}
    expected = {v: expected_content(files) for v, files in versions.items()}
    switch_corpus(root, {}, versions["A"])
    build_index(root, url)
    held = "A"
    started = time.perf_counter()
    assert run_once(mode, root, url, None) == "finished"  # the duration to spread kills over
    duration = time.perf_counter() - started
    rng = random.Random(17)
    stats = {"killed": 0, "finished": 0, "switched": 0, "kept_old": 0}
    for _ in range(trials):
        target = "B" if held == "A" else "A"
        switch_corpus(root, versions[held], versions[target])
        outcome = run_once(mode, root, url, rng.uniform(0.0, duration * 1.2))
        stats[outcome] += 1
        triples, snapshot, _count = read_content(url)  # must open whatever happened
        now = next(v for v in "AB" if (triples, snapshot) == expected[v])  # wholly one version
        if outcome == "finished":
            assert now == target
        stats["switched" if now == target else "kept_old"] += outcome == "killed"
        current, listed, schemas = catalogue(url)
        assert current in listed
        assert schemas == sorted(f"{GENERATION_PREFIX}{g}" for g in listed)  # nothing half-built stays
        if now != target:  # the kill came before the switch: build the target for the next trial
            assert run_once(mode, root, url, None) == "finished"
            assert read_content(url)[:2] == expected[target]
        held = target
    current, listed, _ = catalogue(url)
    assert listed == [current]  # no reader holds an old generation: every build dropped the last
    return stats


def test_pg_forked_builds_killed_at_random_moments(tmp_path: Path, pg_database: Callable[[], str]) -> None:
    stats = crash_trials(tmp_path / "corpus", pg_database(), trials=30, mode="fork")
    assert stats["killed"] >= 10
    assert stats["kept_old"] >= 1  # some kills really landed inside a build


def test_pg_cli_builds_killed_at_random_moments(tmp_path: Path, pg_database: Callable[[], str]) -> None:
    stats = crash_trials(tmp_path / "corpus", pg_database(), trials=4, mode="exec")
    assert stats["killed"] + stats["finished"] == 4


def test_pg_readers_during_rebuilds(tmp_path: Path, pg_database: Callable[[], str]) -> None:
    root, url = tmp_path / "corpus", pg_database()
    write_corpus(root)
    build_index(root, url)
    run = ReaderRun()

    def generation() -> tuple[int, int]:
        current = catalogue(url)[0]
        assert current is not None
        return (current, 0)

    run.builds[generation()] = "P"
    stop = threading.Event()
    lock = threading.Lock()

    def reader(number: int) -> None:
        turn = number
        while not stop.is_set():
            question = QUESTIONS[turn % len(QUESTIONS)]
            turn += 1
            try:
                before = generation()
                result: dict[str, Any] = dict(query_once(question, root, index_path=url))
                after = generation()
            except BaseException as exc:  # noqa: BLE001 - any exception is the finding
                with lock:
                    run.errors.append(f"reader {number}, {question!r}: {type(exc).__name__}: {exc}")
                return
            with lock:
                run.observations.append(Observation(question, before, after, result))

    threads = [threading.Thread(target=reader, args=(n,), daemon=True) for n in range(4)]
    for t in threads:
        t.start()
    version = "P"
    deadline = time.monotonic() + 8.0
    while time.monotonic() < deadline or run.rebuilds < 8:
        version = "R" if version == "P" else "P"
        build_index(root, url, reserved_fields=RESERVED_R if version == "R" else None)
        with lock:
            run.builds[generation()] = version
            run.rebuilds += 1
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    seen = check_run(root, run)
    assert len(run.observations) >= 40
    assert seen["P"] > 0 and seen["R"] > 0
    assert seen["stable"] > 0


def test_pg_a_pinned_generation_survives_rebuilds(tmp_path: Path, pg_database: Callable[[], str]) -> None:
    root, url = tmp_path / "corpus", pg_database()
    old, new = corpus_version("A", 30), corpus_version("B", 30)
    switch_corpus(root, {}, old)
    build_index(root, url)
    reader = PgStore(url)
    try:
        pinned = reader.generation
        switch_corpus(root, old, new)
        build_index(root, url)
        build_index(root, url)
        current, listed, _ = catalogue(url)
        assert current != pinned and pinned in listed  # kept while the reader holds it
        triples = frozenset(tuple(r) for r in reader._query("SELECT subject, field, value FROM units"))
        assert (triples, {p: r[4] for p, r in reader.snapshot().items()}) == expected_content(old)
        assert read_content(url)[:2] == expected_content(new)
    finally:
        reader.close()
    build_index(root, url)
    current, listed, _ = catalogue(url)
    assert listed == [current]  # dropped by the first build after the reader closed
