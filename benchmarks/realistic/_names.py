"""Subject names built from parts, so that many of them lie inside one another.

``subject_specs(n, rng)`` returns exactly ``n`` subject specs (at least the required and
common-word subjects): courses built from domain/level/suffix parts, person names where
one is a prefix of another, city/institution/facility places, brand/category/model
products and book titles built on course and city names. A candidate name is dropped if
it contains a field name (except the deliberate ``FIELD_IN_SUBJECT`` cases), lies inside
a field name or inside template text, or contains a conjunction, ``的`` or a colon.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from random import Random

try:
    from . import _vocab as V
    from ._world import SubjectSpec, field_pool
except ImportError:  # run as a script from this folder
    import _vocab as V  # type: ignore[no-redef,import-not-found]
    from _world import SubjectSpec, field_pool  # type: ignore[no-redef,import-not-found]

MULTI_DOC_SHARE = 0.10  # subjects that appear in 2-4 documents
CONFLICT_SHARE = 0.5  # of those, the share whose documents disagree on a shared field


def _substrings(texts: list[str]) -> set[str]:
    return {t[i:j] for t in texts for i in range(len(t)) for j in range(i + 1, len(t) + 1)}


def template_literals() -> list[str]:
    """The fixed text pieces of every template (placeholders removed)."""
    pieces: list[str] = []
    for *_, text in V.TEMPLATES:
        pieces += [p for p in re.split(r"\{[SFABG]\}", text) if p]
    return pieces


class NameFilter:
    def __init__(self) -> None:
        self.fields = field_pool()
        self.inside_field = _substrings(self.fields)
        self.inside_template = _substrings(template_literals())
        self.field_set = set(self.fields)
        self.max_field = max(len(f) for f in self.fields)
        self.deliberate = {name for name, _, _ in V.FIELD_IN_SUBJECT}

    def contains_field(self, name: str) -> bool:
        for i in range(len(name)):
            for j in range(i + 1, min(len(name), i + self.max_field) + 1):
                if name[i:j] in self.field_set:
                    return True
        return False

    def __call__(self, name: str) -> bool:
        if any(bad in name for bad in V.FORBIDDEN_IN_NAMES):
            return False
        if name in self.inside_field or name in self.inside_template:
            return False
        return name in self.deliberate or not self.contains_field(name)


class _Picker:
    """Draws names layer by layer into one global, duplicate-free list."""

    def __init__(self, rng: Random, accept: NameFilter) -> None:
        self.rng, self.accept = rng, accept
        self.taken: set[str] = set()
        self.dropped = 0

    def add(self, out: list[str], name: str) -> bool:
        if name in self.taken:
            return False
        if not self.accept(name):
            self.dropped += 1
            return False
        self.taken.add(name)
        out.append(name)
        return True

    def draw(self, out: list[str], target: int, make: Callable[[], str]) -> None:
        goal, tries = len(out) + target, 0
        while len(out) < goal and tries < 40 * target + 200:
            tries += 1
            self.add(out, make())

    def fill(
        self, out: list[str], quota: int, layers: list[tuple[float, Callable[[], str]]]
    ) -> None:
        for share, make in layers[:-1]:
            self.draw(out, min(quota - len(out), round(share * quota)), make)
        self.draw(out, quota - len(out), layers[-1][1])
        if len(out) < quota:
            raise RuntimeError(f"only {len(out)} of {quota} names could be drawn")


def _courses(p: _Picker, quota: int) -> list[str]:
    c = p.rng.choice
    out: list[str] = []
    for name in V.REQUIRED_SUBJECTS["course"]:
        p.add(out, name)
    domains = list(V.COURSE_DOMAINS)
    p.rng.shuffle(domains)
    for name in domains[: max(0, quota // 3)]:
        p.add(out, name)

    def numbered() -> str:  # 高等数学 -> 高等数学（上）; short names are skipped
        base = c(out)
        return base + c(V.COURSE_NUMBERS) if len(base) >= 4 else base

    def pdx() -> str:  # an existing course name (or LEVEL+DOMAIN) plus one more suffix
        base = c(out) if p.rng.random() < 0.5 else c(V.COURSE_LEVELS) + c(V.COURSE_DOMAINS)
        suffix = c(V.COURSE_SUFFIXES)
        return base if suffix in base or len(base) > 9 else base + suffix

    p.fill(
        out,
        quota,
        [
            (0.12, lambda: c(V.COURSE_LEVELS) + c(V.COURSE_DOMAINS)),
            (0.25, lambda: c(V.COURSE_DOMAINS) + c(V.COURSE_SUFFIXES)),
            (0.02, lambda: c(V.COURSE_SUFFIXES) + c(V.COURSE_SUFFIXES2)),
            (0.15, lambda: c(V.COURSE_DOMAINS) + c(V.COURSE_SUFFIXES) + c(V.COURSE_SUFFIXES2)),
            (0.06, numbered),
            (1.0, pdx),
        ],
    )
    return out


def _persons(p: _Picker, quota: int) -> list[str]:
    c = p.rng.choice
    out: list[str] = []
    for name in V.REQUIRED_SUBJECTS["person"]:
        p.add(out, name)
    p.draw(out, round(0.45 * quota), lambda: c(V.SURNAMES) + c(V.GIVEN_CHARS))
    two = list(out)
    p.fill(
        out,
        quota,
        [
            (0.25, lambda: c(two) + c(V.GIVEN_CHARS)),  # 王强 -> 王强伟: a prefix of another name
            (0.06, lambda: (lambda n: n + n[-1])(c(two))),  # 王强 -> 王强强
            (1.0, lambda: c(V.SURNAMES) + c(V.GIVEN_CHARS) + c(V.GIVEN_CHARS)),
        ],
    )
    return out


def _join(base: str, tail: str) -> str:
    """``base + tail`` unless the tail is already in the base (then ``base``: a duplicate)."""
    return base if tail in base else base + tail


def _places(p: _Picker, quota: int) -> list[str]:
    c = p.rng.choice
    out: list[str] = []
    for name in V.REQUIRED_SUBJECTS["place"]:
        p.add(out, name)
    for name in V.CITIES[: max(0, quota // 4)]:
        p.add(out, name)
    p.draw(out, round(0.35 * quota), lambda: c(V.CITIES) + c(V.INSTITUTIONS))
    two = [n for n in out if len(n) > 2]
    p.fill(
        out,
        quota,
        [
            (
                0.45,
                lambda: _join(
                    c(two) if p.rng.random() < 0.8 else c(V.CITIES) + c(V.INSTITUTIONS),
                    c(V.FACILITIES),
                ),
            ),
            (
                1.0,
                lambda: c(V.CITIES)
                + c(("大学", "师范大学", "理工大学"))
                + c(("图书馆", "体育馆"))
                + c(V.FACILITIES),
            ),
        ],
    )
    return out


def _products(p: _Picker, quota: int) -> list[str]:
    c = p.rng.choice
    out: list[str] = []
    for name in V.REQUIRED_SUBJECTS["product"]:
        p.add(out, name)
    for name in V.BRANDS[: max(0, quota // 4)]:
        p.add(out, name)
    p.draw(out, round(0.3 * quota), lambda: c(V.BRANDS) + c(V.CATEGORIES))
    two = [n for n in out if len(n) > 2]
    p.draw(
        out,
        round(0.4 * quota),
        lambda: (c(two) if p.rng.random() < 0.8 else c(V.BRANDS) + c(V.CATEGORIES)) + c(V.MODELS),
    )
    three = [n for n in out if n[-1].isascii()]
    p.fill(out, quota, [(1.0, lambda: c(three) + c(V.SERIES))])
    return out


def _books(p: _Picker, quota: int, courses: list[str]) -> list[str]:
    c = p.rng.choice
    out: list[str] = []
    for name in V.REQUIRED_SUBJECTS["book"]:
        p.add(out, name)
    p.fill(
        out,
        quota,
        [
            (0.15, lambda: c(V.BOOK_HEADS) + c(V.BOOK_TAILS)),
            (0.15, lambda: c(V.CITIES) + c(V.BOOK_TAILS)),
            (1.0, lambda: c(courses) + c(V.BOOK_SUFFIXES)),
        ],
    )
    return out


def subject_names(n: int, rng: Random) -> list[tuple[str, str]]:
    """Exactly ``max(n, minimum)`` (name, kind) pairs, kinds grouped in ``V.KINDS`` order."""
    p = _Picker(rng, NameFilter())
    named: list[tuple[str, str]] = []
    topics: list[str] = []
    for name in V.TOPICS:
        p.add(topics, name)
    missing = [w for w in V.REQUIRED_COMMON_WORDS if w not in topics]
    if missing:
        raise RuntimeError(f"required common words were filtered out: {missing}")
    named += [(t, "topic") for t in topics]
    for name, kind, _ in V.FIELD_IN_SUBJECT:
        if p.add([], name):
            named.append((name, kind))
    rest = max(0, n - len(named))
    quotas = {kind: int(share * rest) for kind, share in V.KIND_SHARES}
    quotas["course"] += rest - sum(quotas.values())
    courses = _courses(p, quotas["course"])
    by_kind = {
        "course": courses,
        "person": _persons(p, quotas["person"]),
        "place": _places(p, quotas["place"]),
        "product": _products(p, quotas["product"]),
        "book": _books(p, quotas["book"], courses),
    }
    for kind, _ in V.KIND_SHARES:
        named += [(name, kind) for name in by_kind[kind]]
    for kind, names in V.REQUIRED_SUBJECTS.items():
        lost = [name for name in names if name not in p.taken]
        if lost:
            raise RuntimeError(f"required {kind} subjects were filtered out: {lost}")
    return named


def subject_specs(n: int, rng: Random) -> list[SubjectSpec]:
    """Name every subject, then choose which appear in several (agreeing/conflicting) documents."""
    named = subject_names(n, rng)
    multi = set(rng.sample(range(len(named)), round(MULTI_DOC_SHARE * len(named))))
    required = set(V.REQUIRED_COMMON_WORDS)
    for names in V.REQUIRED_SUBJECTS.values():
        required.update(names)
    specs = []
    for i, (name, kind) in enumerate(named):
        if name in required:  # one document each, sharing the kind's showcase fields
            specs.append(SubjectSpec(name, kind, must_fields=V.REQUIRED_FIELDS[kind]))
            continue
        n_docs, n_conflicts = 1, 0
        if i in multi:
            n_docs = rng.choices((2, 3, 4), weights=(6, 3, 1))[0]
            n_conflicts = rng.choice((1, 1, 2)) if rng.random() < CONFLICT_SHARE else 0
        specs.append(SubjectSpec(name, kind, n_docs=n_docs, n_conflicts=n_conflicts))
    return specs
