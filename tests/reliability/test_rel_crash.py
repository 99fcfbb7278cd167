"""Crash during indexing: SIGKILL `rag-lab index ROOT` at random moments (issue 7, item 1).

Each trial starts a build of the corpus version the index does *not* hold and kills it
after a seeded random delay spread over the measured build duration. After every kill:
``Index(path)`` opens, its content is completely version A or completely version B
(checked by content: every (subject, field, value) triple and every snapshot hash),
``PRAGMA integrity_check`` is ok, and after every successful build no ``*.tmp-*`` file
remains. The corpus on disk is switched only when the index has caught up with it.

Two ways to start the build: ``fork`` runs ``rag_lab.cli.main(["index", ROOT])`` in a
forked child of this already-imported process (a few ms to start, so nearly every kill
lands inside the build itself), ``exec`` runs the installed ``rag-lab index ROOT``
console script (about 0.4 s of interpreter and numpy start-up first). The suite runs
200 fork trials and 12 exec trials, plus 6 exec trials on 2,500 files where the build forks
reading workers (none may outlive a killed build); ``benchmarks/soak_crash.py`` runs 2,000.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rag_lab.data.corpus import sha256_hex
from rag_lab.index import Index, build, build_index, default_index_path, spill
from rag_lab.index.store import stored_text

DOCS = 300
Triple = tuple[str, str, str]


# -- the two corpus versions ------------------------------------------------------------------


def corpus_version(version: str, docs: int = DOCS) -> dict[str, bytes]:
    """Version A; version B edits every third document, deletes some and adds some."""
    files: dict[str, bytes] = {}
    for i in range(docs):
        if version == "B" and i % 10 == 9:
            continue  # deleted in B
        tag = "乙" if version == "B" and i % 3 == 0 else "甲"
        text = (
            f"# 设施{i}\n主题：设施{i:04d}号\n开放时间：{tag}{i}版九点到十七点。\n"
            f"地点：楼{i % 9}层{i}室\n电话：{10000 + i}\n负责人：员工{i % 37}\n"
        )
        files[f"documents/{i // 100:02d}/{i:04d}.md"] = text.encode("utf-8")
    if version == "B":
        for j in range(docs // 10):
            files[f"documents/new/{j:04d}.md"] = f"主题：新设施{j}号\n开放时间：乙新{j}\n".encode()
    return files


def expected_content(files: dict[str, bytes]) -> tuple[frozenset[Triple], dict[str, str]]:
    triples = set()
    for data in files.values():
        subject = ""
        for line in data.decode("utf-8").splitlines():
            name, colon, value = line.partition("：")
            if not colon:
                continue
            if name == "主题":
                subject = value
            else:
                triples.add((subject, name, value))
    return frozenset(triples), {path: sha256_hex(data) for path, data in files.items()}


def switch_corpus(root: Path, old: dict[str, bytes], new: dict[str, bytes]) -> None:
    for path in sorted(set(old) - set(new)):
        (root / path).unlink()
    for path, data in sorted(new.items()):
        if old.get(path) != data:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(data)


# -- starting and killing a build ------------------------------------------------------------


def start_fork(root: Path) -> int:
    pid = os.fork()
    if pid == 0:  # child: run the CLI verb, never return into pytest
        code = 1
        try:
            sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the child never returns
            from rag_lab.cli import main

            code = main(["index", str(root)])
        finally:
            os._exit(code)
    return pid


def wait_child(pid: int, timeout_s: float) -> int:
    """waitpid with a deadline: a child that hangs is killed and the trial fails."""
    deadline = time.monotonic() + timeout_s
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError(f"build child {pid} did not finish within {timeout_s} s")
        time.sleep(0.002)


def rag_lab_command() -> list[str]:
    script = Path(sys.executable).with_name("rag-lab")
    return [str(script)] if script.exists() else [sys.executable, "-m", "rag_lab.cli"]


def start_exec(root: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*rag_lab_command(), "index", str(root)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def run_once(mode: str, root: Path, delay: float | None) -> str:
    """Start a build, kill it after ``delay`` s (None: let it finish); 'killed' or 'finished'."""
    if mode == "fork":
        pid = start_fork(root)
        if delay is not None:
            time.sleep(delay)
            os.kill(pid, signal.SIGKILL)  # a zombie can still be signalled
        status = wait_child(pid, timeout_s=120.0)
        if os.WIFSIGNALED(status):
            return "killed"
        assert os.WEXITSTATUS(status) == 0, f"build exited with {os.WEXITSTATUS(status)}"
        return "finished"
    proc = start_exec(root)
    if delay is not None:
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
    code = proc.wait(timeout=120)
    if code == -signal.SIGKILL:
        return "killed"
    assert code == 0, f"rag-lab index exited with {code}"
    return "finished"


def measure_build(mode: str, root: Path, repeats: int = 3, fastest: bool = False) -> float:
    """Median (or fastest) wall time of a complete build (rebuilt from the same corpus)."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        assert run_once(mode, root, None) == "finished"
        times.append(time.perf_counter() - started)
    return min(times) if fastest else sorted(times)[len(times) // 2]


# -- checking what a kill left behind ---------------------------------------------------------


def read_content(path: Path) -> tuple[frozenset[Triple], dict[str, str], int]:
    """Open with Index (must work), then read every triple through a read-only connection."""
    with Index(path) as index:
        snapshot = {p: row[4] for p, row in index.snapshot().items()}
        count = index.unit_count
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        rows = db.execute(  # schema 5: names by id, the value an offset into the text
            "SELECT s.name, f.name, u.text, u.value_at, u.value FROM units u "
            "LEFT JOIN strings s ON s.id = u.subject LEFT JOIN strings f ON f.id = u.field"
        ).fetchall()
    finally:
        db.close()
    triples = frozenset(
        (subject, field, stored_text(text)[at:] if value is None else value)
        for subject, field, text, at, value in rows
    )
    return triples, snapshot, count


def leftovers(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".tmp-*"))


@dataclass
class CrashStats:
    trials: int = 0
    killed: int = 0
    finished: int = 0
    switched: int = 0  # the kill came after the rename: the index holds the new version
    kept_old: int = 0  # the kill came before the rename: the index still holds the old one
    leftover_seen: int = 0  # distinct temporary files found right after a kill (killed mid-write)
    leftover_removed: int = 0  # of those, confirmed gone after the next build that finished
    by_version: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def crash_trials(
    tmp: Path,
    trials: int,
    *,
    mode: str = "fork",
    seed: int = 7,
    docs: int = DOCS,
    spread: float = 1.4,
    report: Callable[[int, CrashStats], None] | None = None,
    enough: Callable[[CrashStats], bool] | None = None,
    most: int | None = None,
) -> CrashStats:
    """The whole experiment; every check is an assert. Returns the counts.

    Delays are uniform in ``[0, spread × build time]``: with ``spread > 1`` some builds
    finish (median build time), with ``spread <= 1`` nearly all are killed (fastest time).
    Leftover temporary files must be gone after the next build that finishes; a last
    complete build at the end makes sure every leftover met one.

    After ``trials`` trials, when ``enough`` says the outcomes a test needs have not all
    happened yet, more trials run, up to ``most`` in all: the build time measured at the start
    is only an estimate on a machine whose load changes, so how many kills land before or
    after the rename varies between runs; the checks of each trial stay the same.
    """
    root = tmp / "corpus"
    if root.exists():
        shutil.rmtree(root)
    versions = {v: corpus_version(v, docs) for v in "AB"}
    expected = {v: expected_content(files) for v, files in versions.items()}
    path = default_index_path(root)
    switch_corpus(root, {}, versions["B"])
    duration = measure_build(mode, root, fastest=spread <= 1.0)
    switch_corpus(root, versions["B"], versions["A"])
    build_index(root)
    held, on_disk = "A", "B"
    switch_corpus(root, versions["A"], versions["B"])
    rng = random.Random(seed)
    stats = CrashStats()
    pending: set[str] = set()  # leftovers seen since the last build that finished
    while stats.trials < trials or (enough is not None and not enough(stats) and stats.trials < (most or trials)):
        trial = stats.trials
        delay = rng.uniform(0.0, spread * duration)
        outcome = run_once(mode, root, delay)
        stats.trials += 1
        if outcome == "killed":
            stats.killed += 1
        else:
            stats.finished += 1
        left = leftovers(path)
        new = {p.name for p in left} - pending
        stats.leftover_seen += len(new)
        pending |= new
        triples, snapshot, count = read_content(path)
        version = next((v for v in "AB" if (triples, snapshot) == expected[v]), None)
        assert version is not None, f"trial {trial}: the index is neither complete A nor complete B"
        assert count == len(triples)  # unit_count in meta agrees with the rows
        assert version in (held, on_disk), f"trial {trial}: index holds {version}, expected {held}/{on_disk}"
        stats.by_version[version] = stats.by_version.get(version, 0) + 1
        if outcome == "finished":
            assert version == on_disk
            assert left == [], f"trial {trial}: a successful build left {left}"
            stats.leftover_removed += len(pending)
            pending = set()
        if version == on_disk:
            stats.switched += 1
            held, on_disk = on_disk, held
            switch_corpus(root, versions[held], versions[on_disk])
        else:
            stats.kept_old += 1
        if report is not None:
            report(trial, stats)
    assert run_once(mode, root, None) == "finished"
    assert leftovers(path) == []
    stats.leftover_removed += len(pending)
    assert (read_content(path)[:2]) == expected[on_disk]
    return stats


def test_rel_200_forked_builds_killed_at_random_moments(tmp_path: Path) -> None:
    def enough(stats: CrashStats) -> bool:
        # the delays really do spread over the build: both outcomes, and kills in mid-write
        return stats.killed >= 60 and stats.kept_old >= 40 and stats.switched >= 20 and stats.leftover_seen >= 10

    # more trials (up to 600) when a load change made the start's build time a poor estimate
    # (50 and 51 kills of 200 seen under load): every trial's checks are the same
    stats = crash_trials(tmp_path, 200, mode="fork", seed=20261130, docs=200, enough=enough, most=600)
    assert 200 <= stats.trials <= 600
    assert enough(stats), stats
    assert stats.leftover_removed == stats.leftover_seen  # every one removed by a later build


def test_rel_forked_builds_killed_while_spilling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # thresholds so low that every build parks its units and postings runs in the spill file
    # (index/spill.py) and merges them back: a kill there too leaves the old index whole, and
    # the spill file (anonymous, beside the index) is never left behind
    monkeypatch.setattr(build, "FLUSH_UNITS", 100)
    monkeypatch.setattr(build, "BUCKET_UNITS", 32)
    monkeypatch.setattr(spill, "MERGE_KEYS", 256)

    def enough(stats: CrashStats) -> bool:
        return stats.killed >= 15 and stats.kept_old >= 10 and stats.switched >= 5

    stats = crash_trials(tmp_path, 60, mode="fork", seed=18, docs=200, enough=enough, most=180)
    assert 60 <= stats.trials <= 180
    assert enough(stats), stats  # kills before the rename, after it, and builds that finished
    assert stats.leftover_removed == stats.leftover_seen


def test_rel_real_cli_builds_killed_at_random_moments(tmp_path: Path) -> None:
    # Delays up to 0.6 × the fastest measured build: on a shared CI machine the measured
    # time can be far above the later builds' (spread 1.0 once killed only 5 of 12), so
    # the margin keeps most trials real kills; mid-write kills are the fork test's job.
    stats = crash_trials(tmp_path, 12, mode="exec", seed=5, docs=200, spread=0.6)
    assert stats.trials == 12
    assert stats.killed >= 4
    assert stats.by_version.keys() <= {"A", "B"}


def build_processes(root: Path) -> list[int]:
    """Live processes (a build or its forked workers) whose command line names ``root``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            state = next(ln for ln in (proc / "status").read_text().splitlines() if ln.startswith("State:"))
        except (OSError, StopIteration):
            continue
        if str(root).encode() in cmdline and "zombie" not in state:
            found.append(int(proc.name))
    return found


def test_rel_killed_parallel_builds_leave_no_workers_behind(tmp_path: Path) -> None:
    """2,500 files: the build forks its reading workers (from 2,000 files on, on 2+ CPUs).
    Killing the parent at random moments must kill the workers too, and keep the index whole."""
    root = tmp_path / "corpus"
    orphans: list[list[int]] = []

    def no_workers_left(trial: int, stats: CrashStats) -> None:
        deadline = time.monotonic() + 5.0
        while (left := build_processes(root)) and time.monotonic() < deadline:
            time.sleep(0.05)
        if left:
            orphans.append(left)
            for pid in left:
                os.kill(pid, signal.SIGKILL)

    stats = crash_trials(tmp_path, 6, mode="exec", seed=11, docs=2500, spread=0.6, report=no_workers_left)
    assert orphans == []
    if len(os.sched_getaffinity(0)) >= 2:  # the workers really are forked for this corpus
        proc = start_exec(root)
        most = 0
        while proc.poll() is None:
            most = max(most, len(build_processes(root)))
            time.sleep(0.01)
        assert proc.returncode == 0 and most >= 3  # the build and its two workers
    assert stats.trials == 6 and stats.killed >= 2  # margin for a slow measured build (see above)
    assert stats.by_version.keys() <= {"A", "B"}
