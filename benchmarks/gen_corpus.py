"""Deterministic synthetic Chinese corpus for benchmarks (standard library only).

    python benchmarks/gen_corpus.py OUT_DIR --docs 100000 --seed 0

writes ``OUT_DIR/documents/NNN/NNNNNN.md`` (at most 1000 files per folder), each a
document in the demo-corpus format: one ``主题：<subject>`` line, then 3–6 ``字段：值``
lines (full-width colon, no spaces) drawn from a pool of 60 field names, values of
8–30 Chinese characters, about 120 characters per document. About 1 % of the
documents are a *second* document for an existing subject: half of them repeat the
first document's values for every shared field (agreeing), half change exactly one
shared field (a two-way conflict). Every subject name is unique apart from these
repeats. Once the 96 000 base names are used up (more than ~97 000 documents), further
names are a base name plus a suffix (``二号``, ``三号``, …), so the bare base name is a
substring of the suffixed one — the overlapping-names case the spec asks matchers to
handle. No field name is a substring of another field name or of any subject.

The same ``--docs`` and ``--seed`` always give the same bytes (``random.Random(seed)``
only, no set or dict-order dependence). A JSON summary is printed on stdout; it is
deterministic too (timing goes to stderr). ``--manifest FILE`` additionally writes the
repeated keys (with their sources and values) and a sample of single-source keys, for
building question sets.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import time
from pathlib import Path
from random import Random

SHARD_SIZE = 1000
REPEAT_RATE = 0.01
MIN_FIELDS, MAX_FIELDS = 3, 6
MIN_VALUE, MAX_VALUE = 8, 30
MANIFEST_SAMPLE = 500

# --- subject names: PREFIX + DESCRIPTOR + FACILITY (40 x 40 x 60 = 96 000) --------------
PREFIXES = [
    "东区", "西区", "南区", "北区", "老校区", "新校区", "主楼", "理科楼", "文科楼", "工程楼", "医学院", "法学院", "商学院", "外语学院",
    "艺术学院", "体育馆", "图书馆", "信息中心", "行政楼", "学生公寓", "研究生院", "继续教育学院", "附属中学", "国际交流中心", "科技园", "农学院",
    "化工学院", "建筑学院", "音乐厅", "博物馆", "档案馆", "后勤集团", "出版社", "校友会", "创业园", "海洋学院", "环境学院", "材料学院",
    "物理系", "历史系",
]
DESCRIPTORS = [
    "综合", "公共", "开放", "智能", "共享", "数字", "创新", "多功能", "自助", "临时", "特色", "专业", "青年", "国际", "社区",
    "学术", "文化", "健康", "绿色", "便民", "第一", "第二", "第三", "中心", "联合", "示范", "重点", "夜间", "周末", "流动", "静音",
    "团体", "教师", "本科生", "留学生", "志愿者", "跨学科", "校企", "应急", "实训",
]
FACILITIES = [
    "服务台", "阅览室", "自习室", "打印室", "实验室", "会议室", "研讨间", "咨询台", "档案室", "报告厅", "活动室", "展览厅", "工作坊",
    "录音棚", "机房", "书库", "资料室", "办公室", "接待处", "储藏室", "健身房", "琴房", "画室", "茶水间", "休息区", "医务室", "值班室",
    "收发室", "编辑部", "服务站", "训练场", "观测站", "温室", "影院", "剧场", "讲堂", "学习中心", "辅导站", "咨询中心", "孵化器",
    "创客空间", "数据中心", "控制室", "配电间", "设备间", "仓库", "车库", "驿站", "书店", "食堂", "咖啡厅", "小卖部", "洗衣房", "邮局",
    "银行网点", "保卫处", "宣传栏", "广播站", "气象站", "舞蹈房",
]

# --- 60 field names, grouped by the kind of value they get -----------------------------
FIELDS_BY_KIND = {
    "time": "开放时间 值班安排 上课时间 节假日安排 活动周期 考试安排 截止日期 成立年份",
    "place": "地点 存放位置 楼层分布 交通路线 停车信息 无障碍设施 网络覆盖 建筑面积",
    "contact": (
        "联系电话 负责人 邮箱 咨询渠道 投诉方式 传真号码 邮政编码 官方网站 微信公众号 "
        "主管部门 主办单位 协办单位 合作机构 授课教师"
    ),
    "rule": (
        "预约方式 收费标准 借用期限 注意事项 适用对象 服务内容 办理流程 所需材料 安全须知 "
        "卫生要求 餐饮规定 噪音规定 馆藏范围 借阅规则 续借办法 逾期处理 赔偿标准 培训要求 "
        "考核方式 课程简介 先修课程 教材 成绩构成 选课人数 报名方式 容量 学分 服务亮点 "
        "发展目标 年度预算"
    ),
}
FIELD_KIND = {name: kind for kind, names in FIELDS_BY_KIND.items() for name in names.split()}
FIELDS = tuple(FIELD_KIND)

# --- value fragments ---------------------------------------------------------------------
FRAGMENTS = {
    "time": (
        "周一至周五 每天 工作日 周末 节假日除外 上午八点到十二点 下午两点到五点半 "
        "晚上七点到九点 全天开放 寒暑假另行通知 每月第一个周三 考试周延长至二十二点 "
        "每学期第三周起 上午九点半开始 中午暂停服务 周二下午闭馆整理 每年三月 "
        "春季学期 秋季学期 二零一八年 二零二一年起 每两周一次 提前十五分钟入场"
    ),
    "place": (
        "图书馆 东侧 西侧 二楼 三楼 北侧走廊尽头 行政楼 地下一层 靠近西门 三号教学楼 "
        "一零八室 学生活动中心旁 南门停车场 无障碍坡道 电梯直达 全楼无线网络 "
        "校园卡通道 共四层 约八百平方米 公交七路 校车东线 地铁四号线 步行五分钟"
    ),
    "contact": (
        "王老师 李主任 张老师 刘老师 陈老师 值班人员 办公室电话 工作日联系 "
        "请发邮件至服务邮箱 分机八二三一 分机六零五 校内总机转接 学校后勤处 "
        "教务处 团委 研究生院 信息中心 官方公众号 服务热线 留言板 线上服务大厅 "
        "邮编一零零八七一 传真六二七五一零零九"
    ),
    "rule": (
        "须提前预约 凭校园卡进入 请勿大声喧哗 按学期收取 每人每次限两小时 需填写申请表 "
        "经负责人审批 超过期限按日计费 免费向全校师生开放 校外人员需登记 "
        "损坏照价赔偿 可续借一次 不得转借他人 限三十人 共四学分 期末考试占六成 "
        "平时成绩占四成 需完成安全培训 禁止携带食物 提供饮用水 可线上办理 "
        "携带身份证件 每次最多五本 逾期暂停借阅权限 面向本科生 面向研究生"
    ),
}
FRAGMENTS_BY_KIND = {kind: tuple(text.split()) for kind, text in FRAGMENTS.items()}
ALL_FRAGMENTS = tuple(f for kind in FRAGMENTS_BY_KIND for f in FRAGMENTS_BY_KIND[kind])

CN_DIGITS = "零一二三四五六七八九"


def chinese_number(n: int) -> str:
    """2 → 二, 12 → 十二, 35 → 三十五; from 100 on, digit by digit (105 → 一零五)."""
    if n < 10:
        return CN_DIGITS[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return ("" if tens == 1 else CN_DIGITS[tens]) + "十" + (CN_DIGITS[ones] if ones else "")
    return "".join(CN_DIGITS[int(d)] for d in str(n))


def subject_names(rng: Random, count: int) -> list[str]:
    """``count`` unique subject names: all base names (shuffled) first, then suffixed."""
    bases = list(
        dict.fromkeys(p + d + f for p in PREFIXES for d in DESCRIPTORS for f in FACILITIES)
    )
    names = bases[:]
    rng.shuffle(names)
    names = names[:count]
    tier = 2
    while len(names) < count:
        suffix = chinese_number(tier) + "号"
        take = min(count - len(names), len(bases))
        names.extend(base + suffix for base in rng.sample(bases, take))
        tier += 1
    return names


def make_value(rng: Random, kind: str) -> str:
    """A value of MIN_VALUE..MAX_VALUE characters built from fragments."""
    own = FRAGMENTS_BY_KIND[kind]
    target = rng.randint(MIN_VALUE, 24)
    parts: list[str] = []
    length = 0
    while length < target:
        fragment = rng.choice(own) if rng.random() < 0.75 else rng.choice(ALL_FRAGMENTS)
        if parts and rng.random() < 0.4:
            fragment = "，" + fragment
        parts.append(fragment)
        length += len(fragment)
    value = "".join(parts)[:MAX_VALUE]
    if len(value) < MAX_VALUE and rng.random() < 0.5:
        value += "。"
    return value


def make_fields(rng: Random) -> list[tuple[str, str]]:
    names = rng.sample(FIELDS, rng.randint(MIN_FIELDS, MAX_FIELDS))
    return [(name, make_value(rng, FIELD_KIND[name])) for name in names]


def second_document(
    rng: Random, first: list[tuple[str, str]], conflicting: bool
) -> tuple[list[tuple[str, str]], str | None]:
    """Fields of a second document for the same subject; returns (fields, changed field)."""
    shared = rng.sample(first, rng.randint(2, len(first)))
    changed: str | None = None
    if conflicting:
        index = rng.randrange(len(shared))
        name, old = shared[index]
        new = old
        while new == old:
            new = make_value(rng, FIELD_KIND[name])
        shared[index] = (name, new)
        changed = name
    used = {name for name, _ in first}
    extra_pool = [name for name in FIELDS if name not in used]
    extra_count = max(MIN_FIELDS - len(shared), 0) + (1 if rng.random() < 0.3 else 0)
    extra_count = min(extra_count, MAX_FIELDS - len(shared))
    extra = [(n, make_value(rng, FIELD_KIND[n])) for n in rng.sample(extra_pool, extra_count)]
    fields = shared + extra
    rng.shuffle(fields)
    return fields, changed


def render(subject: str, fields: list[tuple[str, str]]) -> bytes:
    lines = ["主题：" + subject] + [name + "：" + value for name, value in fields]
    return ("\n".join(lines) + "\n").encode("utf-8")


def doc_path(index: int) -> str:
    return f"documents/{index // SHARD_SIZE:03d}/{index:06d}.md"


def generate(out: Path, docs: int, seed: int, manifest: Path | None = None) -> dict[str, object]:
    rng = Random(seed)
    repeats = round(docs * REPEAT_RATE) if docs >= 2 else 0
    unique = docs - repeats
    names = subject_names(rng, unique)
    firsts = [make_fields(rng) for _ in range(unique)]
    # (subject index, fields, kind, changed field)
    plan: list[tuple[int, list[tuple[str, str]], str, str | None]] = [
        (i, fields, "single", None) for i, fields in enumerate(firsts)
    ]
    for n, i in enumerate(rng.sample(range(unique), repeats)):
        conflicting = n % 2 == 1
        fields, changed = second_document(rng, firsts[i], conflicting)
        plan.append((i, fields, "conflicting" if conflicting else "agreeing", changed))
    rng.shuffle(plan)

    digest = hashlib.sha256()
    total_bytes = total_units = total_chars = 0
    sources: dict[int, list[str]] = {}
    shard = -1
    for index, (subject_index, fields, _kind, _changed) in enumerate(plan):
        if index // SHARD_SIZE != shard:
            shard = index // SHARD_SIZE
            (out / doc_path(index)).parent.mkdir(parents=True, exist_ok=True)
        rel = doc_path(index)
        data = render(names[subject_index], fields)
        with open(out / rel, "wb") as handle:
            handle.write(data)
        digest.update(rel.encode() + b"\0" + data + b"\0")
        total_bytes += len(data)
        total_units += len(fields)
        total_chars += len(data.decode("utf-8"))
        sources.setdefault(subject_index, []).append(rel)

    repeated = [entry for entry in plan if entry[2] != "single"]
    summary: dict[str, object] = {
        "docs": docs,
        "units": total_units,
        "bytes": total_bytes,
        "subjects": unique,
        "repeated_subjects": len(repeated),
        "agreeing": sum(1 for entry in repeated if entry[2] == "agreeing"),
        "conflicting": sum(1 for entry in repeated if entry[2] == "conflicting"),
        "field_names": len(FIELDS),
        "chars_per_doc": round(total_chars / docs, 1) if docs else 0.0,
        "seed": seed,
        "sha256": digest.hexdigest(),
    }
    if manifest is not None:
        write_manifest(manifest, rng, names, firsts, repeated, sources)
    return summary


def write_manifest(
    path: Path,
    rng: Random,
    names: list[str],
    firsts: list[list[tuple[str, str]]],
    repeated: list[tuple[int, list[tuple[str, str]], str, str | None]],
    sources: dict[int, list[str]],
) -> None:
    """Repeated keys with both sources and values, plus a sample of single-source keys."""
    entries = []
    for subject_index, fields, _kind, changed in sorted(repeated, key=lambda e: e[0]):
        first = dict(firsts[subject_index])
        second = dict(fields)
        for name in sorted(first.keys() & second.keys()):
            entries.append(
                {
                    "subject": names[subject_index],
                    "field": name,
                    "kind": "conflicting" if name == changed else "agreeing",
                    "values": [first[name], second[name]],
                    "sources": sources[subject_index],
                }
            )
    repeated_subjects = {entry[0] for entry in repeated}
    singles = [i for i in range(len(names)) if i not in repeated_subjects]
    sample = []
    for i in sorted(rng.sample(singles, min(MANIFEST_SAMPLE, len(singles)))):
        name, value = rng.choice(firsts[i])
        sample.append({"subject": names[i], "field": name, "value": value, "source": sources[i][0]})
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"repeated_keys": entries, "single_source_sample": sample}
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate a synthetic Chinese corpus.")
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--docs", type=int, default=1000, help="number of documents")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--manifest", type=Path, help="also write repeated/sample keys here")
    parser.add_argument(
        "--overwrite", action="store_true", help="delete an existing OUT_DIR/documents first"
    )
    args = parser.parse_args(argv)
    if args.docs < 0:
        parser.error("--docs must be >= 0")
    documents = args.out_dir / "documents"
    if documents.exists() and any(documents.iterdir()):
        if not args.overwrite:
            parser.error(f"{documents} is not empty; pass --overwrite to replace it")
        shutil.rmtree(documents)
    started = time.perf_counter()
    summary = generate(args.out_dir, args.docs, args.seed, args.manifest)
    elapsed = time.perf_counter() - started
    print(json.dumps(summary, ensure_ascii=False))
    print(f"wrote {args.docs} documents in {elapsed:.2f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
