"""Fixtures for the server tests: a copy of the demo corpus with its index, and a client."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_support import BASE, INJECTION
from starlette.testclient import TestClient

import rag_lab
from rag_lab.index import build_index
from rag_lab.server import create_app

DEMO = Path(rag_lab.__file__).parent / "demo" / "corpus"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    shutil.copytree(DEMO, root)
    (root / "documents" / "injection.md").write_text(
        f"# 注入\n\n主题：注入台\n公告：{INJECTION}\n地点：<b>粗体</b> & 其他\n", encoding="utf-8"
    )
    (root / "documents" / "staff_room.md").write_text(
        "主题：员工休息室\n权限：staff\n开放时间：七点到二十二点\n", encoding="utf-8"
    )
    build_index(root)
    return root


@pytest.fixture
def client(corpus: Path) -> Iterator[TestClient]:
    with TestClient(create_app(corpus), base_url=BASE) as test_client:
        yield test_client


@pytest.fixture
def trusted(corpus: Path) -> Iterator[TestClient]:
    """A client of a server that takes the principal a request names (behind a trusted front)."""
    with TestClient(create_app(corpus, trust_principals=True), base_url=BASE) as test_client:
        yield test_client
