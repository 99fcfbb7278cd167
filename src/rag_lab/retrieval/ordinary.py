"""Ordinary words: question phrasing in which a short subject or field name is just a word.

A corpus may hold one-character subjects (是, 你, 时, 年) and fields named like ordinary
words (是, 历史, 名字). Inside ``是什么``, ``你知道`` or ``什么时候`` such a name is the
ordinary word, not a name: a match that is one character long, or is itself one of the
words below, and lies inside an occurrence of a phrase below is not a name
(docs/questions.md, "Ordinary words"). The list is general Chinese question phrasing,
written by us; it is not derived from any corpus.

``LEAD_INS`` are openings that never name a subject (``请问``, ``你知道``); what is left
in front of a field once they are removed is "the place where the subject belongs".
"""

from __future__ import annotations

import re

ORDINARY_PHRASES: tuple[str, ...] = tuple(
    sorted(
        {
            "是什么", "是谁", "是哪", "是哪里", "是哪个", "是哪些", "是多少", "是几", "是不是", "是否",
            "还是", "就是", "但是", "可是", "只是", "也是", "都是", "正是", "于是", "要是", "是的",
            "什么", "什么时候", "什么地方", "什么样", "为什么", "怎么", "怎么样", "怎样", "多少", "多久",
            "哪里", "哪儿", "哪个", "哪些", "哪年", "哪天", "哪位", "哪家", "哪所", "哪国", "那个", "这个",
            "时候", "有时", "时间", "年代", "今年", "去年", "明年", "几年", "哪一年", "多少年",
            "你知道", "知道", "你们", "你好", "我想", "我们", "请问", "问一下", "想问", "告诉我", "谁知道",
            "有没有", "有谁", "有人", "有多", "有几", "一下", "一个", "一共", "几个", "一些",
            "的是", "的话", "吗", "呢", "吧", "啊", "呀", "了吗", "来着",
            "叫什么", "是多大", "多大", "多高", "多长", "多重", "多远",
            "何时", "何地", "何处", "何年", "何人", "几时", "多会儿", "啥时候", "时候的",
            "多少人", "哪里人", "哪些人", "什么人", "哪国人", "哪个人", "的人",
        }
    )
)

#: Words that stay ordinary even when a corpus has a subject or field of that name.
FUNCTION_WORDS: frozenset[str] = frozenset(
    {
        "是", "的", "了", "吗", "呢", "吧", "啊", "呀", "你", "我", "他", "她", "它", "谁", "哪", "啥",
        "什么", "多少", "哪里", "哪个", "知道", "时候", "一下", "请问", "怎么", "为什么", "有", "在",
        "和", "与", "就", "也", "都", "还", "又", "这", "那", "个", "几", "多", "被", "把",
    }
)

LEAD_INS: tuple[str, ...] = tuple(
    sorted(
        {
            "请问", "问一下", "请问一下", "我想问", "我想问一下", "我想知道", "想知道", "你知道", "你们知道",
            "谁知道", "有谁知道", "有人知道", "告诉我", "请告诉我", "麻烦问一下", "我想请教一下", "请教一下",
            "你好", "您好", "那个", "呃", "嗯", "哎", "关于", "对于", "有关", "至于",
            "帮我查查", "帮我查", "帮忙查", "查查", "查一下", "查询", "想问下", "问下", "问问", "想了解", "了解一下",
            "麻烦", "说说", "介绍一下", "我问", "我想问问",
            "请回答", "回答", "说出", "你能说出", "了解", "你了解", "能告诉我", "谁能告诉我", "可以告诉我", "你可以告诉我",
            "我很好奇", "我好奇", "好奇", "你记得", "你还记得", "还记得", "记得", "有人认识", "你认识", "谁认识",
            "大家知道", "大家了解", "谁了解", "谁清楚", "你清楚", "我想了解", "想请问",
        },
        key=lambda w: (-len(w), w),
    )
)

BRACKETS = "《》〈〉「」『』“”\"'‘’()（）[]【】"


def _by_first(phrases: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    grouped: dict[str, list[str]] = {}
    for phrase in phrases:
        grouped.setdefault(phrase[0], []).append(phrase)
    return {first: tuple(group) for first, group in grouped.items()}


_PHRASES_BY_FIRST = _by_first(ORDINARY_PHRASES)
_LEAD_INS_BY_FIRST = _by_first(LEAD_INS)


def ordinary_spans(question: str) -> list[tuple[int, int]]:
    """Every ``[start, end)`` where an ordinary phrase occurs in ``question`` (each position
    tried against the phrases beginning with its character, not every phrase searched for)."""
    spans = []
    get = _PHRASES_BY_FIRST.get
    for start, ch in enumerate(question):
        for phrase in get(ch, ()):
            if question.startswith(phrase, start):
                spans.append((start, start + len(phrase)))
    return sorted(spans)


def is_ordinary(name: str, start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    """Whether the name at ``[start, end)`` is an ordinary word here (see module docstring).

    Only a short name can be one: a one-character name or a function word, lying inside an
    ordinary phrase that is longer than the name (``是`` inside ``是什么``; ``什么`` inside
    ``什么时候``), or being a function word standing alone.
    """
    if len(name) > 1 and name not in FUNCTION_WORDS:
        return False
    inside = any(s <= start and end <= e and e - s > end - start for s, e in spans)
    return inside or name in FUNCTION_WORDS


def strip_lead_ins(text: str) -> str:
    """``text`` without leading openings (``请问``, ``你知道``), brackets and spaces."""
    changed = True
    while changed:
        changed = False
        text = text.lstrip(" \u3000\t，,。？?！!：:；;…~～-—" + BRACKETS)
        for lead in _LEAD_INS_BY_FIRST.get(text[:1], ()):  # LEAD_INS' order, among those that can match
            if text.startswith(lead):
                text, changed = text[len(lead) :], True
                break
    return text


#: Verbs that name no attribute of their own: aspect (``什么时候开始实行`` asks when it was 实行),
#: belonging and being (``属于什么级别`` asks the 级别), light verbs (``使用``, ``进行``). A corpus may
#: have fields of these names; when the subject has none, the question's other words say what is
#: asked (docs/questions.md, "Fields in other words": ordinary verbs).
LIGHT_VERBS: frozenset[str] = frozenset({"开始", "属于", "属", "使用", "进行", "成为", "作为"})


#: One-character words that end a name in front of them or after them.
BOUNDARY_CHARS = frozenset("的是有在和与及还都也就吗呢吧啊呀了被把从向对给为")
SHORT_NAME = 2  # names of at most this many code points must stand apart to be a subject


def _boundary_at(question: str, position: int, *, before: bool, known: set[int]) -> bool:
    """Whether a name may end (``before``: begin) at ``position`` of ``question``."""
    if position in known:
        return True
    if (before and position == 0) or (not before and position >= len(question)):
        return True
    char = question[position - 1] if before else question[position]
    if char.isspace() or char in BRACKETS or char in BOUNDARY_CHARS or not char.isalnum():
        return True
    if before:
        return any(question.endswith(w, 0, position) for w in (*ORDINARY_PHRASES, *LEAD_INS))
    return any(question.startswith(w, position) for w in (*ORDINARY_PHRASES, *LEAD_INS))


def stands_apart(question: str, start: int, end: int, known: set[int]) -> bool:
    """Whether a short subject name at ``[start, end)`` begins a word here.

    ``海棠`` in ``多花秋海棠属于…`` or ``人`` in ``凯尔特人分布在哪里`` is the end of a longer
    name the corpus does not know, so it is not that subject. Only the left side is
    checked: what follows a subject is usually the question's verb or field (``属于``,
    ``字``, ``先生``), which cannot be told from a longer name without segmentation. A name longer than
    ``SHORT_NAME`` always stands apart. ``known`` holds the start and end positions of
    other names found in the question (a known name is a boundary).
    """
    if end - start > SHORT_NAME:
        return True
    return _boundary_at(question, start, before=True, known=known)


def is_whole_word(question: str, start: int, end: int, known: set[int]) -> bool:
    """Whether a name at ``[start, end)`` begins a word here and, when at most ``SHORT_NAME``
    code points long, also ends one (``香港`` in ``香港网络广播电台…`` does not).

    The embedding step of field matching, which compares meanings rather than names, is
    used only for a subject named so: a guess about the field of a subject that may be part
    of a longer, unknown name would be a guess about the subject too.
    """
    if not _boundary_at(question, start, before=True, known=known):
        return False
    return end - start > SHORT_NAME or _boundary_at(question, end, before=False, known=known)


#: Words that may follow a name without being part of it: titles (``马云先生的国籍``) and
#: the kind of thing named (``圣字的部首``, ``定语一词的词性``).
TITLES: tuple[str, ...] = (
    "先生", "女士", "小姐", "老师", "教授", "同学", "同志", "大师", "博士", "师傅", "本人", "老先生", "夫人",
    "字", "这个字", "一字", "词", "一词", "这个词", "这个人",
)


def possessor_end(question: str, end: int, stops: set[int]) -> int | None:
    """Where the possessor ends when a name ending at ``end`` runs on into ``…的``.

    In ``日本国家男子足球队的最佳成绩`` the subject 日本 is followed, up to the ``的``
    in front of the field, by more name (国家男子足球队): the possessor is the whole run,
    not 日本. Returns the position of that ``的``, or None when the name is followed by
    a boundary (a particle, punctuation, an ordinary phrase, a position in ``stops``) or
    by a title (``先生``). The run may not hold white space or punctuation.
    """
    j = end
    while j < len(question) and j not in stops and question[j] != "的":
        if _boundary_at(question, j, before=False, known=set()):
            return None
        j += 1
    if j == end or j >= len(question) or question[j] != "的" or question[end:j] in TITLES:
        return None
    return j


#: Code points after ``之`` that make an ordinary phrase (之一, 之后, 之间, 之所以 …), not a head noun.
AFTER_ZHI_ORDINARY = frozenset("一后前间中外内上下所际时处类余多最")


def possessed_after(question: str, end: int, known: set[int]) -> str:
    """``之`` + more name right after a name ending at ``end``: the run (``之路`` in ``科学之路是…``).

    ``X之Y`` is a noun phrase headed by Y ("the Y of X": 科学之路 is a road, 红楼梦之谜 a riddle),
    so the question is about that longer name, not about X. Returns ``""`` when no ``之``
    follows, when the code point after it makes an ordinary phrase (:data:`AFTER_ZHI_ORDINARY`:
    ``之一``, ``之后``), or when a name found in the question begins right after it (``known``:
    ``长江之长度`` asks the 长度 of 长江). The run ends at the next boundary (a particle, punctuation,
    an ordinary phrase, a known name).
    """
    if not question.startswith("之", end) or end + 1 >= len(question) or end + 1 in known:
        return ""
    nxt = question[end + 1]
    if not ("\u4e00" <= nxt <= "\u9fff") or nxt in AFTER_ZHI_ORDINARY or nxt in BOUNDARY_CHARS:
        return ""
    j = end + 2
    while j < len(question) and not _boundary_at(question, j, before=False, known=known):
        j += 1
    return question[end:j]


def splits_latin_word(question: str, start: int, end: int, names_at: frozenset[int] = frozenset()) -> bool:
    """Whether ``[start, end)`` cuts a run of Latin letters and digits (``sts-8`` in ``sts-85``).

    A run of digits or of Latin letters is one word: a name matching only part of one is
    not named (the question names another model, number or code). A change between
    letters and digits may end a name (``3770cpu``, ``荣耀6cpu``). A Latin name with more Latin
    letters or digits across a space (``ngc`` in ``ngc 641``, ``iphone`` in ``iphone 6``) is cut too,
    unless a name found in the question begins or ends there (``names_at``).
    """
    def same(a: str, b: str) -> bool:
        return a.isascii() and b.isascii() and ((a.isdigit() and b.isdigit()) or (a.isalpha() and b.isalpha()))

    def latin(ch: str) -> bool:
        return ch.isascii() and ch.isalnum()

    if (start > 0 and same(question[start - 1], question[start])) or (
        end < len(question) and same(question[end - 1], question[end])
    ):
        return True
    # ngc 641 / iphone 6: a Latin name followed (or preceded) across spaces by more Latin letters
    # or digits is part of a longer model name or designation — unless another name found in the
    # question begins (ends) there (``names_at``: ``ipad cpu`` names a subject and a field)
    after = question[end:].lstrip(" ")
    before = question[:start].rstrip(" ")
    return (
        end < len(question) and question[end] == " " and latin(question[end - 1]) and bool(after)
        and latin(after[0]) and len(question) - len(after) not in names_at
    ) or (
        start > 0 and question[start - 1] == " " and latin(question[start]) and bool(before)
        and latin(before[-1]) and len(before) not in names_at
    )


_NUMBERED = re.compile(r"第[0-9一二三四五六七八九十百千零〇两]+[季部集届期代版章回卷册号辑场]")


def numbered_after(question: str, end: int) -> str:
    """``第一季`` / ``第3届`` right after a name: a numbered part of it, hence another name."""
    found = _NUMBERED.match(question, end)
    return found.group() if found else ""


def enclosing_name(question: str, start: int, end: int, known: set[int]) -> str:
    """The run of text ending at ``end`` from the boundary before ``start`` (the unknown name)."""
    left = start
    while not _boundary_at(question, left, before=True, known=known - {start}):
        left -= 1
    return strip_lead_ins(question[left:end])


__all__ = ["LIGHT_VERBS", "possessed_after", "AFTER_ZHI_ORDINARY", "is_whole_word", "TITLES", "possessor_end", "splits_latin_word", "numbered_after", "BOUNDARY_CHARS", "SHORT_NAME", "enclosing_name", "stands_apart", "BRACKETS", "FUNCTION_WORDS", "LEAD_INS", "ORDINARY_PHRASES", "is_ordinary", "ordinary_spans", "strip_lead_ins"]
