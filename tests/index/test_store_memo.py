"""What an open Index remembers (unit rows by id and by key, fields of a subject, folded names,
warned lines, absent terms) gives exactly what a freshly opened Index reads, every time: new
unit dicts per call (a caller may change one), the same answers after a memo is emptied, and
each caller's own view (the memos belong to one open Index, so to one principal)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_lab.data.access import Principal
from rag_lab.index import Index, build_index, default_index_path
from rag_lab.index import store as store_module
from rag_lab.index.terms import query_terms

STAFF = Principal("bob", frozenset({"staff"}))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("memo")
    docs = root / "documents"
    docs.mkdir()
    for n in range(12):
        lines = ["权限：staff"] if n % 4 == 0 else []
        lines += [f"主题：馆{n % 5}", f"开放时间：周{n % 3}", f"电话：{n % 2}号", "备注：ＣＰＵ"]
        (docs / f"d{n:02d}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (docs / "warned.md").write_text("主题：馆1\n地点:二楼\n电话：9号\n", encoding="utf-8")  # ASCII colon: warned
    (docs / "folded.md").write_text("主题：ＣＰＵ馆\n电话：3号\n", encoding="utf-8")
    build_index(root)
    return root


def _asked(index: Index) -> list[object]:
    """Every remembered lookup once, as JSON-able values."""
    return [
        index.units_by_ids([5, 3, 3, 999, 1]),
        index.units_for_key("馆1", "开放时间"),
        index.unit_ids_for_key("馆1", "开放时间"),
        index.units_for_key("馆9", "开放时间"),
        index.units_of_source("documents/d04.md"),
        index.units_of_source("documents/d05.md"),
        index.fields_of("馆2"),
        sorted(map(sorted, index.folded_name_kinds(["cpu馆", "馆3", "无"]).values())),
        index.folded_name_kinds(["cpu馆", "馆3", "无"]).keys(),
        index.name_kinds(["馆1", "开放时间", "无此名"]),
        index.warned_lines_naming(["地点"], ["馆1"], 5),
        sorted(index.term_postings(query_terms("馆1的开放时间是什么？甲乙")).keys()),
    ]


def _json(values: list[object]) -> str:
    return json.dumps(values, ensure_ascii=False, sort_keys=True, default=lambda v: sorted(v) if isinstance(v, set | frozenset) else list(v))


@pytest.mark.parametrize("who", [None, STAFF])
def test_remembered_lookups_equal_a_fresh_index(corpus: Path, who: Principal | None, monkeypatch: pytest.MonkeyPatch) -> None:
    path = default_index_path(corpus)
    with Index(path, who) as fresh:
        asked = _asked(fresh)
        want = _json(asked)
    assert json.loads(want)[7] == [[["馆3", "subject"]], [["ＣＰＵ馆", "subject"]]] and asked[10]  # folded, warned
    assert len(asked[0]) == 3 and len(asked[1]) == 3 and len(asked[11]) == 4  # type: ignore[arg-type]
    assert len(asked[5]) >= 3 and len(asked[6]) == 3  # type: ignore[arg-type]
    with Index(path, who) as kept:
        for _ in range(3):
            assert _json(_asked(kept)) == want
        units = kept.units_by_ids([1, 2])
        units[1]["text"] = "changed by a caller"
        kept.units_for_key("馆1", "开放时间")[0]["value"] = "changed"
        kept.fields_of("馆2").append("changed")
        kept.units_of_source("documents/d05.md")[0]["span"][0] = -1
        assert _json(_asked(kept)) == want  # the memos hold rows, not the dicts handed out
        monkeypatch.setattr(store_module, "MEMO_ROWS", 2)  # memos emptied at almost every call
        monkeypatch.setattr(store_module, "MEMO_ENTRIES", 1)
        for _ in range(2):
            assert _json(_asked(kept)) == want


def test_memos_are_per_caller(corpus: Path) -> None:
    path = default_index_path(corpus)
    with Index(path) as owner, Index(path, Principal("eve", frozenset())) as guest:
        seen = owner.units_by_ids(range(1, 40))
        hidden = [uid for uid, unit in seen.items() if unit["source"] in {"documents/d00.md", "documents/d04.md"}]
        assert hidden and not set(guest.units_by_ids(hidden))
        assert set(owner.units_by_ids(hidden)) == set(hidden)
