"""The date parser for 生效日期 / 失效日期: forms people write, and nothing it must not guess."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_lab.data.dates import ACCEPTED_FORMS, parse_date

days = st.dates(min_value=date(1000, 1, 1), max_value=date(9999, 12, 31))


def _forms(d: date) -> list[str]:
    y, m, n = d.year, d.month, d.day
    return [
        d.isoformat(),
        f"{y}-{m}-{n}",
        f"{y}/{m}/{n}",
        f"{y}.{m}.{n}",
        f"{y}/{m:02d}/{n:02d}",
        f"{y}年{m}月{n}日",
        f"{y}年{m:02d}月{n:02d}日",
        f"{y} 年 {m} 月 {n} 日",
        f"{y}年{m}月{n}号",
    ]


@given(days)
def test_every_accepted_form_reads_back_as_the_same_day(d: date) -> None:
    assert {parse_date(form) for form in _forms(d)} == {d}


@given(days)
def test_full_width_digits_and_surrounding_spaces_count(d: date) -> None:
    wide = d.isoformat().translate({ord(c): ord(c) + 0xFEE0 for c in "0123456789-"})
    assert parse_date(f"  {wide}\t") == d


@given(st.text(max_size=30))
def test_any_text_is_a_date_or_none_never_an_exception(text: str) -> None:
    parsed = parse_date(text)
    assert parsed is None or isinstance(parsed, date)


@given(days, st.sampled_from(["-", "/", "."]), st.sampled_from(["-", "/", "."]))
def test_mixed_separators_are_not_read(d: date, first: str, second: str) -> None:
    text = f"{d.year}{first}{d.month}{second}{d.day}"
    assert parse_date(text) == (d if first == second else None)


@pytest.mark.parametrize(
    "text",
    ["3/1/2024", "20240301", "2024-03", "2024-13-01", "2024-02-30", "0000-01-01", "二〇二四年三月一日",
     "2024-03-01T08:00", "2024-03-01 至 2024-04-01", "2024年3月1", "下月起", "", "24-3-1", "٢٠٢٤-٣-١"],
)
def test_what_is_not_read(text: str) -> None:
    assert parse_date(text) is None


def test_the_documented_forms() -> None:
    assert [parse_date(f) for f in ACCEPTED_FORMS] == [date(2024, 3, 1)] * len(ACCEPTED_FORMS)
    assert parse_date("1996年8月1日") == date(1996, 8, 1)
