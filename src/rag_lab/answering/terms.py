"""A prose question's content terms: what a supporting sentence (or its context) must say.

The question is normalised (NFKC, case-folded); type words, interrogative determiners with the
answer's kind after them (``answer_heads``), stop words and meta words are removed; the word runs
left are the terms. Coverage compares character bigrams (``bigrams``). The rules are described in
docs/prose.md ("The support check", step 1).
"""

from __future__ import annotations

import functools
import operator
import re

from rag_lab.answering.answer_types import REASON_WORDS, TYPE_WORDS, drop_counter
from rag_lab.text import nfkc_fold_memo

STOP_WORDS = (
    "为什么", "为何", "怎么样", "怎么", "怎样", "如何", "是否", "请问", "哪些", "哪个", "哪一",
    "什么", "一下", "可以", "一个", "哪", "吗", "呢", "吧", "啊", "的", "了", "是", "有", "在",
    "被", "把", "和", "与", "及", "或", "为", "于", "对", "从", "到", "由", "其", "该", "这", "那",
    "会", "能", "要", "将", "所", "以", "而", "也", "都", "就", "还", "又", "之", "得", "地", "着",
    "过", "个", "们", "中", "此", "约", "何", "叫", "除了", "他", "她", "它", "牠",
    "能否", "可否",
)  # fmt: skip
#: words that say what kind of answer is wanted, not what it is about (原因 in 211系的原因是什么)
META_WORDS = (
    "什么样", "原因", "定义", "特征", "特点", "作用", "时间", "事情", "活动", "观点", "方面", "情况",
    "内容", "意义", "寓意", "目的", "影响", "结果", "过程", "方式", "方法", "名字", "名称", "地区",
    "地方", "种类", "类型", "主要", "分别", "大约", "大概", "具体", "这个", "那个", "发生", "出现",
    "现在", "目前", "当前", "如今", "时候",
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
    "几何", "吉他", "他人", "其它",
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
_NOT_HEAD = "是的了为在于和与及或呢吗啊吧把被对从到有过而来去"
_HEAD_CHAR = rf"[^\W\d_{_NOT_HEAD}]"
#: the head: two characters, or up to three when the question's run ends there (哪两个运动员)
WH_HEAD = re.compile(
    "(?:" + "|".join(re.escape(w) + (_WH_MEASURE if w == "哪" else "") for w in WH_DETERMINERS) + ")"
    + rf"({_HEAD_CHAR}(?:{_HEAD_CHAR}(?!\w)|{_HEAD_CHAR}{{2}}(?!\w)|{_HEAD_CHAR})?)?"
)
RUN_RE = re.compile(r"\w+")
STRICT_RE = re.compile(r"[0-9]+(?:\.[0-9]+)?|[a-z][a-z0-9]*")


#: ``text`` NFKC-normalised and casefolded, memoised (rag_lab/text.py; one cache with the verifier's)
norm = nfkc_fold_memo


#: 因 before 为什么/什么 belongs to the question word (因为什么而闻名 asks why, like 为什么): no term
BECAUSE_WH_RE = re.compile("因(?=为?什么)")
WH_TYPE_RE = re.compile(
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
    return [m.group(1) for m in WH_HEAD.finditer(WH_TYPE_RE.sub(" ", norm(question))) if m.group(1)]


#: the pro-verbs 做/干 next to a question word stand for the verb the answer gives (会如何做, 还能做什么);
#: a light verb (进行/加以/予以/做出/作出) before its object only carries it (做出了什么判决 asks what was
#: judged, 进行人工栽培 is 人工栽培): the object says the action (进行曲 is a word)
PRO_VERB_RE = re.compile(r"(?<=如何|怎么|怎样)[做干]|[做干](?=了?什么)|(?:进行|加以|予以|[做作]出)(?=了?\w)(?!曲|了?[多几吗呢])")
#: how a name came about (X的名字是怎样得来的, X的名称是怎么来的) is how X got its name: the sentence says 得名
#: (因…，故而得名) or a naming cue (align.CUE_WORDS), not 名字 and 来
NAME_ORIGIN_RE = re.compile(r"(?:名字|名称)(?:是|又是)?(怎么|怎样|如何)得?来的?")
#: 来 between a question word and its verb (由谁来主持, 以什么来命名) only links them
COME_RE = re.compile(r"(?:(?<=谁)|(?<=什么)|(?<=怎么)|(?<=如何)|(?<=怎样))来(?=\w)(?![的了吗呢])")


def content_terms(question: str) -> list[str]:
    """The question's content terms: its word runs after removing interrogative determiners with
    the answer's kind after them (``answer_heads``), then question, stop and meta words
    (``META_WORDS``; longest first), the counting classifier after 多少/几 (``drop_counter``) and
    the pro-verbs 做/干 next to a question word (``PRO_VERB_RE``), 因 before 为什么/什么
    (``BECAUSE_WH_RE``); single characters count too
    (死 in 刘七是怎么死的)."""
    asked = NAME_ORIGIN_RE.sub(r"\1得名", drop_counter(norm(question)))
    asked = BECAUSE_WH_RE.sub(" ", COME_RE.sub(" ", PRO_VERB_RE.sub(" ", asked)))
    stripped = _drop_stop_words(WH_HEAD.sub(" ", WH_TYPE_RE.sub(" ", asked)))
    terms: list[str] = []
    for run in RUN_RE.findall(stripped):
        if run not in terms:
            terms.append(run)
    return terms


def bigrams(text: str) -> set[str]:
    """Every character bigram inside a word run, and every single character."""
    grams: set[str] = set()
    for run in RUN_RE.findall(text):
        grams.update(map(operator.add, run, run[1:]))  # run[i] + run[i + 1]: its bigrams
        grams.update(run)
    return grams


def split_by_context(terms: list[str], context: str) -> tuple[list[str], list[str]]:
    """Each term cut into the parts its context (title, headings…) says — the longest substrings
    of two or more characters found there, left to right — and the pieces between them, which
    the sentence must cover on their own (王家瑞担任 under the title 王家瑞 → 王家瑞 | 担任)."""
    named, pieces = _split_by_context(tuple(terms), context)
    return list(named), list(pieces)


@functools.lru_cache(maxsize=1024)
def _split_by_context(terms: tuple[str, ...], context: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``split_by_context``, once per (question, context): the sentences of one file share one."""
    named: list[str] = []
    pieces: list[str] = []
    for term in terms:
        i, current = 0, ""
        while i < len(term):
            # the longest term[i : i + n], n ≥ 2, that the context says: every shorter one it starts
            # is said too, so it is found growing from the bigram (none when the bigram is not said)
            length = 0
            if i + 2 <= len(term) and term[i : i + 2] in context:
                length = 2
                while i + length < len(term) and term[i : i + length + 1] in context:
                    length += 1
            if length:
                named.append(term[i : i + length])
                if current:
                    pieces.append(current)
                current, i = "", i + length
            else:
                current, i = current + term[i], i + 1
        if current:
            pieces.append(current)
    return tuple(named), tuple(pieces)


def term_grams(term: str) -> set[str]:
    return {term[i : i + 2] for i in range(len(term) - 1)} or {term}
