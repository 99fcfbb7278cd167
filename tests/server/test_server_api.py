"""The HTTP API over the demo corpus: every endpoint, and the one error body."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from server_support import ANONYMOUS, BASE, INJECTION, STAFF
from starlette.routing import Route
from starlette.testclient import TestClient

from rag_lab.data.access import Principal
from rag_lab.records import Reason
from rag_lab.retrieval import query_once
from rag_lab.server import create_app
from rag_lab.server.problems import STATUS, ErrorType
from store_fixtures import sqlite_only

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

LIBRARY_ANSWER = "周二至周五十四点到十七点。"


def assert_error(response: Any, status: int, kind: str) -> str:
    """The canonical error body: exactly {"error": {"type", "message"}}, status of its type."""
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert list(body) == ["error"]
    assert sorted(body["error"]) == ["message", "type"]
    assert body["error"]["type"] == kind
    assert STATUS[ErrorType(kind)] == status
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return str(body["error"]["message"])


@pytest.mark.parametrize(
    "question",
    [
        "借阅台 开放时间",
        "测试台 开放时间",
        "新台 开放时间",
        "红色 小 圆形",
        "借阅台",
        "借阅台 容量",
        "便笺 原文",
    ],
)
def test_ask_returns_exactly_what_query_once_returns(client: TestClient, corpus: Path, question: str) -> None:
    day = date(2026, 6, 1)
    served = client.post("/api/ask", json={"question": question, "as_of": day.isoformat()})
    assert served.status_code == 200
    assert served.json() == query_once(question, corpus, as_of=day, principal=ANONYMOUS)


def test_ask_answers_with_a_citation(client: TestClient) -> None:
    result = client.post("/api/ask", json={"question": "借阅台 开放时间", "top_k": 3, "budget": 500}).json()
    assert result["status"] == "answered"
    assert result["answer"] == LIBRARY_ANSWER
    assert [c["source"] for c in result["citations"]] == ["documents/library.md"]
    assert result["trace"]["config"]["top_k"] == 3
    assert result["trace"]["config"]["budget"] == 500
    assert result["trace"]["events"][0] == {"step": "principal", "name": "anonymous", "groups": []}
    assert result["trace"]["events"][1] == {
        "step": "freshness",
        "stale": False,
        "added": [],
        "deleted": [],
        "modified": [],
        "rehashed": 0,
    }


def test_conflict_lists_every_side(client: TestClient) -> None:
    result = client.post("/api/ask", json={"question": "测试台 开放时间"}).json()
    assert (result["status"], result["reason"]) == ("refused", "conflicting_evidence")
    sides = result["slots"][0]["sides"]
    assert [s["value"] for s in sides] == ["周三上午九点。", "周四上午十点。"]
    cited = {c["evidence_id"]: c["source"] for c in result["citations"]}
    assert sorted(cited[i] for s in sides for i in s["evidence_ids"]) == [
        "documents/test_bench_a.md",
        "documents/test_bench_b.md",
    ]


def test_evidence_shows_numbered_lines_and_the_span(client: TestClient, corpus: Path) -> None:
    cite = client.post("/api/ask", json={"question": "借阅台 开放时间"}).json()["citations"][0]
    view = client.get(f"/api/evidence/{cite['evidence_id']}").json()
    data = (corpus / "documents" / "library.md").read_bytes()
    assert view["verified"] is True
    assert view["verification"]["checks"] == ["path", "exists", "sha256", "span", "id"]
    assert view["sha256"] == view["current_sha256"] == hashlib.sha256(data).hexdigest() == cite["sha256"]
    excerpt = view["excerpt"]
    assert [line["number"] for line in excerpt["lines"]] == list(range(1, 12))
    mark = excerpt["highlight"]
    assert mark["line"] == cite["line"] == 6
    line_text = excerpt["lines"][5]["text"]
    assert line_text[mark["start"] : mark["end"]] == "开放时间：" + LIBRARY_ANSWER
    start, end = cite["span"]
    assert data.decode("utf-8")[start:end] == line_text[mark["start"] : mark["end"]]


def test_evidence_reports_a_failed_reverification(client: TestClient, corpus: Path) -> None:
    cite = client.post("/api/ask", json={"question": "借阅台 开放时间"}).json()["citations"][0]
    path = corpus / "documents" / "library.md"
    path.write_bytes(path.read_bytes().replace("十七点".encode(), "十八点".encode()))
    view = client.get(f"/api/evidence/{cite['evidence_id']}").json()
    assert view["verified"] is False
    assert view["verification"]["failed_check"] == "sha256"
    assert view["current_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest() != view["sha256"]
    assert view["excerpt"]["highlight"] is None


def test_evidence_of_an_image_and_its_png(client: TestClient, corpus: Path) -> None:
    cite = client.post("/api/ask", json={"question": "红色 小 圆形"}).json()["citations"][0]
    view = client.get(f"/api/evidence/{cite['evidence_id']}").json()
    assert (view["modality"], view["verified"], view["bbox"]) == ("image", True, [45, 45, 75, 75])
    assert view["image_url"] == f"/api/images/{cite['evidence_id']}"
    png = client.get(view["image_url"])
    assert png.status_code == 200
    assert png.headers["content-type"] == "image/png"
    assert png.content == (corpus / "images" / "red_circle.png").read_bytes()
    assert png.headers["x-rag-lab-sha256"] == cite["sha256"]


def test_image_that_fails_reverification_is_not_served(client: TestClient, corpus: Path) -> None:
    cite = client.post("/api/ask", json={"question": "红色 小 圆形"}).json()["citations"][0]
    (corpus / "images" / "red_circle.png").write_bytes((corpus / "images" / "blue_square.png").read_bytes())
    message = assert_error(
        client.get(f"/api/images/{cite['evidence_id']}"), 409, "source_verification_failed"
    )
    assert "images/red_circle.png" in message and "sha256" in message


def test_text_unit_is_not_an_image(client: TestClient) -> None:
    cite = client.post("/api/ask", json={"question": "借阅台 开放时间"}).json()["citations"][0]
    assert_error(client.get(f"/api/images/{cite['evidence_id']}"), 404, "not_an_image")


def test_unknown_evidence_is_404(client: TestClient) -> None:
    message = assert_error(client.get("/api/evidence/ev_000000000000000000000000"), 404, "unknown_evidence")
    assert "ev_000000000000000000000000" in message
    assert_error(client.get("/api/images/ev_nope"), 404, "unknown_evidence")


@pytest.mark.parametrize(
    ("body", "kind", "needle"),
    [
        ({"question": ""}, "invalid_question", "empty"),
        ({"question": "借阅台\x00开放时间"}, "invalid_question", "U+0000"),
        ({"question": 5}, "invalid_question", "text"),
        ({}, "invalid_question", "question"),
        ({"question": "借阅台 开放时间", "top_k": 0}, "invalid_setting", "top_k"),
        ({"question": "借阅台 开放时间", "top_k": "5"}, "invalid_setting", "top_k"),
        ({"question": "借阅台 开放时间", "budget": -1}, "invalid_setting", "budget"),
        ({"question": "借阅台 开放时间", "as_of": "tomorrow"}, "invalid_setting", "as_of"),
        ({"question": "借阅台 开放时间", "principal": "alice"}, "invalid_setting", "principal"),
        ({"question": "借阅台 开放时间", "stream": True}, "bad_request", "stream"),
        (["借阅台 开放时间"], "bad_request", "JSON object"),
    ],
)
def test_bad_input_is_400(client: TestClient, body: Any, kind: str, needle: str) -> None:
    assert needle in assert_error(client.post("/api/ask", json=body), 400, kind)


def test_principal_null_is_accepted(client: TestClient) -> None:
    result = client.post("/api/ask", json={"question": "借阅台 开放时间", "principal": None}).json()
    assert result["answer"] == LIBRARY_ANSWER
    assert_error(client.get("/api/evidence/x?groups=staff"), 400, "invalid_setting")


def test_body_that_is_not_json_is_400(client: TestClient) -> None:
    response = client.post("/api/ask", content=b"{question", headers={"content-type": "application/json"})
    assert "not JSON" in assert_error(response, 400, "bad_request")


def test_unknown_route_and_wrong_method(client: TestClient) -> None:
    assert_error(client.get("/api/nothing"), 404, "not_found")
    assert_error(client.get("/static/../app.py"), 404, "not_found")
    response = client.get("/api/ask")
    assert "POST" in assert_error(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "POST"


@sqlite_only  # deletes the index file
def test_missing_index_is_503_until_built(corpus: Path) -> None:
    (corpus / ".rag_lab" / "index.sqlite").unlink()
    with TestClient(create_app(corpus), base_url=BASE) as client:
        message = assert_error(
            client.post("/api/ask", json={"question": "借阅台 开放时间"}), 503, "index_missing"
        )
        assert "rag-lab index" in message and "POST /api/index" in message
        assert client.get("/api/health").json()["index"] == "index_missing"
        built = client.post("/api/index", json={}).json()
        assert built["units"] > 0 and built["index_version"] == 1
        assert (
            client.post("/api/ask", json={"question": "借阅台 开放时间"}).json()["answer"] == LIBRARY_ANSWER
        )


@sqlite_only  # damages the index file
def test_corrupt_index_is_503(corpus: Path) -> None:
    (corpus / ".rag_lab" / "index.sqlite").write_bytes(b"not a database")
    with TestClient(create_app(corpus), base_url=BASE) as client:
        assert_error(client.post("/api/ask", json={"question": "借阅台 开放时间"}), 503, "index_unreadable")


def test_concurrent_rebuild_is_409(client: TestClient) -> None:
    state = client.app.state.rag_lab  # type: ignore[attr-defined]
    with state._build_lock:
        assert_error(client.post("/api/index", json={}), 409, "rebuild_in_progress")


def test_a_bug_is_500_with_the_same_body(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rag_lab.server.app as app_module

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("kaputt")

    monkeypatch.setattr(app_module, "ask", boom)
    with TestClient(create_app(corpus), base_url=BASE, raise_server_exceptions=False) as client:
        message = assert_error(client.post("/api/ask", json={"question": "x"}), 500, "internal_error")
    # the exception's own text ("kaputt") may name files: it goes to the log, not to the caller
    assert message == "RuntimeError (a bug in rag_lab; the server log has the details)"


@sqlite_only  # names the index file
def test_rebuild_swaps_the_index_version(client: TestClient) -> None:
    first = client.get("/api/health").json()
    summary = client.post("/api/index", json={}).json()
    assert summary["index_version"] == first["index_version"] + 1
    # anonymous: the 47 files but staff_room.md (staff only), which is neither counted nor named
    assert summary["files"] == 46 and summary["errors"] == [] and "seconds" not in summary
    assert summary["index"] == "ROOT/.rag_lab/index.sqlite"
    health = client.get("/api/health").json()
    assert (health["index"], health["stale"], health["watching"]) == ("ready", False, True)
    assert health["index_version"] == summary["index_version"]


def test_injection_value_is_returned_verbatim_as_data(client: TestClient) -> None:
    result = client.post("/api/ask", json={"question": "注入台 公告"}).json()
    assert result["answer"] == INJECTION


def test_page_and_static_files(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert '<script src="/static/app.js" defer></script>' in page.text
    assert "http://" not in page.text and "https://" not in page.text  # offline: no CDN
    script = client.get("/static/app.js")
    assert script.headers["content-type"] == "text/javascript; charset=utf-8"
    assert "innerHTML" not in script.text and "insertAdjacentHTML" not in script.text
    assert "https://" not in script.text
    assert client.get("/static/style.css").headers["content-type"] == "text/css; charset=utf-8"


def test_openapi_describes_every_route(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.")
    routed = {
        (route.path, method.lower())
        for route in client.app.routes  # type: ignore[attr-defined]
        if isinstance(route, Route)
        for method in route.methods or ()
        if method != "HEAD"
    }
    described = {(path, method) for path, ops in spec["paths"].items() for method in ops}
    assert routed == described
    error = spec["components"]["schemas"]["Error"]["properties"]["error"]["properties"]["type"]["enum"]
    assert error == sorted(str(k) for k in ErrorType)
    reasons = spec["components"]["schemas"]["Result"]["properties"]["reason"]["enum"]
    assert reasons == [None, *(str(r) for r in Reason)]


def test_create_app_rejects_a_missing_root(tmp_path: Path) -> None:
    from rag_lab.errors import CorpusError

    with pytest.raises(CorpusError, match="not a folder"):
        create_app(tmp_path / "absent")


STAFF_QUESTION = "员工休息室 开放时间"


def test_a_restricted_document_is_indistinguishable_from_an_absent_one(
    client: TestClient, corpus: Path
) -> None:
    hidden = client.post("/api/ask", json={"question": STAFF_QUESTION}).json()
    absent = client.post("/api/ask", json={"question": "不存在室 开放时间"}).json()
    assert (hidden["status"], hidden["reason"]) == (absent["status"], absent["reason"])
    assert hidden["citations"] == absent["citations"] == []
    assert "七点到二十二点" not in json.dumps(hidden, ensure_ascii=False)
    assert hidden == query_once(STAFF_QUESTION, corpus, principal=ANONYMOUS)


def test_a_member_sees_it_and_its_evidence(trusted: TestClient, corpus: Path) -> None:
    client = trusted
    result = client.post("/api/ask", json={"question": STAFF_QUESTION, "principal": STAFF}).json()
    assert (result["status"], result["answer"]) == ("answered", "七点到二十二点")
    assert result["trace"]["events"][0] == {"step": "principal", "name": "bob", "groups": ["staff"]}
    expected = query_once(STAFF_QUESTION, corpus, principal=Principal("bob", frozenset({"staff"})))
    assert result == expected
    evidence_id = result["citations"][0]["evidence_id"]
    seen = client.get(f"/api/evidence/{evidence_id}?as=bob&groups=staff").json()
    assert seen["verified"] is True and seen["source"] == "documents/staff_room.md"
    # Anonymous, another group, or the wrong id: the very same 404.
    for query in ("", "?as=eve", "?as=eve&groups=lab"):
        message = assert_error(client.get(f"/api/evidence/{evidence_id}{query}"), 404, "unknown_evidence")
        assert message == assert_error(
            client.get(f"/api/evidence/ev_nope{query}"), 404, "unknown_evidence"
        ).replace("ev_nope", evidence_id)


def test_owner_app_answers_without_a_principal(corpus: Path) -> None:
    with TestClient(create_app(corpus, owner=True), base_url=BASE) as client:
        result = client.post("/api/ask", json={"question": STAFF_QUESTION}).json()
    assert result["answer"] == "七点到二十二点"
    assert result == query_once(STAFF_QUESTION, corpus)


@pytest.mark.parametrize(
    "principal",
    [
        {"groups": ["staff"]},
        {"name": ""},
        {"name": "bob", "groups": ["a b;"]},
        {"name": "bob", "role": "x"},
        5,
    ],
)
def test_malformed_principal_is_400(trusted: TestClient, principal: Any) -> None:
    client = trusted
    body = {"question": STAFF_QUESTION, "principal": principal}
    assert "principal" in assert_error(client.post("/api/ask", json=body), 400, "invalid_setting")


def test_an_untrusting_server_refuses_a_claimed_principal(client: TestClient) -> None:
    body = {"question": STAFF_QUESTION, "principal": STAFF}
    message = assert_error(client.post("/api/ask", json=body), 400, "invalid_setting")
    assert "trust_principals" in message and "'bob'" in message and "anonymous" in message
    assert_error(client.get("/api/evidence/ev_x?as=bob&groups=staff"), 400, "invalid_setting")
    assert_error(client.get("/api/health?as=bob"), 400, "invalid_setting")


def test_openapi_publishes_the_schemas_the_server_validates_with(corpus: Path) -> None:
    from rag_lab.server import schema
    from rag_lab.server.app import STATIC
    from rag_lab.server.openapi import STATIC_NAMES, request_schemas

    for trusted in (False, True):
        with TestClient(create_app(corpus, trust_principals=trusted), base_url=BASE) as client:
            spec = client.get("/openapi.json").json()
        published = spec["components"]["schemas"]
        for name, body in request_schemas(trusted).items():
            assert published[name] == json.loads(json.dumps(body)), name
        ask_op = spec["paths"]["/api/ask"]["post"]
        assert sorted(ask_op["responses"]) == ["200", "400", "403", "413", "415", "421", "422", "503"]
        principal = published["AskRequest"]["properties"]["principal"]
        health_params = [p["name"] for p in spec["paths"]["/api/health"]["get"].get("parameters", [])]
        if trusted:
            assert principal["type"] == ["object", "null"] and health_params == ["as", "groups"]
        else:
            assert principal["type"] == "null" and health_params == []
    assert tuple(STATIC) == STATIC_NAMES
    with pytest.raises(AssertionError, match="uniqueItems"):
        schema.check_keywords({"type": "array", "uniqueItems": True})


@pytest.mark.parametrize(
    ("value", "spec", "ok"),
    [
        ("借阅台 开放时间", "question", True),
        ("\t借阅台\n", "question", True),
        ("\u3000 \t", "question", False),
        ("a\x7fb", "question", False),
        ("a\x85b", "question", False),
        ("staff", "group", True),
        ("人事部", "group", True),
        ("a b", "group", False),
        ("a，b", "group", False),
    ],
)
def test_schema_patterns_agree_with_the_library(value: str, spec: str, ok: bool) -> None:
    """Every question or group the schema allows, the library accepts; and the blanks and
    control characters the library refuses, the schema refuses too."""
    from rag_lab.data.access import parse_groups
    from rag_lab.errors import QuestionError
    from rag_lab.retrieval.question import check_question
    from rag_lab.server import schema

    pattern = schema.QUESTION if spec == "question" else schema.PRINCIPAL["properties"]["groups"]["items"]
    try:
        schema.validate(value, pattern)
        allowed = True
    except schema.Invalid:
        allowed = False
    assert allowed is ok
    if spec == "question":
        try:
            check_question(value)
            library = True
        except QuestionError:
            library = False
        assert library is ok
    elif ok:
        assert parse_groups([value]) == value


@settings(max_examples=400, deadline=None, database=None, derandomize=True)
@given(st.text(max_size=12))
def test_the_question_schema_is_exactly_the_library_check(value: str) -> None:
    from rag_lab.errors import QuestionError
    from rag_lab.retrieval.question import check_question
    from rag_lab.server import schema

    try:
        schema.validate(value, schema.QUESTION)
        allowed = True
    except schema.Invalid:
        allowed = False
    try:
        check_question(value)
        library = True
    except QuestionError:
        library = False
    assert allowed is library, repr(value)
