"""``query_once`` keeps an open index file across calls (index/kept.py) only while the path names
the same, unchanged file: results equal a freshly opened index's; a rebuild, an edit in place,
a deleted file or another caller is never served from a kept index."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from rag_lab.data.access import Principal
from rag_lab.errors import IndexError_
from rag_lab.index import build_index, default_index_path
from rag_lab.index import kept as kept_module
from rag_lab.index.kept import close_kept, kept_count, kept_index
from rag_lab.retrieval import query_once

DAY = date(2026, 12, 1)
STAFF = Principal("bob", frozenset({"staff"}))
SETTLE = 0.05  # seconds: far more than the file clock's tick, far less than the default


@pytest.fixture(autouse=True)
def _fresh_process_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    close_kept()
    monkeypatch.setattr(kept_module, "SETTLED_SECONDS", SETTLE)
    yield
    close_kept()


def _corpus(tmp_path: Path, value: str = "周一") -> Path:
    root = tmp_path / "corpus"
    (root / "documents").mkdir(parents=True, exist_ok=True)
    (root / "documents" / "a.md").write_text(f"主题：甲馆\n开放时间：{value}\n电话：1号\n", encoding="utf-8")
    (root / "documents" / "b.md").write_text("权限：staff\n主题：乙馆\n开放时间：周二\n", encoding="utf-8")
    build_index(root)
    time.sleep(2 * SETTLE)  # settled: any later write gives the file a newer time
    return root


def _fresh(question: str, root: Path, principal: Principal | None = None) -> dict[str, object]:
    close_kept()
    result = query_once(question, root, as_of=DAY, principal=principal)
    close_kept()
    return result


def test_kept_index_answers_as_a_fresh_one(tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    questions = ["甲馆的开放时间是什么？", "乙馆的开放时间是什么？", "甲馆", "电话是什么？", "无此馆的电话？"]
    want = [_fresh(q, root) for q in questions]
    got = [query_once(q, root, as_of=DAY) for q in questions]
    assert kept_count() == 1
    assert got == want
    assert [query_once(q, root, as_of=DAY) for q in questions] == want  # warm: memos, bit sets
    with kept_index(default_index_path(root)) as one, kept_index(default_index_path(root)) as two:
        assert one is two  # the same open index


def test_a_rebuild_is_never_served_from_the_kept_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _corpus(tmp_path)
    assert query_once("甲馆的开放时间是什么？", root, as_of=DAY)["answer"] == "周一"
    assert kept_count() == 1
    (root / "documents" / "a.md").write_text("主题：甲馆\n开放时间：周五\n电话：1号\n", encoding="utf-8")
    stale = query_once("甲馆的开放时间是什么？", root, as_of=DAY)
    assert stale["reason"] == "index_stale"
    # "Unsettled" must not hang on how fast this machine runs the next lines: a busy CI host
    # can take longer than any short settling time between the build's last write and the open.
    monkeypatch.setattr(kept_module, "SETTLED_SECONDS", 3600.0)
    build_index(root)  # a new file renamed over the old one: another inode
    assert query_once("甲馆的开放时间是什么？", root, as_of=DAY)["answer"] == "周五"  # at once, though unsettled
    assert kept_count() == 0  # the kept old file was dropped; the just-built one is not kept yet
    monkeypatch.setattr(kept_module, "SETTLED_SECONDS", SETTLE)
    time.sleep(2 * SETTLE)
    assert query_once("甲馆的开放时间是什么？", root, as_of=DAY)["answer"] == "周五"
    assert kept_count() == 1  # settled now: kept, and it is the new file
    assert query_once("甲馆的开放时间是什么？", root, as_of=DAY)["answer"] == "周五"


def test_an_edit_in_place_is_never_served(tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    path = default_index_path(root)
    query_once("甲馆的开放时间是什么？", root, as_of=DAY)
    assert kept_count() == 1
    data = bytearray(path.read_bytes())
    data[30:34] = b"\xff\xff\xff\xff"  # the header's page count: damaged, same size
    with open(path, "r+b") as handle:  # in place: the same inode
        handle.write(bytes(data))
    with pytest.raises(IndexError_, match="truncated or damaged"):
        query_once("甲馆的开放时间是什么？", root, as_of=DAY)
    assert kept_count() == 0


def test_a_deleted_index_is_not_served(tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    query_once("甲馆的开放时间是什么？", root, as_of=DAY)
    default_index_path(root).unlink()
    with pytest.raises(IndexError_, match="no index"):
        query_once("甲馆的开放时间是什么？", root, as_of=DAY)


def test_each_caller_has_its_own_kept_index(tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    guest = Principal("eve", frozenset())
    want = {who: _fresh("乙馆的开放时间是什么？", root, who) for who in (None, STAFF, guest)}
    for who in (None, STAFF, guest, STAFF, None, guest):
        assert query_once("乙馆的开放时间是什么？", root, as_of=DAY, principal=who) == want[who]
    answers = {who: query_once("乙馆的开放时间是什么？", root, as_of=DAY, principal=who)["answer"] for who in (None, STAFF, guest)}
    assert answers == {None: "周二", STAFF: "周二", guest: None}
    assert kept_count() == kept_module.KEPT  # least recently used dropped first


def test_a_young_file_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _corpus(tmp_path)
    monkeypatch.setattr(kept_module, "SETTLED_SECONDS", 3600.0)
    query_once("甲馆的开放时间是什么？", root, as_of=DAY)
    assert kept_count() == 0


def test_threads_share_a_kept_index(tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    want = _fresh("甲馆的开放时间是什么？", root)
    got: list[object] = []
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            for _ in range(15):
                got.append(query_once("甲馆的开放时间是什么？", root, as_of=DAY))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    close_kept()  # while in use: closed when its last call ends
    for thread in threads:
        thread.join()
    assert not errors and len(got) == 60 and all(r == want for r in got)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_forked_child_keeps_none(tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    query_once("甲馆的开放时间是什么？", root, as_of=DAY)
    assert kept_count() == 1
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os._exit(0 if kept_count() == 0 and query_once("甲馆的开放时间是什么？", root, as_of=DAY)["answer"] == "周一" else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert kept_count() == 1
