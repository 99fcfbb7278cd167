"""Chained questions: a field of a field's value (``X丈夫的父亲是谁``) is never answered as the first hop.

A question whose one slot is (X, 丈夫) but which goes on, right after the field, to name
a second field — ``X丈夫的父亲`` — asks the 父亲
of X's 丈夫, not X's 丈夫. rag_lab answers one field of one subject named in the
question, so such a question is refused (``no_supporting_evidence``, saying that it asks a
field of the value of another field) rather than answered with the first hop.

A chain needs either a first field of which some value is itself a subject of the corpus,
or a ``的`` followed by an alias phrase that is a noun (no question word in it: 父亲,
首都, 邮编) meaning another field (``乐安公主丈夫的父亲``). Otherwise the words after the
first field restate what kind of thing is asked (``颁布日期`` … ``颁布的时间``, ``学校类型`` …
``什么类型的大学``, ``内径尺寸``) and the question asks the first field. With a first value
that is a subject, the second field counts as named when, right after the first (spaces
and a ``的`` may stand between), there stands

* a field name of the corpus that is not one of the subject's own (that would be a question
  naming two fields of X) and that no longer field name runs across (出生 + 日期 is
  出生日期);
* an alias phrase (the general table or the owner's) meaning other fields than the first
  (``X丈夫多少岁``; ``X的年龄多少岁`` asks the 年龄 itself);
* after a ``的``, a word that is no question phrasing (a particle, an ordinary phrase,
  punctuation), even one the corpus does not know (``X丈夫的老师是谁``), unless the word
  is part of the subject's name (``…人力资源机构是哪个国家的机构``: its own kind restated).

A value of one code point or a function word (是, 否) is never taken for a subject.

Words for the value's own name (``X丈夫的名字``, ``是谁``: :data:`NAME_WORDS`) ask the first
hop itself. A field found by the embedding step names no span, so it is not checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag_lab.data.aliases import Alias
from rag_lab.data.names import squash
from rag_lab.retrieval.fields import FieldMatch, Method, _asked_kinds, _forms, _is_a, base
from rag_lab.retrieval.ordinary import BOUNDARY_CHARS, FUNCTION_WORDS, LEAD_INS, ORDINARY_PHRASES
from rag_lab.retrieval.sources import EvidenceSource

#: Words after a field that ask for the value's own name, not for another field of it.
NAME_WORDS = ("名字", "名称", "姓名", "全名", "大名", "名", "叫什么", "叫啥", "是谁", "是什么", "是哪位", "哪位")
GAP = " \u3000\t的"
#: Characters of question words: an alias phrase without any is a noun (父亲, 邮编, 首都).
QUESTION_CHARS = "多几什谁哪怎吗何啥么"


@dataclass(frozen=True)
class Chain:
    """``subject``'s ``field`` is followed by ``second`` (the words naming another field)."""

    subject: str
    field: str
    second: str
    at: int  # where ``second`` begins in the question (code points)

    def as_dict(self) -> dict[str, object]:
        return {"subject": self.subject, "field": self.field, "second_at": self.at, "second": self.second}


def _field_ends(question: str, match: FieldMatch, field_ends: Sequence[int]) -> list[int]:
    """Where the words that named the field end in the question (the rightmost piece of a partial match)."""
    if match.method == Method.VERBATIM and field_ends:
        return list(field_ends)
    if match.method == Method.EMBEDDING:
        return []  # the whole remainder was scored; no span names the field
    ends = [
        start + len(piece)
        for piece in match.asked.split("…")
        if piece
        for start in range(len(question))
        if question.startswith(piece, start)
    ]
    return [max(ends)] if ends else []


def find_chain(
    question: str,
    slot: tuple[str, str],
    match: FieldMatch,
    field_ends: Sequence[int],
    field_spans: Sequence[tuple[int, int, str]],
    aliases: Sequence[Alias],
    source: EvidenceSource,
) -> Chain | None:
    """The second hop of a chained question, or None (module docstring).

    ``field_ends``: where matches of the slot's field name end (verbatim); ``field_spans``:
    every corpus field name found in the question. Two names that one longer field name
    of the corpus covers are that one field (出生 + 日期 in 出生日期), not a chain.
    """
    subject, first = slot
    own = set(source.fields_of(subject))
    cache: list[bool] = []

    def value_is_subject() -> bool:
        if not cache:
            values = sorted({str(u["value"]).strip() for u in source.units_for_key(subject, first)})
            values = [v for v in values if len(v) > 1 and v not in FUNCTION_WORDS]  # 是 / 否 name nothing
            found = source.name_kinds(values)
            cache.append(any("subject" in found.get(v, set()) for v in values))
        return cache[0]

    for end in _field_ends(question, match, field_ends):
        at = end
        while at < len(question) and question[at] in GAP:
            at += 1
        if at >= len(question) or any(question.startswith(w, at) for w in NAME_WORDS):
            continue
        if any(s < end and at < e for s, e, _ in field_spans):
            continue  # one longer field name runs across: 出生 + 日期 is 出生日期
        for s, _, name in field_spans:
            if s == at and name != first and name not in own and name not in subject and value_is_subject():
                return Chain(subject, first, name, at)
        tail = squash(question[at:])
        for alias in aliases:
            if not any(tail.startswith(f) for f in _forms(alias.phrase)):
                continue
            kinds = [squash(f) for f in alias.fields]
            if squash(first) in kinds or _is_a(base(first), kinds):
                continue  # the phrase asks about the first field itself (X的年龄多少岁)
            if any(base(first).endswith(k) for k in _asked_kinds(squash(alias.phrase))):
                continue  # X的出生地在哪里: a place field asked where, the first field itself
            if value_is_subject() or ("的" in question[end:at] and not any(c in alias.phrase for c in QUESTION_CHARS)):
                return Chain(subject, first, alias.phrase, at)
        if "的" in question[end:at] and not _question_words_at(question, at) and value_is_subject():
            # 张三丈夫的老师是谁: after 的 a word the corpus does not know, about a value that is a subject
            rest = question[at:]
            word = rest[: next((i for i in range(len(rest)) if _question_words_at(rest, i)), len(rest))]
            if word not in subject:  # 哪个国家的机构 for …人力资源机构: the subject's own kind, restated
                return Chain(subject, first, word, at)
    return None


def _question_words_at(text: str, at: int) -> bool:
    """Whether question phrasing (a particle, an ordinary phrase, punctuation) begins at ``at``."""
    char = text[at]
    if char in BOUNDARY_CHARS or char.isspace() or not char.isalnum():
        return True
    return any(text.startswith(w, at) for w in (*ORDINARY_PHRASES, *LEAD_INS))


__all__ = ["NAME_WORDS", "QUESTION_CHARS", "Chain", "find_chain"]
