"""End to end in a real browser: Debian's Chromium, driven by Playwright, against uvicorn.

Skips (with the reason) only when /usr/bin/chromium is missing and cannot be
installed; `.ci/install-browser` installs it on CI.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from server_support import INJECTION

from rag_lab.server import create_app

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshot.png"


def ensure_chromium() -> str | None:
    """None when Chromium is there (installing it if possible), else why it is not."""
    if CHROMIUM.exists():
        return None
    if shutil.which("apt-get") is None:
        return "/usr/bin/chromium is missing and apt-get is not available to install it"
    script = Path(__file__).resolve().parents[2] / ".ci" / "install-browser"
    command = ["bash", str(script)] if script.exists() else ["apt-get", "install", "-y", "-qq", "chromium"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    if CHROMIUM.exists():
        return None
    return f"/usr/bin/chromium is missing and could not be installed: {done.stderr.strip()[-300:]}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def server(corpus: Path) -> Iterator[str]:
    """uvicorn on a free port; it trusts named principals (the member test asks "as bob")."""
    port = free_port()
    config = uvicorn.Config(
        create_app(corpus, trust_principals=True),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
    )
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/api/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.05)
    else:
        pytest.fail("uvicorn did not start on " + base)
    yield base
    instance.should_exit = True
    thread.join(10)


@pytest.fixture
def page(server: str) -> Iterator[Any]:
    reason = ensure_chromium()
    if reason is not None:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        context = browser.new_context(viewport={"width": 1280, "height": 760})
        tab = context.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        tab.goto(server + "/")
        yield tab
        context.close()
        browser.close()
        assert errors == []


def ask(page: Any, question: str) -> None:
    page.fill("#question", question)
    page.click("#submit")
    page.wait_for_selector("#result[data-status]")


def test_ask_open_citation_and_see_the_span(page: Any) -> None:
    ask(page, "借阅台 开放时间")
    assert page.text_content("#result .status") == "Answered"
    assert page.text_content("#result .answer-text") == "周二至周五十四点到十七点。"
    page.click("#result ol.citations .cite")
    page.wait_for_selector("#viewer mark")
    assert page.text_content("#viewer mark") == "开放时间：周二至周五十四点到十七点。"
    assert page.text_content("#viewer tr.cited td.num") == "6"
    assert "re-verified just now" in page.text_content("#viewer .verified.ok")
    sha = page.text_content("#viewer .sha")
    assert sha.startswith("sha256 ") and len(sha.split()[1]) == 64
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)


def test_script_and_onerror_in_a_value_render_as_text(page: Any) -> None:
    ask(page, "注入台 公告")
    assert page.text_content("#result .answer-text") == INJECTION
    page.click("#result ol.citations .cite")
    page.wait_for_selector("#viewer mark")
    assert page.text_content("#viewer mark") == "公告：" + INJECTION
    assert page.locator("#result script, #result img, #viewer script, #viewer img").count() == 0
    assert page.locator("#viewer td.text", has_text="<b>粗体</b> & 其他").count() == 1
    page.wait_for_timeout(200)
    assert page.evaluate("typeof window.pwned") == "undefined"


def test_conflict_shows_every_side(page: Any) -> None:
    ask(page, "测试台 开放时间")
    assert page.text_content("#result .status") == "Refused"
    assert "no source is preferred" in page.text_content("#result .why").lower()
    sides = page.locator("#result .side")
    assert sides.count() == 2
    assert [sides.nth(i).locator(".value").text_content() for i in range(2)] == [
        "周三上午九点。",
        "周四上午十点。",
    ]
    assert "documents/test_bench_a.md:2" in sides.nth(0).text_content()
    assert "documents/test_bench_b.md:2" in sides.nth(1).text_content()
    page.screenshot(path=str(SCREENSHOT.with_name("screenshot-conflict.png")), full_page=True)


def test_refusal_says_why_and_what_is_missing(page: Any) -> None:
    ask(page, "借阅台")
    assert page.text_content("#result .status") == "Needs clarification"
    assert "开放时间" in page.text_content("#result .missing")
    ask(page, "借阅台 容量")
    assert page.text_content("#result .why").startswith("No source in the corpus supports an answer")
    assert "借阅台 容量" in page.text_content("#result .missing")


def test_image_citation_draws_the_bbox(page: Any) -> None:
    ask(page, "红色 小 圆形")
    page.click("#result ol.citations .cite")
    page.wait_for_selector("#viewer .bbox:not([hidden])")
    image = page.locator("#viewer .figure img").bounding_box()
    box = page.locator("#viewer .bbox").bounding_box()
    scale = image["width"] / 200
    assert abs(box["x"] - (image["x"] + 45 * scale - 2)) < 1.5
    assert abs(box["width"] - (30 * scale + 4)) < 1.5
    assert page.evaluate("document.querySelector('#viewer img').naturalWidth") == 200


def test_asking_as_a_member_opens_its_restricted_citation(page: Any) -> None:
    ask(page, "员工休息室 开放时间")
    assert page.text_content("#result .status") != "Answered"
    page.click("details summary")
    page.fill("#as_name", "bob")
    page.fill("#groups", "staff")
    ask(page, "员工休息室 开放时间")
    page.wait_for_selector("#result .answer-text")
    assert page.text_content("#result .answer-text") == "七点到二十二点"
    page.click("#result ol.citations .cite")
    page.wait_for_selector("#viewer mark")
    assert page.text_content("#viewer mark") == "开放时间：七点到二十二点"
