"""End to end in a real browser: Debian's Chromium, driven by Playwright, against uvicorn.

Skips (with the reason) only when /usr/bin/chromium is missing and cannot be
installed; `.ci/install-browser` installs it on CI. Screenshots go to ``tmp_path``;
``python scripts/refresh_screenshots.py`` runs the ``*_screenshot`` tests with
``RAG_LAB_SCREENSHOTS`` set to ``docs/`` to refresh the pictures in the docs.
"""

from __future__ import annotations

import json
import os
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
#: Where the ``*_screenshot`` tests save their pictures (default: the test's tmp_path).
SCREENSHOTS = os.environ.get("RAG_LAB_SCREENSHOTS")


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


def screenshot(page: Any, tmp_path: Path, name: str) -> Path:
    target = (Path(SCREENSHOTS) if SCREENSHOTS else tmp_path) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    page.wait_for_selector("#result .card .verified:not(.pending)")
    page.screenshot(path=str(target), full_page=True)
    assert target.stat().st_size > 10_000
    return target


def no_injected_elements(page: Any) -> None:
    scope = "#result, #viewer, #preview"
    assert page.locator(", ".join(f"{s} {tag}" for s in scope.split(", ") for tag in ("script", "img"))).count() == 0
    page.wait_for_timeout(200)
    assert page.evaluate("typeof window.pwned") == "undefined"


def test_answer_with_citation_opened_screenshot(page: Any, tmp_path: Path) -> None:
    ask(page, "借阅台 开放时间")
    assert page.text_content("#result .status") == "已回答"
    assert page.text_content("#result .sentence") == "借阅台的开放时间是：周二至周五十四点到十七点。[1]"
    assert page.text_content("#result .answer-value") == "周二至周五十四点到十七点。"
    card = page.locator("#result ol.sources .card")
    assert card.count() == 1
    page.wait_for_selector("#result .card .verified.ok")
    assert card.locator(".card-title").text_content() == "借阅台"  # the document's first heading
    assert card.locator(".card-where").text_content() == "documents/library.md · 第 6 行"
    assert card.locator(".card-quote").text_content() == "开放时间：周二至周五十四点到十七点。"
    assert card.locator(".verified.ok").text_content().startswith("✓ 刚刚重新核验")
    # Hashes and code-point spans are one click deeper.
    assert not card.locator(".sha").is_visible()
    card.locator("details.tech summary").click()
    sha = card.locator(".sha").text_content()
    assert sha.startswith("sha256 ") and len(sha.split()[1]) == 64
    assert card.locator(".span-words").text_content() == "码位区间 [43, 61)（按 Unicode 码位计），第 6 行"
    page.click("#result .sentence .cite")
    page.wait_for_selector("#viewer mark")
    assert page.text_content("#viewer mark") == "开放时间：周二至周五十四点到十七点。"
    assert page.text_content("#viewer tr.cited td.num") == "6"
    assert "刚刚重新核验" in page.text_content("#viewer .verified.ok")
    assert page.text_content("#viewer h2") == "[1] 借阅台"
    card.locator("details.tech summary").click()  # folded again for the picture
    shot = screenshot(page, tmp_path, "screenshot.png")
    assert SCREENSHOTS or shot.parent == tmp_path


def test_english_switch_relabels_the_page_and_is_remembered(page: Any, server: str) -> None:
    ask(page, "测试台 开放时间")
    assert page.text_content("#result .status") == "未回答"
    assert page.text_content("#lang") == "English"
    page.click("#lang")
    assert page.text_content("#result .status") == "Refused"
    assert page.text_content("#result .why").startswith("The sources disagree. No source is preferred")
    assert page.text_content("label[for=question]") == "Question"
    assert page.text_content("#submit") == "Ask"
    assert page.text_content("#lang") == "中文"
    assert page.evaluate("document.documentElement.lang") == "en"
    page.reload()
    page.wait_for_selector("#question")
    assert page.text_content("#submit") == "Ask"
    ask(page, "借阅台 开放时间")
    assert page.text_content("#result .sentence") == "开放时间 of 借阅台: 周二至周五十四点到十七点。[1]"
    page.wait_for_selector("#result .card .verified.ok")
    assert page.text_content("#result .card .verified.ok").startswith("✓ re-verified just now")
    page.click("#lang")
    assert page.text_content("#submit") == "提问"


def test_script_and_onerror_in_a_value_render_as_text(page: Any) -> None:
    ask(page, "注入台 公告")
    assert page.text_content("#result .answer-value") == INJECTION
    page.hover("#result .sentence .cite")
    page.wait_for_selector("#preview .verified")
    assert page.text_content("#preview .preview-text") == "公告：" + INJECTION
    page.click("#result .sentence .cite")
    page.wait_for_selector("#viewer mark")
    assert page.text_content("#viewer mark") == "公告：" + INJECTION
    page.wait_for_selector("#result .card .verified.ok")
    assert page.text_content("#result .card-quote") == "公告：" + INJECTION
    assert page.locator("#viewer td.text", has_text="<b>粗体</b> & 其他").count() == 1
    no_injected_elements(page)


def crafted(server: str, **extra: Any) -> dict[str, Any]:
    """A real result for 注入台 公告, with keys other stages add (claims, text, field_match…)."""
    result: dict[str, Any] = httpx.post(server + "/api/ask", json={"question": "注入台 公告"}, timeout=30).json()
    result.update(extra)
    return result


def serve_result(page: Any, result: dict[str, Any]) -> None:
    body = json.dumps(result, ensure_ascii=False)
    page.route("**/api/ask", lambda route: route.fulfill(status=200, content_type="application/json", body=body))


def test_claims_marks_field_match_and_coverage_render_as_text(page: Any, server: str) -> None:
    result = crafted(server)
    evidence_id = result["citations"][0]["evidence_id"]
    result.update(
        claims=[
            {"text": f"公告写着 {INJECTION} [E1]", "evidence": ["E1"], "evidence_ids": [evidence_id], "supported": True},
            {"text": '<img src=x onerror="window.pwned=3">另一句 [E2]', "evidence": ["E2"],
             "evidence_ids": ["ev_not_cited"], "supported": False},
        ],
        text="ignored when claims are present [E1]",
        coverage=0.5,
        field_match={"asked": INJECTION, "field": "公告", "method": "alias", "score": 0.91, "runner_up": "<b>地点</b>"},
    )
    serve_result(page, result)
    ask(page, "注入台 公告")
    claims = page.locator("#result .sentence .claim")
    assert claims.count() == 2
    assert claims.nth(0).text_content() == f"公告写着 {INJECTION}[1]"
    assert claims.nth(0).locator(".cite").get_attribute("data-evidence-id") == evidence_id
    assert claims.nth(1).get_attribute("data-supported") == "false"
    assert claims.nth(1).locator(".cite").count() == 0  # an id the result does not cite gets no mark
    assert page.text_content("#result .field-match") == f"由「{INJECTION}」匹配到字段「公告」（别名表） · 次选：<b>地点</b>"
    assert page.text_content("#result .coverage") == "引用覆盖率：50%"
    page.click("#lang")
    assert page.text_content("#result .field-match") == f"matched 公告 from {INJECTION} (alias table) · runner-up: <b>地点</b>"
    no_injected_elements(page)


def test_text_with_markers_links_them_through_the_package_ids(page: Any, server: str) -> None:
    result = crafted(server)
    result.update(text=f"注入台的公告：{INJECTION}[E1]，另见 [E7]。", clarification={"options": [INJECTION, "注入台"]})
    serve_result(page, result)
    ask(page, "注入台 公告")
    sentence = page.locator("#result .sentence")
    assert sentence.text_content() == f"注入台的公告：{INJECTION}[1]，另见 [E7]。"
    assert sentence.locator(".cite").count() == 1 and sentence.locator("sup.unresolved").text_content() == "[E7]"
    assert [b.text_content() for b in page.locator("#result .choice").all()] == [INJECTION, "注入台"]
    no_injected_elements(page)


def test_conflict_sides_next_to_each_other_screenshot(page: Any, tmp_path: Path) -> None:
    ask(page, "测试台 开放时间")
    assert page.text_content("#result .status") == "未回答"
    assert page.text_content("#result .why").startswith("来源之间说法不一致。没有哪个来源被优先采信")
    sides = page.locator("#result .side")
    assert sides.count() == 2
    assert [sides.nth(i).locator(".value").text_content() for i in range(2)] == ["周三上午九点。", "周四上午十点。"]
    assert "documents/test_bench_a.md:2" in sides.nth(0).text_content()
    assert "documents/test_bench_b.md:2" in sides.nth(1).text_content()
    first, second = sides.nth(0).bounding_box(), sides.nth(1).bounding_box()
    assert first["y"] == second["y"] and second["x"] >= first["x"] + first["width"]  # side by side
    screenshot(page, tmp_path, "screenshot-conflict.png")
    page.set_viewport_size({"width": 800, "height": 760})
    first, second = sides.nth(0).bounding_box(), sides.nth(1).bounding_box()
    assert first["y"] == second["y"], "still side by side at 800 px"


def test_clarification_options_are_buttons_that_ask_again(page: Any) -> None:
    ask(page, "借阅台")
    assert page.text_content("#result .status") == "需要澄清"
    choices = page.locator("#result .choice")
    assert [c.text_content() for c in choices.all()] == ["借用期限", "地点", "开放时间", "联系电话", "负责人"]
    page.click("#result .choice >> text=开放时间")
    page.wait_for_selector("#result[data-status=answered]")
    assert page.input_value("#question") == "借阅台 开放时间"
    assert page.text_content("#result .answer-value") == "周二至周五十四点到十七点。"
    ask(page, "开放时间")
    assert page.text_content("#result .status") == "需要澄清"
    page.click("#result .choice >> text=测试台")
    page.wait_for_selector("#result[data-status=refused]")
    assert page.input_value("#question") == "测试台 开放时间"


def test_a_new_question_clears_the_evidence_pane(page: Any) -> None:
    ask(page, "借阅台 开放时间")
    page.click("#result .sentence .cite")
    page.wait_for_selector("#viewer mark")
    assert page.locator(".panes.with-viewer").count() == 1
    ask(page, "红色 小 圆形")
    assert page.locator("#viewer").is_hidden()
    assert page.evaluate("document.querySelector('#viewer').childElementCount") == 0
    assert page.locator(".panes.with-viewer").count() == 0


def test_hover_previews_the_cited_line(page: Any) -> None:
    ask(page, "借阅台 开放时间")
    page.hover("#result .sentence .cite")
    page.wait_for_selector("#preview .verified.ok")
    assert page.text_content("#preview .preview-where") == "借阅台 · documents/library.md:6"
    assert page.text_content("#preview .preview-text") == "开放时间：周二至周五十四点到十七点。"
    page.mouse.move(5, 5)
    assert page.locator("#preview").is_hidden()


def test_refusal_says_why_and_what_is_missing(page: Any) -> None:
    ask(page, "借阅台 容量")
    assert page.text_content("#result .why").startswith("语料中没有来源支持这个回答")
    assert "借阅台 容量" in page.text_content("#result .missing")
    assert page.locator("#result ol.sources").count() == 0


def test_favicon_is_served(page: Any, server: str) -> None:
    href = page.evaluate("document.querySelector('link[rel=icon]').href")
    assert href == server + "/static/favicon.svg"
    response = httpx.get(href, timeout=10)
    assert response.status_code == 200 and response.headers["content-type"].startswith("image/svg+xml")
    assert response.text.startswith("<svg")


def test_image_citation_draws_the_bbox(page: Any) -> None:
    ask(page, "红色 小 圆形")
    assert page.text_content("#result .sentence") == "1 张图片重新测量为：红色 小 圆形[1]"
    page.click("#result .sentence .cite")
    page.wait_for_selector("#viewer .bbox:not([hidden])")
    image = page.locator("#viewer .figure img").bounding_box()
    box = page.locator("#viewer .bbox").bounding_box()
    scale = image["width"] / 200
    assert abs(box["x"] - (image["x"] + 45 * scale - 2)) < 1.5
    assert abs(box["width"] - (30 * scale + 4)) < 1.5
    assert page.evaluate("document.querySelector('#viewer img').naturalWidth") == 200


def test_asking_as_a_member_opens_its_restricted_citation(page: Any) -> None:
    ask(page, "员工休息室 开放时间")
    assert page.text_content("#result .status") != "已回答"
    page.click("details summary")
    page.fill("#as_name", "bob")
    page.fill("#groups", "staff")
    ask(page, "员工休息室 开放时间")
    page.wait_for_selector("#result .answer-value")
    assert page.text_content("#result .answer-value") == "七点到二十二点"
    page.click("#result .sentence .cite")
    page.wait_for_selector("#viewer mark")
    assert page.text_content("#viewer mark") == "开放时间：七点到二十二点"


def test_only_the_first_30_cards_are_reverified_at_once(page: Any, server: str) -> None:
    result = crafted(server)
    real = result["citations"][0]
    result["citations"] = [real] + [{**real, "evidence_id": f"ev_fake_{i:02d}"} for i in range(1, 31)]
    serve_result(page, result)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    ask(page, "注入台 公告")
    cards = page.locator("#result .card")
    assert cards.count() == 31
    page.wait_for_selector("#result .card:nth-child(30) .verified.failed")
    assert "unknown_evidence" in cards.nth(29).locator(".verified").text_content()
    assert cards.nth(30).locator(".verified").text_content() == "打开时重新核验"
    assert not any(url.endswith("/api/evidence/ev_fake_30") for url in requested)
    cards.nth(30).locator(".open").click()
    page.wait_for_selector("#viewer .error")
    assert any(url.endswith("/api/evidence/ev_fake_30") for url in requested)
