"""Freshness in server mode: inotify marks the index stale; requests pay only for reported paths."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from server_support import ANONYMOUS, BASE, STAFF, wait_for
from starlette.testclient import TestClient

import rag_lab.server.state as state_module
from rag_lab.index import build_index
from rag_lab.retrieval import query_once
from rag_lab.server import create_app

QUESTION = {"question": "借阅台 开放时间"}


def stale_paths(client: TestClient) -> dict[str, Any] | None:
    health = client.get("/api/health").json()
    return health["changed"] if health["stale"] else None


def test_modify_refuses_index_stale_then_rebuild_answers(client: TestClient, corpus: Path) -> None:
    assert client.post("/api/ask", json=QUESTION).json()["status"] == "answered"
    note = corpus / "documents" / "services" / "copier.md"
    note.write_text(note.read_text(encoding="utf-8") + "备注：新增一行\n", encoding="utf-8")
    assert wait_for(lambda: stale_paths(client) is not None)
    result = client.post("/api/ask", json=QUESTION).json()
    assert (result["status"], result["reason"]) == ("refused", "index_stale")
    assert result["stale"] == {"added": [], "deleted": [], "modified": ["documents/services/copier.md"]}
    assert "documents/services/copier.md" in result["message"]
    # The same refusal as query_once's; only the count of files re-hashed for this very
    # request differs (the server re-hashed the path once, when health asked first).
    expected = query_once(QUESTION["question"], corpus, principal=ANONYMOUS)
    assert {k: v for k, v in result.items() if k != "trace"} == {
        k: v for k, v in expected.items() if k != "trace"
    }
    for event in (result["trace"]["events"][1], expected["trace"]["events"][1]):
        assert event.pop("rehashed") in (0, 1)
    assert result["trace"]["events"] == expected["trace"]["events"]
    client.post("/api/index", json={})
    result = client.post("/api/ask", json=QUESTION).json()
    assert (result["status"], result["answer"]) == ("answered", "周二至周五十四点到十七点。")


def test_add_and_delete_are_named(client: TestClient, corpus: Path) -> None:
    (corpus / "documents" / "new" / "deep").mkdir(parents=True)
    (corpus / "documents" / "new" / "deep" / "added.md").write_text(
        "主题：新馆\n地点：南门\n", encoding="utf-8"
    )
    (corpus / "images" / "yellow_square.png").unlink()
    (corpus / "documents" / "notes.rst").write_text("not a corpus file", encoding="utf-8")
    expected = {
        "added": ["documents/new/deep/added.md"],
        "deleted": ["images/yellow_square.png"],
        "modified": [],
    }
    assert wait_for(lambda: stale_paths(client) == expected)
    assert client.post("/api/ask", json=QUESTION).json()["stale"] == expected


def test_a_deleted_folder_is_found_by_one_walk(client: TestClient, corpus: Path) -> None:
    shutil.move(corpus / "documents" / "new_desk", corpus / "moved_away")
    expected = [f"documents/new_desk/{i}.md" for i in range(1, 7)]
    assert wait_for(lambda: (stale_paths(client) or {}).get("deleted") == expected)


def test_touch_is_not_a_change(client: TestClient, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = state_module.verdict

    def counting(root: Path, index: Any, path: str) -> Any:
        calls.append(path)
        return real(root, index, path)

    monkeypatch.setattr(state_module, "verdict", counting)
    os.utime(corpus / "documents" / "library.md")
    assert wait_for(
        lambda: client.get("/api/health").json()["stale"] is False and "documents/library.md" in calls
    )
    result = client.post("/api/ask", json=QUESTION).json()
    assert result["status"] == "answered"
    # The touched path was re-hashed once, found unchanged and forgotten.
    calls.clear()
    client.post("/api/ask", json=QUESTION)
    assert calls == []


def test_requests_do_not_walk_the_corpus(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_walk(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a request walked the corpus")

    monkeypatch.setattr(state_module, "check_freshness", no_walk)
    for _ in range(3):
        assert client.post("/api/ask", json=QUESTION).json()["status"] == "answered"


def test_startup_walk_sees_changes_made_while_down(corpus: Path) -> None:
    (corpus / "documents" / "library.md").write_text("主题：借阅台\n开放时间：全天\n", encoding="utf-8")
    with TestClient(create_app(corpus), base_url=BASE) as client:
        result = client.post("/api/ask", json=QUESTION).json()
    assert result["stale"]["modified"] == ["documents/library.md"]


def test_rebuild_from_outside_is_picked_up(client: TestClient, corpus: Path) -> None:
    path = corpus / "documents" / "library.md"
    path.write_text(path.read_text(encoding="utf-8").replace("十七点", "十八点"), encoding="utf-8")
    assert wait_for(lambda: stale_paths(client) is not None)
    build_index(corpus)  # `rag-lab index ROOT` in another process
    result = client.post("/api/ask", json=QUESTION).json()
    assert (result["status"], result["answer"]) == ("answered", "周二至周五十四点到十八点。")


def test_without_watch_every_request_walks(corpus: Path) -> None:
    with TestClient(create_app(corpus, watch=False), base_url=BASE) as client:
        assert client.get("/api/health").json()["watching"] is False
        (corpus / "documents" / "library.md").write_text("主题：借阅台\n开放时间：全天\n", encoding="utf-8")
        result = client.post("/api/ask", json=QUESTION).json()
    assert result["stale"]["modified"] == ["documents/library.md"]


def test_readers_keep_answering_during_a_rebuild(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    started, release = threading.Event(), threading.Event()
    real = state_module.build_index

    def slow_build(*args: Any, **kwargs: Any) -> Any:
        started.set()
        release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(state_module, "build_index", slow_build)
    results: list[Any] = []
    rebuild = threading.Thread(target=lambda: results.append(client.post("/api/index", json={}).json()))
    rebuild.start()
    try:
        assert started.wait(10)
        assert client.post("/api/ask", json=QUESTION).json()["status"] == "answered"
        assert client.post("/api/index", json={}).json()["error"]["type"] == "rebuild_in_progress"
    finally:
        release.set()
        rebuild.join(10)
    assert results[0]["index_version"] == 2


def test_a_watcher_that_cannot_start_falls_back_to_walking(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(self: Any) -> None:
        raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(state_module.CorpusWatcher, "start", refuse)
    with TestClient(create_app(corpus), base_url=BASE) as client:
        health = client.get("/api/health").json()
        assert health["watching"] is False
        assert "inotify watch limit reached" in health["watcher_error"]
        (corpus / "documents" / "library.md").write_text("主题：借阅台\n开放时间：全天\n", encoding="utf-8")
        result = client.post("/api/ask", json=QUESTION).json()
    assert result["stale"]["modified"] == ["documents/library.md"]


def test_a_hidden_file_changing_is_neither_named_nor_counted(trusted: TestClient, corpus: Path) -> None:
    client = trusted
    path = corpus / "documents" / "staff_room.md"
    path.write_text(path.read_text(encoding="utf-8").replace("七点", "八点"), encoding="utf-8")
    member = {"question": "员工休息室 开放时间", "principal": STAFF}
    assert wait_for(lambda: client.post("/api/ask", json=member).json()["reason"] == "index_stale")
    assert client.post("/api/ask", json=member).json()["stale"]["modified"] == ["documents/staff_room.md"]
    # A fresh event on the hidden file, so that the anonymous request re-hashes it.
    events = client.app.state.rag_lab._events  # type: ignore[attr-defined]
    before = events["documents/staff_room.md"]
    os.utime(path)
    assert wait_for(lambda: events.get("documents/staff_room.md", before) != before)
    anonymous = client.post("/api/ask", json=QUESTION).json()
    assert (anonymous["status"], anonymous["answer"]) == ("answered", "周二至周五十四点到十七点。")
    assert anonymous["trace"]["events"][1]["rehashed"] == 0
    assert client.get("/api/health").json()["stale"] is False
    assert client.get("/api/health?as=bob&groups=staff").json()["changed"]["modified"] == [
        "documents/staff_room.md"
    ]


def test_the_access_sidecar_is_watched(trusted: TestClient, corpus: Path) -> None:
    client = trusted
    (corpus / "access.json").write_text('{"documents/library.md": ["staff"]}', encoding="utf-8")
    assert wait_for(
        lambda: (
            client.post("/api/ask", json={**QUESTION, "principal": STAFF}).json()["reason"] == "index_stale"
        )
    )
