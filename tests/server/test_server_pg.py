"""The server over a PostgreSQL index (docs/stores.md): versions follow the database's generations.

The API suite (test_server_api.py) runs against both stores; these are the behaviours whose
SQLite form is about the index *file*: an empty database is ``index_missing`` until built, a
rebuild (through the API or from outside) is a new version, the index is shown without a
password, and a request holding the old version finishes on it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from server_support import BASE
from starlette.testclient import TestClient

from rag_lab.index import build_index
from rag_lab.records import DEFAULT_RESERVED_FIELDS
from rag_lab.server import create_app

QUESTION = {"question": "借阅台 开放时间"}
ANSWER = "周二至周五十四点到十七点。"


def test_an_empty_database_is_index_missing_until_built(corpus: Path, pg_database: Callable[[], str]) -> None:
    url = pg_database()
    with TestClient(create_app(corpus, index_path=url), base_url=BASE) as client:
        response = client.post("/api/ask", json=QUESTION)
        assert response.status_code == 503
        error = response.json()["error"]
        assert error["type"] == "index_missing" and "POST /api/index" in error["message"]
        health = client.get("/api/health").json()
        assert (health["status"], health["index"], health["index_file"]) == ("degraded", "index_missing", url)
        built = client.post("/api/index", json={}).json()
        assert (built["index"], built["index_version"]) == (url, 1)
        assert built["units"] > 0 and built["errors"] == []
        assert client.post("/api/ask", json=QUESTION).json()["answer"] == ANSWER


def test_rebuilds_inside_and_outside_are_new_versions(corpus: Path, pg_database: Callable[[], str]) -> None:
    url = pg_database()
    build_index(corpus, url)
    with TestClient(create_app(corpus, index_path=url), base_url=BASE) as client:
        first = client.get("/api/health").json()
        assert (first["index"], first["stale"], first["index_version"]) == ("ready", False, 1)
        assert client.post("/api/index", json={}).json()["index_version"] == 2
        # from outside: a build that reserves 开放时间 is noticed by the next request
        build_index(corpus, url, reserved_fields=DEFAULT_RESERVED_FIELDS | {"开放时间"})
        result = client.post("/api/ask", json=QUESTION).json()
        assert (result["status"], result["reason"]) == ("refused", "reserved_field")
        assert client.get("/api/health").json()["index_version"] == 3
        build_index(corpus, url)
        assert client.post("/api/ask", json=QUESTION).json()["answer"] == ANSWER


def test_a_held_version_keeps_its_generation(corpus: Path, pg_database: Callable[[], str]) -> None:
    url = pg_database()
    build_index(corpus, url)
    with TestClient(create_app(corpus, index_path=url), base_url=BASE) as client:
        state = client.app.state.rag_lab  # type: ignore[attr-defined]
        with state.reading() as version:
            pinned = version.index.generation
            build_index(corpus, url, reserved_fields=DEFAULT_RESERVED_FIELDS | {"开放时间"})
            assert version.index.reserved_fields == DEFAULT_RESERVED_FIELDS  # still the old generation
            assert version.index.units_for_key("借阅台", "开放时间")[0]["value"] == ANSWER
            assert client.post("/api/ask", json=QUESTION).json()["reason"] == "reserved_field"
        with state.reading() as version:
            assert version.index.generation != pinned


def test_the_index_is_shown_without_its_password(corpus: Path, pg_database: Callable[[], str]) -> None:
    url = pg_database().replace("postgres@", "postgres:secret-word@")  # trust auth ignores it
    build_index(corpus, url)
    with TestClient(create_app(corpus, index_path=url), base_url=BASE) as client:
        health = client.get("/api/health").json()
        assert health["index"] == "ready"
        assert "secret-word" not in client.get("/api/health").text
        assert health["index_file"] == url.replace(":secret-word", "")
        assert "secret-word" not in client.post("/api/index", json={}).text
