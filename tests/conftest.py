"""Shared fixtures: corpora are built in ``tmp_path`` (never the package's demo folder)."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import rag_lab
from rag_lab.index import build_index

DEMO_CORPUS = Path(rag_lab.__file__).resolve().parent / "demo" / "corpus"

MakeCorpus = Callable[..., Path]

# The server tests (their conftest included) need these extras' modules. Without them the
# folder is collected as one clean skip, so the core can be tested without extras (.ci/run);
# with the extras installed nothing may skip (.ci/run fails on any skip there).
SERVER_TESTS = Path(__file__).resolve().parent / "server"
SERVER_NEEDS = {"starlette": "serve", "uvicorn": "serve", "watchfiles": "serve",
                "httpx": "test", "httpx2": "test", "playwright": "test"}


class MissingExtras(pytest.Collector):
    """Stands for a test folder whose optional extras are not installed; its conftest is not loaded."""

    reason = ""

    def collect(self) -> list[pytest.Item]:
        pytest.skip(self.reason)


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if path.resolve() != SERVER_TESTS:
        return None
    missing = sorted(name for name in SERVER_NEEDS if importlib.util.find_spec(name) is None)
    if not missing:
        return None
    extras = ",".join(sorted({SERVER_NEEDS[name] for name in missing}))
    node = MissingExtras.from_parent(parent, name=path.name, path=path)
    node.reason = f"the server tests need {', '.join(missing)}: pip install '.[{extras}]'"
    return node


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
