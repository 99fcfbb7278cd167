"""What kind of value a prose question asks for, and where such values occur in a sentence.

The answer type comes from the question word (first rule that matches wins; the words are
removed from the question's content terms):

=========  ================================================================
type       question words
=========  ================================================================
date       哪年 哪一年 何年 何时 什么时候 什么时间 哪天 哪一天 几月 几号 几点 哪个月 什么年代 哪个朝代
number     多少 几 多大 多长 多高 多远 多重 多久 多深 多宽
name       谁 哪位 什么人
place      哪里 在哪 哪儿 何处 何地 什么地方 哪个国家 哪个城市 哪座城市 哪个省
definition 什么是X / X是什么 (the whole question): the sentence defines X (X, an aside, then 是/为/指/又称…)
reason     为什么 为何 什么原因: the sentence holds a cause word (因为 由于 因此 所以 为了 导致 故 …)
none       anything else (什么, 哪个, 怎样 …): no typed value is required
=========  ================================================================

Typed values in a sentence (``typed_values``), each a regular expression below:

- number: digits or Chinese numerals followed by a unit from ``UNITS`` (``120个``, ``三百余名``,
  ``45%``); a bare number without a unit is not a number *with its unit*, and a calendar
  year (``1912年``, three or four digits) is a date, not a quantity;
- date: ``2024年9月1日``, ``9月1日``, ``1998年``, ``二〇二〇年``, ``19世纪``, ``90年代``,
  ``上午九点``, ``9:30``, ``周三``, ``星期五``, a month alone (``10月``, ``三月下旬``);
- name: ``X·Y`` (transliterated names), a capitalised Latin name, a 2–4 character name before a
  title word (``张伟教授``), the doer of 由…担任/创立/设计/…, or an organisation (``_ORG``: a name
  ending in 公司/大学/政府/委员会/协会/组织/集团/部/局/院 …);
- place: a name ending in a place word (``北京市``, ``海淀区``, ``图书馆``, ``二楼``), or what
  follows 位于.

These are documented heuristics, not a parser: they decide only whether a value *of the asked
type is present*; the answer is always verbatim text from the cited sentence.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from enum import StrEnum


class AnswerType(StrEnum):
    NUMBER = "number"
    DATE = "date"
    NAME = "name"
    PLACE = "place"
    DEFINITION = "definition"
    REASON = "reason"
    NONE = "none"


DATE_WORDS = (
    "在什么时候", "在哪一年", "在哪年", "在何时", "什么时候", "什么时间", "什么年代", "哪个朝代", "哪一朝代",
    "什么朝代", "哪朝", "哪一年", "哪一天", "哪个月",
    "哪年", "何年", "何时", "哪天", "几月", "几号", "几点",
)  # fmt: skip
NUMBER_WORDS = ("多少钱", "多少", "多大", "多长", "多高", "多远", "多重", "多久", "多深", "多宽", "几")
NAME_WORDS = ("什么人", "哪位", "谁")
PLACE_WORDS = (
    "什么地方", "哪个国家", "哪个城市", "哪座城市", "哪个省", "在哪里", "在哪儿", "哪里", "在哪", "哪儿",
    "何处", "何地",
)  # fmt: skip
TYPE_WORDS: tuple[tuple[AnswerType, tuple[str, ...]], ...] = (
    (AnswerType.DATE, DATE_WORDS),
    (AnswerType.NAME, NAME_WORDS),
    (AnswerType.PLACE, PLACE_WORDS),
    (AnswerType.NUMBER, NUMBER_WORDS),
)
DESCRIPTION = {
    AnswerType.NUMBER: "number with its unit",
    AnswerType.DATE: "date or time",
    AnswerType.NAME: "name",
    AnswerType.PLACE: "place",
    AnswerType.DEFINITION: "definition",
    AnswerType.REASON: "reason",
    AnswerType.NONE: "answer",
}

_NUM = r"(?:\d+(?:[.,]\d+)*|[零〇一二两三四五六七八九十百千万亿]+)"
_UNITS_TEXT = (
    "平方公里 平方千米 平方米 立方米 公里 千米 厘米 毫米 英里 公顷 千克 公斤 毫升 小时 分钟 个月 人次 美元 欧元 "
    "日元 英镑 港元 万元 亿元 周年 世纪 % 个 人 名 位 座 张 本 册 部 件 次 场 届 家 所 层 间 台 辆 架 艘 条 种 项 门 "
    "篇 首 章 节 页 字 元 块 米 亩 吨 克 斤 升 度 岁 年 月 周 天 日 秒 倍 万 亿 千 百 余 多 分 号 期 集 卷 册 枚 颗 只 头 匹 "
    "公分 公尺 公斤 公顷 英尺 英寸 海里 马力 千瓦 伏特 摄氏度 分贝"
)
UNITS = tuple(_UNITS_TEXT.split())
_UNIT = "|".join(sorted((re.escape(u) for u in set(UNITS)), key=len, reverse=True))
#: units written in Latin letters after a number (``4.7 GHz``, ``2.5 m``, ``30 km/h``)
LATIN_UNITS = (
    "km/h", "GHz", "MHz", "kHz", "Hz", "km²", "km2", "m²", "km", "cm", "mm", "nm", "kg", "mg", "ml", "mL",
    "kW", "MW", "GW", "kV", "TB", "GB", "MB", "KB", "kb", "mph", "ft", "in", "m", "g", "t", "L", "W", "V",
)  # fmt: skip
_LATIN_UNIT = "|".join(sorted((re.escape(u) for u in LATIN_UNITS), key=len, reverse=True))
#: a share without a unit still answers 多少 (一半以上, 三分之二, 半数)
_SHARE = r"[零〇一二两三四五六七八九十百\d]+分之[零〇一二两三四五六七八九十百\d]+|一半|半数|过半|大半|大多数"
NUMBER_RE = re.compile(
    rf"{_NUM}(?:余|多)?(?:{_UNIT})|\d+(?:\.\d+)?\s?(?i:{_LATIN_UNIT})(?![A-Za-z])|{_SHARE}"
)
#: what 多长/多高/多久… ask for: a value counts only with a unit of that measure (多长时间 is a
#: duration, not a length); 多少/几/多大 take any unit
MEASURES = {
    "length": ("多长", "多远", "多高", "多深", "多宽"),
    "duration": ("多久", "多长时间", "多少年", "多少天", "多少时间"),
    "weight": ("多重",),
    "money": ("多少钱",),
}
MEASURE_UNITS = {
    "length": (
        "公里", "千米", "厘米", "毫米", "英里", "公分", "公尺", "英尺", "英寸", "海里", "米", "里", "丈", "尺", "寸",
        "km", "cm", "mm", "nm", "m", "ft", "in", "KM", "CM", "MM", "M",
    ),
    "duration": ("小时", "分钟", "个月", "周年", "世纪", "年", "月", "周", "天", "日", "秒", "分", "h"),
    "weight": ("千克", "公斤", "吨", "克", "斤", "kg", "mg", "g", "t"),
    "money": ("美元", "欧元", "日元", "英镑", "港元", "万元", "亿元", "元", "块"),
}  # fmt: skip
#: a Chinese dynasty or era (北宋, 东汉, 唐朝, 明代, 三国, 五代十国): what 哪个朝代 asks for; a bare
#: dynasty character (宋 in 宋州) is not one
DYNASTY_RE = re.compile(
    r"[东西南北前后][汉晋宋齐梁陈魏周唐燕凉秦赵]|[夏商周秦汉晋隋唐宋辽金元明清][朝代]|三国|五代十国|春秋|战国"
)
DATE_RE = re.compile(
    r"(?:公元前?)?\d{1,4}年(?:\d{1,2}月(?:\d{1,2}[日号])?)?"
    r"|\d{1,2}月\d{1,2}[日号]"
    r"|[零〇一二三四五六七八九]{2,4}年"
    r"|[\d一二三四五六七八九十]{1,3}世纪(?:\d{2}年代)?"
    r"|\d{2,4}年代"
    r"|(?:上午|下午|中午|晚上|凌晨|早上)[零一二两三四五六七八九十\d]{1,3}[点时](?:半|[\d一二三四五六七八九十]{1,3}分)?"
    r"|\d{1,2}[:：]\d{2}"
    r"|(?:周|星期)[一二三四五六日天]"
    r"|早上|上午|中午|下午|傍晚|晚上|凌晨|深夜|夜间|平日|周末|假日|工作日"
    r"|(?<![\d.])\d{1,2}月(?:[上中下]旬|初|底)?"
    r"|(?<![\u4e00-\u9fff])[一二三四五六七八九十]{1,2}月(?:[上中下]旬|初|底)?"
)
#: two dates joined into one span of time (1996年2月至4月, 1984年6月—1985年1月)
DATE_RANGE_RE = re.compile(rf"(?:{DATE_RE.pattern})\s*(?:至|到|—|－|-|~|～)\s*(?:{DATE_RE.pattern})")
_TITLE = "教授|博士|先生|女士|老师|主任|馆长|校长|院长|经理|总监|主席|书记|部长|市长|导演|作家|诗人|画家|总统|总理|将军"
_DOER = "担任|负责|创立|创办|建立|设计|发明|提出|编写|撰写|执导|主演|演唱|作曲|作词|领导|发现|命名|主持"
#: an organisation's name answers 谁 (由华纳兄弟公司发行): a name ending in one of these heads; a bare
#: 部/局/院 counts only after a character that does not make it a common word (全部, 结局, 寺院)
_ORG = (
    r"[\u4e00-\u9fff]{2,12}?(?:公司|大学|学院|政府|委员会|协会|学会|组织|集团|银行|基金会|电视台|电台|出版社|"
    r"工作室|乐团|球会|俱乐部|(?<![全东西南北中内外头腹背胸底顶上下局尾前后根干])部|"
    r"(?<![结布格大时政棋赌开终僵残全当邮])局|(?<![庭寺戏剧书医学别])院)"
)
NAME_RE = re.compile(
    r"[\u4e00-\u9fff]{1,6}·[\u4e00-\u9fff]{1,8}"
    r"|[A-Z][a-z]+(?: [A-Z][a-z]+)+"
    rf"|[\u4e00-\u9fff]{{2,4}}(?={_TITLE})"
    rf"|(?<=由)[\u4e00-\u9fff·]{{2,8}}?(?={_DOER})"
    rf"|{_ORG}"
)
_NOT_IN_NAME = "是的为由和与及在任了被从到向往于"
_PLACE_END = (
    "省|市|县|区|镇|乡|村|州|国|岛|山|河|江|湖|海|湾|港|路|街|巷|站|楼|层|室|馆|厅|园|寺|宫|城|"
    "半岛|地区|中心|大学|学院|医院|机场|广场|大厦"
)
YEAR_RE = re.compile(r"(?:公元前?)?\d{3,4}年")
LOCATED_RE = re.compile(r"(?<=位于)[^，。；！？,;!?]{2,20}")
PLACE_RE = re.compile(rf"[\u4e00-\u9fff\d一二三四五六七八九十]{{1,10}}?(?:{_PLACE_END})")
REASON_WORDS = ("为什么", "为何", "因什么", "什么原因", "原因是什么", "原因为何")
#: cause words that point back to what was said before (a consequence follows them)
BACKWARD_RE = re.compile(r"因此|所以|因而|故而|故此")
#: 以/因 … 而闻名: what something is known for is said as its cause (以身为…的头号打手而闻名)
_KNOWN_FOR = r"[以因][^，。；！？,;!?]{1,30}?而(?:闻名|著称|著名|知名|出名|成名)"
REASON_RE = re.compile(
    r"因为|由于|因此|所以|为了|导致|因而|故而|故此|[，,]故|原因|以便|源于|是为"
    r"|皆因|因其|乃因|只因|正因|以防|以免|旨在|以期|" + _KNOWN_FOR
)
_DEFINITION_Q = (re.compile(r"^\s*什么是(.+?)[？?。\s]*$"), re.compile(r"^\s*(.+?)是什么[？?。\s]*$"))
DEFINITION_CUES = ("是", "为", "指", "又称", "亦称", "也称", "即", "，是", ",是")
PATTERNS = {
    AnswerType.NUMBER: NUMBER_RE,
    AnswerType.DATE: DATE_RE,
    AnswerType.NAME: NAME_RE,
    AnswerType.PLACE: PLACE_RE,
    AnswerType.REASON: REASON_RE,
}


def defined_term(question: str) -> str | None:
    """X of 什么是X / X是什么 (a definition question), else None."""
    q = unicodedata.normalize("NFKC", question).strip()
    for pattern in _DEFINITION_Q:
        found = pattern.match(q)
        term = found.group(1).strip() if found else ""
        if 1 <= len(term) <= 20 and "的" not in term:  # X的别名是什么 asks an attribute, not a definition
            return term
    return None


def defines(term: str, text: str, opens_paragraph: bool = True) -> list[tuple[int, int, str]]:
    """Where ``text`` defines ``term``: the term, an optional bracketed aside, then 是/为/指/又称…;
    or, when the sentence opens its paragraph and starts with the term (after an opening 《 or
    “), such a cue within the next 60 characters of the sentence (``X（学名：…），别称…，是…``)."""
    cues = "|".join(map(re.escape, DEFINITION_CUES))
    norm = unicodedata.normalize("NFKC", text)
    # the term as a word of its own, not the end of a longer one (二甲基乙酰胺 is not 乙酰胺)
    # what follows the cue defines, it does not refer back (乙酰胺即是其一 is no definition)
    refers = r"(?!是?[其它他她这那此该])"
    near = re.compile(
        r"(?<![\w\-])" + re.escape(term) + r"\s*(?:[（(][^）)]{0,40}[）)])?\s*(?:" + cues + ")" + refers
    )
    found = [(m.start(), m.end(), m.group()) for m in near.finditer(norm)]
    # up to the cue: bracketed asides (学名：…) or text without a stop or a colon (X确立了原则：…)
    opening = re.compile(
        r"[《“\"]?" + re.escape(term) + r"[》”\"]?(?!的)(?:[（(][^）)]{0,40}[）)]|[^。！？；!?：:（(]){0,60}?(?:"
        + cues + ")" + refers
    )
    if not found and opens_paragraph and (m := opening.match(norm)):
        found.append((m.start(), m.end(), m.group()))
    # named after the description: 总杆数低于标准杆数一杆完成比赛，称为小鸟球（Birdie）
    named = re.compile(
        r"(?<=[，,])\s*(?:被|就|便|则)?(?:称为|称作|称之为|叫做|叫作)\s*[「“\"《]?" + re.escape(term) + r"[」”\"》]?(?![\w\-])"
    )
    if not found and (m := named.search(norm)) and len(re.sub(r"\W", "", norm[: m.start()])) >= NAMED_DESCRIPTION_MIN:
        found.append((m.start(), m.end(), m.group()))
    return found


#: word characters a description must hold before the naming cue (``…完成比赛，称为小鸟球``)
NAMED_DESCRIPTION_MIN = 4


@functools.lru_cache(maxsize=256)
def answer_type(question: str) -> tuple[AnswerType, str | None]:
    """``(type, the question word that decided it)``; ``(NONE, None)`` when no rule matches.
    A pure function of the question (an immutable pair), remembered: the support check asks it
    once per candidate sentence, ≈ 55 times per prose question with the conflict audit."""
    q = unicodedata.normalize("NFKC", question)
    if defined_term(question) is not None:
        return AnswerType.DEFINITION, "是什么"
    for word in REASON_WORDS:
        if _asks(word, q):
            return AnswerType.REASON, word
    for kind, words in TYPE_WORDS:
        for word in words:
            if _asks(word, q):
                return kind, word
    return AnswerType.NONE, None


#: 为 after one of these belongs to the verb (称为, 誉为, 聘为, 更名为, 称之为): X称为什么 asks what, not why
_VERB_WEI = "称名誉聘改作成列视选封任评定译叫之"
#: classifiers after 哪: 在哪张/在哪个 is 在 + a determiner (which one), not 在哪 (where); 在哪些/哪所/
#: 哪座/哪家 still ask for a place (分布在哪些地区)
_CLASSIFIERS = "个种类位项部条支只本张首件名届次场门集期"


#: what may stand right after 为什么 when 为 is a verb's complement and 什么 its object (改编为什么及…,
#: 表现为什么？): the end of the clause or a conjunction joining another object
_AFTER_OBJECT = "及和与或、，,。？?！!；;"
#: … and what stands before 为什么 when it asks why (这是为什么, 却为什么): a copula, pronoun or adverb
_BEFORE_WHY = "是这那就却又还都也便你我他她它们"


def _object_wei(q: str, start: int, end: int) -> bool:
    """Is 为什么 at ``q[start:end]`` the complement 为 of the verb before it and the object 什么
    (``改编为什么及真人版电影``, ``表现为什么？``)? So when 为什么 ends its clause or a conjunction follows
    it, and a word character other than a copula, pronoun or adverb (``_BEFORE_WHY``) stands before it:
    a 为什么 asking why is followed by what it asks about (``为什么被称为…``)."""
    before, after = q[start - 1 : start], q[end : end + 1]
    return bool(before) and before.isalnum() and before not in _BEFORE_WHY and (not after or after in _AFTER_OBJECT)


def _asks(word: str, q: str) -> bool:
    """Does ``q`` hold ``word`` as that question word: 为什么 not right after a verb taking 为,
    几 not in 哪几 (which ones), 在哪 not before a classifier?"""
    for found in re.finditer(re.escape(word), q):
        before, after = q[found.start() - 1 : found.start()], q[found.end() : found.end() + 1]
        if word.startswith("为什么") and before and before in _VERB_WEI:
            continue
        if word == "为什么" and _object_wei(q, found.start(), found.end()):
            continue  # 被改编为什么及真人版电影, 反应表现为什么: 为 + 什么, what it became
        if word == "几" and before == "哪":
            continue
        if word == "在哪" and after and after in _CLASSIFIERS:
            continue
        return True
    return False


def measure(question: str) -> str | None:
    """The measure a number question asks for (``MEASURES``: length, duration, weight, money), or
    None when any unit answers it; the longest question word wins (多长时间 over 多长)."""
    q = unicodedata.normalize("NFKC", question)
    words = sorted(((w, m) for m, ws in MEASURES.items() for w in ws if w in q), key=lambda i: -len(i[0]))
    return words[0][1] if words else None


#: classifiers that count things: 多少个/几座/多少名 asks for a count with that classifier; people
#: are counted by any of 人/名/位
COUNTERS = "个名位座张本册部件次场届家所层间台辆架艘条种项门篇首章节页枚颗只头匹集卷人"
_PEOPLE = "人名位"
#: words that start with a classifier character but are nouns (多少座位 asks how many seats, any unit)
COUNTER_NOUNS = (
    "座位", "名字", "名称", "名额", "人口", "人数", "人员", "次数", "位置", "种类", "部分", "家庭", "门票", "条件",
    "项目", "个人", "场地", "期间", "首都", "节目", "头发", "层次", "台阶", "间隔", "集团", "本地", "本科",
)  # fmt: skip
_COUNTED = re.compile(rf"(多少|几)([{COUNTERS}])(.?)")


def drop_counter(question: str) -> str:
    """``question`` with the counting classifier after 多少/几 replaced by a space (多少名队员 →
    多少 队员): it belongs to the question word, not to the terms the sentence must say."""
    return _COUNTED.sub(lambda m: m[0] if m[2] + m[3] in COUNTER_NOUNS else f"{m[1]} {m[3]}", question)


def counter(question: str) -> str:
    """The classifiers a count must carry (``COUNTERS``): ``个`` for 有多少个座位, ``人名位`` for
    多少人/几名; "" when the question word has no counting classifier after it, or the
    classifier starts a noun (``COUNTER_NOUNS``: 多少座位)."""
    found = _COUNTED.search(unicodedata.normalize("NFKC", question))
    if found is None or found[2] + found[3] in COUNTER_NOUNS:
        return ""
    return _PEOPLE if found[2] in _PEOPLE else found[2]


#: question words asking *when* without a calendar unit (哪年, 几月 ask for a date of that unit)
WHEN_WORDS = ("在什么时候", "在何时", "什么时候", "什么时间", "何时")
_NO_STOP = r"[^，。；！？,;!?：:\s]"
#: a time clause: 在/当 … 的时候/之时/时 (只有在春季化雪的时候), or a clause opening with … 的时候/之时
#: (，高二的时候拍了…); what it holds is the time a 何时/什么时候 question asks for
TIME_CLAUSE_RE = re.compile(
    rf"(?:在|当){_NO_STOP}{{2,20}}?(?:的时候|之时|时)(?!间|期|代|刻|常|而|候)"
    rf"|(?<![^，,；;：:\s]){_NO_STOP}{{2,15}}?(?:的时候|之时)"
    # an event before 后/之后/以后/前/之前/以前 opening its clause (四国征伐后，…): the time is relative to it
    rf"|(?<![^，,；;：:\s])(?![此其随这那不稍事])[^，。；！？,;!?：:\s\d]{{2,15}}?(?:之后|以后|之前|以前|后|前)(?=[，,])"
)


def time_clauses(word: str | None, text: str) -> list[tuple[int, int, str]]:
    """``(start, end, clause)`` of every time clause (``TIME_CLAUSE_RE``) of ``text`` when the
    question word asks *when* (``WHEN_WORDS``); [] for other question words."""
    if word not in WHEN_WORDS:
        return []
    return [(m.start(), m.end(), m.group()) for m in TIME_CLAUSE_RE.finditer(text)]


def is_dynasty_question(word: str | None) -> bool:
    """哪个朝代/哪一朝代/什么朝代/哪朝: the answer is a dynasty (``DYNASTY_RE``), not a date."""
    return word is not None and "朝" in word


def typed_values(kind: AnswerType, text: str, unit_of: str | None = None) -> list[tuple[int, int, str]]:
    """``(start, end, value)`` of every value of ``kind`` in ``text`` (code points, in order);
    ``unit_of``: a measure of ``MEASURES`` — numbers then count only with one of its units."""
    pattern = PATTERNS.get(kind)
    if pattern is None:
        return []
    found: list[tuple[int, int, str]] = []
    if kind == AnswerType.NUMBER:  # a calendar year (1912年) is a date, not a quantity
        units = MEASURE_UNITS.get(unit_of or "", ())
        return [
            (m.start(), m.end(), m.group())
            for m in pattern.finditer(text)
            if not YEAR_RE.fullmatch(m.group())
            and (not units or m.group().rstrip().endswith(units))
        ]
    if kind == AnswerType.REASON:  # 因此，… opening the sentence points back: the reason was said before
        return [
            (m.start(), m.end(), m.group())
            for m in pattern.finditer(text)
            if not (BACKWARD_RE.fullmatch(m.group()) and not re.search(r"\w", text[: m.start()]))
        ]
    if kind == AnswerType.PLACE:  # what follows 位于 first; other place names only outside it
        found = [(m.start(), m.end(), m.group()) for m in LOCATED_RE.finditer(text)]
    for m in pattern.finditer(text):
        if any(a < m.end() and m.start() < b for a, b, _ in found):
            continue
        start, value = m.start(), m.group()
        if kind in (AnswerType.NAME, AnswerType.PLACE):  # 馆长是张伟教授 → 张伟: names hold none of these
            cut = max(value.rfind(ch) for ch in _NOT_IN_NAME) + 1
            start, value = start + cut, value[cut:]
            if len(value) < 2:
                continue
        found.append((start, m.end(), value))
    return found
