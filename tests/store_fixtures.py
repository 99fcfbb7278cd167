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
