"""Concurrent readers during rebuilds (issue 7, item 2).

Four reader threads call ``query_once`` in a loop while the main thread rebuilds the
index again and again. ROOT never changes (``query_once`` checks freshness against the
files, so a changed corpus would only give ``index_stale``); the rebuilds alternate the
index *configuration* instead: version P keeps the default reserved fields, version R
also reserves ``电话``. So the same question is answered from P and refused with
``reserved_field`` from R, and every result shows which version it was decided on
(``trace.config.index.reserved_fields``).

Checked for every result: no reader raises; citations name only evidence ids of the
key, with the sha256 of the file on disk; a two-slot question gets the same verdict on
both slots (one index version per result); when the index file did not change during
the call (same inode and mtime before and after), the version the result used is the
one recorded for that file by the builder (a new index is visible to the next open).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_lab.data import extract_documents
from rag_lab.data.corpus import sha256_hex
from rag_lab.index import build_index, default_index_path
from rag_lab.records import DEFAULT_RESERVED_FIELDS
from rag_lab.retrieval import query_once

SUBJECTS = 40
RESERVED_R = DEFAULT_RESERVED_FIELDS | {"电话"}
QUESTIONS = (
    "设施3号 开放时间",
    "设施7号的电话是多少？",
    "设施1号 和 设施2号 的 电话",
    "共享台 开放时间",  # three agreeing copies → three citations
    "争议台 地点",  # two sides → conflicting_evidence
)


def write_corpus(root: Path) -> None:
    docs = root / "documents"
    docs.mkdir(parents=True)
    for i in range(SUBJECTS):
        (docs / f"s{i:03d}.md").write_text(
            f"主题：设施{i}号\n开放时间：九点到{i}点。\n电话：{5550000 + i}\n地点：{i}楼\n", encoding="utf-8"
        )
    for j in range(3):
        (docs / f"shared{j}.md").write_text("主题：共享台\r\n开放时间：全天。\r\n", encoding="utf-8")
    (docs / "dispute_a.md").write_text("\ufeff主题：争议台\n地点：东楼\n", encoding="utf-8")
    (docs / "dispute_b.md").write_text("主题：争议台\n地点：西楼\n", encoding="utf-8")


def version_of(result: dict[str, Any]) -> str:
    reserved = result["trace"]["config"]["index"]["reserved_fields"]
    return "R" if "电话" in reserved else "P"


def file_id(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return (st.st_ino, st.st_mtime_ns)


@dataclass
class Observation:
    question: str
    before: tuple[int, int]
    after: tuple[int, int]
    result: dict[str, Any]


@dataclass
class ReaderRun:
    observations: list[Observation] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    builds: dict[tuple[int, int], str] = field(default_factory=dict)
    rebuilds: int = 0


def run_readers(root: Path, seconds: float, readers: int = 4, pause_s: float = 0.05) -> ReaderRun:
    path = default_index_path(root)
    run = ReaderRun()
    build_index(root)
    run.builds[file_id(path)] = "P"
    stop = threading.Event()
    lock = threading.Lock()

    def reader(number: int) -> None:
        turn = number
        while not stop.is_set():
            question = QUESTIONS[turn % len(QUESTIONS)]
            turn += 1
            try:
                before = file_id(path)
                result = query_once(question, root)
                after = file_id(path)
            except BaseException as exc:  # noqa: BLE001 - any exception is the finding
                with lock:
                    run.errors.append(f"reader {number}, {question!r}: {type(exc).__name__}: {exc}")
                return
            with lock:
                run.observations.append(Observation(question, before, after, result))

    threads = [threading.Thread(target=reader, args=(n,), daemon=True) for n in range(readers)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + seconds
    version = "P"
    while time.monotonic() < deadline or run.rebuilds < 10:
        version = "R" if version == "P" else "P"
        build_index(root, reserved_fields=RESERVED_R if version == "R" else None)
        with lock:
            run.builds[file_id(path)] = version
            run.rebuilds += 1
        time.sleep(pause_s)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    return run


def expected_facts(root: Path) -> tuple[dict[tuple[str, str], list[dict[str, Any]]], dict[str, str]]:
    by_key: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for unit in extract_documents(root):
        by_key.setdefault((unit["subject"], unit["field"]), []).append(unit)
    hashes = {p.relative_to(root).as_posix(): sha256_hex(p.read_bytes()) for p in root.rglob("*.md")}
    return by_key, hashes


def check_observation(
    obs: Observation,
    builds: dict[tuple[int, int], str],
    by_key: dict[tuple[str, str], list[dict[str, Any]]],
    hashes: dict[str, str],
) -> str:
    """Assert everything about one result; returns the version it was decided on."""
    result, version = obs.result, version_of(obs.result)
    if obs.before == obs.after and obs.before in builds:
        assert version == builds[obs.before], f"{obs.question}: opened {obs.before} but decided on {version}"
    for cite in result["citations"]:
        assert cite["sha256"] == hashes[cite["source"]]
    ids = {c["evidence_id"] for c in result["citations"]}
    slots = [(s["subject"], s["field"]) for s in result["slots"]]
    allowed = {u["evidence_id"] for key in slots for u in by_key.get(key, [])}
    assert ids <= allowed
    statuses = {s["status"] for s in result["slots"]}
    assert len(statuses) <= 1, f"{obs.question}: slots decided on different versions: {result['slots']}"
    q = obs.question
    if "电话" in q and version == "R":
        assert (result["status"], result["reason"]) == ("refused", "reserved_field")
        assert result["citations"] == []
    elif q.startswith("设施1号 和"):
        assert result["status"] == "answered"
        assert result["answer"] == "设施1号 电话：5550001；设施2号 电话：5550002"
        assert len(result["citations"]) == 2
    elif "电话" in q:
        assert (result["status"], result["answer"]) == ("answered", "5550007")
    elif q.startswith("设施3号"):
        assert (result["status"], result["answer"]) == ("answered", "九点到3点。")
        assert ids == {u["evidence_id"] for u in by_key[("设施3号", "开放时间")]}
    elif q.startswith("共享台"):
        assert (result["status"], result["answer"], len(ids)) == ("answered", "全天。", 3)
    else:
        assert (result["status"], result["reason"]) == ("refused", "conflicting_evidence")
        assert len(ids) == 2
    return version


def check_run(root: Path, run: ReaderRun) -> dict[str, int]:
    assert run.errors == []
    by_key, hashes = expected_facts(root)
    seen = {"P": 0, "R": 0, "stable": 0}
    for obs in run.observations:
        seen[check_observation(obs, run.builds, by_key, hashes)] += 1
        seen["stable"] += obs.before == obs.after
    return seen


def test_rel_four_readers_during_rebuilds(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    write_corpus(root)
    run = run_readers(root, seconds=10.0)
    seen = check_run(root, run)
    assert run.rebuilds >= 10
    assert len(run.observations) >= 100
    assert seen["P"] > 0 and seen["R"] > 0  # readers really saw both versions
    assert seen["stable"] > 0
