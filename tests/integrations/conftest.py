"""Fixtures for the integration tests: the demo corpus plus one restricted file, indexed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import rag_lab
from rag_lab.index import build_index

DEMO = Path(rag_lab.__file__).parent / "demo" / "corpus"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    shutil.copytree(DEMO, root)
    (root / "documents" / "staff_room.md").write_text(
        "主题：员工休息室\n权限：staff\n开放时间：七点到二十二点\n", encoding="utf-8"
    )
    build_index(root)
    return root
