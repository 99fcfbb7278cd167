"""Which field of the linked subject a question asks: the field-matching contract.

Once a question names one subject, its field is looked for among **that subject's own
fields only**, in this order; the first step that decides wins, and every step taken is
recorded (``steps``, shown in the trace's ``parse`` event):

1. ``verbatim`` — a field name occurs in the question as written.
2. ``normalized`` — it occurs after NFKC and case folding of each code point and with
   white space removed on both sides (``CPU类型`` = ``cpu类型``, ``导 演`` = ``导演``).
3. ``partial`` — the field is named in part, split or extended (``导演`` for 总导演,
   ``特点`` for 品质特点, ``哪个单位申报`` for 申报单位). Score = the share of the field's
   (normalized) characters covered by pieces of ≥ 2 characters that also occur in the
   question, taken greedily from the left. A field scores only with ≥ ``PARTIAL_MIN_CHARS``
   covered characters and a score ≥ ``PARTIAL_MIN``; the best is accepted when it leads
   the runner-up by ≥ ``PARTIAL_MARGIN``.
   A partial score below 1 whose pieces all lie inside alias phrases (step 4) meaning
   other fields does not decide (``多长时间`` asks a duration, not 发行时间 for its ``时间``)
   unless the field is of such a field's kind (:func:`_is_a`). Partial matches that tie
   are separated only by the kind a question word asks (``什么时候颁布``: 颁布日期, not
   颁布部门; ``KIND_WORDS``), never by that word alone, or by the kind an alias phrase means
   (``有什么作用``: 镜头用途, not 镜头卡口). A field's ending of the kind the question word asks
   counts as covered (``哪一年建成`` → 小区建成年份; :func:`_partial`).
4. ``alias`` — a phrase of the alias tables (the general one shipped with rag_lab,
   ``rag_lab/data/aliases.tsv``, and the corpus owner's ``ROOT/aliases.tsv``; ``啥``
   may stand for ``什么``; ``多少层``/``几个座`` are count phrases for 层数/座数)
   occurs in the question, and the subject has one of the fields it may mean
   (``多少岁`` → 年龄), by name, by name less a trailing unit (``重量(kg)``), or — when
   no field is named so — by kind: a field whose name ends in the meant name (单位地址
   for 地址; a one-code-point kind only for two-code-point names: 塔高 for 高) or is it
   plus one code point (人口数; a one-code-point kind only with values in digits), or — for a
   date or number asked — the same event with another head (:func:`same_kind_fields`: 出版期间
   for 出版时间). A phrase inside a longer phrase found is not counted.
   When the phrases found mean only fields the subject does not have, no later step guesses.

When the question names a field of the corpus that the subject lacks, steps 3–4 first
look only where that field is named (``投资`` → 总投资); finding nothing there, they are
retried on the whole question (that "field" is often an ordinary word: 属于, 类型, 主要),
with no partial piece crossing an ordinary phrase (``个人`` in ``这个人``) or lying inside
the named field. A last retry reads the question without ``的`` (``由谁作的曲`` → 作曲).
5. ``embedding`` (only with the ``[neural]`` extra and an index built with it): when the
   question names a field of the corpus the subject lacks, that name's stored vector is
   compared with the subject's field names first (``relate``; no model call); then the
   question's content words (:func:`content_words`: without the subject, openings,
   punctuation and final particles) are embedded and compared. Decoys compete too: the
   general table's field names the subject does not have (one-code-point names excepted,
   and names listed on an alias line beside one of the subject's fields, which are other
   names of it). The nearest of the subject's fields is accepted when it leads the
   subject's next field by ≥ ``EMBED_MARGIN`` cosine and no decoy is nearer (so a question
   about another attribute does not land on the nearest field). This step also runs when
   the question names a field the subject lacks, or alias phrases mean only such fields:
   those are then among the decoys or nearer than any own field.

A step that finds several fields and cannot separate them by its margin ends the search
with those fields as ``candidates`` (the question needs clarification); a step that
finds nothing passes on. A subject with one field is answered when that field matches
by a step (its runner-up score is 0, or the nearest decoy for ``embedding``).
Scores rank candidates; they are never a probability of being right.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from rag_lab.data.aliases import Alias, general_aliases
from rag_lab.data.names import fold, squash
from rag_lab.retrieval.ordinary import is_ordinary, ordinary_spans, strip_lead_ins

PARTIAL_MIN_CHARS = 2
PARTIAL_MIN = 0.5
PARTIAL_MARGIN = 0.25
EMBED_MARGIN = 0.03
CANDIDATE_LIMIT = 20


class Method(StrEnum):
    VERBATIM = "verbatim"
    NORMALIZED = "normalized"
    PARTIAL = "partial"
    ALIAS = "alias"
    EMBEDDING = "embedding"
    SHARED = "shared"
    KIND = "kind"


@dataclass(frozen=True)
class FieldMatch:
    """How the field was found: ``asked`` (the question's words), ``field``, ``method``, ``score``."""

    asked: str
    field: str
    method: Method
    score: float
    runner_up: tuple[str, float] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "asked": self.asked,
            "field": self.field,
            "method": str(self.method),
            "score": round(self.score, 4),
            "runner_up": None
            if self.runner_up is None
            else {"field": self.runner_up[0], "score": round(self.runner_up[1], 4)},
        }


@dataclass
class FieldDecision:
    match: FieldMatch | None = None
    candidates: list[str] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    #: fields the question asks by an alias phrase that the subject does not have
    absent: list[str] = field(default_factory=list)


# -- aliases -----------------------------------------------------------------------------


@functools.cache
def decoy_fields() -> tuple[str, ...]:
    """Every field name the general table may mean, in first-seen order."""
    return tuple(dict.fromkeys(f for a in general_aliases() for f in a.fields))


#: Endings that do not change what a name refers to: a verb + 于 is that verb (任职于 →
#: 任职), a verb + an agent suffix its doer (主持人 → 主持, 运营商 → 运营), a light head noun
#: the thing itself (交通状况 → 交通, 文化程度 → 文化). Endings naming another aspect
#: (时间, 地点, 面积: 出版时间 is not 出版) are not here.
LIGHT_TAILS = ("于", "人", "者", "商", "情况", "状况", "程度", "范围", "内容", "方面")
#: Words of belonging: ``X属于哪个市`` asks the field X belongs to (所属市, 归属, 隶属单位).
BELONG_VERBS = ("属于",)
BELONG_WORDS = ("所属", "归属", "隶属", "从属", "原属", "属地", "类属")
_ASKING = ("哪一个", "哪个", "哪里", "哪儿", "哪一", "哪些", "什么", "那个", "哪种", "哪类", "哪条", "哪所", "哪家", "哪", "那", "啥", "何")

COUNT_WORDS = ("多少", "几")
#: Words that count what the name before them names (人口总数 is a 人口; :func:`_is_a`).
COUNT_TAILS = ("总数", "数量", "总量", "数目", "总计")
WEAK_NAME = 2  # a named field of at most this many code points may be an ordinary word (属于, 类型)

#: Question words and the kinds of field they ask (a name ending in the kind). Too
#: general to name a field alone, they only choose among partial matches that tie.
KIND_WORDS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("什么时候", "何时", "哪年", "哪一年", "几时", "什么时间", "哪天", "几月", "几号"), ("时间", "日期", "年份", "年代", "时期", "年月")),
    (("在哪", "哪里", "哪儿", "什么地方", "哪个地方", "何处", "何地"), ("地点", "地址", "位置", "地区", "所在地", "地")),
    (("是谁", "谁", "哪位"), ("人", "者", "人员")),
    (("多少", "几"), ("数", "数量", "量")),
    (("多高",), ("高度", "身高")),
    (("多长",), ("长度",)),
    (("多宽",), ("宽度",)),
    (("多重", "多沉"), ("重量",)),
    (("多深",), ("深度",)),
    (("多久", "多长时间"), ("时间", "时长")),
    (("多大",), ("大小",)),
)


def _asked_kinds(text: str) -> list[str]:
    """The field kinds the question words of ``text`` ask (:data:`KIND_WORDS`)."""
    return [k for words, kinds in KIND_WORDS if any(w in text for w in words) for k in kinds]


def count_aliases(text: str) -> list[Alias]:
    """``多少层`` / ``几个座`` ask a count of 层 / 座: the field named ``层数`` (or ``…层数``).

    Chinese names a count by the measure word + 数, so ``多少`` or ``几`` (optionally with
    ``个``) before one CJK code point is an alias phrase for that ``M数``.
    """
    found: dict[str, Alias] = {}
    for word in COUNT_WORDS:
        start = text.find(word)
        while start >= 0:
            at = start + len(word)
            phrase = word
            if text.startswith("个", at):
                at, phrase = at + 1, word + "个"
            if at < len(text) and "\u4e00" <= text[at] <= "\u9fff" and text[at] not in "个的是了吗呢啊呀钱":
                found.setdefault(phrase + text[at], Alias(phrase + text[at], (text[at] + "数",), 0))
            start = text.find(word, start + 1)
    return list(found.values())


# -- the steps ---------------------------------------------------------------------------


def extended_by_light_tail(named: str, fields: Sequence[str]) -> list[str]:
    """The fields (of ≥ 2 code points) that ``named`` is plus one of :data:`LIGHT_TAILS` (主持人 → 主持);
    when there are none, the fields of the stem's kind (:func:`_is_a`: 来源于 → 品种来源, a 来源 —
    never 出版时间 for 出版人, which does not end in 出版).

    A name with an opening such as 主要 is not one of them: 主要研究方向 may be a field of its
    own beside 研究方向 (benchmarks/realistic has both).
    """
    form = squash(named)
    exact = sorted(
        f for f in fields if len(squash(f)) >= 2 and any(form == squash(f) + tail for tail in LIGHT_TAILS)
    )
    if exact:
        return exact
    # 来源于 for a subject with 品种来源: the stem (来源) is the field's kind, the ending light
    stems = [form[: -len(t)] for t in LIGHT_TAILS if form.endswith(t) and len(form) - len(t) >= 2]
    return sorted(f for f in fields if any(_is_a(base(f), [stem]) and base(f) != stem for stem in stems))


def _light_named(field: str, text: str) -> bool:
    """Whether ``field`` is a name that ``text`` holds plus a light ending (成立于 for ``…成立的``)."""
    form = squash(field)
    return any(
        form.endswith(tail) and len(form) - len(tail) >= 2 and form[: -len(tail)] in text for tail in LIGHT_TAILS
    )


def belonging_fields(text: str, fields: Sequence[str]) -> tuple[str, list[str]]:
    """``(the belonging phrase, fields it may mean)`` for ``X属于哪个市`` (``text`` squashed).

    The question says ``属于`` (``隶属于``, ``是属于`` too); the fields are the subject's
    fields holding a word of belonging (:data:`BELONG_WORDS`: 所属, 归属, 隶属…) whose other
    characters are none (所属, 归属) or share one with the noun asked after the question word
    (``哪个市`` → 所属市, ``哪条线路`` → 所属路线; ``哪里`` asks no noun: any such field).
    Without a question word right after ``属于`` (``它属于我们``) nothing is asked about belonging.
    """
    for verb in BELONG_VERBS:
        at = text.find(verb)
        if at < 0:
            continue
        tail = text[at + len(verb) :]
        asking = next((w for w in _ASKING if tail.startswith(w)), "")
        noun = tail[len(asking) :]
        for stop in ("的", "吗", "呢", "啊", "呀", "吧"):
            noun = noun.split(stop, 1)[0]
        if not asking:
            continue  # 属于 not followed by a question word (它属于我们) asks nothing about belonging
        found = []
        for f in fields:
            form = squash(f)
            word = next((w for w in BELONG_WORDS if w in form), None)
            if word is None:
                continue
            other = form.replace(word, "", 1)
            if not other or not noun or set(other) & set(noun):
                found.append(f)
        return verb + asking + noun, sorted(found)
    return "", []


#: Heads naming the kind of a date or a count (建造时间, 起造日期, 建院年份; 车站总数, 人数):
#: what stands before them names the event dated or the thing counted. Longest first.
KIND_HEADS: dict[str, tuple[str, ...]] = {
    "date": ("时间", "日期", "年份", "年代", "时期", "年月", "期间", "年", "日"),
    "number": ("总数", "数量", "总量", "数目", "数", "量"),
}


def _fits_asked(rest: str, field: str, values: Callable[[str], Sequence[str]] | None) -> bool:
    """Whether every value of ``field`` has the shape (a date, a number) the question asks;
    True when it asks no such kind, False when the values are not known. A number must be
    written in digits here (a name such as 张三 holds a Chinese numeral)."""
    from rag_lab.retrieval.answer_kind import AnswerKind, asked_kind, value_fits

    kind = asked_kind(squash(content_words(rest)))
    if kind not in (AnswerKind.DATE, AnswerKind.NUMBER):
        return True
    if values is None:
        return False
    seen = list(values(field))
    if kind == AnswerKind.NUMBER:
        return bool(seen) and all(any(ch.isdigit() for ch in v) for v in seen)
    return bool(seen) and all(value_fits(kind, v) for v in seen)


def split_head(name: str, kind: str) -> tuple[str, str]:
    """``(modifier, head)`` of a squashed name by :data:`KIND_HEADS` (``建造时间`` → 建造, 时间);
    a name without such a head is all modifier."""
    for head in KIND_HEADS[kind]:
        if name.endswith(head) and len(name) > len(head):
            return name[: -len(head)], head
    return name, ""


def same_kind_fields(
    text: str, hits: Sequence[Alias], fields: Sequence[str], values: Callable[[str], Sequence[str]]
) -> dict[str, Alias]:
    """The subject's fields that name the meant field's event or count in another word.

    The question (``text``, squashed) asks a date or a number (:mod:`rag_lab.retrieval.answer_kind`)
    and an alias phrase means fields the subject lacks (``什么时候建`` → 建造时间, 建成时间…).
    A field of the subject answers when it is the meant field's modifier itself (竣工 for
    竣工时间), or both names end in a head of that kind (:data:`KIND_HEADS`: 时间, 日期,
    年份…; 总数, 数…) and one modifier holds the other: the same event dated or thing counted,
    with another head (开工日期 for 开工时间, 出版期间 for 出版时间, 车站总数 for 站数; a modifier
    of one code point must end the other: 车站 holds the 站 counted, 教师 not the 教 of ``多少教室``).
    A shared code point is not enough (出生 / 出道, 开工 / 完工 are other events). Every value
    of the field must have the shape asked (a date, a number). Returns field → the phrase.
    """
    from rag_lab.retrieval.answer_kind import AnswerKind, asked_kind, value_fits

    kind = asked_kind(text)
    if kind not in (AnswerKind.DATE, AnswerKind.NUMBER):
        return {}
    found: dict[str, Alias] = {}
    for own in fields:
        mine, head = split_head(base(own), str(kind))
        for alias in hits:
            for target in alias.fields:
                theirs, _ = split_head(squash(target), str(kind))
                if len(theirs) == 1 and not mine.endswith(theirs):
                    continue  # one code point counted (站 of 站数) is the head noun: 车站, never 教师 for 教
                if mine == theirs or (head and theirs != squash(target) and (theirs in mine or mine in theirs)):
                    found.setdefault(own, alias)
    for own in list(found):
        seen = list(values(own))
        if not seen or not all(value_fits(kind, v) for v in seen):
            del found[own]
    return found


def _occurrences(name: str, text: str) -> list[tuple[int, int]]:
    found, start = [], text.find(name)
    while name and start >= 0:
        found.append((start, start + len(name)))
        start = text.find(name, start + 1)
    return found


def _shadowed(start: int, end: int, shadows: Sequence[tuple[int, int]]) -> bool:
    """Whether ``[start, end)`` lies strictly inside a longer name the question names."""
    return any(a <= start and end <= b and b - a > end - start for a, b in shadows)


Spans = Sequence[tuple[int, int]]


def _crosses(start: int, end: int, avoid: Spans) -> bool:
    """Whether ``[start, end)`` overlaps a span of ``avoid`` without either holding the other."""
    return any(start < b and a < end and not (a <= start and end <= b) and not (start <= a and b <= end) for a, b in avoid)


def base(name: str) -> str:
    """``name`` squashed, without a trailing bracketed unit or note: ``重量(kg)`` → ``重量``."""
    stripped = name.rstrip()
    for open_, close in (("(", ")"), ("（", "）"), ("[", "]"), ("【", "】")):
        if stripped.endswith(close) and open_ in stripped:
            head = stripped[: stripped.rindex(open_)]
            if squash(head):
                return squash(head)
    return squash(stripped)


def _is_a(field: str, kinds: Sequence[str]) -> bool:
    """Whether ``field`` (squashed) is one of ``kinds`` (squashed), by the shape of its name.

    Chinese compounds put the kind last: 单位地址 is an 地址, 歌曲时长 a 时长; a kind of
    one code point names only two-code-point fields (车高 is a 高; 最高时速 is not).
    A field that is a kind plus one code point is that kind too (人口数, 作词者), and so is a
    kind plus a word counting it (:data:`COUNT_TAILS`: 人口总数, 人口数量 are a 人口).
    """
    for k in kinds:
        if field == k:
            return True
        if len(k) >= 2 and (field.endswith(k) or (field.startswith(k) and len(field) == len(k) + 1)):
            return True
        if len(k) >= 2 and field.startswith(k) and field[len(k) :] in COUNT_TAILS:
            return True
        if len(k) == 1 and len(field) == 2 and field.endswith(k):
            return True
    return False


def _usable(start: int, end: int, shadows: Spans, focus: Spans | None, avoid: Spans = ()) -> bool:
    """Not inside a longer named name, not crossing an ``avoid`` phrase, and (with ``focus``) overlapping the named field."""
    if _shadowed(start, end, shadows) or (avoid and _crosses(start, end, avoid)):
        return False
    return focus is None or any(start < b and a < end for a, b in focus)


def _squash_origin(text: str) -> list[int]:
    """For each code point of ``squash(text)``, the index in ``text`` it came from."""
    origin: list[int] = []
    for i, ch in enumerate(text):
        origin.extend([i] * len(squash(ch)))
    return origin


def _shadow_spans(text: str, names: Sequence[str]) -> list[tuple[int, int]]:
    return [w for n in names for w in _occurrences(n, text)]


def _named(
    fields: Sequence[str],
    text: str,
    key: Callable[[str], str],
    shadows: Spans = (),
    focus: Spans | None = None,
) -> list[str]:
    """Fields whose ``key`` form occurs in ``text`` (already in ``key`` form), not inside a longer one."""
    spans = ordinary_spans(text)
    hits: dict[str, list[tuple[int, int]]] = {}
    for name in fields:
        form = key(name)
        where = [
            (s, e)
            for s, e in _occurrences(form, text)
            if not is_ordinary(form, s, e, spans) and _usable(s, e, shadows, focus)
        ]
        if where:
            hits[name] = where
    kept = [
        n
        for n, where in hits.items()
        if not any(
            o != n and len(key(o)) > len(key(n)) and all(any(a <= s and e <= b for a, b in hits[o]) for s, e in where)
            for o in hits
        )
    ]
    return sorted(kept)


def coverage(
    name: str, text: str, shadows: Spans = (), focus: Spans | None = None, avoid: Spans = ()
) -> tuple[int, str]:
    """(characters of ``name`` covered by pieces of ≥ 2 characters found in ``text``, the pieces).

    A piece counts only where it does not lie strictly inside a longer name of ``shadows``.
    """
    covered, pieces, i = 0, [], 0
    while i < len(name):
        length = 0
        for size in range(len(name) - i, 1, -1):
            if any(_usable(s, e, shadows, focus, avoid) for s, e in _occurrences(name[i : i + size], text)):
                length = size
                break
        if length:
            covered += length
            pieces.append(name[i : i + length])
            i += length
        else:
            i += 1
    return covered, "…".join(pieces)


def _partial(
    fields: Sequence[str], text: str, shadows: Spans = (), focus: Spans | None = None, avoid: Spans = ()
) -> list[tuple[float, int, str, str]]:
    """Fields named in part, by score (module docstring, step 3).

    A field ending in the kind a question word asks (``KIND_WORDS``: 哪一年 asks a 年份,
    什么时候 a 时间 or 日期, 在哪 a 地点) has that ending said by the question word: it counts
    as covered when the pieces found cover at least ``PARTIAL_MIN_CHARS`` of the rest
    (``哪一年建成`` names 小区建成年份 by 建成 and 哪一年: 4 of 6; ``什么时候颁布`` 颁布日期 whole).
    """
    scored = []
    kinds = sorted(set(_asked_kinds(text)), key=len, reverse=True)
    for name in fields:
        form = squash(name)
        if not form:
            continue
        covered, pieces = coverage(form, text, shadows, None, avoid)
        if focus is not None and not coverage(form, text, shadows, focus, avoid)[0]:
            continue  # no piece touches the field the question names
        head = next((k for k in kinds if form.endswith(k) and len(form) > len(k)), "")
        if head and covered >= PARTIAL_MIN_CHARS:
            said, _ = coverage(form[: -len(head)], text, shadows, None, avoid)
            if said == covered:  # no piece found lies in the ending: the question word says it
                covered += len(head)
        score = covered / len(form)
        if covered >= PARTIAL_MIN_CHARS and score >= PARTIAL_MIN:
            scored.append((score, covered, name, pieces))
    return sorted(scored, key=lambda t: (-t[0], -t[1], t[2]))


@functools.lru_cache(maxsize=4096)
def _forms(phrase: str) -> tuple[str, ...]:
    """How an alias phrase may be written: squashed, and with the colloquial 啥 for 什么."""
    form = squash(phrase)
    return (form, form.replace("什么", "啥")) if "什么" in form else (form,)


def _alias_hits(
    text: str, aliases: Sequence[Alias], shadows: Spans = (), focus: Spans | None = None, avoid: Spans = ()
) -> list[Alias]:
    hits = [
        (a, [w for f in _forms(a.phrase) for w in _occurrences(f, text) if _usable(*w, shadows, focus, avoid)])
        for a in aliases
    ]
    hits = [(a, w) for a, w in hits if w]
    return [
        a
        for a, where in hits
        if not any(
            len(squash(o.phrase)) > len(squash(a.phrase))
            and all(any(s2 <= s and e <= e2 for s2, e2 in w2) for s, e in where)
            for o, w2 in hits
        )
    ]


def _inside_phrases(pieces: str, text: str, hits: Sequence[Alias]) -> bool:
    """Whether every occurrence of every piece lies inside an occurrence of a hit phrase."""
    spans = [w for a in hits for f in _forms(a.phrase) for w in _occurrences(f, text)]
    if not spans:
        return False
    return all(
        any(a <= s and e <= b for a, b in spans) for piece in pieces.split("…") for s, e in _occurrences(piece, text)
    )


Scorer = Callable[[str, Sequence[str]], list[float]]


def match_field(
    rest: str,
    fields: Sequence[str],
    aliases: Sequence[Alias] = (),
    scorer: Scorer | None = None,
    *,
    scorer_note: str = "",
    named: Sequence[str] = (),
    asked_at: Spans = (),
    relate: Scorer | None = None,
    shared: bool = False,
    values: Callable[[str], Sequence[str]] | None = None,
    by_kind: bool = False,
) -> FieldDecision:
    """Run the contract (module docstring) on ``rest``: the question without the subject's name.

    ``fields``: the subject's answerable fields. ``aliases``: the owner's table first, then
    the general one (a phrase the owner defines replaces the general meaning). ``scorer``:
    ``(text, names) → cosine per name``, or None when the neural branch is not available
    (``scorer_note`` says why, for the trace). ``named``: other names the question names
    verbatim (fields of other subjects); a field of this subject lying strictly inside
    one of them is not named (``时间`` inside ``发布时间`` does not ask 时间). ``asked_at``:
    where ``rest`` names a field of the corpus the subject does not have; then only a
    field found *there* counts (``投资`` → 总投资; ``这个人的额定功率`` is not 个人主页).
    ``relate``: ``(field name, names) → cosine per name`` between stored name vectors (the
    embedding step's first comparison when ``asked_at`` names a field the subject lacks).
    ``shared``: whether the last step (:func:`_shared_step`) may run — only for a subject
    named as a word of its own, as for the embedding step. ``values``: a field's values (the
    shared step checks them against the kind of answer the question asks). ``by_kind``: whether
    :func:`_kind_step` may run (the question's only subject, standing first).
    """
    decision = FieldDecision()
    steps = decision.steps
    names = sorted(dict.fromkeys(fields))
    text = squash(rest)

    def decide(found: list[str], method: Method, asked: Callable[[str], str]) -> bool:
        steps.append({"method": str(method), "found": found[:CANDIDATE_LIMIT]})
        if len(found) == 1:
            decision.match = FieldMatch(asked(found[0]), found[0], method, 1.0)
        elif found:
            decision.candidates = found
        return bool(found)

    raw_shadows = _shadow_spans(rest, named)
    shadows = _shadow_spans(text, [squash(n) for n in named])
    raw_focus: Spans | None = list(asked_at) if asked_at else None
    focus: Spans | None = None
    if raw_focus is not None:
        origin = _squash_origin(rest)
        focus = [(i, i + 1) for i, o in enumerate(origin) if any(a <= o < b for a, b in raw_focus)]
    if decide(_named(names, rest, lambda n: n, raw_shadows, raw_focus), Method.VERBATIM, lambda n: n):
        return decision
    if decide(_named(names, text, squash, shadows, focus), Method.NORMALIZED, lambda n: next(
        (rest[s:e] for s, e in _raw_spans(rest, squash(n))), n
    )):
        return decision

    if raw_focus is not None:
        # 主持人 for a subject with 主持: the named field is one of its own plus a light ending
        extended = {f: rest[a:b] for a, b in raw_focus for f in extended_by_light_tail(rest[a:b], names)}
        steps.append({"method": str(Method.PARTIAL), "extended": sorted(extended)})
        if len(extended) == 1:
            (own_field, asked_as), = extended.items()
            mine, theirs = base(own_field), squash(asked_as)
            if theirs.startswith(mine):  # 主持人 → 主持: the share of the named name
                score = len(mine) / len(theirs)
            else:  # 来源于 → 品种来源: the share of the field its stem covers
                stem = next((theirs[: -len(t)] for t in LIGHT_TAILS if theirs.endswith(t) and mine.endswith(theirs[: -len(t)])), "")
                score = len(stem) / len(mine)
            decision.match = FieldMatch(asked_as, own_field, Method.PARTIAL, score)
            return decision

    seen: set[str] = set()
    table = [a for a in aliases if not (a.phrase in seen or seen.add(a.phrase))]  # type: ignore[func-returns-value]
    table += [a for a in count_aliases(text) if a.phrase not in seen]
    by_form = {squash(n): n for n in names}
    by_base: dict[str, list[str]] = {}
    for n in names:  # 人口（2010） is asked as 人口; 人口（2000） too, then the question needs clarification
        by_base.setdefault(base(n), []).append(n)

    def by_parts(where: Spans | None, avoid: Spans, text: str = text, shadows: Spans = shadows) -> bool:
        """Steps 3 and 4 (partial, alias); True when they end the search."""
        hits = _alias_hits(text, table, shadows, where)
        targets = [squash(t) for a in hits for t in a.fields]
        scored = _partial(names, text, shadows, where, avoid)
        step: dict[str, Any] = {
            "method": str(Method.PARTIAL),
            "scores": [[n, round(s, 4), p] for s, _, n, p in scored[:CANDIDATE_LIMIT]],
        }
        steps.append(step)
        if scored:
            best, second = scored[0], (scored[1] if len(scored) > 1 else None)
            lead = best[0] - (second[0] if second else 0.0)
            if (
                best[0] < 1.0
                and not _is_a(squash(best[2]), targets)
                and not _light_named(best[2], text)  # 成立于 for 啥时候成立: the field is named, plus 于
                and _inside_phrases(best[3], text, hits)
            ):
                # 多长时间 asks a duration: 时间 in 发行时间 is not enough to say it asks that
                step["passed_to_alias"] = "an alias phrase of the question means another field"
            elif lead >= PARTIAL_MARGIN:
                runner = None if second is None else (second[2], second[0])
                decision.match = FieldMatch(best[3], best[2], Method.PARTIAL, best[0], runner)
                return True
            else:
                close = [t for t in scored if best[0] - t[0] < PARTIAL_MARGIN]
                asked_kinds = _asked_kinds(text)
                fit = [t for t in close if any(squash(t[2]).endswith(k) for k in asked_kinds)]
                if len(fit) == 1:  # 颁布日期 / 颁布部门 for 什么时候颁布: the question word says which
                    other = next(t for t in close if t is not fit[0])
                    decision.match = FieldMatch(fit[0][3], fit[0][2], Method.PARTIAL, fit[0][0], (other[2], other[0]))
                    step["kind"] = asked_kinds
                    return True
                of_kind = [t for t in close if _is_a(base(t[2]), targets)]
                if len(of_kind) == 1:  # 镜头有什么作用: 镜头用途, not 镜头卡口 — an alias phrase means 用途
                    other = next(t for t in close if t is not of_kind[0])
                    decision.match = FieldMatch(of_kind[0][3], of_kind[0][2], Method.PARTIAL, of_kind[0][0], (other[2], other[0]))
                    step["alias_kind"] = True
                    return True
                decision.candidates = [t[2] for t in close]
                return True

        meant: dict[str, str] = {}
        for alias in hits:
            for target in alias.fields:
                exact = by_form.get(squash(target))
                for own in [exact] if exact is not None else by_base.get(squash(target), []):
                    meant.setdefault(own, alias.phrase)
        kinds: dict[str, str] = {}
        if not meant:  # 单位地址 is an 地址, 歌曲时长 a 时长: a field named by a longer name of the same kind
            for alias in hits:
                for target in alias.fields:
                    for own in names:
                        if own not in kinds and _is_a(base(own), [squash(target)]) and (
                            len(squash(target)) > 1 or _fits_asked(rest, own, values)
                        ):  # a one-code-point kind (长 for 机长) only with values of the shape asked
                            kinds[own] = alias.phrase
            meant = kinds
        belonging = ""
        if not meant:  # X属于哪个市: a field of belonging (所属市)
            belonging, found = belonging_fields(text, names)
            meant = {f: belonging for f in found}
        morpheme = False
        if not meant and values is not None:  # 什么时候出版 → 出版期间: the meant event, another head
            asked = squash(content_words(rest))  # without openings: 谁知道 asks no person
            meant = {f: a.phrase for f, a in same_kind_fields(asked, hits, names, values).items()}
            morpheme = bool(meant)
        steps.append(
            {
                "method": str(Method.ALIAS),
                "phrases": [[a.phrase, list(a.fields)] for a in hits],
                "found": sorted(meant),
                **({"by_kind": True} if kinds else {}),
                **({"belonging": belonging} if belonging else {}),
                **({"same_morpheme": True} if morpheme else {}),
            }
        )
        if len(meant) == 1:
            (own, phrase), = meant.items()
            decision.match = FieldMatch(phrase, own, Method.ALIAS, 1.0)
            return True
        if meant:
            decision.candidates = sorted(meant)
            return True
        if any(a.line for a in hits):  # a count phrase (line 0, count_aliases) alone stops nothing
            decision.absent = list(dict.fromkeys(t for a in hits if a.line for t in a.fields))
            return True
        return False

    def decided() -> bool:
        return decision.match is not None or bool(decision.candidates)

    if by_parts(focus, ()) and decided():
        return decision
    strong = [b - a for a, b in asked_at if b - a > WEAK_NAME]
    if decision.absent:
        pass  # the alias phrases mean fields the subject lacks: no retry; only the embedding step, with its decoys
    elif strong:
        # 这款产品的额定功率: a specific field the subject lacks is what is asked; no retry
        # (only the embedding step may still find it in other words: 邮编 for 邮政区码)
        steps.append({"method": "retry", "skipped": "the question names a field the subject lacks"})
    else:
        if focus is not None:
            # the field named is one the subject lacks, and nothing was found at it: a name of
            # at most WEAK_NAME code points may be an ordinary word (属于, 类型, 主要); look at the
            # whole question, no piece crossing an ordinary phrase (个人 in 这个人) nor inside it
            steps.append({"method": "retry", "why": "nothing found at the named field; the whole question"})
            if by_parts(None, ordinary_spans(text)) and decided():
                return decision
        if "的" in text and not decision.absent:
            # 由谁作的曲 / 给谁配的音: a field name split by 的 (作曲, 配音)
            joined = text.replace("的", "")
            steps.append({"method": "retry", "why": "nothing found; the question without 的"})
            shadows_joined = _shadow_spans(joined, [squash(n) for n in named])
            if by_parts(None, ordinary_spans(joined), joined, shadows_joined) and decided():
                return decision

    def last_step() -> FieldDecision:
        if shared and not decided():
            if raw_focus:
                _shared_step(decision, rest, raw_focus, names, relate, values)
            elif by_kind:
                _kind_step(decision, rest, names, values)
        return decision

    if scorer is None:
        steps.append({"method": str(Method.EMBEDDING), "skipped": scorer_note or "no model"})
        return last_step()
    if not names or not text:
        steps.append({"method": str(Method.EMBEDDING), "skipped": "no field or no words to compare"})
        return last_step()
    # a decoy is another attribute; a field the table lists beside one the subject has
    # (定价 beside 价格 for 多少钱) is another name of it, not a rival
    synonyms = {squash(f) for a in aliases for f in a.fields if any(squash(t) in by_form for t in a.fields)}
    decoys = [d for d in decoy_fields() if squash(d) not in by_form and squash(d) not in synonyms and len(squash(d)) > 1]
    if relate is not None and raw_focus:
        # the question names a field of the corpus the subject lacks (邮编 for 邮政区码): that
        # name's stored vector against the subject's field names, no question embedding
        a, b = max(raw_focus, key=lambda w: (w[1] - w[0], -w[0]))
        asked = rest[a:b]
        # the named name's other names (the fields on an alias line with it: 作家, 著者 beside 作者)
        # are the attribute asked, not another one: no rivals of the subject's field
        same = {squash(f) for a in aliases if squash(asked) in {squash(t) for t in a.fields} for f in a.fields}
        rivals = [d for d in decoys if squash(d) != squash(asked) and squash(d) not in same]
        if _embedding_step(decision, asked, names, rivals, relate, "named_field"):
            return decision
    words = content_words(rest)
    _embedding_step(decision, words, names, decoys, scorer, "question")
    return last_step()


SHARED_MIN_NAME = 2  # the named field must have at least this many code points


def _kind_step(
    decision: FieldDecision, rest: str, names: Sequence[str], values: Callable[[str], Sequence[str]] | None
) -> bool:
    """A subject with **one** field, a question naming no field at all whose question word asks a
    date or a number (``X是什么时候建的``, ``X花了多少钱``), and every value of that field has that
    shape: the field is asked. Never when an alias phrase of the question means a field the
    subject lacks (``X什么时候去世`` for a subject with only 出生日期: 去世 means 逝世日期), never
    for a place or a person (no shape), never among two fields.
    """
    if len(names) != 1 or values is None or decision.absent:
        return False
    from rag_lab.retrieval.answer_kind import AnswerKind, asked_kind, value_fits

    kind = asked_kind(squash(content_words(rest)))  # openings (谁知道) ask no kind
    step: dict[str, Any] = {"method": str(Method.KIND), "asked": None if kind is None else str(kind)}
    decision.steps.append(step)
    if kind not in (AnswerKind.DATE, AnswerKind.NUMBER):
        return False
    (only,) = names
    found = list(values(only))
    if not found or not all(value_fits(kind, v) for v in found):
        step["values_fit"] = False
        return False
    decision.match = FieldMatch(str(kind), only, Method.KIND, 1.0)
    return True


def _common_tail(a: str, b: str) -> str:
    """The longest common ending of ``a`` and ``b``."""
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return a[len(a) - n :]


def _shared_step(
    decision: FieldDecision,
    rest: str,
    raw_focus: Spans | None,
    names: Sequence[str],
    relate: Scorer | None,
    values: Callable[[str], Sequence[str]] | None,
) -> bool:
    """A field of the corpus the subject lacks is named (外观), and exactly one of the subject's
    own fields shares a code point with it (外形): that field is asked — only with stored name
    vectors, when it is also the own field nearest to the named one and, for a subject with
    several fields, ahead of the next by ``EMBED_MARGIN`` (a shared character alone is no
    evidence: 电话 shares 电 with 充电功率), neither name lies inside the other (that is the
    partial step's case: 用户评分 does not give 评分), the two do not end in one head of ≥ 2
    code points with other modifiers (联系电话 / 负责人电话: two kinds of 电话), and its values have the shape of the
    answer the question asks (:mod:`rag_lab.retrieval.answer_kind`; a date for ``什么时候``, a
    number for ``多少``). Two such fields decide nothing, nor does a named field of one code point
    (词, 曲: too short to share a morpheme) unless the question asks a date or a number, whose
    shape the values then must have (``宽是多少`` → 宽度 holding ``32米``).
    """
    if not raw_focus or not names:
        return False
    from rag_lab.retrieval.answer_kind import AnswerKind, asked_kind, values_fit

    a, b = max(raw_focus, key=lambda w: (w[1] - w[0], -w[0]))
    asked = rest[a:b]
    form = set(squash(asked))
    step: dict[str, Any] = {"method": str(Method.SHARED), "asked": asked}
    decision.steps.append(step)
    kind = asked_kind(squash(content_words(rest)))  # openings (谁知道) ask no kind
    if len(squash(asked)) < SHARED_MIN_NAME and kind not in (AnswerKind.DATE, AnswerKind.NUMBER):
        # 宽 in 宽是多少 may name 宽度 — only where a date or number asked can check the values
        step["skipped"] = "the named field is one code point long"
        return False
    sharing = [n for n in names if form & set(squash(n))]
    step["found"] = sharing[:CANDIDATE_LIMIT]
    if len(sharing) != 1:
        return False
    (found,) = sharing
    if len(form) >= SHARED_MIN_NAME and (squash(found) in squash(asked) or squash(asked) in squash(found)):
        # one name inside the other is the partial step's case: 用户评分 is not 评分, 出生地点 not 出生地
        step["inside"] = True
        return False
    if relate is None:
        step["skipped"] = "no field vectors: a shared character alone is no evidence (电话 / 充电功率)"
        return False
    head = _common_tail(squash(found), squash(asked))
    if len(head) >= SHARED_MIN_NAME:
        # 联系电话 / 负责人电话, 所属单位 / 主管单位: one head, other modifiers — two kinds of one thing
        step["same_head"] = head
        return False
    if len(names) > 1:
        ranked = sorted(zip(relate(asked, names), names, strict=True), key=lambda t: (-t[0], t[1]))
        if ranked[0][1] != found or ranked[0][0] - ranked[1][0] < EMBED_MARGIN:
            # the embedding must prefer this field by the margin it needs on its own (EMBED_MARGIN)
            step["nearest"] = [[n, round(v, 4)] for v, n in ranked[:2]]
            return False
    if values is not None and not values_fit(kind, values(found)):
        step["kind"] = str(kind)  # 什么时候 asked, and no value of the field is a date
        return False
    own = set(squash(found))
    decision.match = FieldMatch(asked, found, Method.SHARED, len(own & form) / len(own))
    return True


def content_words(rest: str) -> str:
    """What the embedding step compares: ``rest`` without the subject, openings, punctuation and final particles.

    U+FFFC (the subject's place), white space and punctuation split the text; each piece loses its
    openings (``请问``, ``你知道``: :data:`rag_lab.retrieval.ordinary.LEAD_INS`) and the
    sentence-final particles (吗, 呢, 啊, 呀, 吧, 哦, 啦) go; question words such as 什么时候 stay,
    since they say what kind of field is asked. Empty → ``rest`` itself.
    """
    pieces: list[str] = []
    piece: list[str] = []
    for ch in rest + "\ufffc":
        if ch == "\ufffc" or ch.isspace() or unicodedata.category(ch).startswith("P"):
            if piece:
                pieces.append(strip_lead_ins("".join(piece)))
            piece = []
        else:
            piece.append(ch)
    text = " ".join(p for p in pieces if p).rstrip("吗呢啊呀吧哦啦 ")
    return text or rest.strip()


def _embedding_step(
    decision: FieldDecision, asked: str, names: Sequence[str], decoys: Sequence[str], score: Scorer, compared: str
) -> bool:
    """Accept the subject's field nearest to ``asked`` when it leads its next field by ``EMBED_MARGIN`` and no decoy is nearer."""
    everything = [*names, *decoys]
    ranked = sorted(zip(everything, score(asked, everything), strict=True), key=lambda t: (-t[1], t[0]))
    own = [t for t in ranked if t[0] in names]
    rival = next((t for t in ranked if t[0] not in names), None)
    decision.steps.append(
        {
            "method": str(Method.EMBEDDING),
            "compared": compared,
            "asked": asked,
            "scores": [[n, round(v, 4), "field" if n in names else "decoy"] for n, v in ranked[:5]],
        }
    )
    if not own:
        return False
    (best, top), runner = own[0], (own[1] if len(own) > 1 else None)
    lead = top - (runner[1] if runner else 0.0)
    if lead >= EMBED_MARGIN and (rival is None or top > rival[1]):
        second = runner if runner is not None else rival
        decision.match = FieldMatch(asked, best, Method.EMBEDDING, top, second)
        return True
    return False


def _raw_spans(rest: str, form: str) -> list[tuple[int, int]]:
    """Spans of ``rest`` whose squashed text is ``form`` (for showing what was asked)."""
    found = []
    for start in range(len(rest)):
        if squash(rest[start]) == "" or not form.startswith(squash(rest[start])):
            continue
        for end in range(start + 1, len(rest) + 1):
            piece = squash(rest[start:end])
            if piece == form:
                found.append((start, end))
                break
            if not form.startswith(piece):
                break
    return found


__all__ = [
    "CANDIDATE_LIMIT",
    "EMBED_MARGIN",
    "PARTIAL_MARGIN",
    "PARTIAL_MIN",
    "PARTIAL_MIN_CHARS",
    "FieldDecision",
    "FieldMatch",
    "Method",
    "coverage",
    "decoy_fields",
    "fold",
    "general_aliases",
    "match_field",
    "squash",
]
