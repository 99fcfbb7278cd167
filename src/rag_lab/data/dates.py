"""Dates as people write them in ``生效日期`` / ``失效日期``: one parser (docs/corpus-format.md).

After NFKC (so full-width digits and punctuation count like ASCII ones) and trimming, a
value is a date when it is one of::

    2024-03-01   2024-3-1   2024/3/1   2024.3.1      (one separator, used twice)
    2024年3月1日  2024年03月01日  2024 年 3 月 1 日  1996年8月1号

with a four-digit year, a month 1–12 and a day that exists in that month. Anything else
(``3/1/2024``, ``20240301``, ``2024-03``, ``二〇二四年三月一日``, a time of day, a second date)
is not read: :func:`parse_date` returns ``None`` and never guesses.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date

_SEPARATED = re.compile(r"([0-9]{4})([-/.])([0-9]{1,2})\2([0-9]{1,2})")
_CHINESE = re.compile(r"([0-9]{4})\s*年\s*([0-9]{1,2})\s*月\s*([0-9]{1,2})\s*[日号]")

ACCEPTED_FORMS = ("2024-03-01", "2024-3-1", "2024/3/1", "2024.3.1", "2024年3月1日")


def parse_date(text: str) -> date | None:
    """The calendar day ``text`` names in one of the accepted forms (module docstring), else None."""
    value = unicodedata.normalize("NFKC", text).strip()
    found = _SEPARATED.fullmatch(value)
    parts = (found.group(1), found.group(3), found.group(4)) if found else None
    if parts is None:
        chinese = _CHINESE.fullmatch(value)
        parts = (chinese.group(1), chinese.group(2), chinese.group(3)) if chinese else None
    if parts is None:
        return None
    try:
        return date(int(parts[0]), int(parts[1]), int(parts[2]))
    except ValueError:  # month 13, 30 February, year 0
        return None


__all__ = ["ACCEPTED_FORMS", "parse_date"]
