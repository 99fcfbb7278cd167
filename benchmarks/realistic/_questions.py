"""Questions with expected outcomes, rendered from templates and checked for ambiguity.

Every question is first chosen as an *ask* (label, overlap pattern, subjects, fields),
then rendered with the least-used template that fits and passes ``Matcher.clean``:
the only corpus subject names occurring in the question are the intended subjects and
names lying inside them, and the only field names are the intended fields and names
lying inside them (or inside a deliberate ``FIELD_IN_SUBJECT`` subject name).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from random import Random
from typing import Any

try:
    from . import _vocab as V
    from ._world import World, value_class
except ImportError:  # run as a script from this folder
    import _vocab as V  # type: ignore[no-redef,import-not-found]
    from _world import World, value_class  # type: ignore[no-redef,import-not-found]

LABELS = (
    "answerable",
    "field_missing",
    "unknown_subject",
    "conflict",
    "multi_subject",
    "multi_field",
)
EXPECT = {  # label -> (expect_status, expect_reason)
    "answerable": ("answered", None),
    "field_missing": ("refused", "no_supporting_evidence"),
    "unknown_subject": ("refused", "no_supporting_evidence"),  # issue 13: "X is not a subject in the corpus"
    "conflict": ("refused", "conflicting_evidence"),
    "multi_subject": ("answered", None),
    "multi_field": ("answered", None),
}
# Default plan: share of all questions per (label, pattern); "plain" takes any shortfall.
PLAN = (
    ("answerable", "nested_subject", 0.175),
    ("answerable", "prefix_person", 0.05),
    ("answerable", "nested_field", 0.10),
    ("answerable", "common_word_subject", 0.04),
    ("answerable", "field_in_subject", 0.015),
    ("answerable", "agreeing_documents", 0.03),
    ("answerable", "plain", 0.09),
    ("field_missing", "field_missing", 0.10),
    ("unknown_subject", "unknown_subject", 0.10),
    ("conflict", "conflict", 0.10),
    ("multi_subject", "multi_subject", 0.10),
    ("multi_field", "multi_field", 0.10),
)


@dataclass(frozen=True)
class Template:
    id: str
    shape: str
    kinds: tuple[str, ...] | None
    numeric: bool
    text: str


TEMPLATES = tuple(Template(*t) for t in V.TEMPLATES)


@dataclass(frozen=True)
class Ask:
    label: str
    pattern: str
    subjects: tuple[str, ...]
    fields: tuple[str, ...]
    kind: str

    @property
    def shape(self) -> str:
        if len(self.subjects) == 2:
            return "multi_subject"
        return "multi_field" if len(self.fields) == 2 else "single"


class Matcher:
    """Finds every occurrence of any subject or field name inside a text."""

    def __init__(self, subjects: Iterable[str], fields: Iterable[str]) -> None:
        self.subjects, self.fields = set(subjects), set(fields)
        self.max_subject = max(map(len, self.subjects), default=1)
        self.max_field = max(map(len, self.fields), default=1)

    @staticmethod
    def _find(text: str, names: set[str], longest: int) -> list[tuple[int, int]]:
        return [
            (i, j)
            for i in range(len(text))
            for j in range(i + 1, min(len(text), i + longest) + 1)
            if text[i:j] in names
        ]

    def subject_spans(self, text: str) -> list[tuple[int, int]]:
        return self._find(text, self.subjects, self.max_subject)

    def field_spans(self, text: str) -> list[tuple[int, int]]:
        return self._find(text, self.fields, self.max_field)

    def clean(
        self,
        text: str,
        subjects: list[tuple[int, int]],
        fields: list[tuple[int, int]],
        known_subject: bool = True,
    ) -> bool:
        """True when every name occurrence lies inside an intended span (see module doc)."""

        def inside(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
            return any(s <= span[0] and span[1] <= e for s, e in spans)

        allowed = subjects if known_subject else []
        if not all(inside(o, allowed) for o in self.subject_spans(text)):
            return False
        return all(inside(o, fields + allowed) for o in self.field_spans(text))


def render(
    template: Template, ask: Ask
) -> tuple[str, list[tuple[int, int]], list[tuple[int, int]]]:
    """Question text plus the spans of the intended subjects and fields."""
    slots = {"S": ask.subjects[0], "A": ask.subjects[0], "F": ask.fields[0]}
    if len(ask.subjects) > 1:
        slots["B"] = ask.subjects[1]
    if len(ask.fields) > 1:
        slots["G"] = ask.fields[1]
    text = ""
    subjects: list[tuple[int, int]] = []
    fields: list[tuple[int, int]] = []
    for piece in re.split(r"(\{[SFABG]\})", template.text):
        if len(piece) == 3 and piece[0] == "{" and piece[2] == "}":
            name = slots[piece[1]]
            (fields if piece[1] in "FG" else subjects).append((len(text), len(text) + len(name)))
            text += name
        else:
            text += piece
    return text, subjects, fields


class _Pools:
    """Precomputed candidate lists for every (label, pattern)."""

    def __init__(self, world: World) -> None:
        w, subs = world, world.subjects
        self.world = world
        self.names = list(subs)
        self.agree = {s: subs[s].agreeing() for s in self.names}
        self.field_sets = {s: set(subs[s].fields) for s in self.names}
        self.nested_long = [s for s in self.names if w.inner[s] and self.agree[s]]
        self.nested_short = [s for s in self.names if w.outer[s] and self.agree[s]]
        persons = [s for s in self.names if subs[s].kind == "person"]
        self.prefix_person = [
            s
            for s in persons
            if self.agree[s]
            and (
                any(o.startswith(s) and subs[o].kind == "person" for o in w.outer[s])
                or any(s.startswith(i) and subs[i].kind == "person" for i in w.inner[s])
            )
        ]
        common = set(V.REQUIRED_COMMON_WORDS) | set(V.TOPICS)
        self.common = [
            s
            for s in self.names
            if self.agree[s]
            and (s in common or any(i in V.REQUIRED_COMMON_WORDS for i in w.inner[s]))
        ]
        self.deliberate = [s for s in w.deliberate if self.agree[s]]
        self.long_strong: list[tuple[str, str]] = []  # subject has F and a field inside F
        self.long_weak: list[tuple[str, str]] = []  # F contains a corpus field the subject lacks
        self.short: list[tuple[str, str]] = []  # subject has f and a field containing f
        for s in self.names:
            for f in self.agree[s]:
                if any(g in self.field_sets[s] for g in w.field_inner[f]):
                    self.long_strong.append((s, f))
                elif w.field_inner[f]:
                    self.long_weak.append((s, f))
                if any(g in self.field_sets[s] for g in w.field_outer[f]):
                    self.short.append((s, f))
        self.multi_doc_agree = [
            (s, f)
            for s in self.names
            if len(subs[s].docs) > 1
            for f in subs[s].shared()
            if f in self.agree[s]
        ]
        self.conflicts = [(s, f) for s in self.names for f in subs[s].conflicting()]
        self.by_field: dict[str, list[str]] = {f: [] for f in w.fields}
        for s in self.names:
            for f in self.agree[s]:
                self.by_field[f].append(s)


def _pick_field(rng: Random, fields: Sequence[str], prefer: Callable[[str], bool]) -> str:
    liked = [f for f in fields if prefer(f)]
    return rng.choice(liked) if liked and rng.random() < 0.7 else rng.choice(fields)


class _Makers:
    """One method per (label, pattern); each returns an Ask or None."""

    def __init__(self, world: World, rng: Random) -> None:
        self.p, self.w, self.rng = _Pools(world), world, rng
        self.kind = {s: world.subjects[s].kind for s in world.subjects}

    def _one(self, label: str, pattern: str, s: str, f: str) -> Ask:
        return Ask(label, pattern, (s,), (f,), self.kind[s])

    def _has(self, names: Iterable[str]) -> Callable[[str], bool]:
        names = list(names)
        return lambda f: any(f in self.p.field_sets[n] for n in names)

    def answerable_nested_subject(self) -> Ask | None:
        c = self.rng.choice
        if self.rng.random() < 0.65 and self.p.nested_long:  # the long name, a short one inside
            s = c(self.p.nested_long)
            return self._one(
                "answerable",
                "nested_subject",
                s,
                _pick_field(self.rng, self.p.agree[s], self._has(self.w.inner[s])),
            )
        if not self.p.nested_short:
            return None
        s = c(self.p.nested_short)  # the short name, itself a subject inside longer ones
        return self._one(
            "answerable",
            "nested_subject",
            s,
            _pick_field(self.rng, self.p.agree[s], self._has(self.w.outer[s])),
        )

    def _simple(self, pattern: str, names: Sequence[str]) -> Ask | None:
        if not names:
            return None
        s = self.rng.choice(names)
        return self._one("answerable", pattern, s, self.rng.choice(self.p.agree[s]))

    def answerable_prefix_person(self) -> Ask | None:
        return self._simple("prefix_person", self.p.prefix_person)

    def answerable_common_word_subject(self) -> Ask | None:
        return self._simple("common_word_subject", self.p.common)

    def answerable_plain(self) -> Ask | None:
        return self._simple("plain", [s for s in self.p.names if self.p.agree[s]])

    def answerable_field_in_subject(self) -> Ask | None:
        if not self.p.deliberate:
            return None
        s = self.rng.choice(self.p.deliberate)
        inside = self.w.deliberate[s]
        return self._one(
            "answerable",
            "field_in_subject",
            s,
            _pick_field(self.rng, self.p.agree[s], lambda f: f == inside),
        )

    def answerable_nested_field(self) -> Ask | None:
        r = self.rng.random()
        pools = [self.p.long_strong, self.p.long_weak, self.p.short]
        pool = pools[0 if r < 0.45 else 1 if r < 0.7 else 2]
        pool = pool or next((p for p in pools if p), [])
        if not pool:
            return None
        s, f = self.rng.choice(pool)
        return self._one("answerable", "nested_field", s, f)

    def answerable_agreeing_documents(self) -> Ask | None:
        if not self.p.multi_doc_agree:
            return None
        s, f = self.rng.choice(self.p.multi_doc_agree)
        return self._one("answerable", "agreeing_documents", s, f)

    def conflict_conflict(self) -> Ask | None:
        if not self.p.conflicts:
            return None
        s, f = self.rng.choice(self.p.conflicts)
        return self._one("conflict", "conflict", s, f)

    def field_missing_field_missing(self) -> Ask | None:
        c, r = self.rng.choice, self.rng.random()
        pool = self.p.nested_long if r < 0.4 and self.p.nested_long else self.p.names
        s = c(pool)
        mine = self.p.field_sets[s]
        inner_fields = {f for i in self.w.inner[s] for f in self.p.field_sets[i]}

        def ok(f: str) -> bool:  # missing here and inside, and not a piece of a field it has
            return f not in mine and f not in inner_fields and not any(f in g for g in mine)

        # fields of the subject's kind that occur in the corpus and pass ok()
        kind_pool = dict.fromkeys(V.KIND_FIELDS[self.kind[s]] + V.GENERAL_FIELDS)
        options = [f for f in kind_pool if f in self.p.by_field and ok(f)]
        if 0.4 <= r < 0.7:  # the subject has a short field; ask a longer one it lacks
            longer = [g for g in options if any(f in g for f in mine)]
            if longer:
                return self._one("field_missing", "field_missing", s, c(longer))
        return self._one("field_missing", "field_missing", s, c(options)) if options else None

    def unknown_subject_unknown_subject(self) -> Ask | None:
        c = self.rng.choice
        kind = c(("person", "place", "book"))
        if kind == "person":
            name = (
                c(V.SURNAMES)
                + c(V.RARE_GIVEN)
                + (c(V.RARE_GIVEN) if self.rng.random() < 0.5 else "")
            )
        elif kind == "place":
            name = c(V.RARE_PLACE_HEADS) + c(V.RARE_PLACE_TAILS)
        else:
            name = c(V.RARE_THING_HEADS) + c(V.RARE_THING_TAILS)
        m = self.matcher
        if m.subject_spans(name) or m.field_spans(name):
            return None
        fields = [f for f in V.KIND_FIELDS[kind] + V.GENERAL_FIELDS if f in self.p.by_field]
        return (
            Ask("unknown_subject", "unknown_subject", (name,), (c(fields),), kind)
            if fields
            else None
        )

    def multi_subject_multi_subject(self) -> Ask | None:
        c = self.rng.choice
        if self.rng.random() < 0.35 and self.p.nested_long:  # one name inside the other
            s = c(self.p.nested_long)
            i = c(self.w.inner[s])
            both = [f for f in self.p.agree[s] if f in self.p.agree[i]]
            if not both:
                return None
            pair = (s, i) if self.rng.random() < 0.5 else (i, s)
            return Ask("multi_subject", "multi_subject", pair, (c(both),), self.kind[s])
        a = c(self.p.names)
        if not self.p.agree[a]:
            return None
        f = c(self.p.agree[a])
        same = [b for b in (c(self.p.by_field[f]) for _ in range(8)) if b != a]
        same_kind = [b for b in same if self.kind[b] == self.kind[a]]
        if not same:
            return None
        b = same_kind[0] if same_kind else same[0]
        return Ask("multi_subject", "multi_subject", (a, b), (f,), self.kind[a])

    def multi_field_multi_field(self) -> Ask | None:
        s = self.rng.choice(self.p.names)
        fields = self.p.agree[s]
        if len(fields) < 2:
            return None
        nested = [(f, g) for f in fields for g in fields if f != g and f in g]
        if nested and self.rng.random() < 0.35:
            pair = list(self.rng.choice(nested))
            self.rng.shuffle(pair)
        else:
            pair = self.rng.sample(fields, 2)
        return Ask("multi_field", "multi_field", (s,), tuple(pair), self.kind[s])

    def showcase(self) -> list[Ask]:
        """The README's examples (数学分析的学分, 王强强的职称, 应用的负责人, ...) when present."""
        asks = []
        groups = list(V.REQUIRED_SUBJECTS.values()) + [V.REQUIRED_COMMON_WORDS]
        for s in (name for names in groups for name in names):
            if s not in self.kind:
                continue
            kind = self.kind[s]
            f = V.REQUIRED_FIELDS[kind][0]
            if f not in self.p.agree[s]:
                continue
            pattern = (
                "field_in_subject"
                if s in self.w.deliberate
                else "prefix_person"
                if kind == "person"
                else "common_word_subject"
                if kind == "topic"
                else "nested_subject"
            )
            asks.append(self._one("answerable", pattern, s, f))
        return asks

    matcher: Matcher


def expected_answer(world: World, ask: Ask) -> Any:
    if ask.label == "multi_subject":
        return [world.subjects[s].values(ask.fields[0])[0] for s in ask.subjects]
    if ask.label == "multi_field":
        return [world.subjects[ask.subjects[0]].values(f)[0] for f in ask.fields]
    if ask.label == "answerable":
        return world.subjects[ask.subjects[0]].values(ask.fields[0])[0]
    return None


def _numeric(field: str) -> bool:
    return value_class(field) in V.NUMERIC_CLASSES


def question_record(world: World, ask: Ask, text: str, template: str) -> dict[str, Any]:
    status, reason = EXPECT[ask.label]
    return {
        "id": "",
        "question": text,
        "label": ask.label,
        "subject": list(ask.subjects) if len(ask.subjects) > 1 else ask.subjects[0],
        "field": list(ask.fields) if len(ask.fields) > 1 else ask.fields[0],
        "expect_status": status,
        "expect_answer": expected_answer(world, ask),
        "expect_reason": reason,
        "template": template,
        "pattern": ask.pattern,
    }


def plan_counts(
    n: int, plan: Sequence[tuple[str, str, float]] = PLAN
) -> list[tuple[str, str, int]]:
    counts = [(label, pattern, int(share * n)) for label, pattern, share in plan]
    short = n - sum(c for *_, c in counts)
    return [(lab, pat, c + short if pat == "plain" else c) for lab, pat, c in counts]


def make_questions(
    world: World,
    n: int,
    rng: Random,
    plan: Sequence[tuple[str, str, int]] | None = None,
    strict: bool = True,
) -> list[dict[str, Any]]:
    """``n`` questions following ``plan`` [(label, pattern, count)], shuffled, with ids."""
    makers = _Makers(world, rng)
    makers.matcher = matcher = Matcher(world.subjects, world.fields)
    usage = {t.id: 0 for t in TEMPLATES}
    seen: set[tuple[str, tuple[str, ...], tuple[str, ...]]] = set()
    out: list[dict[str, Any]] = []

    def emit(ask: Ask | None) -> bool:
        key = (ask.label, ask.subjects, ask.fields) if ask else None
        if ask is None or key in seen:
            return False
        rendered = _render_clean(world, ask, matcher, usage, rng)
        if rendered is None:
            return False
        seen.add(key)  # type: ignore[arg-type]
        out.append(question_record(world, ask, *rendered))
        return True

    steps = list(plan) if plan is not None else plan_counts(n)
    budget = {(label, pattern): count for label, pattern, count in steps}
    for ask in makers.showcase():
        if budget.get((ask.label, ask.pattern), 0) > 0 and emit(ask):
            budget[(ask.label, ask.pattern)] -= 1
    carry = 0  # answerable questions a pattern could not supply go to "plain" (last)
    for label, pattern in budget:
        count = budget[(label, pattern)] + (carry if pattern == "plain" else 0)
        make = getattr(makers, f"{label}_{pattern}")
        got, tries = 0, 0
        while got < count and tries < 60 * count + 100:
            tries += 1
            got += emit(make())
        if got < count:
            if label == "answerable" and pattern != "plain":
                carry += count - got
            elif strict:
                raise RuntimeError(f"only {got} of {count} {label}/{pattern} questions")
    rng.shuffle(out)
    width = max(5, len(str(len(out))))
    for i, record in enumerate(out, 1):
        record["id"] = f"q{i:0{width}d}"
    return out


def _render_clean(
    world: World, ask: Ask, matcher: Matcher, usage: dict[str, int], rng: Random
) -> tuple[str, str] | None:
    numeric = all(_numeric(f) for f in ask.fields)
    fits = [
        t
        for t in TEMPLATES
        if t.shape == ask.shape
        and (t.kinds is None or ask.kind in t.kinds)
        and (numeric or not t.numeric)
    ]
    order = sorted(fits, key=lambda t: (usage[t.id], rng.random()))
    for template in order:
        text, subjects, fields = render(template, ask)
        if matcher.clean(text, subjects, fields, known_subject=ask.label != "unknown_subject"):
            usage[template.id] += 1
            return text, template.id
    return None
