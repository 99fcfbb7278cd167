"""The kind of answer a question word asks, and whether a field's value has that shape.

``什么时候`` / ``哪年`` ask a **date**, ``多少`` / ``几`` / ``多高`` a **number**, ``哪里`` a
**place**, ``谁`` a **person**. Of these, a date and a number can be recognised in a value by
its shape (``1862年11月``, ``二十三岁``, ``2800万元``); a place or a person cannot be told
from an ordinary name without a gazetteer, so those kinds are never checked against a value.

Field matching uses this only as evidence **against** a field found by another step
(docs/questions.md, "Fields in other words"): a field whose every value lacks the shape the
question asks (``什么时候`` asked, the value ``淮浦南路``) is not taken by the shared-character
step. The kind alone never chooses a field. The word lists are general Chinese question
phrasing written by us; nothing here is derived from a data set.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum


class AnswerKind(StrEnum):
    DATE = "date"
    NUMBER = "number"
    PLACE = "place"
    PERSON = "person"


#: Question words, longest first within each kind; a text asking two kinds asks neither.
ASKING_WORDS: tuple[tuple[AnswerKind, tuple[str, ...]], ...] = (
    (
        AnswerKind.DATE,
        ("什么时候", "啥时候", "什么时间", "哪一年", "哪一天", "哪年", "哪天", "何时", "几时", "几月", "几号", "何年", "多会儿"),
    ),
    (
        AnswerKind.NUMBER,
        ("多少", "几个", "几岁", "几年", "几次", "几位", "几种", "多大", "多高", "多长", "多重", "多远", "多宽", "多深", "多厚", "多久"),
    ),
    (AnswerKind.PLACE, ("在哪里", "在哪儿", "在哪", "哪里", "哪儿", "什么地方", "哪个地方", "何处", "何地")),
    (AnswerKind.PERSON, ("是谁", "谁", "哪位", "何人")),
)

_DATE = re.compile(
    r"[0-9０-９]{1,4}\s*[年月日号]|[〇零一二三四五六七八九十百千两]+\s*[年月日号]|[0-9]{4}\s*[-/.]\s*[0-9]{1,2}"
    r"|世纪|年代|年间|时期|朝|[0-9]{3,4}"
)
_NUMBER = re.compile(r"[0-9０-９]|[〇零一二三四五六七八九十百千万亿两半]")


def asked_kind(text: str) -> AnswerKind | None:
    """The one kind of answer ``text``'s question words ask; None for none or several.

    ``多少年`` and ``几年`` ask a number (a duration), not a date; ``哪年`` a date.
    """
    found: list[AnswerKind] = []
    rest = text
    for kind, words in ASKING_WORDS:
        hit = False
        for word in words:
            if word in rest:
                rest, hit = rest.replace(word, "\ufffc"), True
        if hit:
            found.append(kind)
    return found[0] if len(found) == 1 else None


def value_fits(kind: AnswerKind, value: str) -> bool | None:
    """Whether ``value`` has the shape ``kind`` asks; None when the kind has no shape (place, person)."""
    if kind == AnswerKind.DATE:
        return bool(_DATE.search(value))
    if kind == AnswerKind.NUMBER:
        return bool(_NUMBER.search(value))
    return None


def values_fit(kind: AnswerKind | None, values: Iterable[str]) -> bool:
    """False only when ``kind`` has a shape and no value has it (no value: nothing against it)."""
    if kind is None:
        return True
    seen = [value_fits(kind, v) for v in values]
    return not seen or any(s is None or s for s in seen)


__all__ = ["ASKING_WORDS", "AnswerKind", "asked_kind", "value_fits", "values_fit"]
