"""extract_documents / extract_corpus: spans reconstruct lines, ids are stable and unique."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.data import extract_corpus, extract_documents
from rag_lab.data.corpus import sha256_hex

# CJK, emoji (incl. a ZWJ sequence's parts), combining marks, full-width digits/letters, ASCII.
ALPHABET = (
    list("借阅台开放时间地点值字段测试数学高等")
    + ["😀", "👩", "\u200d", "💻", "🇨", "🇳"]
    + ["e\u0301", "\u0301", "\u0308", "a\u030a"]
    + list("０１２３４５６７８９ＡＢｚ")
    + list("abcXYZ-_.,!?（）《》，。 ")
    + ["\u3000", "：", "\u2028", "\x0c"]
)
TOKEN = st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=12).map("".join)


def _clean(text: str) -> bool:
    return bool(text) and text == text.strip()


FIELD = TOKEN.filter(lambda s: _clean(s) and "：" not in s and s not in {"主题", "生效日期", "失效日期"})
VALUE = TOKEN.filter(_clean)


def write(root: Path, rel: str, data: bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def build_doc(subject: str, pairs: list[tuple[str, str]], eol: str, bom: bool, final_eol: bool) -> bytes:
    lines = [f"主题：{subject}"] + [f"{f}：{v}" for f, v in pairs]
    text = ("\ufeff" if bom else "") + eol.join(lines) + (eol if final_eol else "")
    return text.encode("utf-8")


@settings(max_examples=60, deadline=None)
@given(
    subject=VALUE.filter(lambda s: "：" not in s),
    pairs=st.lists(st.tuples(FIELD, VALUE), min_size=1, max_size=6),
    eol=st.sampled_from(["\n", "\r\n"]),
    bom=st.booleans(),
    final_eol=st.booleans(),
)
def test_every_span_reconstructs_its_line(
    subject: str, pairs: list[tuple[str, str]], eol: str, bom: bool, final_eol: bool
) -> None:
    data = build_doc(subject, pairs, eol, bom, final_eol)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write(root, "documents/a.md", data)
        write(root, "documents/sub/b.md", data)  # byte-identical copy at another path
        first = extract_documents(root)
        second = extract_documents(root)
    decoded = data.decode("utf-8")
    assert len(first) == 2 * len(pairs)
    units_a = [u for u in first if u["source"] == "documents/a.md"]
    assert [(u["subject"], u["field"], u["value"]) for u in units_a] == [(subject, f, v) for f, v in pairs]
    for unit in first:
        start, end = unit["span"]
        assert decoded[start:end].strip() == unit["text"] == unit["field"] + "：" + unit["value"]
        assert unit["sha256"] == sha256_hex(data)
        assert unit["modality"] == "text"
    assert [u["line"] for u in units_a] == list(range(2, 2 + len(pairs)))
    if bom:
        assert min(u["span"][0] for u in units_a) > 1
    ids = [u["evidence_id"] for u in first]
    assert ids == [u["evidence_id"] for u in second]  # stable across extractions
    assert len(set(ids)) == len(ids)  # unique, also across identical files at two paths
    units_b = [u for u in first if u["source"] == "documents/sub/b.md"]
    assert [u["span"] for u in units_a] == [u["span"] for u in units_b]
    assert not {u["evidence_id"] for u in units_a} & {u["evidence_id"] for u in units_b}


def test_extract_documents_is_sorted_by_path_then_line(tmp_path: Path) -> None:
    write(tmp_path, "documents/b.md", "主题：乙\n地点：二楼\n容量：八人\n".encode())
    write(tmp_path, "documents/a/z.md", "主题：甲\n地点：一楼\n".encode())
    write(tmp_path, "documents/notes.rst", "主题：丙\n地点：三楼\n".encode())
    units = extract_documents(tmp_path)
    assert [(u["source"], u["line"]) for u in units] == [
        ("documents/a/z.md", 2),
        ("documents/b.md", 2),
        ("documents/b.md", 3),
    ]


def test_evidence_id_changes_with_the_file_bytes(tmp_path: Path) -> None:
    write(tmp_path, "documents/a.md", "主题：甲\n地点：一楼\n".encode())
    before = extract_documents(tmp_path)[0]["evidence_id"]
    write(tmp_path, "documents/a.md", "主题：甲\n地点：一楼\n\n".encode())
    after = extract_documents(tmp_path)[0]
    assert after["span"] == [5, 10]
    assert after["evidence_id"] != before
    assert after["evidence_id"].startswith("ev_") and len(after["evidence_id"]) == 27


def test_extract_corpus_reports_bad_files_and_keeps_the_rest(tmp_path: Path) -> None:
    write(tmp_path, "documents/good.md", "主题：甲\n地点：一楼\n".encode())
    write(tmp_path, "documents/bad.md", b"\xff\xfe")
    write(tmp_path, "documents/dates.md", "主题：乙\n生效日期：2020-13-01\n".encode())
    write(tmp_path, "images/empty.png", b"")
    records = {r.path: r for r in extract_corpus(tmp_path)}
    assert sorted(records) == ["documents/bad.md", "documents/dates.md", "documents/good.md", "images/empty.png"]
    assert records["documents/bad.md"].error == "invalid UTF-8 at byte offset 0 (invalid start byte); save the file as UTF-8"
    assert records["documents/dates.md"].error is None  # an unreadable window never drops the file
    assert [u["validity_unreadable"]["value"] for u in records["documents/dates.md"].units] == ["2020-13-01"]
    assert records["images/empty.png"].error is not None
    assert records["documents/good.md"].error is None
    assert [u["value"] for u in records["documents/good.md"].units] == ["一楼"]
    assert [u["value"] for u in extract_documents(tmp_path)] == ["2020-13-01", "一楼"]


def test_symlink_escaping_root_is_an_error_file(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("主题：外\n地点：外面\n", encoding="utf-8")
    root = tmp_path / "root"
    (root / "documents").mkdir(parents=True)
    (root / "documents" / "link.md").symlink_to(outside)
    records = extract_corpus(root)
    assert [(r.path, r.error) for r in records] == [
        ("documents/link.md", "symlink points outside ROOT or to no file; not indexed")
    ]
    assert extract_documents(root) == []


def test_warned_lines_are_found_as_iter_lines_numbers_them() -> None:
    from rag_lab.data import _lines_of
    from rag_lab.data.documents import _content, iter_lines

    text = "\ufeff地点:一\r\n\n  主题:乙  \n\n最后:行"
    every = {n: _content(line)[1] for n, _, line in iter_lines(text)}
    assert _lines_of(text, {1, 3, 5, 0, 9}) == {1: every[1], 3: every[3], 5: every[5]}
    assert _lines_of(text, {1, 3, 5}) == {1: "地点:一", 3: "主题:乙", 5: "最后:行"}
