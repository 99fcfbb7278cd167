"""Proof by construction over HTTP: for bob and for anonymous, every response of the server
is byte-identical between corpus A and corpus B (A plus hidden documents, plus hidden files
that warn or fail at index time) — answers, evidence and image look-ups, ``POST /api/index``,
``/api/health`` and every error body.

Both corpora live under different temporary folders, so equal bytes also show that no
absolute path reaches a caller.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from perm_corpora import (
    AS_OF,
    CASES,
    HIDDEN_PATHS,
    HIDDEN_WORDS,
    PROBLEM_WORDS,
    add_hidden_problems,
    all_questions,
    hidden_evidence_ids,
    query_kwargs,
)

from rag_lab.index import build_index

# The server needs the serve extra; without it (the core run of .ci/run) this module skips.
TestClient = pytest.importorskip("starlette.testclient").TestClient

BASE = "http://127.0.0.1"
BOB_QUERY = "?as=bob&groups=staff"
BOB_BODY = {"name": "bob", "groups": ["staff"]}
UNKNOWN_ID = "ev_000000000000000000000000"

Exchange = tuple[str, int, str, bytes]


def exchanges(client: Any, hidden_ids: list[str], bob: bool) -> list[Exchange]:
    """Every request bob (or anonymous) can make, and what came back: (request, status, type, body)."""
    query = BOB_QUERY if bob else ""
    out: list[Exchange] = []

    def record(label: str, response: Any) -> None:
        out.append((label, response.status_code, response.headers.get("content-type", ""), response.content))

    record("index", client.post("/api/index", json={}))
    record("health", client.get("/api/health" + query))
    for item in all_questions():
        kw = query_kwargs(item)
        body: dict[str, Any] = {
            "question": item["question"],
            "top_k": kw["top_k"],
            "budget": kw["budget"],
            "as_of": kw["as_of"].isoformat(),
        }
        if bob:
            body["principal"] = BOB_BODY
        record("ask " + item["question"], client.post("/api/ask", json=body))
    for evidence_id in [*hidden_ids, UNKNOWN_ID]:
        # The id of a hidden unit in B does not exist in A: both must answer alike.
        for kind in ("evidence", "images"):
            response = client.get(f"/api/{kind}/{evidence_id}{query}")
            text = response.content.replace(evidence_id.encode(), b"<id>")
            out.append((f"{kind} <hidden id>", response.status_code, response.headers["content-type"], text))
    json_type = {"content-type": "application/json"}
    bad: list[tuple[str, Callable[[], Any]]] = [
        ("not json", lambda: client.post("/api/ask", content=b"{", headers=json_type)),
        ("surrogate", lambda: client.post("/api/ask", content=b'{"question": "\\ud800"}', headers=json_type)),
        (
            "text/plain",
            lambda: client.post("/api/ask", content=b"{}", headers={"content-type": "text/plain"}),
        ),
        ("origin", lambda: client.post("/api/index", json={}, headers={"origin": "http://evil.example"})),
        ("host", lambda: client.get("/api/health", headers={"host": "evil.example"})),
        ("too large", lambda: client.post("/api/ask", content=b" " * 70_000, headers=json_type)),
        ("top_k", lambda: client.post("/api/ask", json={"question": "借阅台 开放时间", "top_k": 10**9})),
        ("route", lambda: client.get("/api/nothing")),
        ("method", lambda: client.get("/api/ask")),
        ("index body", lambda: client.post("/api/index", json={"force": True})),
        ("as on untrusting", lambda: client.get("/api/health?as=eve")),
    ]
    for label, call in bad:
        record(label, call())
    return out


def degraded(client: Any, root: Path, bob: bool) -> list[Exchange]:
    """With the index gone: health and an ask (both 503)."""
    (root / ".rag_lab" / "index.sqlite").unlink()
    query = BOB_QUERY if bob else ""
    body: dict[str, Any] = {"question": "借阅台 开放时间", "as_of": AS_OF.isoformat()}
    if bob:
        body["principal"] = BOB_BODY
    out = []
    for label, response in (
        ("health (no index)", client.get("/api/health" + query)),
        ("ask (no index)", client.post("/api/ask", json=body)),
    ):
        out.append((label, response.status_code, response.headers["content-type"], response.content))
    return out


@pytest.fixture
def copy_a(corpus_a: Path, tmp_path: Path) -> Path:
    root = tmp_path / "a" / "corpus"
    shutil.copytree(corpus_a, root)
    build_index(root)
    return root


def serve(root: Path, bob: bool, hidden_ids: list[str]) -> list[Exchange]:
    from rag_lab.server import create_app

    with TestClient(create_app(root, trust_principals=bob), base_url=BASE) as client:
        return exchanges(client, hidden_ids, bob) + degraded(client, root, bob)


@pytest.mark.parametrize("bob", [False, True], ids=["anonymous", "bob"])
@pytest.mark.parametrize("case", CASES)
def test_every_response_is_byte_identical(
    case: str,
    bob: bool,
    copy_a: Path,
    make_b: Callable[[str], Path],
) -> None:
    corpus_b = add_hidden_problems(make_b(case))
    summary = build_index(corpus_b)
    assert {e["path"] for e in summary.errors} >= {"documents/hr/broken.md"}  # B really has hidden problems
    hidden_ids = sorted(hidden_evidence_ids(corpus_b))
    assert hidden_ids
    a, b = serve(copy_a, bob, hidden_ids), serve(corpus_b, bob, hidden_ids)
    assert [x[0] for x in a] == [x[0] for x in b]
    for left, right in zip(a, b, strict=True):
        assert left == right, left[0]
    words = [*HIDDEN_WORDS[case], *HIDDEN_PATHS[case], *PROBLEM_WORDS, *hidden_ids]
    for label, _, _, body in b:
        text = body.decode("utf-8", errors="replace")
        for word in words:
            if word not in label:
                assert word not in text, (label, word)
        assert str(corpus_b) not in text and str(copy_a) not in text, label
    # the exchanges covered what they claim to: a rebuild that succeeded, a refused host, a 503
    status = {label: code for label, code, _, _ in b}
    assert (status["index"], status["host"], status["health (no index)"]) == (200, 421, 503)
    index = json.loads(dict((x[0], x[3]) for x in b)["index"])
    assert index["errors"] == [] and index["warnings"] == 0 and index["files"] == 45, index
