"""Helpers for test modules that run against both stores (the fixtures are in tests/conftest.py)."""

from __future__ import annotations

import pytest


def store_of(request: pytest.FixtureRequest) -> str:
    """The store the requesting test runs against: its ``store`` parameter, else ``sqlite``.

    A corpus fixture shared by a module keys its cache by this, so that a module running
    against both stores indexes the corpus once per store (after that store is set up).
    """
    if "store" in request.fixturenames:
        return str(request.getfixturevalue("store"))
    return "sqlite"


# For a test of a module that runs against both stores which checks the SQLite file itself
# (deletes or opens ROOT/.rag_lab/index.sqlite): it runs against SQLite only. A parametrize
# mark, not a skip, so the full run (.ci/run: nothing may skip) stays clean.
sqlite_only = pytest.mark.parametrize("store", ["sqlite"], indirect=True, scope="module")
