"""Subjects, their fields and values, and the documents that hold them.

A *world* is the ground truth of one benchmark: every subject with the documents it
appears in (``docs[i]`` maps field -> value, in line order). Subjects in 2-4 documents
either agree on every shared field or disagree on one or two of them. Names and
fields are drawn from ``_vocab``; every random choice goes through one
``random.Random`` and iterates lists only, so one seed gives one byte-identical world.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from random import Random

try:
    from . import _vocab as V
except ImportError:  # run as a script from this folder
    import _vocab as V  # type: ignore[no-redef,import-not-found]

FOLDER_SIZE = 1000
MIN_FIELDS, MAX_FIELDS = 5, 15
MIN_VALUE, MAX_VALUE = 4, 20


@dataclass(frozen=True)
class SubjectSpec:
    """What to build for one subject; fields and values are drawn in ``build_world``."""

    name: str
    kind: str
    must_fields: tuple[str, ...] = ()
    exclude_fields: tuple[str, ...] = ()
    n_docs: int = 1
    n_conflicts: int = 0  # shared fields whose values disagree between documents


@dataclass
class Subject:
    name: str
    kind: str
    fields: list[str]  # every field of the subject, in the primary document's line order
    docs: list[dict[str, str]]  # field -> value for each document; docs[0] is primary
    paths: list[str] = field(default_factory=list)

    def values(self, name: str) -> list[str]:
        """Distinct values of one field over the subject's documents, in document order."""
        out: list[str] = []
        for doc in self.docs:
            if name in doc and doc[name] not in out:
                out.append(doc[name])
        return out

    def conflicting(self) -> list[str]:
        return [f for f in self.fields if len(self.values(f)) > 1]

    def agreeing(self) -> list[str]:
        return [f for f in self.fields if len(self.values(f)) == 1]

    def shared(self) -> list[str]:
        return [f for f in self.fields if sum(f in d for d in self.docs) > 1]


@dataclass
class World:
    subjects: dict[str, Subject]  # generation order
    fields: list[str]  # every field used by some subject, in pool order
    inner: dict[str, list[str]]  # subject -> corpus subjects lying strictly inside its name
    outer: dict[str, list[str]]  # subject -> corpus subjects whose name contains it
    field_inner: dict[str, list[str]]
    field_outer: dict[str, list[str]]
    deliberate: dict[str, str]  # subject -> the field name it contains on purpose

    @property
    def max_subject_len(self) -> int:
        return max(len(s) for s in self.subjects)


def field_pool() -> list[str]:
    """Every field name of the pool, deduplicated, in a fixed order."""
    out: dict[str, None] = {}
    for name in V.GENERAL_FIELDS:
        out[name] = None
    for kind in V.KINDS:
        for name in V.KIND_FIELDS[kind]:
            out[name] = None
    return list(out)


def containment(names: Sequence[str]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """For every name, the other names lying inside it (inner) and containing it (outer)."""
    known = set(names)
    inner: dict[str, list[str]] = {n: [] for n in names}
    outer: dict[str, list[str]] = {n: [] for n in names}
    for name in names:
        found: dict[str, None] = {}
        for i in range(len(name)):
            for j in range(i + 1, len(name) + 1):
                piece = name[i:j]
                if piece != name and piece in known:
                    found[piece] = None
        for piece in sorted(found):
            inner[name].append(piece)
            outer[piece].append(name)
    return inner, outer


# --- values -----------------------------------------------------------------------------

_CLASS_RULES = sorted(V.VALUE_CLASSES, key=lambda rule: -len(rule[0]))


def value_class(name: str) -> str:
    for suffix, cls in _CLASS_RULES:
        if name.endswith(suffix):
            return cls
    return "text"


def cn_number(n: int) -> str:
    """Chinese reading of 0 <= n < 100000 (十二, 一百零五, 三千九百九十九)."""
    if n == 0:
        return "零"
    units = ["", "十", "百", "千", "万"]
    digits = "零一二三四五六七八九"
    out, zero = "", False
    for pos in range(4, -1, -1):
        d = (n // 10**pos) % 10
        if d == 0:
            zero = bool(out)
            continue
        if zero:
            out += "零"
            zero = False
        out += digits[d] + units[pos]
    if out.startswith("一十"):
        out = out[1:]
    return out


def _digits(rng: Random, count: int) -> str:
    return "".join(rng.choice(V.DIGITS) for _ in range(count))


def _person(rng: Random) -> str:
    given = rng.choice(V.GIVEN_CHARS) + (rng.choice(V.GIVEN_CHARS) if rng.random() < 0.6 else "")
    return rng.choice(V.SURNAMES) + given + rng.choice(V.TITLES)


def _year(rng: Random) -> str:
    return "".join(V.DIGITS[int(d)] for d in str(rng.randint(1950, 2025)))


_CAPACITY_UNITS = (("电池", "毫安时"), ("存储", "千兆字节"), ("课", "人"), ("", "升"))


def _raw_value(cls: str, rng: Random, name: str = "") -> str:  # noqa: C901 - one per class
    r = rng.randint
    if cls == "time":
        if rng.random() < 0.5:
            a, b = sorted(rng.sample(range(7), 2))
            return (
                f"{V.WEEKDAYS[a]}至{V.WEEKDAYS[b]}{cn_number(r(7, 11))}点到{cn_number(r(15, 21))}点"
            )
        return (
            f"{_year(rng)}年{cn_number(r(1, 12))}月{cn_number(r(1, 28))}日{cn_number(r(8, 20))}时"
        )
    if cls in ("date", "day"):
        if cls == "day" and rng.random() < 0.5:
            return f"每{rng.choice(V.WEEKDAYS)}全天"
        return f"{_year(rng)}年{cn_number(r(1, 12))}月{cn_number(r(1, 28))}日"
    if cls == "year":
        return f"{_year(rng)}年"
    if cls == "phone":
        return _digits(rng, rng.choice((8, 11, 12)))
    if cls == "code":
        return rng.choice(("编号", "代码", "登记号")) + _digits(rng, r(4, 8))
    if cls == "model":
        return f"型号{rng.choice(V.MODELS)}{_digits(rng, 3)}"
    if cls == "place":
        if rng.random() < 0.5:
            return f"{rng.choice(V.BUILDINGS)}{cn_number(r(1, 9))}层{_digits(rng, 3)}室"
        return f"{rng.choice(V.DISTRICTS)}{rng.choice(V.ROADS)}{cn_number(r(1, 300))}号"
    if cls == "credit":
        return f"共计{cn_number(r(1, 6))}{rng.choice(('', '点五'))}学分"
    if cls == "hours":
        return f"共计{cn_number(r(8, 96))}学时"
    if cls == "people":
        return f"约{cn_number(r(20, 99999))}人"
    if cls == "capacity":
        unit = next(u for key, u in _CAPACITY_UNITS if key in name)
        return f"约{cn_number(r(20, 9999))}{unit}"
    if cls == "count":
        return f"共{cn_number(r(2, 99999))}{rng.choice(('个', '册', '页', '次', '件', '张'))}"
    if cls == "weeks":
        return f"第{cn_number(r(1, 4))}至第{cn_number(r(10, 18))}周"
    if cls == "percent":
        return f"百分之{cn_number(r(1, 9) * 10)}"
    if cls == "price":
        return f"人民币{cn_number(r(5, 99999))}元"
    if cls == "area":
        return f"约{cn_number(r(30, 99999))}平方米"
    if cls == "weight":
        return f"约{cn_number(r(1, 999))}{rng.choice(('克', '千克'))}"
    if cls == "length":
        return f"约{cn_number(r(1, 9999))}{rng.choice(('厘米', '毫米', '米'))}"
    if cls == "power":
        return f"最高{cn_number(r(5, 3000))}瓦"
    if cls == "noise":
        return f"不高于{cn_number(r(20, 70))}分贝"
    if cls == "score":
        return f"{cn_number(r(1, 9))}点{cn_number(r(0, 9))}分（满分十分）"
    if cls == "grade":
        return rng.choice(("国家", "省级", "市级", "行业")) + rng.choice(
            ("一级", "二级", "三级", "甲等", "乙等")
        )
    if cls == "colour":
        return "".join(rng.sample(V.COLOURS, r(2, 3)))
    if cls == "floor":
        return f"地上{cn_number(r(1, 30))}层"
    if cls == "person":
        return _person(rng)
    return "".join(rng.sample(V.VALUE_WORDS, r(2, 5)))


def make_value(name: str, rng: Random, avoid: Iterable[str] = ()) -> str:
    """A value of 4-20 code points for the field, different from every value in ``avoid``."""
    cls, banned = value_class(name), set(avoid)
    for _ in range(100):
        value = _raw_value(cls, rng, name)
        if MIN_VALUE <= len(value) <= MAX_VALUE and value not in banned and "：" not in value:
            return value
    raise RuntimeError(f"could not draw a value for field {name!r}")


# --- fields and documents -----------------------------------------------------------------


def _partners(pool: Sequence[str]) -> dict[str, list[str]]:
    return {f: [g for g in pool if g != f and (f in g or g in f)] for f in pool}


def _choose_fields(spec: SubjectSpec, rng: Random, partners: dict[str, list[str]]) -> list[str]:
    kind_pool = [f for f in V.KIND_FIELDS[spec.kind] if f not in spec.exclude_fields]
    general = [f for f in V.GENERAL_FIELDS if f not in spec.exclude_fields]
    target = rng.randint(max(MIN_FIELDS, len(spec.must_fields)), MAX_FIELDS)
    chosen: dict[str, None] = dict.fromkeys(spec.must_fields)
    while len(chosen) < target:
        pick = rng.choice(kind_pool if rng.random() < 0.7 else general)
        if pick in chosen:
            continue
        chosen[pick] = None
        near = [
            g
            for g in partners.get(pick, [])
            if g not in chosen and (g in kind_pool or g in general)
        ]
        if near and len(chosen) < target and rng.random() < 0.5:
            chosen[rng.choice(near)] = None
    names = list(chosen)
    rng.shuffle(names)
    return names


def _make_docs(spec: SubjectSpec, names: list[str], rng: Random) -> list[dict[str, str]]:
    primary = {f: make_value(f, rng) for f in names}
    docs = [primary]
    if spec.n_docs == 1:
        return docs
    others = [f for f in names if f not in spec.must_fields] or names
    shared = rng.sample(others, min(len(others), rng.randint(max(1, spec.n_conflicts), 4)))
    if spec.must_fields:
        shared = list(dict.fromkeys(list(spec.must_fields) + shared))
    disagree = shared[: spec.n_conflicts]
    for _ in range(spec.n_docs - 1):
        extra = [f for f in names if f not in shared]
        keep = shared + rng.sample(extra, min(len(extra), rng.randint(0, 2)))
        doc_fields = [f for f in names if f in keep]
        rng.shuffle(doc_fields)
        docs.append({f: primary[f] for f in doc_fields})
    for f in disagree:  # at least one copy disagrees; copies may disagree among themselves
        copies = rng.sample(range(1, spec.n_docs), rng.randint(1, spec.n_docs - 1))
        for i in copies:
            docs[i][f] = make_value(f, rng, avoid=[primary[f]])
    return docs


def build_world(specs: Sequence[SubjectSpec], rng: Random) -> World:
    pool = field_pool()
    partners = _partners(pool)
    deliberate = {name: f for name, _, f in V.FIELD_IN_SUBJECT}
    subjects: dict[str, Subject] = {}
    for spec in specs:
        if spec.name in subjects:
            raise ValueError(f"duplicate subject {spec.name!r}")
        names = _choose_fields(spec, rng, partners)
        subjects[spec.name] = Subject(spec.name, spec.kind, names, _make_docs(spec, names, rng))
    used = {f for s in subjects.values() for f in s.fields}
    fields = [f for f in pool if f in used]
    inner, outer = containment(list(subjects))
    field_inner, field_outer = containment(fields)
    _assign_paths(subjects)
    return World(
        subjects=subjects,
        fields=fields,
        inner=inner,
        outer=outer,
        field_inner=field_inner,
        field_outer=field_outer,
        deliberate={k: v for k, v in deliberate.items() if k in subjects},
    )


def _assign_paths(subjects: dict[str, Subject]) -> None:
    counters: dict[str, int] = {}

    def next_path(folder: str) -> str:
        n = counters.get(folder, 0)
        counters[folder] = n + 1
        return f"documents/{folder}/{n // FOLDER_SIZE:03d}/{folder}_{n:06d}.md"

    for subject in subjects.values():
        subject.paths = [next_path(subject.kind)]
        subject.paths += [next_path("copies") for _ in subject.docs[1:]]


def document_text(subject: Subject, index: int) -> str:
    lines = [f"主题：{subject.name}"] + [f"{f}：{v}" for f, v in subject.docs[index].items()]
    return "\n".join(lines) + "\n"
