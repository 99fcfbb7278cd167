"""The field-line parser: line endings, BOM, subjects, malformed lines, encodings, dates."""

from __future__ import annotations

import hashlib

import pytest

from rag_lab.data.documents import ASCII_COLON_WARNING, ParsedDocument, iter_lines, parse_document
from rag_lab.errors import RagLabError, SourceFileError


def parse(text: str | bytes, source: str = "documents/t.md") -> ParsedDocument:
    data = text.encode("utf-8") if isinstance(text, str) else text
    parsed = parse_document(source, data, hashlib.sha256(data).hexdigest())
    parsed.units = [u for u in parsed.units if "kind" not in u]  # field lines only (prose: tests/data/test_prose.py)
    return parsed


def triples(parsed: ParsedDocument) -> list[tuple[str, str, str]]:
    return [(u["subject"], u["field"], u["value"]) for u in parsed.units]


# --- line endings ---------------------------------------------------------------------------


def test_lf_lines_give_spans_in_code_points() -> None:
    text = "主题：借阅台\n开放时间：周二。\n地点：一楼\n"
    parsed = parse(text)
    assert triples(parsed) == [("借阅台", "开放时间", "周二。"), ("借阅台", "地点", "一楼")]
    assert [u["span"] for u in parsed.units] == [[7, 15], [16, 21]]
    assert [u["line"] for u in parsed.units] == [2, 3]
    assert [text[s:e] for s, e in (u["span"] for u in parsed.units)] == ["开放时间：周二。", "地点：一楼"]
    assert parsed.warnings == []


def test_crlf_carriage_return_is_not_part_of_the_unit() -> None:
    text = "主题：复印机\r\n存放位置：二楼\r\n负责人：赵师傅\r\n"
    parsed = parse(text)
    assert triples(parsed) == [("复印机", "存放位置", "二楼"), ("复印机", "负责人", "赵师傅")]
    assert [u["span"] for u in parsed.units] == [[8, 15], [17, 24]]
    assert [text[s:e] for s, e in (u["span"] for u in parsed.units)] == ["存放位置：二楼", "负责人：赵师傅"]
    assert all("\r" not in u["value"] for u in parsed.units)


@pytest.mark.parametrize(
    "separator",
    ["\u2028", "\u2029", "\u0085", "\x0c", "\x0b", "\r"],
    ids=["U+2028", "U+2029", "U+0085", "form-feed", "vertical-tab", "lone-CR"],
)
def test_only_newline_ends_a_line(separator: str) -> None:
    text = f"主题：甲\n字段：值{separator}其他：x\n"
    parsed = parse(text)
    assert triples(parsed) == [("甲", "字段", f"值{separator}其他：x")]
    assert parsed.units[0]["line"] == 2
    assert parsed.units[0]["span"] == [5, 5 + len(f"字段：值{separator}其他：x")]


def test_lone_cr_between_subject_and_field_keeps_one_line() -> None:
    parsed = parse("主题：甲\r字段：值\n")
    assert parsed.units == []  # one line: 主题 = "甲\r字段：值"; no field line follows it


def test_last_line_without_newline_is_a_line() -> None:
    parsed = parse("主题：甲\n字段：值")
    assert triples(parsed) == [("甲", "字段", "值")]
    assert parsed.units[0]["span"] == [5, 9]


# --- BOM and indentation ------------------------------------------------------------------------


def test_bom_is_code_point_zero_and_never_part_of_a_unit() -> None:
    text = "\ufeff主题：阅览室\n容量：二百个座位\n"
    assert iter_lines(text)[0] == (1, 1, "主题：阅览室")
    parsed = parse(text)
    assert triples(parsed) == [("阅览室", "容量", "二百个座位")]
    assert parsed.units[0]["span"] == [8, 16]
    assert text[8:16] == "容量：二百个座位"


def test_bom_before_a_field_line_starts_its_span_at_one() -> None:
    text = "\ufeff字段：值\n"
    assert iter_lines(text) == [(1, 1, "字段：值"), (2, 6, "")]
    parsed = parse(text)
    assert parsed.units == []
    assert parsed.warnings == [(1, "field line before any 主题 line; add 主题：… above line 1")]


def test_indented_line_span_excludes_the_indentation() -> None:
    text = "主题：甲\n  \u3000字段：值  \n"
    unit = parse(text).units[0]
    assert unit["span"] == [8, 12]
    assert text[8:12] == "字段：值" == unit["text"]


# --- subjects -------------------------------------------------------------------------------


def test_no_subject_line_gives_warnings_and_no_units() -> None:
    parsed = parse("开放时间：九点\n地点：一楼\n")
    assert parsed.units == []
    assert [line for line, _ in parsed.warnings] == [1, 2]
    assert all("before any 主题 line" in msg for _, msg in parsed.warnings)


def test_field_lines_before_subject_are_warned_and_skipped() -> None:
    parsed = parse("地点：一楼\n主题：甲\n开放时间：九点\n")
    assert triples(parsed) == [("甲", "开放时间", "九点")]
    assert parsed.warnings == [(1, "field line before any 主题 line; add 主题：… above line 1")]


def test_second_subject_applies_to_lines_after_it() -> None:
    parsed = parse("主题：会议室A\n容量：二十人\n主题：会议室B\n容量：八人\n地点：四零五\n")
    assert triples(parsed) == [
        ("会议室A", "容量", "二十人"),
        ("会议室B", "容量", "八人"),
        ("会议室B", "地点", "四零五"),
    ]


def test_subject_line_is_not_a_unit() -> None:
    parsed = parse("主题：甲\n")
    assert parsed.units == [] and parsed.warnings == []


# --- malformed field lines --------------------------------------------------------------------


def test_empty_value_is_warned_and_skipped() -> None:
    parsed = parse("主题：甲\n地点：\n容量：八人\n")
    assert triples(parsed) == [("甲", "容量", "八人")]
    assert parsed.warnings == [(2, "field '地点' has an empty value; the line is not an evidence unit")]


@pytest.mark.parametrize("line", ["地点 ：一楼", "地点： 一楼", "地点\u3000：\u3000一楼"])
def test_whitespace_around_the_colon_is_warned_and_skipped(line: str) -> None:
    parsed = parse(f"主题：甲\n{line}\n")
    assert parsed.units == []
    assert parsed.warnings == [(2, "whitespace next to the full-width colon; write 字段：值 without spaces")]


@pytest.mark.parametrize("line", ["：一楼", "http://x.cn/a:b", "9:00-17:00", "Note: see below", "# 注意:", "- 地点:一楼"])
def test_leading_colon_and_prose_colon_lines_are_silently_not_field_lines(line: str) -> None:
    parsed = parse(f"主题：甲\n{line}\n")
    assert parsed.units == [] and parsed.warnings == []


@pytest.mark.parametrize("line", ["地点:一楼", "地点: 一楼", "  A区:三楼", "网址:http://x.cn", "注意: 请九点前到"])
def test_ascii_colon_field_lines_are_warned_not_units(line: str) -> None:
    parsed = parse(f"主题：甲\n{line}\n开放时间：九点\n")
    assert triples(parsed) == [("甲", "开放时间", "九点")]
    assert parsed.warnings == [(2, ASCII_COLON_WARNING)]


def test_headings_and_prose_are_ignored() -> None:
    text = "# 借阅台\n\n借阅台位于图书馆一楼大厅。\n\n主题：借阅台\n- 列表项\n开放时间：九点\n"
    parsed = parse(text)
    assert triples(parsed) == [("借阅台", "开放时间", "九点")]
    assert parsed.units[0]["line"] == 7
    assert parsed.warnings == []


def test_value_may_hold_further_colons() -> None:
    parsed = parse("主题：甲\n备注：时间：九点\n")
    assert triples(parsed) == [("甲", "备注", "时间：九点")]


# --- encodings ------------------------------------------------------------------------------


def test_invalid_utf8_names_the_byte_offset() -> None:
    data = "主题：甲\n".encode() + b"ok\xff\xfe\n"
    with pytest.raises(SourceFileError) as caught:
        parse(data, "documents/bad.md")
    assert caught.value.path == "documents/bad.md"
    assert "invalid UTF-8 at byte offset 15" in str(caught.value)
    assert str(caught.value).startswith("documents/bad.md: ")
    assert isinstance(caught.value, RagLabError)


def test_truncated_multibyte_sequence_names_its_offset() -> None:
    data = "主题：甲\n".encode() + "值".encode()[:2]
    with pytest.raises(SourceFileError, match="invalid UTF-8 at byte offset 13"):
        parse(data)


def test_gbk_file_is_refused_not_guessed() -> None:
    with pytest.raises(SourceFileError, match="invalid UTF-8 at byte offset 0"):
        parse("主题：甲\n".encode("gbk"))


def test_nul_byte_is_an_error_naming_its_offset() -> None:
    data = "主题：甲\n地点：".encode() + b"\x00" + "一楼\n".encode()
    with pytest.raises(SourceFileError, match=r"NUL byte at byte offset 22"):
        parse(data)


# --- validity dates ---------------------------------------------------------------------------


def test_iso_dates_are_copied_onto_every_unit() -> None:
    text = "主题：档案室\n开放时间：周二\n生效日期：2020-01-01\n失效日期：2030-12-31\n地点：地下一层\n"
    parsed = parse(text)
    assert [(u["field"], u.get("valid_from"), u.get("valid_to")) for u in parsed.units] == [
        ("开放时间", "2020-01-01", "2030-12-31"),
        ("生效日期", "2020-01-01", "2030-12-31"),
        ("失效日期", "2020-01-01", "2030-12-31"),
        ("地点", "2020-01-01", "2030-12-31"),
    ]


def test_document_without_dates_has_no_window_keys() -> None:
    unit = parse("主题：甲\n地点：一楼\n").units[0]
    assert "valid_from" not in unit and "valid_to" not in unit


@pytest.mark.parametrize(
    ("value", "iso"),
    [("1996年8月1日", "1996-08-01"), ("2024/3/1", "2024-03-01"), ("2024.3.1", "2024-03-01"),
     ("2024-3-1", "2024-03-01"), ("2024-03-01", "2024-03-01"), ("２０２４年３月１日", "2024-03-01")],
)
def test_dates_as_people_write_them_become_iso_windows(value: str, iso: str) -> None:
    parsed = parse(f"主题：甲\n地点：一楼\n生效日期：{value}\n")
    assert [(u["field"], u["value"], u["valid_from"]) for u in parsed.units] == [
        ("地点", "一楼", iso),
        ("生效日期", value, iso),  # the unit keeps the verbatim value
    ]
    assert parsed.warnings == []


def _unreadable(parsed: ParsedDocument) -> list[object]:
    return [u.get("validity_unreadable") for u in parsed.units]


@pytest.mark.parametrize("value", ["2020-02-30", "二〇二〇年一月一日", "20200101", "下月起"])
def test_unreadable_date_keeps_the_units_and_marks_every_one(value: str) -> None:
    parsed = parse(f"主题：甲\n地点：一楼\n生效日期：{value}\n", "documents/d.md")
    problem = {"line": 3, "field": "生效日期", "value": value,
               "problem": "not a date; write YYYY-MM-DD, YYYY/M/D, YYYY.M.D or YYYY年M月D日"}
    assert [u["field"] for u in parsed.units] == ["地点", "生效日期"]
    assert _unreadable(parsed) == [problem, problem]
    assert all("valid_from" not in u and "valid_to" not in u for u in parsed.units)
    assert [line for line, _ in parsed.warnings] == [3]
    assert "validity window unreadable: 生效日期" in parsed.warnings[0][1]


def test_window_ending_before_it_starts_is_unreadable_not_an_error() -> None:
    parsed = parse("主题：甲\n生效日期：2021-01-01\n失效日期：2020-01-01\n")
    assert _unreadable(parsed)[0] == {"line": 3, "field": "失效日期", "value": "2020-01-01",
                                      "problem": "失效日期 2020-01-01 is before 生效日期 2021-01-01"}


def test_two_different_start_dates_are_unreadable_not_an_error() -> None:
    parsed = parse("主题：甲\n生效日期：2021-01-01\n生效日期：2022-01-01\n")
    problem = _unreadable(parsed)[0]
    assert isinstance(problem, dict) and problem["line"] == 3
    assert "a second, different 生效日期" in str(problem["problem"])


def test_the_same_date_written_two_ways_is_one_window() -> None:
    parsed = parse("主题：甲\n生效日期：2021-01-01\n生效日期：2021年1月1日\n")
    assert _unreadable(parsed) == [None, None]
    assert {u["valid_from"] for u in parsed.units} == {"2021-01-01"}


def test_date_line_above_the_subject_still_bounds_the_document() -> None:
    parsed = parse("生效日期：2020-01-01\n主题：甲\n地点：一楼\n")
    assert [(u["field"], u.get("valid_from")) for u in parsed.units] == [("地点", "2020-01-01")]
    assert parsed.warnings == []


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("生效日期 ：2020-01-01", "whitespace next to the full-width colon"),
        ("失效日期： 2020-01-01", "whitespace next to the full-width colon"),
        ("失效日期：", "has an empty value"),
    ],
)
def test_unreadable_date_line_is_an_unreadable_window_not_a_wider_one(line: str, problem: str) -> None:
    parsed = parse(f"主题：甲\n{line}\n地点：一楼\n")
    marked = _unreadable(parsed)
    assert [u["field"] for u in parsed.units] == ["地点"] and isinstance(marked[0], dict)
    assert marked[0]["line"] == 2 and problem in str(marked[0]["problem"])
    assert "valid_to" not in parsed.units[0] and "valid_from" not in parsed.units[0]


def test_bom_left_mid_file_by_concatenation_is_not_part_of_a_name() -> None:
    text = "\ufeff主题：甲\n地点：一楼\n\ufeff主题：乙\n\ufeff地点：二楼\n"
    parsed = parse(text)
    assert triples(parsed) == [("甲", "地点", "一楼"), ("乙", "地点", "二楼")]
    start, end = parsed.units[1]["span"]
    assert text[start:end] == "地点：二楼" and text[start - 1] == "\ufeff"
