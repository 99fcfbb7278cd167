"""Kinds answered by an instance: the question names the *kind* of its answer, the sentence an instance.

``牡蒿在什么季节开花`` is answered by ``秋季开花``, ``牛佬的职业是什么`` by ``牛佬，香港漫画家``,
``总苞是什么形状的`` by ``总苞圆柱形``: the kind word (``季节``, ``职业``, ``形状``) is not in the
sentence, an instance of it is. For a closed set of kinds whose instances a short documented
pattern recognises (``KIND_INSTANCES``) the support check (answering/support.py, docs/prose.md
"Kinds answered by an instance") lets an instance stand in for the kind:

- a **kind term** of the question (``职业`` in ``X的职业是什么``) counts as said by the sentence
  when the sentence holds an instance of it;
- an untyped question whose question word needs the **aligned span** and finds none (the
  sentence is phrased around other words) takes an instance of its asked kind — the answer
  head after 什么/哪 (``什么季节``) or a kind term — as the value, when it stands in a clause
  that says a question term (the same locality as typed values).

Only these kinds; any other kind word stays a content term the sentence must say. The
patterns are heuristics of the same standing as the typed-value patterns (answer_types.py):
they decide whether an instance *is present*, the answer is still the verbatim sentence.
"""

from __future__ import annotations

import re

_SEASON = r"[春夏秋冬](?:季|天|末|初)"
_COLOUR = r"[淡深浅暗亮鲜墨嫩灰乳]?[红橙黄绿青蓝紫黑白灰棕褐粉金银]色"
_SHAPE = (
    r"(?:椭圆|长圆|卵圆|倒卵|披针|三角|长方|正方|圆柱|圆锥|圆筒|圆球|半球|心|肾|扇|菱|线|卵|圆|球|管|钟|"
    r"漏斗|星|环|螺旋|盾|针|带|条|棒|杯|碗|盘|伞|锥|柱|方|舌|匙|镰刀|剑)[形状]"
)
#: occupations (head-final compounds: 漫画家, 足球运动员, 小提琴演奏家); a closed list of heads
_OCCUPATION_HEADS = (
    "运动员", "演员", "歌手", "作家", "画家", "漫画家", "音乐家", "作曲家", "艺术家", "科学家", "政治家",
    "企业家", "演奏家", "舞蹈家", "摄影家", "建筑师", "设计师", "工程师", "摄影师", "律师", "医生", "医师",
    "教师", "教授", "教练", "导演", "编剧", "主持人", "模特儿", "模特", "记者", "诗人", "作词人", "制作人",
    "声优", "配音员", "球员", "投手", "捕手", "车手", "棋手", "骑师", "学者", "外交官", "官员", "商人", "军人",
    "将领", "主播", "偶像", "艺人", "作者", "翻译家", "哲学家", "数学家", "物理学家", "化学家", "生物学家",
    "历史学家", "经济学家", "社会学家", "天文学家", "地质学家", "考古学家", "评论家", "小说家", "剧作家",
    "书法家", "雕塑家", "插画家", "钢琴家", "指挥家", "僧人", "厨师", "飞行员", "宇航员", "警察", "法官",
)  # fmt: skip
_OCCUPATION = "(?:" + "|".join(re.escape(w) for w in sorted(_OCCUPATION_HEADS, key=len, reverse=True)) + ")"
_LANGUAGE = (
    r"(?:英|法|德|日|汉|华|粤|俄|韩|泰|越|藏|蒙古|满|闽南|客家|西班牙|葡萄牙|意大利|阿拉伯|朝鲜|荷兰|拉丁|"
    r"希腊|印地|马来|土耳其|波斯|瑞典|挪威|丹麦|芬兰|波兰|希伯来|梵|巴利)语|普通话|客家话|广东话|上海话"
)

#: kind word → the pattern of its instances
KIND_INSTANCES: dict[str, re.Pattern[str]] = {
    "季节": re.compile(_SEASON),
    "颜色": re.compile(_COLOUR),
    "形状": re.compile(_SHAPE),
    "职业": re.compile(_OCCUPATION),
    "语言": re.compile(_LANGUAGE),
}


def kinds_asked(terms: list[str], heads: list[str]) -> list[str]:
    """The ``KIND_INSTANCES`` kinds a question asks for: its answer heads (什么季节) and its
    content terms (X的职业是什么) that are one of them — whole: ``西班牙语言`` names a thing,
    it does not ask for a language."""
    return [k for k in KIND_INSTANCES if k in heads or k in terms]


def instances(kind: str, text: str) -> list[tuple[int, int, str]]:
    """``(start, end, instance)`` of every instance of ``kind`` in ``text`` (code points, in order)."""
    pattern = KIND_INSTANCES.get(kind)
    return [] if pattern is None else [(m.start(), m.end(), m.group()) for m in pattern.finditer(text)]
