"""The server under hostile input: each test is a row of the bad-input table in docs/robustness.md §7."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from server_support import BASE
from starlette.testclient import TestClient
from test_server_api import assert_error

from rag_lab import limits
from rag_lab.index import build_index
from rag_lab.retrieval import query_once
from rag_lab.server import create_app

QUESTION = "借阅台 开放时间"
JSON = {"content-type": "application/json"}


# -- off the event loop --------------------------------------------------------------------


def test_health_answers_while_a_slow_answer_runs(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rag_lab.server.app as app_module

    started, release = threading.Event(), threading.Event()
    real = app_module.ask

    def slow(*args: Any, **kwargs: Any) -> Any:
        started.set()
        release.wait(60)  # blocks whatever runs it: the event loop, if answering ran there
        return real(*args, **kwargs)

    monkeypatch.setattr(app_module, "ask", slow)
    with TestClient(create_app(corpus), base_url=BASE) as client:
        answers: list[Any] = []
        asker = threading.Thread(
            target=lambda: answers.append(client.post("/api/ask", json={"question": QUESTION}))
        )
        asker.start()
        assert started.wait(30)
        health: list[Any] = []
        checker = threading.Thread(target=lambda: health.append(client.get("/api/health")))
        checker.start()
        checker.join(20)
        answered_meanwhile = list(health)  # before the slow answer may finish
        still_blocked = asker.is_alive()
        release.set()
        checker.join(60)
        asker.join(60)
    assert still_blocked
    assert answered_meanwhile, "/api/health waited for the slow answer"
    assert answered_meanwhile[0].status_code == 200 and answered_meanwhile[0].json()["index"] == "ready"
    assert answers[0].json()["status"] == "answered"


# -- caps ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "kind", "needle"),
    [
        ({"question": QUESTION, "top_k": 1_000_000_000}, "invalid_setting", f"from 1 to {limits.MAX_TOP_K}"),
        ({"question": QUESTION, "top_k": limits.MAX_TOP_K + 1}, "invalid_setting", "top_k"),
        ({"question": QUESTION, "budget": 1_000_000_000}, "invalid_setting", f"to {limits.MAX_BUDGET}"),
        ({"question": "借" * (limits.MAX_QUESTION_CHARS + 1)}, "invalid_question", "the limit is 500"),
    ],
    ids=["top_k-huge", "top_k-cap+1", "budget-huge", "question-501"],
)
def test_a_value_past_its_cap_is_400(
    client: TestClient, body: dict[str, Any], kind: str, needle: str
) -> None:
    assert needle in assert_error(client.post("/api/ask", json=body), 400, kind)


def test_values_at_the_caps_are_answered(client: TestClient) -> None:
    body = {"question": QUESTION, "top_k": limits.MAX_TOP_K, "budget": limits.MAX_BUDGET}
    assert client.post("/api/ask", json=body).json()["status"] == "answered"


def _raw_post(
    app: Any, headers: list[tuple[bytes, bytes]], chunks: int | None
) -> tuple[int, dict[str, Any], int]:
    """POST /api/ask straight through ASGI; ``chunks``: how many 64 KiB chunks the client
    sends (None: 16 MiB, far past the cap). Returns (status, body, bytes the app pulled)."""
    pulled = 0
    sent: list[dict[str, Any]] = []
    piece = b"x" * 65536

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += len(piece)
        more = pulled < (chunks or 256) * len(piece)
        return {"type": "http.request", "body": piece, "more_body": more}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/ask",
        "raw_path": b"/api/ask",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"), *headers],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    anyio.run(app, scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, json.loads(body), pulled


def test_a_declared_oversized_body_is_refused_before_any_byte_is_read(corpus: Path) -> None:
    app = create_app(corpus)
    status, body, pulled = _raw_post(app, [(b"content-length", b"1000000000")], chunks=None)
    assert (status, body["error"]["type"], pulled) == (413, "body_too_large", 0)
    assert "1,000,000,000 bytes" in body["error"]["message"] and "MAX_BODY_BYTES" in body["error"]["message"]


def test_a_streamed_oversized_body_is_refused_once_it_passes_the_cap(corpus: Path) -> None:
    app = create_app(corpus)
    status, body, pulled = _raw_post(app, [], chunks=None)  # chunked, no Content-Length
    assert (status, body["error"]["type"]) == (413, "body_too_large")
    assert limits.MAX_BODY_BYTES < pulled <= limits.MAX_BODY_BYTES + 65536


def test_a_body_just_past_the_cap_is_413(client: TestClient) -> None:
    padding = "x" * limits.MAX_BODY_BYTES
    response = client.post("/api/ask", content=json.dumps({"question": padding}), headers=JSON)
    assert_error(response, 413, "body_too_large")


def _wide_subject(root: Path, fields: int) -> None:
    lines = "".join(f"字段{i:03d}：值{i}\n" for i in range(fields))
    (root / "documents" / "wide.md").write_text(f"主题：大文件\n{lines}", encoding="utf-8")
    build_index(root)


def test_a_clarification_lists_at_most_the_cap_and_counts_the_rest(corpus: Path) -> None:
    _wide_subject(corpus, limits.MAX_CLARIFICATION_OPTIONS + 30)
    with TestClient(create_app(corpus, owner=True), base_url=BASE) as client:
        served = client.post("/api/ask", json={"question": "大文件"}).json()
    assert (served["status"], served["reason"]) == ("needs_clarification", "subject_without_field")
    clarification = served["clarification"]
    assert clarification["fields"] == [f"字段{i:03d}" for i in range(limits.MAX_CLARIFICATION_OPTIONS)]
    assert clarification["more_options"] == 30
    assert served["message"].endswith("字段049 and 30 more.")
    assert served == query_once("大文件", corpus, as_of=None)  # the library caps it the same way


def test_a_response_past_the_cap_is_422(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_RESPONSE_BYTES", 2000)
    message = assert_error(client.post("/api/ask", json={"question": QUESTION}), 422, "response_too_large")
    assert "the limit is 2,000" in message and "MAX_RESPONSE_BYTES" in message
    cite_free = client.get("/api/evidence/ev_000000000000000000000000")
    assert_error(cite_free, 404, "unknown_evidence")  # small errors still pass


# -- malformed JSON, wrong types, content types -----------------------------------------------


@pytest.mark.parametrize(
    ("raw", "kind", "needle"),
    [
        (b"[" * 30_000 + b"]" * 30_000, "bad_request", "nested too deeply"),
        (b'{"a": ' * 4_000, "bad_request", "not JSON"),
        (b'{"question": "\xff\xfe"}', "bad_request", "not UTF-8"),
        (b'{"question": "\\ud800"}', "bad_request", "lone surrogate \\ud800"),
        (b'{"question": "a\\udfffb", "top_k": 3}', "bad_request", "lone surrogate"),
        (b'{"\\ud800": 1}', "bad_request", "a key of body"),
        ('\ufeff{"question": "借阅台 开放时间"}'.encode(), "bad_request", "not JSON"),
        (b'{"question": "x", "top_k": NaN}', "bad_request", "NaN is not JSON"),
        (b'{"question": "x", "budget": Infinity}', "bad_request", "Infinity is not JSON"),
        (b'{"question": "x", "question": "y"}', "bad_request", "appears twice"),
        (b"", "bad_request", "not JSON"),
        (b"null", "bad_request", "JSON object"),
        (b"5", "bad_request", "JSON object"),
        ('"借阅台 开放时间"'.encode(), "bad_request", "JSON object"),
        ('{"question": "借阅台 开放时间"}'.encode("utf-16"), "bad_request", "not UTF-8"),
    ],
    ids=[
        "deep-nesting",
        "deep-objects",
        "invalid-utf8",
        "lone-surrogate",
        "lone-low-surrogate",
        "surrogate-key",
        "bom",
        "nan",
        "infinity",
        "duplicate-key",
        "empty",
        "null",
        "number",
        "string",
        "utf16",
    ],
)
def test_malformed_json_is_400_never_500(client: TestClient, raw: bytes, kind: str, needle: str) -> None:
    response = client.post("/api/ask", content=raw, headers=JSON)
    assert needle in assert_error(response, 400, kind)


@pytest.mark.parametrize(
    ("extra", "kind", "needle"),
    [
        ({"top_k": "5"}, "invalid_setting", "top_k must be an integer"),
        ({"top_k": True}, "invalid_setting", "top_k"),
        ({"top_k": 1.5}, "invalid_setting", "top_k"),
        ({"top_k": None}, "invalid_setting", "top_k"),
        ({"budget": None}, "invalid_setting", "budget must be an integer"),
        ({"budget": [1]}, "invalid_setting", "budget"),
        ({"as_of": 20260101}, "invalid_setting", "as_of"),
        ({"as_of": "20260101"}, "invalid_setting", "ISO date"),
        ({"as_of": "2026-02-30"}, "invalid_setting", "ISO date"),
        ({"principal": []}, "invalid_setting", "principal"),
        ({"question": ["借阅台"]}, "invalid_question", "text"),
        ({"question": " \t\u3000 "}, "invalid_question", "empty"),
    ],
    ids=[
        "top_k-string",
        "top_k-true",
        "top_k-1.5",
        "top_k-null",
        "budget-null",
        "budget-array",
        "as_of-number",
        "as_of-compact",
        "as_of-feb-30",
        "principal-array",
        "question-array",
        "question-blank",
    ],
)
def test_wrong_types_are_400(client: TestClient, extra: dict[str, Any], kind: str, needle: str) -> None:
    assert needle in assert_error(client.post("/api/ask", json={"question": QUESTION, **extra}), 400, kind)


def test_an_integral_float_is_an_integer(client: TestClient) -> None:
    result = client.post("/api/ask", json={"question": QUESTION, "top_k": 3.0, "budget": 500.0}).json()
    assert result["trace"]["config"]["top_k"] == 3 and result["status"] == "answered"


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json; charset=latin-1",
        "application/jsonx",
    ],
)
@pytest.mark.parametrize("path", ["/api/ask", "/api/index"])
def test_a_post_that_is_not_json_is_415(client: TestClient, path: str, content_type: str | None) -> None:
    headers = {} if content_type is None else {"content-type": content_type}
    before = client.get("/api/health").json()["index_version"]
    response = client.post(
        path, content=b'{"question": "x"}' if path == "/api/ask" else b"{}", headers=headers
    )
    assert "application/json" in assert_error(response, 415, "unsupported_media_type")
    assert client.get("/api/health").json()["index_version"] == before  # nothing was rebuilt


def test_json_with_a_utf8_charset_is_accepted(client: TestClient) -> None:
    headers = {"content-type": "application/json; charset=UTF-8"}
    response = client.post("/api/ask", content=json.dumps({"question": QUESTION}), headers=headers)
    assert response.json()["status"] == "answered"


def test_index_takes_only_an_empty_object(client: TestClient) -> None:
    assert "{}" in assert_error(client.post("/api/index", json={"force": True}), 400, "bad_request")
    assert "JSON object" not in assert_error(client.post("/api/index", json=[]), 400, "bad_request")


# -- Host, Origin, redirects ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", "localhost.", "0.0.0.0", ""]
)
def test_a_foreign_host_is_421(client: TestClient, host: str) -> None:
    for response in (
        client.get("/api/health", headers={"host": host}),
        client.get("/", headers={"host": host}),
        client.post("/api/ask", json={"question": QUESTION}, headers={"host": host}),
    ):
        assert "not an address this server was started for" in assert_error(response, 421, "host_not_allowed")


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.1:8000", "localhost:1234", "LOCALHOST", "[::1]:8000"])
def test_loopback_names_are_answered(client: TestClient, host: str) -> None:
    assert client.get("/api/health", headers={"host": host}).status_code == 200


def test_run_answers_only_its_own_host_and_port(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    from rag_lab.server import run

    served: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.update(app=app, **kw))
    run(corpus, host="10.1.2.3", port=8123, allowed_hosts=["rag.internal"])
    assert (served["host"], served["port"]) == ("10.1.2.3", 8123)
    with TestClient(served["app"], base_url="http://127.0.0.1:8123") as client:
        for host in ("127.0.0.1:8123", "localhost:8123", "[::1]:8123", "10.1.2.3:8123", "rag.internal"):
            assert client.get("/api/health", headers={"host": host}).status_code == 200, host
        for host in ("127.0.0.1:8124", "127.0.0.1", "10.1.2.3:80", "evil.example:8123"):
            assert_error(client.get("/api/health", headers={"host": host}), 421, "host_not_allowed")


def test_serve_allow_host_adds_a_name(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    from rag_lab.cli import main

    served: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.update(app=app, **kw))
    argv = ["serve", str(corpus), "--port", "8123", "--allow-host", "rag.internal", "--allow-host", "proxy:443"]
    assert main(argv) == 0
    with TestClient(served["app"], base_url="http://127.0.0.1:8123") as client:
        for host in ("rag.internal", "rag.internal:9", "proxy:443", "127.0.0.1:8123"):
            assert client.get("/api/health", headers={"host": host}).status_code == 200, host
        message = assert_error(client.get("/api/health", headers={"host": "proxy:80"}), 421, "host_not_allowed")
        assert "--allow-host" in message and "rag.internal" in message


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "null", "http://127.0.0.1:9999", "https://127.0.0.1"]
)
def test_a_cross_origin_post_is_403(client: TestClient, origin: str) -> None:
    before = client.get("/api/health").json()["index_version"]
    for path, body in (("/api/ask", {"question": QUESTION}), ("/api/index", {})):
        response = client.post(path, json=body, headers={"origin": origin})
        assert "Origin" in assert_error(response, 403, "forbidden_origin")
    assert client.get("/api/health").json()["index_version"] == before


def test_a_same_origin_post_is_answered(client: TestClient) -> None:
    response = client.post("/api/ask", json={"question": QUESTION}, headers={"origin": "http://127.0.0.1"})
    assert response.json()["status"] == "answered"
    response = client.post(
        "/api/ask",
        json={"question": QUESTION},
        headers={"origin": "http://localhost:8000", "host": "localhost:8000"},
    )
    assert response.json()["status"] == "answered"


def test_no_redirect_names_a_foreign_host(client: TestClient) -> None:
    for host in ("evil.example", "127.0.0.1"):
        response = client.get("/api/health/", headers={"host": host}, follow_redirects=False)
        assert "location" not in response.headers
        assert response.status_code in (404, 421)
    assert_error(client.get("/api/health/", follow_redirects=False), 404, "not_found")


# -- health ----------------------------------------------------------------------------------


def test_health_shows_no_absolute_path(client: TestClient, corpus: Path) -> None:
    response = client.get("/api/health")
    assert str(corpus) not in response.text and str(corpus.resolve()) not in response.text
    assert response.json()["index_file"] == "ROOT/.rag_lab/index.sqlite"


def test_health_is_503_when_degraded_and_names_no_absolute_path(corpus: Path) -> None:
    (corpus / ".rag_lab" / "index.sqlite").unlink()
    with TestClient(create_app(corpus), base_url=BASE) as client:
        health = client.get("/api/health")
        ask = client.post("/api/ask", json={"question": QUESTION})
    assert health.status_code == 503
    assert (health.json()["status"], health.json()["index"]) == ("degraded", "index_missing")
    assert "ROOT/.rag_lab/index.sqlite" in health.json()["message"]
    message = assert_error(ask, 503, "index_missing")
    assert "ROOT/.rag_lab/index.sqlite" in message
    for text in (health.text, ask.text):
        assert str(corpus) not in text and str(corpus.resolve()) not in text


def test_every_test_here_is_a_row_of_the_bad_input_table() -> None:
    table = (Path(__file__).parents[2] / "docs" / "robustness.md").read_text(encoding="utf-8")
    section = table[table.index("## 7. The server under hostile input") :]
    names = [
        name
        for name in globals()
        if name.startswith("test_") and name != "test_every_test_here_is_a_row_of_the_bad_input_table"
    ]
    missing = [name for name in names if f"::{name}" not in section]
    assert not missing, f"docs/robustness.md §7 has no row for {missing}"
