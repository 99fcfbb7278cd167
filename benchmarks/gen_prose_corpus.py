"""Deterministic synthetic Chinese *prose* corpus for the build and request benchmarks (standard library only).

    python benchmarks/gen_prose_corpus.py OUT_DIR --docs 15000 --seed 0 [--questions FILE]

writes ``OUT_DIR/documents/NNN/NNNNNN.md`` (at most 1000 files per folder): each a Markdown
article about one invented place — a ``# title`` heading, then four ``## `` sections of one or
two paragraphs of sentences, ≈ 25 sentences — about 2 KB, so 15 000 documents are ≈ 29 MB, the size of the
100k field-line corpus (``gen_corpus.py``). Nothing is taken from any data set: names, places,
people and the filler sentences are built here from short lists and ``random.Random(seed)``
only (no set or dict-order dependence), so the same arguments always give the same bytes.

Four sentences of every article carry a fact that a question can ask and that only that
article says (the title is unique): where it is (``位于…``), the year it was founded
(``始建于…年``), how many staff it has (``现有工作人员…名``) and who led its extension
(``由…主持``). ``--questions FILE`` writes ``--sample`` such questions (spread over the corpus)
with the sentence that answers each, as JSON, for ``bench_compact.py --prose-questions``.
A JSON summary is printed on stdout.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from random import Random

SHARD_SIZE = 1000

CITIES = [
    "临川", "青岚", "望江", "云溪", "白沙", "松原", "桐城", "沧澜", "丰乐", "长汀", "秀水", "凤鸣", "栖霞", "金陵",
    "合浦", "平阳", "兰溪", "安化", "星沙", "鹤山", "东篱", "南屏", "北固", "西陵", "玉泉", "龙湾", "清河", "月湖",
    "石门", "柳州", "枫桥", "梅岭", "竹溪", "荷塘", "杏坛", "桂林", "榕城", "槐里", "枣阳", "杉湖",
]
DISTRICTS = ["老城区", "新区", "高新区", "滨江区", "开发区", "东城区", "西城区", "南湖区", "北山区", "港区"]
ROADS = ["人民路", "解放路", "中山路", "建设路", "文化路", "学府路", "长江路", "黄河路", "青年路", "和平路", "朝阳路", "光明路"]
QUALITIES = [
    "古韵", "青石", "听雨", "观澜", "拾光", "半山", "云上", "归真", "知行", "弘文", "明德", "博雅", "致远", "怀瑾", "启明",
    "承泽", "天一", "兰亭", "翠微", "晴川", "书香", "墨池", "清风", "朗月", "松涛", "竹影", "梅香", "荷风", "杏林", "桃源",
]
KINDS = [
    "书院", "博物馆", "美术馆", "图书馆", "纪念馆", "文化馆", "艺术中心", "科技馆", "剧院", "音乐厅", "植物园", "天文台",
    "档案馆", "展览馆", "会馆", "学堂", "藏书楼", "茶馆", "戏楼", "工坊",
]
SURNAMES = list("王李张刘陈杨赵黄周吴徐孙胡朱高林何郭马罗梁宋郑谢韩唐冯于董萧程曹袁邓许傅沈曾彭吕苏卢蒋蔡贾丁魏薛叶阎")
GIVEN = list("明华建国文秀英志强永安宁静思远嘉怡子涵雨轩浩然晨曦书瑶景行若愚慕白")
THINGS = ["藏品", "建筑", "庭院", "讲座", "展览", "古籍", "碑刻", "壁画", "园林", "演出", "课程", "手稿", "器物", "书画"]
ADJECTIVES = ["精美", "古朴", "典雅", "丰富", "独特", "庄重", "清幽", "别致", "宏大", "精致", "素雅", "厚重"]
PEOPLE = ["游客", "学者", "学生", "市民", "艺术家", "研究者", "摄影爱好者", "家庭", "志愿者", "老人"]
VERBS = ["参观", "研习", "交流", "休憩", "写生", "阅读", "考察", "游览", "拍摄", "聆听"]
SEASONS = ["春季", "夏季", "秋季", "冬季"]
EVENTS = ["读书会", "音乐节", "书画展", "学术论坛", "手工市集", "诗歌朗诵会", "讲解活动", "亲子课堂"]
NUMERALS = "一二三四五六七八九"


def person(rng: Random) -> str:
    return rng.choice(SURNAMES) + "".join(rng.choice(GIVEN) for _ in range(rng.randint(1, 2)))


def filler(rng: Random, name: str) -> str:
    """One sentence that asks nothing of a question (its facts are not unique to the article)."""
    thing, adjective = rng.choice(THINGS), rng.choice(ADJECTIVES)
    pick = rng.randrange(6)
    if pick == 0:
        return f"这里的{thing}以{adjective}著称，吸引了许多{rng.choice(PEOPLE)}前来{rng.choice(VERBS)}。"
    if pick == 1:
        return f"每逢{rng.choice(SEASONS)}，{name}都会举办{rng.choice(EVENTS)}，场面十分热闹。"
    if pick == 2:
        return f"馆内陈列的{thing}大多{adjective}而{rng.choice(ADJECTIVES)}，值得细细品味。"
    if pick == 3:
        return f"不少{rng.choice(PEOPLE)}认为，这里是{rng.choice(VERBS)}和{rng.choice(VERBS)}的好去处。"
    if pick == 4:
        return f"近年来，{name}不断完善{thing}的保护与展示，服务水平逐步提高。"
    return f"沿着{rng.choice(ADJECTIVES)}的回廊前行，可以看到{rng.choice(THINGS)}与{thing}相映成趣。"


def paragraph(rng: Random, name: str, facts: list[str], count: int) -> str:
    sentences = [filler(rng, name) for _ in range(count)]
    for fact in facts:
        sentences.insert(rng.randrange(len(sentences) + 1), fact)
    return "".join(sentences)


def article(rng: Random, name: str) -> tuple[str, list[tuple[str, str]]]:
    """The text of one article and its (question, answering sentence) pairs."""
    city, district, road = rng.choice(CITIES), rng.choice(DISTRICTS), rng.choice(ROADS)
    year = rng.randint(1860, 2015)
    staff = rng.randint(12, 480)
    leader = person(rng)
    extension = NUMERALS[rng.randrange(3)]
    where = f"{name}位于{city}市{district}{road}{rng.randint(1, 399)}号。"
    founded = f"{name}始建于{year}年，最初只有一座小楼。"
    workers = f"{name}现有工作人员{staff}名，每年接待访客约{rng.randint(2, 90)}万人次。"
    led = f"{year + rng.randint(5, 9)}年，{name}的第{extension}次扩建由{leader}主持完成。"
    sections = [
        ("概况", [[where], []]),
        ("历史", [[founded], [led]]),
        ("现状", [[workers]]),
        ("特色", [[], []]),
    ]
    lines = [f"# {name}", ""]
    for heading, paragraphs in sections:
        lines += [f"## {heading}", ""]
        for facts in paragraphs:
            lines += [paragraph(rng, name, facts, rng.randint(2, 4)), ""]
    questions = [
        (f"{name}位于哪里？", where),
        (f"{name}始建于哪一年？", founded),
        (f"{name}现有多少名工作人员？", workers),
        (f"{name}的第{extension}次扩建由谁主持完成？", led),
    ]
    return "\n".join(lines), questions


def names(count: int, rng: Random) -> list[str]:
    """``count`` distinct article titles: city + quality + kind, then a numeral suffix when used up."""
    base = [c + q + k for c in CITIES for q in QUALITIES for k in KINDS]  # 24 000
    rng.shuffle(base)
    out = base[:count]
    suffix = 2
    while len(out) < count:
        out += [f"{b}{suffix}号馆" for b in base[: count - len(out)]]
        suffix += 1
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--docs", type=int, default=15000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--questions", type=Path, default=None, help="write sample questions with their answers here")
    ap.add_argument("--sample", type=int, default=40)
    args = ap.parse_args()
    began = time.perf_counter()
    rng = Random(args.seed)
    if (args.out / "documents").exists():
        shutil.rmtree(args.out / "documents")
    titles = names(args.docs, rng)
    step = max(args.docs // max(args.sample // 4, 1), 1)
    sample: list[dict[str, str]] = []
    total = 0
    for number, title in enumerate(titles):
        text, questions = article(rng, title)
        folder = args.out / "documents" / f"{number // SHARD_SIZE:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        (folder / f"{number:06d}.md").write_bytes(data)
        total += len(data)
        if number % step == 0 and len(sample) < args.sample:
            path = f"documents/{number // SHARD_SIZE:03d}/{number:06d}.md"
            sample += [{"question": q, "answer": a, "source": path} for q, a in questions]
    if args.questions is not None:
        args.questions.write_text(json.dumps(sample[: args.sample], ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps({"docs": args.docs, "seed": args.seed, "bytes": total, "questions": len(sample[: args.sample])}))
    print(f"{time.perf_counter() - began:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
