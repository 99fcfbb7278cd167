"""``rag-lab mcp ROOT`` over a real stdio session, driven by the MCP SDK's own client.

Each test spawns ``python -m rag_lab.cli mcp ROOT …`` (the command an MCP client runs)
and talks to it with ``mcp.Client``; every tool result is what a model would receive.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from rag_lab.cli import main  # noqa: E402

Session = Callable[[Any], Awaitable[None]]


def session(root: Path, *flags: str, body: Session) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "rag_lab.cli", "mcp", str(root), *flags], cwd=str(root.parent)
    )

    async def run() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            await body(client)

    asyncio.run(run())


async def call(client: Any, tool: str, **arguments: Any) -> tuple[bool, Any]:
    result = await client.call_tool(tool, arguments)
    return bool(result.is_error), result.structured_content if not result.is_error else result.content[0].text


def test_anonymous_session_answers_refuses_and_opens_citations(corpus: Path) -> None:
    async def body(client: Any) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert sorted(tools) == ["ask", "index_status", "open_citation"]
        assert "not an error to work around" in tools["ask"].description
        assert "do not retry with rephrasings" in client.instructions

        failed, answered = await call(client, "ask", question="借阅台的开放时间是几点？")
        assert not failed
        assert (answered["status"], answered["reason"], answered["answer"]) == (
            "answered",
            None,
            "周二至周五十四点到十七点。",
        )
        assert answered["explanation"] is None and "trace" not in answered
        [cite] = answered["citations"]
        assert (cite["source"], cite["line"], cite["span"], cite["support_type"]) == (
            "documents/library.md",
            6,
            [43, 61],
            "verbatim_line",
        )
        assert cite["quote"] == "开放时间：周二至周五十四点到十七点。" and cite["verified"] is True
        assert len(cite["sha256"]) == 64

        failed, conflict = await call(client, "ask", question="测试台 开放时间")
        assert not failed, "a refusal is a result, not a tool error"
        assert (conflict["status"], conflict["reason"], conflict["answer"]) == (
            "refused",
            "conflicting_evidence",
            None,
        )
        assert conflict["explanation"].startswith("The sources disagree and none is preferred")
        assert [c["quote"] for c in conflict["citations"]] == [
            "开放时间：周三上午九点。",
            "开放时间：周四上午十点。",
        ]

        failed, clarify = await call(client, "ask", question="借阅台")
        assert clarify["status"] == "needs_clarification"
        assert "借用期限、地点、开放时间、联系电话、负责人" in clarify["explanation"]

        failed, opened = await call(client, "open_citation", evidence_id=cite["evidence_id"], context_lines=1)
        assert not failed and opened["verified"] is True
        assert [(line["number"], line["text"]) for line in opened["context"]["lines"]] == [
            (5, "主题：借阅台"),
            (6, "开放时间：周二至周五十四点到十七点。"),
            (7, "地点：图书馆一楼大厅东侧"),
        ]

        # The restricted file is invisible to this (anonymous) session: like an absent subject.
        _, hidden = await call(client, "ask", question="员工休息室 开放时间")
        _, absent = await call(client, "ask", question="火星基地站 开放时间")
        assert (hidden["status"], hidden["reason"]) == (absent["status"], absent["reason"])
        assert hidden["message"].replace("员工休息室", "X") == absent["message"].replace("火星基地站", "X")  # as long as the hidden name

        failed, message = await call(
            client, "ask", question="员工休息室 开放时间", as_name="bob", groups=["staff"]
        )
        assert failed and "does not take a principal from the tool call ('bob')" in message
        assert "answered as anonymous" in message
        failed, message = await call(client, "ask", question="  ")
        assert failed and "the question is empty" in message
        failed, message = await call(client, "open_citation", evidence_id="ev_nope")
        assert failed and "no evidence unit 'ev_nope'" in message

        failed, status = await call(client, "index_status")
        assert not failed and (status["index"], status["stale"]) == ("ready", False)
        owner_units = status["units"] + 1  # the anonymous session does not count the staff file
        assert owner_units == 135  # the demo corpus (its two prose lines are sentence units) + the staff file

    session(corpus, body=body)


def test_trusted_session_answers_as_the_named_principal_and_sees_staleness(corpus: Path) -> None:
    async def body(client: Any) -> None:
        failed, result = await call(
            client, "ask", question="员工休息室 开放时间", as_name="bob", groups=["staff"]
        )
        assert not failed and result["answer"] == "七点到二十二点"
        evidence_id = result["citations"][0]["evidence_id"]
        failed, opened = await call(
            client, "open_citation", evidence_id=evidence_id, as_name="bob", groups=["staff"]
        )
        assert not failed and opened["quote"] == "开放时间：七点到二十二点"
        failed, _ = await call(client, "open_citation", evidence_id=evidence_id)
        assert failed, "without a principal the session is anonymous and cannot open it"
        failed, message = await call(client, "ask", question="借阅台 开放时间", as_name="bob", groups=["a;b"])
        assert failed and "group names are letters" in message

        (corpus / "documents" / "library.md").write_text("主题：借阅台\n开放时间：全天\n", encoding="utf-8")
        _, status = await call(client, "index_status")
        assert status["stale"] is True and status["changed"]["modified"] == ["documents/library.md"]
        _, stale = await call(client, "ask", question="借阅台 开放时间")
        assert (stale["status"], stale["reason"]) == ("refused", "index_stale")
        assert "rebuilt" in stale["explanation"]

    session(corpus, "--trust-principals", body=body)


def test_a_principal_fixed_at_start_needs_no_claim(corpus: Path) -> None:
    async def body(client: Any) -> None:
        _, result = await call(client, "ask", question="员工休息室 开放时间", include_trace=True)
        assert result["answer"] == "七点到二十二点"
        assert result["trace"]["events"][0] == {"step": "principal", "name": "bob", "groups": ["staff"]}

    session(corpus, "--as", "bob", "--groups", "staff", body=body)


def test_owner_with_a_principal_is_a_usage_error(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", str(corpus), "--owner", "--as", "bob"]) == 2
    assert "either --owner or --as NAME" in capsys.readouterr().err
    assert main(["mcp", str(corpus / "nowhere")]) == 1


def test_streamable_http_on_loopback_checks_host_and_origin(corpus: Path) -> None:
    import socket
    import subprocess
    import time

    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    process = subprocess.Popen(
        [sys.executable, "-m", "rag_lab.cli", "mcp", str(corpus), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            pytest.fail("the HTTP transport did not start")

        async def body() -> None:
            async with Client(url, read_timeout_seconds=60) as client:
                _, answered = await call(client, "ask", question="借阅台 开放时间")
                assert answered["answer"] == "周二至周五十四点到十七点。"

        asyncio.run(body())
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        headers = {"Accept": "application/json, text/event-stream"}
        rebound = httpx.post(url, json=ping, headers={**headers, "Host": f"evil.example:{port}"}, timeout=10)
        assert rebound.status_code == 421
        cross_site = httpx.post(
            url, json=ping, headers={**headers, "Origin": "http://evil.example"}, timeout=10
        )
        assert cross_site.status_code == 403
    finally:
        process.terminate()
        process.wait(10)
    assert main(["mcp", str(corpus), "--http", "70000"]) == 2
