"""The PostgreSQL store's own edges: how it is selected, and what it says when it cannot work."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rag_lab.cli import main
from rag_lab.errors import IndexError_
from rag_lab.index import build_index
from rag_lab.index.backend import is_database, open_store, resolve_location, shown_location, store_exists
from rag_lab.retrieval import query_once

UNREACHABLE = "postgresql://alice:hunter2@127.0.0.1:9/none"  # port 9 (discard): nothing listens


def test_locations_are_told_apart_and_shown_without_a_password(tmp_path: Path) -> None:
    assert is_database("postgresql://h/db") and is_database("postgres://h/db")
    assert not is_database("index.sqlite") and not is_database(tmp_path) and not is_database(None)
    assert resolve_location(tmp_path, None) == tmp_path / ".rag_lab" / "index.sqlite"
    assert resolve_location(tmp_path, "postgresql://h/db") == "postgresql://h/db"
    assert resolve_location(tmp_path, str(tmp_path / "x.sqlite")) == tmp_path / "x.sqlite"
    assert shown_location(UNREACHABLE) == "postgresql://alice@127.0.0.1:9/none"
    assert shown_location("postgresql://:pw@h/db") == "postgresql://h/db"
    assert shown_location("postgresql://h/db") == "postgresql://h/db"


def test_cli_store_usage_errors(demo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as both:
        main(["ask", str(demo_root), "借阅台 开放时间", "--index", "x.sqlite", "--store", "postgresql://h/db"])
    assert both.value.code == 2
    assert "give --index FILE or --store URL, not both" in capsys.readouterr().err
    with pytest.raises(SystemExit) as not_url:
        main(["index", str(demo_root), "--store", "index.sqlite"])
    assert not_url.value.code == 2
    assert "--store takes a database URL starting with postgresql:// or postgres://" in capsys.readouterr().err


@pytest.mark.usefixtures("pg_database")  # the case needs psycopg (skips with the reason without it)
def test_an_unreachable_server_is_a_typed_error_without_the_password(
    demo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["index", str(demo_root), "--store", UNREACHABLE]) == 1
    err = capsys.readouterr().err
    assert "cannot connect to the index database 'postgresql://alice@127.0.0.1:9/none'" in err
    assert "start the server or fix the URL given to --store" in err and "hunter2" not in err
    with pytest.raises(IndexError_, match="cannot connect"):
        query_once("借阅台 开放时间", demo_root, index_path=UNREACHABLE)


def test_an_empty_database_says_how_to_build(demo_root: Path, pg_database: Callable[[], str]) -> None:
    url = pg_database()
    assert not store_exists(url)
    with pytest.raises(IndexError_, match=r"no index in the database .*; build it with `rag-lab index ROOT --store"):
        query_once("借阅台 开放时间", demo_root, index_path=url)
    build_index(demo_root, url)
    assert store_exists(url)
    assert query_once("借阅台 开放时间", demo_root, index_path=url)["answer"] == "周二至周五十四点到十七点。"


def test_a_database_that_is_not_utf8_is_refused(demo_root: Path, pg_database: Callable[[], str]) -> None:
    import psycopg

    url = pg_database()
    name = url.rsplit("/", 1)[1] + "_ascii"
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
    try:
        with pytest.raises(IndexError_, match="has encoding SQL_ASCII; rag_lab needs a UTF8 database"):
            build_index(demo_root, url.rsplit("/", 1)[0] + "/" + name)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name}")


def test_another_layout_version_is_refused(demo_root: Path, pg_database: Callable[[], str]) -> None:
    import psycopg

    url = pg_database()
    build_index(demo_root, url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE rag_lab.generations SET layout = layout + 1")
    with pytest.raises(IndexError_, match="has layout version 2, this rag_lab reads version 1; rebuild it"):
        open_store(url)
    build_index(demo_root, url)  # a rebuild writes the current layout
    with open_store(url) as store:
        assert store.unit_count > 0


def test_per_label_statistics_count_only_what_the_caller_sees(
    make_corpus: Callable[..., Path], pg_database: Callable[[], str]
) -> None:
    from rag_lab.data.access import Principal
    from rag_lab.index.terms import codes_of, normalise

    root = make_corpus(
        {
            "documents/a.md": "主题：甲台\n地点：东楼\n",
            "documents/b.md": "主题：乙台\n权限：hr\n地点：东楼二层\n",
        }
    )
    url = pg_database()
    build_index(root, url)
    codes, real = codes_of(normalise("东楼"))
    term = int(codes[real][0])
    with open_store(url) as owner, open_store(url, Principal("bob", frozenset({"staff"}))) as bob:
        assert owner.postings([term])[term][0] == 2 and bob.postings([term])[term][0] == 1
        assert (owner.unit_count, bob.unit_count) == (2, 1)
        assert bob.units_for_key("乙台", "地点") == [] and bob.name_kinds(["乙台"]) == {}


def test_fresh_check_takes_the_walk_digest_on_postgresql(
    make_corpus: Callable[..., Path], pg_database: Callable[[], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast freshness path of schema 5 holds for a generation too: an unchanged corpus is
    fresh without one fingerprint read from the database; a change takes the careful path."""
    from rag_lab.index import check_freshness
    from rag_lab.index.freshness import digest_of, fast_walk

    root = make_corpus({"documents/a.md": "主题：甲\n地点：一楼\n", "documents/b/c.md": "主题：乙\n地点：二楼\n"})
    url = pg_database()
    build_index(root, url)
    with open_store(url) as store:
        walked = fast_walk(root)
        assert walked is not None and store.walk_digest() == digest_of(*walked)  # type: ignore[attr-defined]

        def no_fingerprints() -> None:
            raise AssertionError("the fast path must not load fingerprints")

        monkeypatch.setattr(store, "fingerprints", no_fingerprints)
        assert not check_freshness(root, store).stale
        monkeypatch.undo()
        (root / "documents" / "a.md").write_text("主题：甲\n地点：三楼\n", encoding="utf-8")
        assert check_freshness(root, store).as_dict() == {"added": [], "deleted": [], "modified": ["documents/a.md"]}
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:  # a generation built before the digest existed
        row = conn.execute("SELECT generation FROM rag_lab.current").fetchone()
        assert row is not None
        conn.execute(f"DELETE FROM rag_lab_g{int(row[0])}.meta WHERE key = 'walk_digest'")
    with open_store(url) as store:
        assert store.walk_digest() == ""  # type: ignore[attr-defined]
        assert check_freshness(root, store).modified == ["documents/a.md"]
