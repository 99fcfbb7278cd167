"""The aligned span: the text of a sentence standing where the question's interrogative stands.

Used by the support check (answering/support.py) for untyped questions with a question word and
for 谁/哪里 questions without a name or place pattern; rule in docs/prose.md ("Aligned span").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from rag_lab.answering.answer_types import NAME_WORDS, PLACE_WORDS, TYPE_WORDS, AnswerType
from rag_lab.answering.terms import WH_HEAD, bigrams, norm

#: answer types whose value may also be found by aligning the question with the sentence
ALIGNED_TYPES = (AnswerType.NAME, AnswerType.PLACE)
#: longest aligned span, in code points
ALIGNED_MAX = 40
#: one character of the question right beside its question word may be said otherwise (以什么来命名 —
#: 以…而命名) when at least this many characters of the right side after it are found
BESIDE_MIN = 2
CLAUSE_RE = re.compile(r"[，,；;：:。！？!?、]")
_TRAILING = "了过的是着有为在叫被把将会能要于到给向对从做干"
LEADING = "的是了"
ASIDE_RE = re.compile(r"\s*[（(][^（()）]{0,40}[)）]")
#: an aligned span starting with one of these refers back instead of naming (其下, 他), or starts
#: inside a phrase rather than at one (的计算, 也开发为…, 于肃宗二年…, （学名)
_NOT_START = "其他她它牠这那该此的也就都而且及和与或（("
#: left off the start of an aligned span: the sentence's own preposition or copula (分布于热带美洲)
_SPAN_LEAD = "于在是为对把被将着著了过"
#: an aligned span made only of a verb's complement or particle says nothing (收藏起来 → 起来)
_COMPLEMENTS = frozenset(
    ("起来", "下来", "出来", "过来", "上来", "回来", "进来", "下去", "出去", "过去", "上去", "起", "来", "去", "了", "着", "过")
)
WH_AT = re.compile(
    "|".join(re.escape(w) for _, ws in TYPE_WORDS for w in ws)
    + "|谁|" + WH_HEAD.pattern
)


#: what a question asks with an alias verb at the end of its left side (凉茶舖又叫什么, 龙胆又被称之为什么)
ALIAS_ASKED = ("又叫", "也叫", "还叫", "又称", "也称", "亦称", "别称", "俗称", "简称", "又名", "别名", "称之为", "称作")
#: where a sentence gives another name: the left anchor of an alias question (凉茶舖，又名凉茶店)
ALIAS_CUES = (
    "又名", "又称", "或称", "也称为", "也称", "亦称", "别称", "别名", "简称", "俗称", "又叫", "也叫", "或叫",
    "通称", "称之为", "称为", "叫做",
)  # fmt: skip
_ALIAS_CUE_RE = re.compile("|".join(re.escape(c) for c in sorted(ALIAS_CUES, key=len, reverse=True)))
#: where a sentence gives a thing's name (专栏仍名为“梧桐树专栏”): the cues of 名字/名称
NAMING_CUES = ("名为", "名叫", "取名为", "取名", "命名为", "定名为", "称为", "叫做")
#: common verbs and the verbs of the same sense a sentence says instead (获得 — 荣获/赢得, 擅长 —
#: 善于): whole words of two or more characters only, never a bare morpheme (任, 获), which is
#: part of too many other words
SYNONYM_CUES: dict[str, tuple[str, ...]] = {
    "获得": ("荣获", "获颁", "赢得", "夺得", "获选", "获授", "荣膺", "摘得", "取得"),
    "得到": ("获得", "荣获", "获颁", "赢得", "取得", "获赐"),
    "创造": ("缔造", "创下"),
    "擅长": ("善于", "擅于", "精于", "长于"),
    "引起": ("引致", "引发"),
    "讲述": ("记述", "叙述", "描述", "描写", "讲的是"),
    "创作": ("原作", "写作", "撰写", "编写", "谱写"),
}  # fmt: skip
#: question words a sentence says by a cue instead (猴面包树的别名 — …，又名猢狲树; 美誉 — 被誉为…): the
#: cue counts as saying the word (support.py) and anchors the aligned span like an alias verb
CUE_WORDS: dict[str, tuple[str, ...]] = {
    **{w: ALIAS_CUES for w in ALIAS_ASKED}, "英文名": ("英文", "英语"), "英文名称": ("英文", "英语"),
    "得名": ("命名", "取名", "故名", "名字来源", "名称来源", "名字来自", "名称来自"),
    "美誉": ("誉为", "美称", "之誉"), "出生地": ("出生于", "生于", "出生在"), "出生": ("生于",),
    **{w: NAMING_CUES for w in ("名字", "名称")},
    **SYNONYM_CUES,
}  # fmt: skip


#: X是什么的简称: the question asks what X is short for; the sentence says Z，简称X
ALIAS_NOUNS = ("简称", "缩写", "简写", "别称")


def _short_for(question: str, text: str, t: str, short: str) -> list[tuple[int, int, str]]:
    """The clause before an alias cue that gives ``short`` (广西壮族自治区南宁市第二中学，简称南宁二中
    → the school's full name); [] when the sentence gives ``short`` after no cue."""
    for cue in _ALIAS_CUE_RE.finditer(t):
        if len(short) >= 2 and t.startswith(short, cue.end()):
            return _align(question, text, t[: cue.start()].rstrip("，,（( "), "", "")
    return []


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
    q = norm(question).rstrip("？?。.！! ")
    t = norm(text)
    found = WH_AT.search(q)
    if found is None or len(t) != len(text):
        return []
    left = CLAUSE_RE.split(q[: found.start()])[-1]
    right = CLAUSE_RE.split(q[found.end() :])[0].lstrip(LEADING)
    # the next clause may say it (被用来形容，以…) — not for a name or place (谁, 哪里: the value stands
    # at the anchor) nor for X是什么, which the sentence answers where its 是 stands (Z是X); V的是什么 (不同的是什么:
    # what differs is …) nominalises a predicate, whose value the next clause says (与…不同，椭球坐标系…)
    onward = found.group() not in (*NAME_WORDS, *PLACE_WORDS) and (not left.endswith("是") or left.endswith("的是"))
    spans = _align(question, text, t, left, right, onward=onward)
    ends = (left, left.rstrip(_TRAILING), found.group())  # 又叫什么, 的别名是什么, 有什么美誉
    asked = _cue_asked(ends)
    said = [c for c in CUE_WORDS.get(asked, ()) if c in t]
    if not spans and said:
        at = min(t.index(c) for c in said)  # the first cue in the sentence, the longest one there
        cue = max((c for c in said if t.startswith(c, at)), key=len)
        spans = _align(question, text, t, cue, right)  # 又叫什么 → …，又名凉茶店; 有什么美誉 → 被誉为…
    if not spans and found.group() == "什么" and left.endswith("是") and right.startswith(ALIAS_NOUNS):
        spans = _short_for(question, text, t, left[:-1])  # X是什么的简称 → Z，简称X
    if not spans and not right and found.group() == "什么" and left.endswith("是") and len(left) > 2:
        spans = _align(question, text, t, "", "是" + left[:-1], inverted=True)  # Z是X for X是什么
    if not spans and not right and found.group() == "什么" and left.endswith("是"):
        spans = _taken_as(question, text, t, left[:-1])  # X的Z是什么 → 以Y为Z
    return spans


@functools.lru_cache(maxsize=256)
def _cue_asked(ends: tuple[str, ...]) -> str:
    """The first ``CUE_WORDS`` word one of ``ends`` (the question's left side, without its trailing
    particle, the question word) ends with, "" when none: the question's alone, once per question
    (≈ 100 words × 3 ends were tested for every sentence aligned)."""
    return next((w for w in CUE_WORDS if any(e.endswith(w) for e in ends)), "")


#: the frame 以Y为Z / 以Y作为Z (take Y as Z): it says that Z is Y
TAKEN_AS = ("为", "作为")
#: nouns of manner: X的V方式是什么 is answered by 以Y方式V (以弦乐四重奏乐团现场方式表现)
MANNERS = ("方式", "方法", "形式", "手段")
#: the shortest Z a 以…为Z frame is looked for with (a one-character Z such as 主 is part of too many words)
TAKEN_AS_MIN = 2


def _taken_as(question: str, text: str, t: str, subject: str) -> list[tuple[int, int, str]]:
    """``X的Z是什么`` answered by ``以Y为Z`` (``以旅游…等休闲相关事业为主要业务`` for
    ``宏都阿里山公司的主要业务是什么``): Z is what follows the subject's last 的 (the whole subject
    without one), at least ``TAKEN_AS_MIN`` characters; the 以 stands in the clause of 为Z (a list's 、 may
    stand between); the span is Y, between the 以 and 为Z."""
    z = subject.rsplit("的", 1)[-1]
    if len(z) < TAKEN_AS_MIN:
        return []
    manner = next((m for m in MANNERS if z.endswith(m) and len(z) > len(m)), "")
    frames = [verb + z for verb in TAKEN_AS] + ([manner + z[: -len(manner)]] if manner else [])
    for frame in frames:  # 以Y为Z; for a manner (表现方式) also 以Y方式V: Y is how it is done
        at = t.find(frame)
        clause = re.split(r"[，,；;：:。！？!?]", t[:at])[-1] if at > 0 else ""  # a list's 、 stays inside Y
        if "以" in clause:
            return _align(question, text, t, "以", frame)
    return []


#: words that announce what follows a colon (遵守以下限制：…, 规定如下：…): the answer stands after the colon
ANNOUNCING = ("以下", "如下", "下列", "下面")


def announces(before_colon: str) -> bool:
    """Does the text before a colon only announce what follows it (``以下限制``, ``如下``)?"""
    return any(w in before_colon for w in ANNOUNCING)


def _novel(question: str, span: str) -> bool:
    question_grams = bigrams(norm(question))
    return len(span) == 1 or any(len(g) == 2 and g not in question_grams for g in bigrams(norm(span)))


def _align(
    question: str, text: str, t: str, left: str, right: str, inverted: bool = False, onward: bool = False
) -> list[tuple[int, int, str]]:
    start, end = 0, len(t)
    if left:
        shortest = 1 if right else 2  # one character only when the right side also anchors
        anchor = ""
        for stripped in (left, left.rstrip(_TRAILING)):
            found = next((stripped[-n:] for n in range(len(stripped), shortest - 1, -1) if stripped[-n:] in t), "")
            anchor = found if len(found) > len(anchor) else anchor  # 吸收了 → 吸收, not a stray 了
        if not anchor:
            return []
        start = t.index(anchor) + len(anchor)
        if len(anchor) == 1 and right:  # the occurrence nearest before the right side's start
            ahead = next((right[:n] for n in range(len(right), 1, -1) if right[:n] in t), "")
            at = t.find(ahead) if ahead else -1
            start = t.rfind(anchor, 0, at) + 1 if at > 0 and t.rfind(anchor, 0, at) >= 0 else start
        aside = ASIDE_RE.match(t, start)  # an aside right after the anchor: 叶柄（petiole）有…
        start = aside.end() if aside else start
    if right:
        shortest = 1 if left else (len(right) if inverted else 2)
        anchor = next((right[:n] for n in range(len(right), shortest - 1, -1) if right[:n] in t[start:]), "")
        if not anchor and left and len(right) > BESIDE_MIN:  # 以什么来命名 → 以…而命名: one character beside
            anchor = next((right[1:n] for n in range(len(right), BESIDE_MIN, -1) if right[1:n] in t[start:]), "")
        if not anchor:
            return []
        end = t.index(anchor, start)
    if left and not right:
        stop = CLAUSE_RE.search(t, start)
        before_colon = t[start : stop.start()].strip() if stop else ""
        if stop and stop.group() in "：:" and (not _novel(question, before_colon) or announces(before_colon)):
            start = stop.end()  # 议题有：法律、… — nothing new before the colon: what follows it
            stop = CLAUSE_RE.search(t, start)  # 遵守以下限制：… — an announcing colon: what follows it
        elif onward and stop and stop.group() in "，," and not t[start : stop.start()].strip():
            start = stop.end()  # 被用来形容，以少数的兵力… — the anchor ends its clause: the next one says it
            stop = CLAUSE_RE.search(t, start)
        end = stop.start() if stop else len(t)
    if right and not left:
        stops = [m.end() for m in CLAUSE_RE.finditer(t, 0, end)]
        start = stops[-1] if stops else 0
    crossing = CLAUSE_RE.search(t, start, end)
    if crossing is not None:  # keep the clause next to the anchor that closes the span
        if right:
            start = [m.end() for m in CLAUSE_RE.finditer(t, start, end)][-1]
        else:
            end = crossing.start()
    raw = text[start:end]
    inner = raw.strip()
    span = inner.lstrip(_SPAN_LEAD)
    start += len(raw) - len(raw.lstrip()) + len(inner) - len(span)
    pronoun = span[:1] in _NOT_START or span in _COMPLEMENTS
    if not 1 <= len(span) <= ALIGNED_MAX or CLAUSE_RE.search(span) or not _novel(question, span) or pronoun:
        return []
    return [(start, start + len(span), span)]



def at_gap(
    question: str,
    text: str,
    values: tuple[tuple[int, int, str], ...],
    spans: Sequence[tuple[int, int, str]] | None = None,
) -> bool:
    """Does a value stand at the open end of the aligned span — right after the left anchor when
    the question word ends its clause, right before the right anchor otherwise (速度为4.7 GHz for
    速度是多少, not 速度几乎是…的3倍)? ``spans``: ``aligned_span(question, text)`` when the caller
    has it already (it is [] whenever the question has no question word)."""
    if not values:  # no value to stand anywhere: the span need not be looked for
        return False
    q = norm(question).rstrip("？?。.！! ")
    found = WH_AT.search(q)
    if found is None:
        return False
    spans = aligned_span(question, text) if spans is None else spans
    if not spans:
        return False
    (s_start, s_end, _), closes = spans[0], bool(CLAUSE_RE.split(q[found.end() :])[0].lstrip(LEADING))
    return any(
        s_start <= a and b <= s_end and (s_end - b <= 2 if closes else a - s_start <= 2) for a, b, _ in values
    )
