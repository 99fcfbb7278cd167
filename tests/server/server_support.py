"""Shared values and helpers of the server tests (a unique module name: several
test folders have a ``conftest.py``, so ``from conftest import`` would be ambiguous)."""

from __future__ import annotations

import time
from collections.abc import Callable

from rag_lab.data.access import Principal

#: Test clients ask by a loopback name: the server refuses any other Host (DNS rebinding).
BASE = "http://127.0.0.1"
ANONYMOUS = Principal("anonymous", frozenset())
STAFF = {"name": "bob", "groups": ["staff"]}
INJECTION = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'


def wait_for(condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    """Poll ``condition`` until it holds (the watcher delivers events asynchronously)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()
