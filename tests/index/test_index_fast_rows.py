"""The build's fast path (index/rows.py) must give exactly what the full path gives: the same batch
(files, warnings, rows, names, terms) for any document, and rows for the common shape."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_lab.data import parsed_record, read_bytes
from rag_lab.data.access import AccessRules
from rag_lab.data.corpus import walk
from rag_lab.index import build
from rag_lab.index.rows import batch_terms, field_rows, prose_rows
from rag_lab.index.store import stored_extra
from rag_lab.index.terms import unit_terms

SUBJECTS = ["文科楼共享观测站", "主楼", "Lab A", "表情😀", "e\u0301号楼", "ＣＰＵ室", "a：b"]
NAMES = ["开放时间", "地点", "容量", "CPU", "电话号码", "注意：", "Ⅻ", "主 题"]
VALUES = ["九点到五点", "120", "每次最多五本。请预约！", "😀🙂", "a: b", "x：y", "e\u0301", "\u3000值"]
ODD_LINES = [
    "",
    " ",
    "\t",
    "\u3000",
    "\u2028",
    "这是一个句子。它有两句话！",
    "# 标题",
    "| 房间 | 座位 |",
    "|---|---|",
    "| 一楼 | 120 |",
    "开放时间: 九点",
    "http://example.com",
    "：没有名字",
    "字段：",
    "字段 ：值",
    "字段： 值",
    "  字段：值",
    "字段：值  ",
    "\ufeff字段：值",
    "字段：值\r",
    "生效日期：2026-01-01",
    "失效日期：2025/1/1",
    "生效日期：明天",
    "权限：staff",
    "权限：bad group!",
    "主题：",
    "主题：\u3000",
    "地点：楼\u2028二层",
    " \r ",
    "\r",
]


@st.composite
def documents(draw: Any, odd: bool = True) -> bytes:
    """Lines of every kind (``odd``), or a 主题 line then subject, field and blank lines only."""
    lines = [] if odd else ["主题：" + draw(st.sampled_from(SUBJECTS))]
    kinds = ["subject", "field", "field", "blank"] + (["odd"] if odd else [])
    values = VALUES if odd else VALUES[:-1]  # the last starts with a space: a warning
    for _ in range(draw(st.integers(0, 9))):
        kind = draw(st.sampled_from(kinds))
        if kind == "subject":
            lines.append("主题：" + draw(st.sampled_from(SUBJECTS)))
        elif kind == "field":
            lines.append(draw(st.sampled_from(NAMES)) + "：" + draw(st.sampled_from(values)))
        elif kind == "blank":
            lines.append(draw(st.sampled_from(["", "  ", "\t"])))
        else:
            lines.append(draw(st.sampled_from(ODD_LINES)))
    text = "\n".join(lines) + draw(st.sampled_from(["", "\n"]))
    if odd:
        text = draw(st.sampled_from(["", "\ufeff"])) + text
    data = text.encode()
    if odd and draw(st.booleans()) and draw(st.booleans()):
        data += draw(st.sampled_from([b"\xff", b"\0", b"\xe4\xb8"]))
    return data


PROSE_LINES = [
    "这是一个句子。它有两句话！",
    "他说“好。”然后走了？？",
    "  开头有空格的句子；后面还有",
    "- 列表项一。",
    "1. 第一条；第二条",
    "12、编号的句子",
    "> 引用的话。",
    "——",
    "没有句号的一行",
    "含\"引号\\和反斜杠\"的句子。",
    "表情😀和𠀀。",
    "😀😀ab。",  # shorter in UTF-8 than 2 bytes per code point: stored as text (compact_text)
    "\u3000全角空格开头。\u3000",
    "ＡＢＣ全角字母。",
    "a: b 不是字段行",
    "：冒号开头的一句。",
    "#不是标题的一行。",
    "http://example.com 网址。",
]
# prose the field parser reads as a field line before any 主题: warned about, kept as prose (both paths)
PROSE_ODD = ["甲：乙。", "他说：“好。”", " 她问：行吗？"]
HEADINGS = ["# 标题", "## 概况", "### 细节", "## 概况 ##", "# #", "#\t制表符", "###### 最深", '# 带"引号"', "## \x1f控制"]


@st.composite
def prose_documents(draw: Any, odd: bool = True) -> bytes:
    """Headings, prose lines and blank lines (and, when ``odd``, any of ODD_LINES)."""
    pool = [PROSE_LINES, PROSE_LINES, HEADINGS, ["", " ", "\t"]] + ([ODD_LINES, PROSE_ODD] if odd else [])
    lines = [draw(st.sampled_from(draw(st.sampled_from(pool)))) for _ in range(draw(st.integers(0, 12)))]
    return ("\n".join(lines) + draw(st.sampled_from(["", "\n"]))).encode()


def fields_of(batch: build.Batch) -> dict[str, Any]:
    out = {k: v for k, v in vars(batch).items() if k not in ("codes", "terms")}
    out["codes"], out["terms"] = batch.codes.tolist(), batch.terms.tolist()
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.one_of(documents(), prose_documents()), min_size=1, max_size=6),
    st.sampled_from([None, {"documents/1.md": ["staff"]}, "bad"]),
)
def test_the_fast_path_gives_the_full_paths_batch(docs: list[bytes], sidecar: Any) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "documents").mkdir()
        for i, data in enumerate(docs):
            (root / "documents" / f"{i}.md").write_bytes(data)
        if sidecar is not None:
            (root / "access.json").write_text("{" if sidecar == "bad" else json.dumps(sidecar))
        items = list(walk(root))
        rules = AccessRules.load(root)
        fast = build.extract_batch(root, items, rules, first_file=3)
        slow = build.extract_batch(root, items, rules, first_file=3, fast=False)
        assert fields_of(fast) == fields_of(slow)


@st.composite
def one_odd_line(draw: Any) -> bytes:
    """A document of the common shape with one line of any kind put anywhere in it."""
    lines = draw(documents(odd=False)).decode().split("\n")
    lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(ODD_LINES)))
    return "\n".join(lines).encode()


@settings(max_examples=150, deadline=None)
@given(st.one_of(documents(odd=True), one_odd_line()))
def test_field_rows_are_the_rows_of_parse_document_or_none(data: bytes) -> None:
    """Where the fast path answers, parse_document + _unit_row + search_text say the same and warn
    about nothing."""
    check_against_parse_document(data)


def test_every_odd_line_after_a_subject_gives_the_full_paths_rows() -> None:
    for odd in ODD_LINES:
        for where in range(3):
            lines = ["主题：甲", "字段：值", "地点：一楼"]
            lines.insert(where, odd)
            check_against_parse_document("\n".join(lines).encode())


def check_against_parse_document(data: bytes, fast: Any = field_rows, name: str = "a.md") -> bool:
    """Where the fast path ``fast`` (field_rows or prose_rows) answers, parse_document + _unit_row +
    search_text say the same and warn about nothing; whether it answered."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "documents").mkdir()
        (root / "documents" / name).write_bytes(data)
        item = next(iter(walk(root)))
        record, raw = read_bytes(root, item)
        assert raw is not None and record.sha256 is not None
        found = fast(record.path, raw, record.sha256, 7, "staff")
        parsed = parsed_record(record, raw)
        if found is None:
            return False
        rows, texts, *more = found
        warned = more[0] if more else []  # prose_rows: the warnings that leave a line prose
        assert parsed.error is None and parsed.access == []
        assert parsed.warnings == [(line, message) for line, message, _text in warned]
        assert parsed.warning_lines == {line: text for line, _message, text in warned}
        assert rows == [build._unit_row(u, 7, "staff") for u in parsed.units]
        assert texts == [build.search_text(u) for u in parsed.units]
        return True


@settings(max_examples=100, deadline=None)
@given(documents(odd=False))
def test_documents_of_field_lines_take_the_fast_path(data: bytes) -> None:
    found = field_rows("documents/a.md", data, "0" * 64, 1, "")
    assert found is not None
    rows, texts = found
    assert (
        len(rows)
        == len(texts)
        == sum(1 for line in data.decode().split("\n") if "：" in line) - data.decode().count("主题：")
    )


def test_the_generated_corpus_shape_is_fast_and_others_are_not() -> None:
    doc = "主题：主楼社区创客空间\n容量：可线上办理，面向研究生。\n\n噪音规定：面向本科生\n".encode()
    rows, texts = field_rows("documents/000/000000.md", doc, "ab" * 32, 5, "") or ([], [])
    assert [r[4] for r in rows] == [2, 4] and [r[7] for r in rows] == ["容量", "噪音规定"]
    # schema 7: a field line stores its value alone (value_at NULL) and no span end (start + text length)
    assert rows[0][2:4] == (12, None) and rows[0][8] is None and texts[1] == "主楼社区创客空间 噪音规定：面向本科生"
    assert rows[0][5] == "可线上办理，面向研究生。".encode("utf-16-le")
    for odd in [
        "主题：甲\n一句话。\n",
        "字段：值\n",
        "主题：甲\n生效日期：2026-01-01\n",
        "主题：甲\r\n字段：值\r\n",
    ]:
        assert field_rows("a.md", odd.encode(), "ab" * 32, 5, "") is None


TERM_CHARS = "甲乙丙 　，。：！_ａＡＢｚ０9Aaß\u0301e😀𠀀Ⅻ\x01\0\u2028-x①ﬁ"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(TERM_CHARS), max_size=12), max_size=8))
def test_batch_terms_are_unit_terms(texts: list[str]) -> None:
    expected = unit_terms(texts)
    codes, counts = batch_terms(texts)
    assert codes.tolist() == expected[0].tolist() and counts.tolist() == expected[1].tolist()
    assert codes.dtype == expected[0].dtype and counts.dtype == expected[1].dtype


def test_batch_terms_of_every_code_point_class() -> None:
    """Every BMP code point once (surrogates but one excluded), and astral ones: the same terms."""
    texts = [
        "".join(chr(c) for c in range(s, s + 2048) if not 0xD800 <= c < 0xE000 and c > 1)
        for s in range(0, 0x10000, 2048)
    ]
    texts += ["𠀀𠀁😀😁\U000e0100\U0001d400\U0001d401x"]
    codes, counts = batch_terms(texts)
    expected = unit_terms(texts)
    assert codes.tolist() == expected[0].tolist() and counts.tolist() == expected[1].tolist()
    assert codes.size > 50_000


def check_prose_against_parse_document(data: bytes, name: str = "a.md") -> bool:
    return check_against_parse_document(data, prose_rows, name)


@settings(max_examples=300, deadline=None)
@given(prose_documents())
def test_prose_rows_are_the_rows_of_parse_document_or_none(data: bytes) -> None:
    check_prose_against_parse_document(data)


@settings(max_examples=100, deadline=None)
@given(prose_documents(odd=False))
def test_documents_of_prose_and_headings_take_the_fast_path(data: bytes) -> None:
    assert check_prose_against_parse_document(data)


def test_every_odd_line_in_prose_gives_the_full_paths_rows() -> None:
    taken = set()
    for odd in ODD_LINES + PROSE_ODD:
        for where in range(4):
            lines = ["# 标题", "第一句。第二句！", "", "## 小节", "第三句。"]
            lines.insert(where, odd)
            if check_prose_against_parse_document("\n".join(lines).encode(), "无标题.md"):
                taken.add(odd)
    # lines the parsers keep as prose or blank keep the fast path, warned about or not (a field line
    # above any 主题, an ASCII colon); lines the field parser takes, tables, a BOM, a CR do not
    assert taken == {
        "", " ", "\t", "\u3000", "\u2028", "这是一个句子。它有两句话！", "# 标题", "http://example.com", "：没有名字",
        "开放时间: 九点", "  字段：值", "字段：值  ", "地点：楼\u2028二层", *PROSE_ODD,
    }  # fmt: skip


def test_a_prose_document_without_a_heading_is_titled_by_its_file_name() -> None:
    rows, texts, warned = prose_rows("documents/游记.md", "第一句。\n\n第二句".encode(), "ab" * 32, 2, "") or ([], [], [])
    assert warned == []
    assert texts == ["游记 第一句。", "游记 第二句"] and [r[2] for r in rows] == [0, 6]
    # schema 9: the title is the file's document name and the paragraph the sentence alone: neither stored
    assert json.loads(rows[0][13]) == {"headings": [], "kind": "sentence"}
    assert stored_extra(rows[0][13], "documents/游记.md", [0, 4]) == {
        "headings": [], "kind": "sentence", "parent_span": [0, 4], "title": "游记"
    }  # fmt: skip
    assert prose_rows("a.md", "主题：甲\n一句话。\n".encode(), "ab" * 32, 2, "") is None
    assert prose_rows("a.md", "一句话。\n".encode() * 50_001, "ab" * 32, 2, "") is None  # MAX_SENTENCES: the full path warns
