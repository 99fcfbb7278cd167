"""Prose and tables → sentence, table_row and table_cell units (data/prose.py, data/tables.py)."""

from __future__ import annotations

import hashlib
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.data.documents import parse_document
from rag_lab.data.prose import sentence_spans, split_sentences
from rag_lab.data.tables import column_name, split_cells


def units(text: str, source: str = "documents/t.md") -> list[dict]:
    data = text.encode("utf-8")
    return parse_document(source, data, hashlib.sha256(data).hexdigest()).units


def texts(found: list[dict], kind: str) -> list[str]:
    return [u["text"] for u in found if u.get("kind") == kind]


def test_sentences_split_on_terminators_and_line_ends_keeping_closers() -> None:
    line = "他说：“好。”然后走了！真的吗？是的；结束"
    assert [line[a:b] for a, b in split_sentences(line)] == [
        "他说：“好。”",
        "然后走了！",
        "真的吗？",
        "是的；",
        "结束",
    ]


def test_a_run_of_terminators_is_one_end_and_empty_pieces_are_dropped() -> None:
    line = "  什么？！ 好的!? ——"
    assert [line[a:b] for a, b in split_sentences(line)] == ["什么？！", "好的!?"]


def test_sentence_units_carry_parent_headings_and_title() -> None:
    text = "# 新馆\n\n## 开放\n新馆九月开放。共有120个座位。\n第二行\n\n另一段。\n"
    found = units(text)
    assert texts(found, "sentence") == ["新馆九月开放。", "共有120个座位。", "第二行", "另一段。"]
    first = found[0]
    assert first["headings"] == ["新馆", "开放"] and first["title"] == "新馆"
    assert first["subject"] is None and first["field"] is None and first["value"] == first["text"]
    para = text[first["parent_span"][0] : first["parent_span"][1]]
    assert para == "新馆九月开放。共有120个座位。\n第二行"
    assert found[3]["parent_span"] == [text.index("另一段"), text.index("另一段") + 4]


def test_title_is_the_file_name_without_a_heading_and_list_markers_are_not_text() -> None:
    found = units("- 第一项。\n1. 第二项。\n> 引用。\n", source="documents/notes/校历.txt")
    assert texts(found, "sentence") == ["第一项。", "第二项。", "引用。"]
    assert {u["title"] for u in found} == {"校历"}


def test_field_lines_stay_field_units_inside_prose() -> None:
    found = units("# 借阅台\n\n借阅台位于一楼。\n\n主题：借阅台\n开放时间：九点\n说明见上。\n")
    assert [(u["subject"], u["field"], u["value"]) for u in found if "kind" not in u] == [
        ("借阅台", "开放时间", "九点")
    ]
    assert texts(found, "sentence") == ["借阅台位于一楼。", "说明见上。"]


def test_validity_dates_bound_sentences_too() -> None:
    found = units("生效日期：2020-01-01\n失效日期：2021-01-01\n旧规定。\n")
    assert [(u["text"], u["valid_from"], u["valid_to"]) for u in found] == [
        ("旧规定。", "2020-01-01", "2021-01-01")
    ]


def test_table_rows_and_cells() -> None:
    text = (
        "座位表\n\n| 房间 | 座位数（个） | 备注 |\n|---|:--:|---|\n| 一楼 | 120 | |\n| 二楼 | 80 | 安静 |\n"
    )
    found = units(text)
    rows = [u for u in found if u.get("kind") == "table_row"]
    assert [r["cells"] for r in rows] == [["一楼", "120", ""], ["二楼", "80", "安静"]]
    assert rows[0]["header"] == ["房间", "座位数", "备注"] and rows[0]["units"] == [None, "个", None]
    assert rows[0]["caption"] == "座位表" and rows[0]["row_key"] == "一楼"
    cells = [
        (u["subject"], u["field"], u["value"], u["unit"]) for u in found if u.get("kind") == "table_cell"
    ]
    assert cells == [
        ("一楼", "座位数", "120", "个"),
        ("二楼", "座位数", "80", "个"),
        ("二楼", "备注", "安静", None),
    ]
    assert texts(found, "sentence") == ["座位表"]  # table lines are not prose


def test_cells_split_on_unescaped_bars() -> None:
    line = r"| a \| b | c |"
    assert [line[x:y] for x, y in split_cells(line)] == [r"a \| b", "c"]
    assert column_name("票价(元)") == ("票价", "元") and column_name("名称") == ("名称", None)


_piece = st.text(
    alphabet=st.sampled_from(list("新馆开放座位。！？；!?”）」 \t#|-：12ａé\u0301😀\ufeff")), max_size=30
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_piece, max_size=6), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_every_span_reconstructs_its_text(lines: list[str], newline: str, bom: bool) -> None:
    text = ("\ufeff" if bom else "") + newline.join(lines)
    for unit in units(text):
        start, end = unit["span"]
        if "kind" in unit:
            assert text[start:end] == unit["text"]
            assert unit["text"] == unit["text"].strip() and unit["text"]
        else:
            assert text[start:end].strip() == unit["field"] + "：" + unit["value"]


def _split_by_scanning(line: str, offset: int = 0) -> list[tuple[int, int]]:
    """split_sentences as it was written before the regular expression (a scan per character):
    the reference its rules are held to."""
    terminators, closers = "。！？；!?", "”’」』）)]】》〉\"'"
    spans, start, i, n = [], 0, 0, len(line)
    while i < n:
        if line[i] in terminators:
            while i < n and line[i] in terminators:
                i += 1
            while i < n and line[i] in closers:
                i += 1
            spans.append((start, i))
            start = i
        else:
            i += 1
    spans.append((start, n))
    out = []
    for a, b in spans:
        piece = line[a:b]
        lead = len(piece) - len(piece.lstrip())
        a, b = a + lead, a + len(piece.rstrip())
        if b > a and re.search(r"\w", line[a:b]):
            out.append((a + offset, b + offset))
    return out


SENTENCE_CHARS = "甲乙 \t\u3000。！？；!?”’」』）)]】》〉\"'“（-—_a1\u2028"


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet=st.sampled_from(SENTENCE_CHARS), max_size=30), st.integers(0, 99))
def test_sentences_split_as_the_per_character_scan_did(line: str, offset: int) -> None:
    assert split_sentences(line, offset) == _split_by_scanning(line, offset)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(SENTENCE_CHARS + "\x1c\x85\xa0\u2029\u200b"), max_size=30), st.integers(0, 5))
def test_sentence_spans_from_a_position_are_the_scans_of_the_rest(line: str, at: int) -> None:
    """sentence_spans(line, at): the sentences of line[at:], in line's positions (whitespace as
    str.strip sees it, which is what the regular expression's \\s matches)."""
    at = min(at, len(line))
    assert sentence_spans(line, at) == _split_by_scanning(line[at:], at)
