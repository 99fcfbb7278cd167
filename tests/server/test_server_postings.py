"""The server's views of its index (the owner's and one per principal) share one postings bound:
however many principals ask, what they keep together stays within ``--cache-mib``."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from rag_lab.data.access import Principal
from rag_lab.server.ask import ask
from rag_lab.server.state import ServerState

DAY = date(2026, 12, 1)
QUESTIONS = ["借阅台 开放时间", "员工休息室的开放时间是什么？", "注入台的公告是什么？", "新馆什么时候开放？"]
PRINCIPALS = [None] + [Principal(f"p{n}", frozenset({"staff"} if n % 2 else set())) for n in range(6)]
LIMIT = 16 * 1024  # a few terms (each is charged at least PER_TERM_BYTES)


def answers(state: ServerState, after_each: Any = lambda: None) -> list[Any]:
    out = []
    for principal in PRINCIPALS:
        for question in QUESTIONS:
            out.append(ask(state, question, as_of=DAY, principal=principal))
            after_each()
    return out


def held(state: ServerState) -> int:
    with state.reading() as version:
        views = [version.index, *(view.index for view in version._views.values())]
    return sum(view._postings_cache.cached_bytes for view in views)


def test_every_view_keeps_its_postings_within_one_shared_bound(corpus: Path) -> None:
    roomy = ServerState(corpus, None, watch=False)
    expected = answers(roomy)
    assert held(roomy) == roomy.postings.cached_bytes > LIMIT  # unbounded, the views keep more
    tight = ServerState(corpus, None, watch=False, postings_cache_bytes=LIMIT)
    seen: list[int] = []

    def within() -> None:
        seen.append(tight.postings.cached_bytes)
        assert held(tight) == tight.postings.cached_bytes <= LIMIT

    assert answers(tight, within) == expected  # the bound changes what is kept, never an answer
    assert max(seen) > LIMIT // 2
    with tight.reading() as version:
        assert len(version._views) == len(PRINCIPALS) - 1
    tight.stop()  # the version retired: its views closed, their room given back
    roomy.stop()
    assert tight.postings.cached_bytes == 0 == roomy.postings.cached_bytes


def test_serve_takes_the_bound_in_mib(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    from rag_lab.cli import main
    from rag_lab.server import app

    made: list[int] = []

    class Recording(ServerState):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            made.append(self.postings.limit)

    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: None)
    monkeypatch.setattr(app, "ServerState", Recording)
    assert main(["serve", str(corpus), "--cache-mib", "48"]) == 0
    assert main(["serve", str(corpus)]) == 0
    assert made == [48 * 2**20, 256 * 2**20]
    for bad in ("0", "-3", "lots"):
        with pytest.raises(SystemExit) as exited:
            main(["serve", str(corpus), "--cache-mib", bad])
        assert exited.value.code == 2
