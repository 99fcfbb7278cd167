"""Answering a prose question from sentence (and table-row) units: extract, never compose.

A *prose question* is one that names no (subject, field) key. Its answer is the verbatim text
of one retrieved sentence, and only when :func:`support_check` passes for it. Relevance
scores only order the candidates; the check alone decides (docs/prose.md).

:func:`decide_prose` takes candidate units in rank order (the packed context, then the other
retrieved ones), all already verified against their files by the caller, and returns a
:class:`ProseDecision`:

1. units outside their validity window on ``as_of`` are dropped (listed in the decision);
2. every remaining sentence/table-row unit is checked; none passes → ``insufficient_evidence``,
   saying what the best candidate lacks (terms it does not mention, or the asked type);
3. a passing unit exists only outside the packed context → ``excluded_by_budget``;
4. passing units are grouped by source bytes (sha256): copies of the same bytes are one
   independent source. For a typed question (number, date, name, place) two independent
   sources whose typed values share nothing → ``conflicting_evidence``, citing every side;
5. a typed answer and an audited unit (``audit``: the bounded conflict audit past the top k,
   retrieval/prose_audit.py) from other bytes passing with values that share nothing with the
   answer's → ``conflicting_evidence``;
6. otherwise ``answered`` with the best-supported passing sentence of the context (coverage,
   then own share; rank breaks ties), citing every passing unit that agrees with it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from rag_lab.answering.answer_types import (
    DESCRIPTION,
    DYNASTY_RE,
    REASON_WORDS,
    TYPE_WORDS,
    AnswerType,
    answer_type,
    defined_term,
    defines,
    is_dynasty_question,
    measure,
    typed_values,
)
from rag_lab.records import Reason, Status, Unit

PROSE_KINDS = ("sentence", "table_row")
#: share of the question's content bigrams found in the sentence + its title/headings/caption
COVERAGE_MIN = 0.8
#: share of the content bigrams *not* found in the title/headings that the sentence itself has
OWN_MIN = 0.6
#: a sentence answering an untyped question must say at least this many characters the question does not
NOVEL_MIN = 2
STOP_WORDS = (
    "为什么", "为何", "怎么样", "怎么", "怎样", "如何", "是否", "请问", "哪些", "哪个", "哪一",
    "什么", "一下", "可以", "一个", "哪", "吗", "呢", "吧", "啊", "的", "了", "是", "有", "在",
    "被", "把", "和", "与", "及", "或", "为", "于", "对", "从", "到", "由", "其", "该", "这", "那",
    "会", "能", "要", "将", "所", "以", "而", "也", "都", "就", "还", "又", "之", "得", "地", "着",
    "过", "个", "们", "中", "此", "约", "何", "叫",
)  # fmt: skip
#: words that say what kind of answer is wanted, not what it is about (原因 in 211系的原因是什么)
META_WORDS = (
    "什么样", "原因", "定义", "特征", "特点", "作用", "时间", "事情", "活动", "观点", "方面", "情况",
    "内容", "意义", "寓意", "目的", "影响", "结果", "过程", "方式", "方法", "名字", "名称", "地区",
    "地方", "种类", "类型", "主要", "分别", "大约", "大概", "具体", "这个", "那个", "发生", "出现",
    "现在", "目前", "当前", "如今",
)  # fmt: skip
_REMOVE = sorted(
    {w for _, ws in TYPE_WORDS for w in ws} | set(STOP_WORDS) | set(META_WORDS) | set(REASON_WORDS),
    key=len,
    reverse=True,
)
_REMOVE_RE = re.compile("|".join(re.escape(w) for w in _REMOVE))
#: common words that hold a one-character stop word and are words of their own: the stop list
#: is matched word-aware, so 中 is dropped from 在比赛中 but 中国, 现在, 将军, 社会 stay whole
KEEP_WORDS = (
    "中国", "中华", "中央", "中心", "中学", "中文", "中部", "中间", "中期", "中旬", "中共", "中医", "中药",
    "中将", "中校", "中队", "中型", "中等", "中级", "中东", "中亚", "中南", "中原", "中山", "中午", "高中",
    "初中", "空中", "存在", "所在", "所有", "拥有", "没有", "特有", "固有", "有名", "有限", "有效",
    "有机", "成为", "作为", "认为", "称为", "行为", "以上", "以下", "以前", "以后", "以来", "所以", "会议",
    "会长", "会员", "社会", "协会", "学会", "大会", "议会", "国会", "教会", "工会", "机会", "能力", "能源",
    "功能", "可能", "技能", "性能", "智能", "本能", "重要", "需要", "要求", "将军", "大将", "上将", "少将",
    "所长", "场所", "地位", "地图", "地理", "地球", "地点", "土地", "基地", "当地", "各地", "本地", "地铁",
    "地震", "地下", "地质", "地面", "通过", "经过", "超过", "过去", "获得", "取得", "得到", "得名", "个人",
    "个体", "和平", "共和", "参与", "普及", "涉及", "由于", "关于", "属于", "等于", "对手", "对象", "相对",
    "绝对", "反对", "从事", "到达", "达到", "受到", "自由", "理由", "其他", "尤其", "首都", "都市", "成都",
    "京都", "成就", "就读", "就职", "了解", "因此", "此外", "条约", "公约", "契约", "约定", "预约", "任何",
    "几何",
)  # fmt: skip
_STOP_RE = re.compile("|".join(re.escape(w) for w in (*KEEP_WORDS, *_REMOVE)))
_KEEP = frozenset(KEEP_WORDS)


def _drop_stop_words(text: str) -> str:
    """``_REMOVE`` words replaced by a space, except inside a ``KEEP_WORDS`` word (leftmost match
    first, a kept word before a stop word at the same place)."""
    return _STOP_RE.sub(lambda m: m.group() if m.group() in _KEEP else " ", text)
#: interrogative determiners: the word right after one names the *kind* of the answer (什么职务,
#: 哪些地区, 哪个球队), which the answering sentence names by an instance, not by that word
WH_DETERMINERS = ("什么样的", "什么样", "什么", "何种", "哪")
#: after 哪: an optional numeral and classifier (哪些, 哪个, 哪一种, 哪两条, 哪张)
_WH_MEASURE = "[一两二三四五六七八九十几]*[些个种类位项部所家条座支只本张首件名届次场门]?"
#: a head holds none of these (什么是X, 什么的药物, 哪些洲有过)
_NOT_HEAD = "是的了为在于和与呢吗啊吧把被对从到有过而来去"
_HEAD_CHAR = rf"[^\W\d_{_NOT_HEAD}]"
#: the head: two characters, or up to three when the question's run ends there (哪两个运动员)
_WH_HEAD = re.compile(
    "(?:" + "|".join(re.escape(w) + (_WH_MEASURE if w == "哪" else "") for w in WH_DETERMINERS) + ")"
    + rf"({_HEAD_CHAR}(?:{_HEAD_CHAR}(?!\w)|{_HEAD_CHAR}{{2}}(?!\w)|{_HEAD_CHAR})?)?"
)
_RUN = re.compile(r"\w+")
_STRICT = re.compile(r"[0-9]+(?:\.[0-9]+)?|[a-z][a-z0-9]*")


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


_WH_TYPE_RE = re.compile(
    "(?:"
    + "|".join(
        re.escape(w)
        for w in sorted({w for _, ws in TYPE_WORDS for w in ws}, key=len, reverse=True)
        if any(d in w for d in WH_DETERMINERS)
    )
    + ")(?![一两二三四五六七八九十几些个种类位项部所家条座支只本张首件名届次场门])"  # 在哪些 is 在 + 哪些
)


def answer_heads(question: str) -> list[str]:
    """The words (one or two characters) right after an interrogative determiner
    (``WH_DETERMINERS``): 职务 in 担任过什么职务, 地区 in 分布在哪些地区. They say what kind of
    thing the answer is, so they are not content terms the sentence must repeat."""
    return [m.group(1) for m in _WH_HEAD.finditer(_WH_TYPE_RE.sub(" ", _norm(question))) if m.group(1)]


def content_terms(question: str) -> list[str]:
    """The question's content terms: its word runs after removing interrogative determiners with
    the answer's kind after them (``answer_heads``), then question, stop and meta words
    (``META_WORDS``; longest first); single characters count too (死 in 刘七是怎么死的)."""
    stripped = _drop_stop_words(_WH_HEAD.sub(" ", _WH_TYPE_RE.sub(" ", _norm(question))))
    terms: list[str] = []
    for run in _RUN.findall(stripped):
        if run not in terms:
            terms.append(run)
    return terms


def _bigrams(text: str) -> set[str]:
    """Every character bigram inside a word run, and every single character."""
    grams: set[str] = set()
    for run in _RUN.findall(text):
        grams.update(run[i : i + 2] for i in range(len(run) - 1))
        grams.update(run)
    return grams


def _split_by_context(terms: list[str], context: str) -> tuple[list[str], list[str]]:
    """Each term cut into the parts its context (title, headings…) says — the longest substrings
    of two or more characters found there, left to right — and the pieces between them, which
    the sentence must cover on their own (王家瑞担任 under the title 王家瑞 → 王家瑞 | 担任)."""
    named: list[str] = []
    pieces: list[str] = []
    for term in terms:
        i, current = 0, ""
        while i < len(term):
            length = next((n for n in range(len(term) - i, 1, -1) if term[i : i + n] in context), 0)
            if length:
                named.append(term[i : i + length])
                if current:
                    pieces.append(current)
                current, i = "", i + length
            else:
                current, i = current + term[i], i + 1
        if current:
            pieces.append(current)
    return named, pieces


def _term_grams(term: str) -> set[str]:
    return {term[i : i + 2] for i in range(len(term) - 1)} or {term}


@dataclass(frozen=True)
class Support:
    """The outcome of :func:`support_check` for one unit."""

    ok: bool
    answer_type: AnswerType
    terms: tuple[str, ...]
    covered: tuple[str, ...]
    missing: tuple[str, ...]
    coverage: float
    own: float
    values: tuple[tuple[int, int, str], ...]  # typed values in the unit's text (offsets into text)
    problem: str | None  # None, "no_terms", "terms", "answer_type"
    at_gap: bool = False  # a value stands where the question's interrogative stands (ranks only)

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "answer_type": str(self.answer_type),
            "terms": list(self.terms),
            "covered": list(self.covered),
            "missing": list(self.missing),
            "coverage": round(self.coverage, 4),
            "own": round(self.own, 4),
            "values": [v for _, _, v in self.values],
            "problem": self.problem,
            "at_gap": self.at_gap,
        }


def unit_context(unit: Unit) -> str:
    """What besides the unit's own text may cover question terms: title, heading path, a
    table's caption and header."""
    parts = [str(unit.get("title") or ""), *map(str, unit.get("headings") or [])]
    parts += [str(unit.get("caption") or ""), *map(str, unit.get("header") or [])]
    return " ".join(p for p in parts if p)


def support_check(question: str, unit: Unit) -> Support:
    """Does ``unit`` (a sentence or table row) say what ``question`` asks? Deterministic rule:

    1. the question has content terms (``content_terms``); none → fails (``no_terms``);
    2. every digit and Latin run of the question occurs in the sentence or its context;
    3. at least ``COVERAGE_MIN`` of the terms' character bigrams occur in the sentence or in
       its context (title, heading path, caption, table header), every term has at least half
       of its bigrams there, and at least ``OWN_MIN`` of the bigrams not in the context occur
       in the sentence itself (``terms``);
    4. the answer type is present (``answer_type``): for number/date/name/place questions the
       sentence holds a value of that type (answer_types.py) that the question does not
       already contain; for other questions the sentence says at least ``NOVEL_MIN``
       characters not covered by the question's bigrams.
    """
    kind, word = answer_type(question)
    terms = content_terms(question)
    text = str(unit.get("text", ""))
    context = _norm(unit_context(unit))
    own_grams, context_grams = _bigrams(_norm(text)), _bigrams(context)
    named, pieces = _split_by_context(terms, context)
    grams = set().union(*(_term_grams(t) for t in named + pieces)) if terms else set()
    in_context = {g for g in grams if g in context_grams}
    hit = {g for g in grams if g in own_grams} | in_context
    coverage = len(hit) / len(grams) if grams else 0.0
    rest = grams - in_context
    own = len(rest & own_grams) / len(rest) if rest else 1.0
    covered = tuple(t for t in named + pieces if len(_term_grams(t) & hit) * 2 >= len(_term_grams(t)))
    missing = tuple(t for t in pieces if t not in covered)
    haystack = _norm(text) + " " + _norm(unit_context(unit))
    strict_ok = all(s in haystack for t in terms for s in _STRICT.findall(t))
    question_n = _norm(question)
    values = _typed(question, kind, word, text, grams & own_grams)
    if not values and kind in ALIGNED_TYPES:  # no name/place pattern: the span where the question's gap is
        values = tuple(v for v in aligned_span(question, text) if not any(c.isdigit() for c in v[2]))
    edge = _at_gap(question, text, values)

    kinds = _kind_words(question_n)
    if not pieces and kinds and not any(k in _norm(text) for k in kinds):
        missing = tuple(kinds)  # only the subject and the kind asked (王爱爱有什么美誉): name the kind

    def result(ok: bool, problem: str | None) -> Support:
        return Support(ok, kind, tuple(terms), covered, missing, coverage, own, values, problem, edge)

    if not grams:
        return result(False, "no_terms")
    # the sentence itself must say something the question asks about, not only the title
    mentions = bool(grams & own_grams) or any(_norm(h) in _norm(text) for h in answer_heads(question))
    if not strict_ok or missing or coverage < COVERAGE_MIN or own < OWN_MIN or not mentions:
        return result(False, "terms")
    if kind == AnswerType.DEFINITION:
        term = defined_term(question)
        opens = (
            unit.get("span") is None
            or unit.get("parent_span") is None
            or unit["span"][0] == unit["parent_span"][0]
        )
        values = tuple(defines(term, text, opens)) if term else ()
        return result(bool(values), None if values else "answer_type")
    if kind != AnswerType.NONE:
        return result(bool(values), None if values else "answer_type")
    question_grams = _bigrams(question_n)
    novel = sum(
        1
        for i, ch in enumerate(_norm(text))
        if ch.isalnum()
        and _norm(text)[i : i + 2] not in question_grams
        and (i == 0 or _norm(text)[i - 1 : i + 1] not in question_grams)
    )
    slot = _WH_AT.search(question_n) is not None
    spans = [v for _, _, v in aligned_span(question, text)]
    if spans and all(_announces(v, answer_heads(question) + _kind_words(question_n)) for v in spans):
        spans = []  # 浮龙具有数个独有特征 announces the features, the next sentences give them
    ok_ = novel >= NOVEL_MIN and (not slot or bool(spans))
    return result(ok_, None if ok_ else "answer_type")


#: nouns that name the kind of answer; a question made only of its subject and one of these
#: (王爱爱有什么美誉, X有哪些特征) needs a sentence that names the kind itself
KIND_WORDS = (
    "原因", "定义", "特征", "特点", "作用", "意义", "寓意", "目的", "影响", "用途", "功能", "成就", "贡献",
    "美誉", "称号", "荣誉", "别名", "名字", "名称",
)  # fmt: skip
#: a typed value's clause may lean on a neighbouring clause's terms when it holds at most this
#: many word characters besides the value and bracketed asides (于1974年，…; 2011年1月1日，受聘为…)
LOCAL_SLACK = 6
#: clause boundaries for value locality (a list's 、 does not end a clause)
_LOCAL_CLAUSE = re.compile(r"[，,；;：:。！？!?]")


#: vague quantities: a span holding one and ending with the kind asked only announces it
VAGUE = ("数个", "一些", "多种", "许多", "很多", "以下", "如下", "几个", "若干", "不少", "多项", "诸多", "各种")


def _announces(span: str, kinds: list[str]) -> bool:
    """Does the aligned span only announce the answer (``具有数个独有特征``, ``有以下几种``):
    a vague quantity (``VAGUE``) and then the kind the question asks, or a closing colon?"""
    n = _norm(span).rstrip()
    if n.endswith(("：", ":", "如下")):
        return True
    return any(v in n for v in VAGUE) and any(n.endswith(k) for k in kinds if k)


def _kind_words(question_n: str) -> list[str]:
    return [w for w in KIND_WORDS if w in question_n]


def _typed(
    question: str, kind: AnswerType, word: str | None, text: str, own_hit: set[str]
) -> tuple[tuple[int, int, str], ...]:
    """The typed values of ``text`` that may answer ``question``: not already in the question; a
    dynasty for 哪个朝代; a number with a unit of the asked measure (多长 → a length); a name
    sharing no bigram with the question (首位副馆长 → not 首位代理); and each in a clause that, or
    whose neighbour, says a question term itself (``own_hit``), when the sentence says any."""
    question_n = _norm(question)
    if kind == AnswerType.DATE and is_dynasty_question(word):
        found = [(m.start(), m.end(), m.group()) for m in DYNASTY_RE.finditer(text)]
    else:
        found = typed_values(kind, text, measure(question) if kind == AnswerType.NUMBER else None)
    question_pairs = {g for g in _bigrams(question_n) if len(g) == 2}
    values = [
        v
        for v in found
        if _norm(v[2]) not in question_n
        and not (kind == AnswerType.NAME and {g for g in _bigrams(_norm(v[2])) if len(g) == 2} & question_pairs)
    ]
    if not own_hit or len(text) != len(_norm(text)) or kind == AnswerType.REASON:  # a cause word links clauses
        return tuple(values)
    t = _norm(text)
    cuts = [0, *(m.end() for m in _LOCAL_CLAUSE.finditer(t)), len(t) + 1]
    clauses = [(cuts[i], cuts[i + 1]) for i in range(len(cuts) - 1)]
    saying = [any(g in t[a:b] for g in own_hit) for a, b in clauses]

    def local(v: tuple[int, int, str]) -> bool:
        at = next(i for i, (a, b) in enumerate(clauses) if a <= v[0] < b)
        a, b = clauses[at]
        # a neighbour's terms count only for a clause that is little more than the value (1974年，他…)
        bare = re.sub(r"\W", "", _ASIDE.sub("", t[a:b]))
        short = len(bare) - len(re.sub(r"\W", "", _ASIDE.sub("", _norm(v[2])))) <= LOCAL_SLACK
        return saying[at] or (short and any(saying[j] for j in (at - 1, at + 1) if 0 <= j < len(saying)))

    return tuple(v for v in values if local(v))


def _at_gap(question: str, text: str, values: tuple[tuple[int, int, str], ...]) -> bool:
    """Does a value stand at the open end of the aligned span — right after the left anchor when
    the question word ends its clause, right before the right anchor otherwise (速度为4.7 GHz for
    速度是多少, not 速度几乎是…的3倍)?"""
    q = _norm(question).rstrip("？?。.！! ")
    found = _WH_AT.search(q)
    spans = aligned_span(question, text) if found else []
    if found is None or not spans or not values:
        return False
    (s_start, s_end, _), closes = spans[0], bool(_CLAUSE.split(q[found.end() :])[0].lstrip(_LEADING))
    return any(
        s_start <= a and b <= s_end and (s_end - b <= 2 if closes else a - s_start <= 2) for a, b, _ in values
    )


#: answer types whose value may also be found by aligning the question with the sentence
ALIGNED_TYPES = (AnswerType.NAME, AnswerType.PLACE)
#: longest aligned span, in code points
ALIGNED_MAX = 40
_CLAUSE = re.compile(r"[，,；;：:。！？!?、]")
_TRAILING = "了过的是着有为在叫被把将会能要于到给向对从做干"
_LEADING = "的是了"
_ASIDE = re.compile(r"\s*[（(][^（()）]{0,40}[)）]")
#: an aligned span starting with one of these refers back instead of naming (其下, 他), or starts
#: inside a phrase rather than at one (的计算, 也开发为…, 于肃宗二年…, （学名)
_NOT_START = "其他她它牠这那该此的也就都而且及和与或（("
#: left off the start of an aligned span: the sentence's own preposition or copula (分布于热带美洲)
_SPAN_LEAD = "于在是为对把被将着著了过"
#: an aligned span made only of a verb's complement or particle says nothing (收藏起来 → 起来)
_COMPLEMENTS = frozenset(
    ("起来", "下来", "出来", "过来", "上来", "回来", "进来", "下去", "出去", "过去", "上去", "起", "来", "去", "了", "着", "过")
)
_WH_AT = re.compile(
    "|".join(re.escape(w) for _, ws in TYPE_WORDS for w in ws)
    + "|谁|" + _WH_HEAD.pattern
)


def aligned_span(question: str, text: str) -> list[tuple[int, int, str]]:
    """The span of ``text`` standing where the question's interrogative stands: the question is
    cut at its first question word (its clause on each side: up to a comma, colon or stop);
    the longest end of the left side (two or more characters, or one when the right side also
    anchors; a trailing 了/过/的/是/着 may be left off) and the longest start of the right side found in the sentence, in that order,
    enclose the span (被谁所杀 → 被耶律金山所杀 → 耶律金山). With the question word at the end
    of its clause the span runs from the left anchor to the next punctuation; at its start,
    from the previous punctuation to the right anchor; a span that would cross punctuation keeps
    the clause next to the right anchor (or, without one, the left). The span must be 1–``ALIGNED_MAX``
    characters (a leading 于/在/是/为/对/把/被/将/着/了/过 left off), hold no punctuation, not start
    with a pronoun (其他她它这那该此), a function word (的也就都而且及和与或) or an
    opening bracket, and say something the question does not. Empty when any
    part is not found. Offsets are code points of ``text``."""
    q = _norm(question).rstrip("？?。.！! ")
    t = _norm(text)
    found = _WH_AT.search(q)
    if found is None or len(t) != len(text):
        return []
    left = _CLAUSE.split(q[: found.start()])[-1]
    right = _CLAUSE.split(q[found.end() :])[0].lstrip(_LEADING)
    spans = _align(question, text, t, left, right)
    if not spans and not right and found.group() == "什么" and left.endswith("是") and len(left) > 2:
        spans = _align(question, text, t, "", "是" + left[:-1], inverted=True)  # Z是X for X是什么
    return spans


def _novel(question: str, span: str) -> bool:
    question_grams = _bigrams(_norm(question))
    return len(span) == 1 or any(len(g) == 2 and g not in question_grams for g in _bigrams(_norm(span)))


def _align(
    question: str, text: str, t: str, left: str, right: str, inverted: bool = False
) -> list[tuple[int, int, str]]:
    start, end = 0, len(t)
    if left:
        shortest = 1 if right else 2  # one character only when the right side also anchors
        anchor = ""
        for stripped in (left, left.rstrip(_TRAILING)):
            anchor = next((stripped[-n:] for n in range(len(stripped), shortest - 1, -1) if stripped[-n:] in t), "")
            if anchor:
                break
        if not anchor:
            return []
        start = t.index(anchor) + len(anchor)
        if len(anchor) == 1 and right:  # the occurrence nearest before the right side's start
            ahead = next((right[:n] for n in range(len(right), 1, -1) if right[:n] in t), "")
            at = t.find(ahead) if ahead else -1
            start = t.rfind(anchor, 0, at) + 1 if at > 0 and t.rfind(anchor, 0, at) >= 0 else start
        aside = _ASIDE.match(t, start)  # an aside right after the anchor: 叶柄（petiole）有…
        start = aside.end() if aside else start
    if right:
        shortest = 1 if left else (len(right) if inverted else 2)
        anchor = next((right[:n] for n in range(len(right), shortest - 1, -1) if right[:n] in t[start:]), "")
        if not anchor:
            return []
        end = t.index(anchor, start)
    if left and not right:
        stop = _CLAUSE.search(t, start)
        if stop and stop.group() in "：:" and not _novel(question, t[start : stop.start()].strip()):
            start = stop.end()  # 议题有：法律、… — nothing new before the colon: what follows it
            stop = _CLAUSE.search(t, start)
        end = stop.start() if stop else len(t)
    if right and not left:
        stops = [m.end() for m in _CLAUSE.finditer(t, 0, end)]
        start = stops[-1] if stops else 0
    crossing = _CLAUSE.search(t, start, end)
    if crossing is not None:  # keep the clause next to the anchor that closes the span
        if right:
            start = [m.end() for m in _CLAUSE.finditer(t, start, end)][-1]
        else:
            end = crossing.start()
    raw = text[start:end]
    inner = raw.strip()
    span = inner.lstrip(_SPAN_LEAD)
    start += len(raw) - len(raw.lstrip()) + len(inner) - len(span)
    pronoun = span[:1] in _NOT_START or span in _COMPLEMENTS
    if not 1 <= len(span) <= ALIGNED_MAX or _CLAUSE.search(span) or not _novel(question, span) or pronoun:
        return []
    return [(start, start + len(span), span)]


@dataclass
class ProseDecision:
    status: Status
    reason: Reason | None
    message: str
    answer: str | None = None
    cited: list[Unit] = field(default_factory=list)
    sides: list[dict[str, Any]] = field(default_factory=list)
    answer_span: dict[str, Any] | None = None
    independent: int = 0
    checks: list[dict[str, Any]] = field(default_factory=list)
    out_of_window: list[str] = field(default_factory=list)


def _in_window(unit: Unit, as_of: date) -> bool:
    day = as_of.isoformat()
    return bool(unit.get("valid_from", day) <= day < unit.get("valid_to", "9999-12-31"))


def _value_set(support: Support) -> frozenset[str]:
    return frozenset(_norm(v) for _, _, v in support.values)


def _agree(a: frozenset[str], b: frozenset[str]) -> bool:
    """Two value sets agree when a value of one holds, or is held by, a value of the other
    (2007年 and 2007年5月21日 say the same year)."""
    return any(x in y or y in x for x in a for y in b)


def decide_prose(
    question: str, kept: list[Unit], others: list[Unit], as_of: date, audit: list[Unit] | None = None
) -> ProseDecision | None:
    """The decision on a prose question (module docstring); None when no candidate is prose.

    ``audit``: further prose units (the conflict audit, retrieval/prose_audit.py), verified by
    the caller; they never answer, but one that passes the check with values disjoint from the
    answer's, from other bytes, makes the decision ``conflicting_evidence``."""
    ranked = [(u, True) for u in kept] + [(u, False) for u in others]
    prose = [(u, in_ctx) for u, in_ctx in ranked if u.get("kind") in PROSE_KINDS]
    if not prose:
        return None
    decision = ProseDecision(Status.REFUSED, Reason.INSUFFICIENT_EVIDENCE, "")
    current = []
    for unit, in_ctx in prose:
        if _in_window(unit, as_of):
            current.append((unit, in_ctx))
        else:
            decision.out_of_window.append(str(unit["evidence_id"]))
    checked = [(u, in_ctx, support_check(question, u)) for u, in_ctx in current]
    decision.checks = [
        {"evidence_id": u["evidence_id"], "in_context": c, **s.as_dict()} for u, c, s in checked
    ]
    passing = [(u, c, s) for u, c, s in checked if s.ok]
    seen = {u["evidence_id"] for u, _c in prose}
    audited = [
        (u, support_check(question, u))
        for u in audit or []
        if u.get("kind") in PROSE_KINDS and u["evidence_id"] not in seen and _in_window(u, as_of)
    ]
    decision.checks += [
        {"evidence_id": u["evidence_id"], "in_context": False, "audit": True, **s.as_dict()}
        for u, s in audited
    ]
    if not passing:
        decision.message = _what_is_missing(question, [s for _, _, s in checked])
        return decision
    in_context = [(u, s) for u, c, s in passing if c]
    if not in_context:
        decision.reason = Reason.EXCLUDED_BY_BUDGET
        decision.message = "A retrieved passage supports an answer but did not fit the context budget."
        return decision
    # the best-supported passing sentence of the context; rank only breaks ties
    best_unit, best = min(
        enumerate(in_context),
        key=lambda item: (-item[1][1].coverage, -item[1][1].own, not item[1][1].at_gap, item[0]),
    )[1]
    by_source: dict[str, list[Support]] = {}
    for unit, _c, support in passing:
        by_source.setdefault(str(unit["sha256"]), []).append(support)
    decision.independent = len(by_source)
    typed = best.answer_type != AnswerType.NONE
    # a source agrees when any of its passing sentences gives a value of the answer (one text may
    # name several values of a type; only a source saying none of the answer's disagrees)
    agree = {
        sha
        for sha, supports in by_source.items()
        if not typed or any(_agree(_value_set(s), _value_set(best)) for s in supports)
    }
    # audited sentences from other bytes that pass the check and share no value with the answer
    disagreeing: list[tuple[Unit, bool, Support]] = []
    for unit, support in audited:
        sha = str(unit["sha256"])
        other = typed and support.ok and sha not in by_source and not _agree(_value_set(support), _value_set(best))
        if other and all(str(u["sha256"]) != sha for u, _c, _s in disagreeing):  # one per source (reprints)
            disagreeing.append((unit, False, support))
    if typed and (len(agree) < len(by_source) or disagreeing):
        decision.reason = Reason.CONFLICTING_EVIDENCE
        sides: dict[frozenset[str], list[Unit]] = {}
        for unit, _c, support in passing + disagreeing:
            sides.setdefault(_value_set(support), []).append(unit)
        decision.sides = [
            {
                "value": "、".join(sorted(values)),  # as key sides have it (render, server)
                "values": sorted(values),
                "evidence_ids": [u["evidence_id"] for u in units],
                "text": units[0]["text"],
            }
            for values, units in sorted(sides.items(), key=lambda item: sorted(item[0]))
        ]
        decision.cited = [u for _v, units in sorted(sides.items(), key=lambda i: sorted(i[0])) for u in units]
        decision.message = (
            f"Independent sources give different values ({DESCRIPTION[best.answer_type]}): "
            + " / ".join("、".join(s["values"]) for s in decision.sides)
            + "; no source is preferred."
        )
        return decision
    decision.status, decision.reason, decision.answer = Status.ANSWERED, None, str(best_unit["text"])
    decision.cited = [  # the answer's own sentence, and every passage that says the same
        u
        for u, _c, s in passing
        if str(u["sha256"]) in agree
        and (_agree(_value_set(s), _value_set(best)) if typed else u["text"] == best_unit["text"])
    ]
    if len(best.values) == 1:
        start, end, value = best.values[0]
        origin = best_unit["span"][0]
        decision.answer_span = {"text": value, "span": [origin + start, origin + end]}
    decision.message = (
        f"Answered with a verbatim sentence from {best_unit['source']} "
        f"({len(decision.cited)} passage(s), {len(agree)} independent source(s))."
    )
    return decision


def _what_is_missing(question: str, supports: list[Support]) -> str:
    if not supports or supports[0].problem == "no_terms":
        return "The question names nothing the passages could be checked against; ask with the names it is about."
    best = max(supports, key=lambda s: (s.problem == "answer_type", s.coverage))
    if best.problem == "answer_type":
        mentioned = "、".join(best.covered)
        return (
            f"The passages mention {mentioned} but give no {DESCRIPTION[best.answer_type]}; "
            "this is not evidence that there is none."
        )
    return (
        f"No retrieved passage mentions {'、'.join(best.missing) or '、'.join(best.terms)}"
        + (f" (the closest mentions {'、'.join(best.covered)})" if best.covered else "")
        + "; nothing supports an answer."
    )
