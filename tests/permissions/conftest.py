"""Fixtures for the permission tests; the corpora themselves are described in perm_corpora.py."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from perm_corpora import add_hidden

from rag_lab.demo import corpus_path
from rag_lab.index import build_index
from store_fixtures import store_of


@pytest.fixture(scope="module")
def corpora_a() -> dict[str, Path]:
    return {}


@pytest.fixture
def corpus_a(
    request: pytest.FixtureRequest, corpora_a: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The demo corpus, indexed; shared by a module (one per store) and never modified."""
    kind = store_of(request)  # modules that run against both stores: tests/conftest.py
    if kind not in corpora_a:
        root = tmp_path_factory.mktemp("perm-a") / "corpus"
        shutil.copytree(corpus_path(), root)
        build_index(root)
        corpora_a[kind] = root
    return corpora_a[kind]


@pytest.fixture
def make_b(tmp_path: Path) -> Callable[[str], Path]:
    """``make_b(case)`` → an indexed copy of the demo corpus plus the hidden documents of ``case``."""

    def make(case: str) -> Path:
        root = tmp_path / f"b-{case}"
        shutil.copytree(corpus_path(), root)
        add_hidden(root, case)
        build_index(root)
        return root

    return make
