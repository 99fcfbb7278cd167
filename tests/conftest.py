"""Shared fixtures: corpora are built in ``tmp_path`` (never the package's demo folder)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import rag_lab
from rag_lab.index import build_index

DEMO_CORPUS = Path(rag_lab.__file__).resolve().parent / "demo" / "corpus"

MakeCorpus = Callable[..., Path]


def write_files(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write ``{relative path: text or bytes}`` under ``root`` (text as UTF-8, newlines untouched)."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode("utf-8") if isinstance(content, str) else content
        path.write_bytes(data)
    return root


@pytest.fixture
def make_corpus(tmp_path: Path) -> MakeCorpus:
    """``make_corpus({"documents/a.md": "主题：X\\n字段：值\\n"}, name="corpus")`` → the root."""

    def make(files: dict[str, str | bytes], name: str = "corpus") -> Path:
        root = tmp_path / name
        (root / "documents").mkdir(parents=True, exist_ok=True)
        return write_files(root, files)

    return make


@pytest.fixture
def demo_root(tmp_path: Path) -> Path:
    """A byte-identical copy of the demo corpus (CRLF, BOM and identical copies preserved)."""
    root = tmp_path / "demo"
    shutil.copytree(DEMO_CORPUS, root)
    return root


@pytest.fixture
def indexed_demo(demo_root: Path) -> Path:
    """The demo copy with a fresh index at ``ROOT/.rag_lab/index.sqlite``."""
    build_index(demo_root)
    return demo_root
