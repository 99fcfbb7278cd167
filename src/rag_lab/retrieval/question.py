"""Understanding a question: which (subject, field) slots it asks, or which image attributes.

Text questions (SPEC §3.5): every substring of the question is looked up among the
corpus's subject and field names (an indexed lookup, never a scan of all names).
A match lying strictly inside a longer match is dropped (数学 inside 高等数学, 王强
inside 王强强, 学分 inside 数学分析). Partially overlapping matches are resolved by
choosing the non-overlapping selection that (1) pairs the most subjects with fields
they actually have, (2) covers the most characters, (3) uses the fewest names. Several
subjects (or fields) become several slots only when joined by an explicit
conjunction (和, 与, 、, 以及); otherwise the one that has the asked field is taken; if
several do, the only one in the field's clause (between sentence punctuation) is taken,
and otherwise the question needs clarification.

Image questions use a closed grammar of colour, size and shape words; anything left
after removing them (besides spaces and punctuation) is an unsupported attribute.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

from rag_lab.errors import QuestionError
from rag_lab.limits import MAX_QUESTION_CHARS
from rag_lab.retrieval.sources import EvidenceSource

CONJUNCTIONS = ("和", "与", "、", "以及")
CLAUSE_MARKS = ("，", "。", "？", "！", "；", "：", ",", "?", "!", ";", ":", "\n")  # not "." (decimals) or "、"
_MAX_CLUSTER = 12
_MAX_COMBINATIONS = 256


def check_question(question: object) -> str:
    """Reject questions that cannot be asked at all; returns the question unchanged."""
    if not isinstance(question, str):
        raise QuestionError(f"the question must be text, got {type(question).__name__}")
    if not question.strip():
        raise QuestionError("the question is empty; ask about a subject and a field, e.g. `借阅台 开放时间`")
    if len(question) > MAX_QUESTION_CHARS:
        raise QuestionError(
            f"the question is {len(question)} code points long; the limit is {MAX_QUESTION_CHARS}"
        )
    for offset, char in enumerate(question):
        if unicodedata.category(char) == "Cc" and char not in "\t\n\r":
            raise QuestionError(
                f"the question holds control character U+{ord(char):04X} at code point {offset}; remove it"
            )
    return question


@dataclass(frozen=True)
class Match:
    start: int
    end: int
    name: str
    kinds: frozenset[str]

    @property
    def length(self) -> int:
        return self.end - self.start


@dataclass
class ParsedQuestion:
    """What a question asks. ``problem`` is set when no slots can be formed."""

    slots: list[tuple[str, str]] = field(default_factory=list)
    subjects: list[str] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)
    problem: str | None = None  # a Reason value: subject_without_field, ambiguous_subject, …
    options: list[str] = field(default_factory=list)  # ambiguous names, when problem is ambiguous_*
    matches: list[Match] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "slots": [list(s) for s in self.slots],
            "subjects": self.subjects,
            "fields": self.fields,
            "problem": self.problem,
            "matches": [[m.start, m.end, m.name, sorted(m.kinds)] for m in self.matches],
        }


# -- image grammar ------------------------------------------------------------------------


def image_grammar() -> dict[str, tuple[str, ...]]:
    from rag_lab.data.images import COLOR_WORDS, SHAPE_WORDS, SIZE_WORDS

    return {"color": COLOR_WORDS, "size": SIZE_WORDS, "shape": SHAPE_WORDS}


def parse_image_question(question: str) -> tuple[dict[str, list[str]], str] | None:
    """``(attributes asked, leftover text)``, or None when no colour or shape word occurs."""
    grammar = image_grammar()
    words = sorted(
        ((w, attr) for attr, ws in grammar.items() for w in ws), key=lambda item: (-len(item[0]), item[0])
    )
    pattern = re.compile("|".join(re.escape(w) for w, _ in words))
    kind_of = dict(words)
    asked: dict[str, list[str]] = {}
    leftover: list[str] = []
    last = 0
    for found in pattern.finditer(question):
        leftover.append(question[last : found.start()])
        attr = kind_of[found.group()]
        if found.group() not in asked.setdefault(attr, []):
            asked[attr].append(found.group())
        last = found.end()
    leftover.append(question[last:])
    if "color" not in asked and "shape" not in asked:
        return None
    rest = "".join(
        ch
        for ch in "".join(leftover)
        if not unicodedata.category(ch).startswith(("Z", "P")) and not ch.isspace()
    )
    return asked, rest


# -- text questions ------------------------------------------------------------------------


def find_matches(question: str, source: EvidenceSource) -> list[Match]:
    """Every occurrence of a known subject or field name in the question."""
    shortest, longest = source.name_length_range()
    if longest == 0:
        return []
    spans: dict[str, list[tuple[int, int]]] = {}
    for start in range(len(question)):
        for end in range(start + max(shortest, 1), min(start + longest, len(question)) + 1):
            spans.setdefault(question[start:end], []).append((start, end))
    known = source.name_kinds(spans)
    found = [Match(s, e, name, frozenset(kinds)) for name, kinds in known.items() for s, e in spans[name]]
    return sorted(found, key=lambda m: (m.start, m.end))


def drop_nested(matches: list[Match]) -> list[Match]:
    """Remove every match lying strictly inside a longer one."""
    return [
        m
        for m in matches
        if not any(o.start <= m.start and m.end <= o.end and o.length > m.length for o in matches)
    ]


def _independent_sets(cluster: list[Match]) -> list[list[Match]]:
    """All maximal sets of pairwise non-overlapping matches of one overlap cluster."""
    if len(cluster) > _MAX_CLUSTER:
        chosen: list[Match] = []
        for m in sorted(cluster, key=lambda m: (-m.length, m.start)):
            if all(m.end <= c.start or c.end <= m.start for c in chosen):
                chosen.append(m)
        return [sorted(chosen, key=lambda m: m.start)]
    found: list[list[Match]] = []
    for size in range(len(cluster), 0, -1):
        for combo in itertools.combinations(cluster, size):
            if all(a.end <= b.start for a, b in itertools.pairwise(combo)) and not any(
                set(combo) < set(f) for f in found
            ):
                found.append(list(combo))
    return found


def _clusters(matches: list[Match]) -> list[list[Match]]:
    clusters: list[list[Match]] = []
    end = -1
    for m in sorted(matches, key=lambda m: (m.start, m.end)):
        if clusters and m.start < end:
            clusters[-1].append(m)
            end = max(end, m.end)
        else:
            clusters.append([m])
            end = m.end
    return clusters


class _Keys:
    """``has_key`` with a per-question cache."""

    def __init__(self, source: EvidenceSource) -> None:
        self.source = source
        self.cache: dict[tuple[str, str], bool] = {}

    def __call__(self, subject: str, field: str) -> bool:
        if (subject, field) not in self.cache:
            self.cache[(subject, field)] = subject != field and self.source.has_key(subject, field)
        return self.cache[(subject, field)]


def _score(selection: list[Match], has_key: _Keys) -> tuple[int, int, int]:
    subjects = [m for m in selection if "subject" in m.kinds]
    fields = [m for m in selection if "field" in m.kinds]
    pairs = sum(1 for s in subjects for f in fields if s is not f and has_key(s.name, f.name))
    return (pairs, sum(m.length for m in selection), -len(selection))


def select(matches: list[Match], has_key: _Keys) -> list[Match]:
    """The best non-overlapping selection (see module docstring)."""
    options = [_independent_sets(c) for c in _clusters(drop_nested(matches))]
    combos = 1
    for o in options:
        combos *= len(o)
    if combos > _MAX_COMBINATIONS:
        options = [[max(o, key=lambda sel: (sum(m.length for m in sel), -len(sel)))] for o in options]
    best: list[Match] = []
    best_key: tuple[int, int, int] | None = None
    for combo in itertools.product(*options):
        selection = [m for part in combo for m in part]
        key = _score(selection, has_key)
        if best_key is None or key > best_key:
            best, best_key = selection, key
    return best


def _assign_roles(selection: list[Match], has_key: _Keys) -> tuple[list[Match], list[Match]]:
    pure_s = [m for m in selection if m.kinds == {"subject"}]
    pure_f = [m for m in selection if m.kinds == {"field"}]
    subjects: list[Match] = []
    fields: list[Match] = []
    first_dual = True
    for m in selection:
        if len(m.kinds) == 1:
            (subjects if "subject" in m.kinds else fields).append(m)
            continue
        if pure_s and pure_f:
            as_field = any(has_key(s.name, m.name) for s in pure_s)
        elif pure_s or pure_f:
            as_field = bool(pure_s)
        else:
            as_field = not first_dual
        first_dual = False
        (fields if as_field else subjects).append(m)
    return subjects, fields


def _groups(question: str, items: list[Match]) -> list[list[Match]]:
    """Split names into runs joined by explicit conjunctions."""
    groups: list[list[Match]] = []
    for m in items:
        if groups:
            between = question[groups[-1][-1].end : m.start].strip(" \u3000\t")
            if between in CONJUNCTIONS:
                groups[-1].append(m)
                continue
        groups.append([m])
    return groups


def _distinct(groups: list[list[Match]]) -> list[list[Match]]:
    """Drop a group naming what an earlier group names (``郑丽丽电话郑丽丽`` asks one subject)."""
    seen: set[tuple[str, ...]] = set()
    kept = []
    for group in groups:
        names = tuple(dict.fromkeys(m.name for m in group))
        if names not in seen:
            seen.add(names)
            kept.append(group)
    return kept


def _unique(names: list[str]) -> list[str]:
    return list(dict.fromkeys(names))


def parse_text_question(question: str, source: EvidenceSource) -> ParsedQuestion:
    has_key = _Keys(source)
    selection = select(find_matches(question, source), has_key)
    subjects, fields = _assign_roles(selection, has_key)
    parsed = ParsedQuestion(matches=selection)
    parsed.subjects = _unique([m.name for m in subjects])
    parsed.fields = _unique([m.name for m in fields])
    if not subjects or not fields:
        if subjects:
            parsed.problem = "subject_without_field"
        elif fields:
            parsed.problem = "field_without_subject"
        return parsed
    pairs = _alternating_pairs(question, selection, subjects, fields)
    if pairs is not None:
        parsed.slots = pairs
        return parsed
    s_groups, f_groups = _distinct(_groups(question, subjects)), _distinct(_groups(question, fields))
    f_names = [_unique([m.name for m in g]) for g in f_groups]
    s_names = [_unique([m.name for m in g]) for g in s_groups]
    def has_all(g: list[str]) -> bool:
        return all(has_key(s, f) for s in g for fs in f_names for f in fs)

    s_pick = _pick(s_names, has_all)
    if s_pick is None:  # several subjects have the field: the one in the field's clause, if only one is
        s_pick = _in_field_clause(question, s_groups, fields, [has_all(g) for g in s_names])
    if s_pick is None:
        parsed.problem, parsed.options = "ambiguous_subject", [n for g in s_names for n in g]
        return parsed
    chosen_s = s_names[s_pick] if s_pick >= 0 else s_names[_nearest(s_groups, fields[0])]
    f_pick = _pick(f_names, lambda g: all(has_key(s, f) for s in chosen_s for f in g))
    if f_pick is None:
        parsed.problem, parsed.options = "ambiguous_field", [n for g in f_names for n in g]
        return parsed
    chosen_f = f_names[max(f_pick, 0)]
    parsed.slots = [(s, f) for s in chosen_s for f in chosen_f]
    return parsed


def _clause(question: str, position: int) -> int:
    """Which clause (run between sentence punctuation) of the question ``position`` lies in."""
    return sum(question.count(mark, 0, position) for mark in CLAUSE_MARKS)


def _in_field_clause(
    question: str, groups: list[list[Match]], fields: list[Match], good: list[bool]
) -> int | None:
    """The one good subject group sharing a clause with every field, else None.

    ``基础问题：彭琳的时间`` names the subjects 基础 and 彭琳; only 彭琳 stands in the clause
    of 时间. Within one clause (``借阅台 测试台 开放时间``) nothing is decided here.
    """
    clauses = {_clause(question, m.start) for m in fields}
    if len(clauses) != 1:
        return None
    (clause,) = clauses
    hits = [
        i for i, g in enumerate(groups) if good[i] and all(_clause(question, m.start) == clause for m in g)
    ]
    return hits[0] if len(hits) == 1 else None


def _pick(groups: list[list[str]], good: Callable[[list[str]], bool]) -> int | None:
    """Index of the one group that is good; -1 when none is; None when several are."""
    if len(groups) == 1:
        return 0
    hits = [i for i, g in enumerate(groups) if good(g)]
    if len(hits) > 1:
        return None
    return hits[0] if hits else -1


def _nearest(groups: list[list[Match]], field_match: Match) -> int:
    """The subject group closest before the first field (or the first group)."""
    before = [i for i, g in enumerate(groups) if g[-1].end <= field_match.start]
    return before[-1] if before else 0


def _alternating_pairs(
    question: str, selection: list[Match], subjects: list[Match], fields: list[Match]
) -> list[tuple[str, str]] | None:
    """``A的F和B的G`` → [(A, F), (B, G)]: subject-field pairs joined by conjunctions."""
    if len(subjects) < 2 or len(subjects) != len(fields):
        return None
    ordered = sorted(subjects + fields, key=lambda m: m.start)
    role = {id(m): "s" for m in subjects} | {id(m): "f" for m in fields}
    if [role[id(m)] for m in ordered] != ["s", "f"] * len(subjects):
        return None
    for f, s in zip(ordered[1::2], ordered[2::2], strict=False):
        if question[f.end : s.start].strip(" \u3000\t") not in CONJUNCTIONS:
            return None
    return _unique_pairs([(s.name, f.name) for s, f in zip(ordered[::2], ordered[1::2], strict=True)])


def _unique_pairs(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return list(dict.fromkeys(pairs))
