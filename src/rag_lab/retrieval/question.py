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

Then the field is matched within the linked subject's own fields (verbatim → normalized →
partial → alias → embedding; :mod:`rag_lab.retrieval.fields`), and a one-character or
function-word name inside ordinary phrasing (``是`` in ``是什么``) is not a name
(:mod:`rag_lab.retrieval.ordinary`).

Image questions use a closed grammar of colour, size and shape words; anything left
after removing them (besides spaces and punctuation) is an unsupported attribute.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rag_lab.data.names import folded_positions, squash
from rag_lab.errors import QuestionError
from rag_lab.limits import MAX_QUESTION_CHARS
from rag_lab.retrieval import fields as field_matching
from rag_lab.retrieval.chain import Chain, find_chain
from rag_lab.retrieval.ordinary import (
    BOUNDARY_CHARS,
    LIGHT_VERBS,
    SHORT_NAME,
    enclosing_name,
    is_ordinary,
    is_whole_word,
    numbered_after,
    ordinary_spans,
    possessed_after,
    possessor_end,
    splits_latin_word,
    stands_apart,
    strip_lead_ins,
)
from rag_lab.retrieval.sources import EvidenceSource

CONJUNCTIONS = ("和", "与", "、", "以及")
CLAUSE_MARKS = ("，", "。", "？", "！", "；", "：", ",", "?", "!", ";", ":", "\n")  # not "." (decimals) or "、"
_MAX_CLUSTER = 12
_MAX_COMBINATIONS = 256
_MAX_LINKED = 4  # subjects whose own fields are searched for one question


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
    control = _CONTROL.search(question)
    if control is not None:
        raise QuestionError(
            f"the question holds control character U+{ord(control.group()):04X} at code point "
            f"{control.start()}; remove it"
        )
    return question


#: Unicode's category Cc (U+0000–U+001F, U+007F–U+009F, a set the standard keeps fixed) but tab,
#: line feed and carriage return.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


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
    #: how each slot's field was found (rag_lab.retrieval.fields), and the steps tried
    field_matches: dict[tuple[str, str], field_matching.FieldMatch] = field(default_factory=dict)
    field_steps: list[dict[str, object]] = field(default_factory=list)
    unknown_subject: str | None = None  # the name standing where a subject belongs, not in the corpus
    chain: Chain | None = None  # a field of a field's value (X丈夫的父亲): never answered as the first hop
    question: str = ""
    #: every verbatim name found in ``found_in`` (:func:`find_matches`), kept so that the
    #: chain check does not look the names up a second time; not part of the trace
    found: list[Match] | None = field(default=None, repr=False, compare=False)
    found_in: str | None = field(default=None, repr=False, compare=False)

    def as_dict(self) -> dict[str, object]:
        return {
            "slots": [list(s) for s in self.slots],
            "subjects": self.subjects,
            "fields": self.fields,
            "problem": self.problem,
            "matches": [[m.start, m.end, m.name, sorted(m.kinds)] for m in self.matches],
            "field_match": [
                {"slot": list(k), **v.as_dict()} for k, v in self.field_matches.items()
            ],
            "field_steps": self.field_steps,
            # where the unknown name stands, not its text: a subject hidden from the caller
            # and a made-up one of the same length leave the same trace
            "unknown_subject": self.unknown_span(),
            # only when set, so traces of other questions keep their shape (golden files)
            **({} if self.chain is None else {"chain": self.chain.as_dict()}),
        }

    def unknown_span(self) -> list[int] | None:
        if self.unknown_subject is None:
            return None
        start = max(self.question.find(self.unknown_subject), 0)
        return [start, start + len(self.unknown_subject)]


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
    size = len(question)
    low = max(shortest, 1)
    known = source.name_kinds(
        {question[start:end] for start in range(size) for end in range(start + low, min(start + longest, size) + 1)}
    )
    ordinary = ordinary_spans(question)
    places = {name: _occurrences(question, name) for name in known}  # each known name was looked up
    edges = frozenset(p for spans in places.values() for s, e in spans for p in (s, e))
    found = [
        Match(s, e, name, frozenset(kinds))
        for name, kinds in known.items()
        for s, e in places[name]
        if not is_ordinary(name, s, e, ordinary)  # 是 in 是什么 is the word, not a name
        and not splits_latin_word(question, s, e, edges)  # sts-8 in sts-85, ngc in ngc 641 are not names
    ]
    return sorted(found, key=lambda m: (m.start, m.end))


def _occurrences(text: str, name: str) -> list[tuple[int, int]]:
    """Every ``[start, end)`` of ``name`` in ``text``, overlapping ones included, by start."""
    found = []
    start = text.find(name)
    while start >= 0:
        found.append((start, start + len(name)))
        start = text.find(name, start + 1)
    return found


def find_folded_matches(question: str, source: EvidenceSource) -> list[Match]:
    """Names found after NFKC + case folding of the question and of the names (data/names.py).

    A match keeps the corpus's own name; its span is the original question's code points.
    """
    folded, origin = folded_positions(question)
    shortest, longest = source.name_length_range()
    if longest == 0 or folded == question:
        return []
    size = len(folded)
    # a folded span must start and end at a boundary of the question's code points
    starts = [k for k in range(size) if k == 0 or origin[k - 1] != origin[k]]
    ends = {k for k in range(1, size + 1) if k == size or origin[k] != origin[k - 1]}
    low = max(shortest, 1)
    if len(starts) == size:  # each code point folded to one: every span is at a boundary
        texts = {folded[a:b] for a in starts for b in range(a + low, min(a + longest, size) + 1)}
    else:
        texts = {folded[a:b] for a in starts for b in range(a + low, min(a + longest, size) + 1) if b in ends}
    is_start = set(starts)
    ordinary = ordinary_spans(question)
    found: dict[tuple[int, int, str], set[str]] = {}
    for text, pairs in source.folded_name_kinds(texts).items():
        spans = [(origin[a], origin[b - 1] + 1) for a, b in _occurrences(folded, text) if a in is_start and b in ends]
        for name, kind in pairs:
            for s, e in spans:
                if not is_ordinary(name, s, e, ordinary) and not splits_latin_word(question, s, e):
                    found.setdefault((s, e, name), set()).add(kind)
    return [Match(s, e, name, frozenset(kinds)) for (s, e, name), kinds in sorted(found.items())]


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
    """Names (verbatim, below), then the linked subject's field (:func:`resolve_field`).

    When the place of the subject holds a name the corpus does not know, but the corpus
    knows it written with a middle dot, a space or title brackets (``史蒂芬霍金`` for
    史蒂芬·霍金, ``笑傲江湖`` for 《笑傲江湖》; :func:`spelled_otherwise`), the question is
    read again with the corpus's spelling (the trace's ``field_steps`` says so).
    """
    parsed = _parse_names(question, source)
    parsed.question = question
    parsed = resolve_field(question, parsed, source)
    if parsed.unknown_subject is not None:
        spelled = spelled_otherwise(parsed.unknown_subject, source)
        if spelled is not None and parsed.unknown_subject in question:
            again_q = question.replace(parsed.unknown_subject, spelled, 1)
            again = resolve_field(again_q, _parse_names(again_q, source), source)
            again.question = again_q
            if again.slots:
                again.field_steps.insert(0, {"subject_written_as": spelled, "asked_as": parsed.unknown_subject})
                return again
    return parsed


#: Characters a name may hold that a question often leaves out (史蒂芬·霍金 asked as 史蒂芬霍金).
NAME_JOINERS = ("·", "•", "・", " ")
_MAX_SPELLED = 30  # names longer than this are not respelled


def spelled_otherwise(name: str, source: EvidenceSource) -> str | None:
    """The one subject of the corpus that is ``name`` without its joiners (:data:`NAME_JOINERS`)
    and with at most one joiner inserted between two of its code points, inside 《》 or not;
    None when there is none or more than one."""
    if not name or len(name) > _MAX_SPELLED:
        return None
    bare = name.strip("《》")
    for joiner in NAME_JOINERS:
        bare = bare.replace(joiner, "")
    variants = {f"《{bare}》", bare}
    for joiner in NAME_JOINERS:
        for i in range(1, len(bare)):
            if bare[i - 1].isalnum() and bare[i].isalnum():
                variants.add(bare[:i] + joiner + bare[i:])
    variants.discard(name)
    kinds = source.name_kinds(sorted(variants))
    found = sorted(v for v, k in kinds.items() if "subject" in k)
    return found[0] if len(found) == 1 else None


def _parse_names(question: str, source: EvidenceSource) -> ParsedQuestion:
    has_key = _Keys(source)
    matches = find_matches(question, source)
    verbatim = list(matches)
    # ＣＰＵ / cpu: names compared folded, when no subject is found verbatim — a subject inside a
    # longer name found (时间 inside 成立时间 in ``CSA的成立时间``) is not one
    if not any("subject" in m.kinds for m in drop_nested(matches)):
        matches = sorted({*matches, *find_folded_matches(question, source)}, key=lambda m: (m.start, m.end))
    selection = select(matches, has_key)
    subjects, fields = _assign_roles(selection, has_key)
    parsed = ParsedQuestion(matches=selection, found=verbatim, found_in=question)
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


# -- the field of the linked subject, and unknown subjects ---------------------------------


def resolve_field(question: str, parsed: ParsedQuestion, source: EvidenceSource) -> ParsedQuestion:
    """:func:`_resolve`, then a short subject must stand apart (:func:`_short_subject_apart`),
    and a field followed by another field is a chain (:func:`_chained`)."""
    return _chained(question, _short_subject_apart(question, _resolve(question, parsed, source)), source)


def _chained(question: str, parsed: ParsedQuestion, source: EvidenceSource) -> ParsedQuestion:
    """``X丈夫的父亲``: the one slot's field is followed by a second one (rag_lab/retrieval/chain.py)."""
    if len(parsed.slots) != 1:
        return parsed
    slot = parsed.slots[0]
    match = parsed.field_matches.get(slot)
    if match is None:
        return parsed
    ends = [m.end for m in parsed.matches if m.name == slot[1] and "field" in m.kinds]
    found = parsed.found if parsed.found is not None and parsed.found_in == question else find_matches(question, source)
    spans = [(m.start, m.end, m.name) for m in found if "field" in m.kinds]
    aliases = [*source.user_aliases(), *field_matching.general_aliases()]
    chain = find_chain(question, slot, match, ends, spans, aliases, source)
    if chain is not None:
        parsed.field_steps.append({"chain": chain.as_dict()})
        parsed.slots, parsed.chain, parsed.field_matches = [], chain, {}
    return parsed


def _short_subject_apart(question: str, parsed: ParsedQuestion) -> ParsedQuestion:
    """``海棠`` inside ``多花秋海棠属于…``: the subject's place holds a name the corpus does not know."""
    if len(parsed.slots) != 1:
        return parsed
    subject, field_name = parsed.slots[0]
    mine = [m for m in parsed.matches if m.name == subject]
    known = {p for m in parsed.matches if m.name == field_name for p in (m.start, m.end)}
    if not mine:
        return parsed
    found = parsed.field_matches.get((subject, field_name))
    if found is not None:  # 怎么解释委屈 / 如何预防湿疹: the words that named the field are a name found too
        known |= {p for piece in found.asked.split("…") if len(piece) > 1 for w in _occurrences(question, piece) for p in w}
    numbered = [numbered_after(question, m.end) for m in mine]
    if all(numbered):  # 奔跑吧兄弟第一季: a season, edition or part of the subject is another name
        return _inside_unknown(parsed, question[mine[0].start : mine[0].end + len(numbered[0])])
    possessed = [possessed_after(question, m.end, known) for m in mine]
    if all(possessed) and squash(possessed[0][1:]) not in squash(field_name):
        # 人学的科学之路是由哪个出版社出版的: 科学之路 is a road of 科学, a name the corpus does not know
        return _inside_unknown(parsed, question[mine[0].start : mine[0].end + len(possessed[0])])
    if any(stands_apart(question, m.start, m.end, known) for m in mine):
        return _possessor_apart(question, parsed, mine)
    return _inside_unknown(parsed, enclosing_name(question, mine[0].start, mine[0].end, known))


def _inside_unknown(parsed: ParsedQuestion, name: str) -> ParsedQuestion:
    """The one slot's subject lies inside ``name``, which is where the subject belongs and not a subject."""
    subject, field_name = parsed.slots[0]
    parsed.field_steps.append({"subject": subject, "inside_unknown_name": name})
    parsed.slots, parsed.fields, parsed.problem, parsed.unknown_subject = [], [field_name], None, name
    parsed.field_matches = {}
    return parsed


def _possessor_apart(question: str, parsed: ParsedQuestion, mine: list[Match]) -> ParsedQuestion:
    """``日本国家男子足球队的最佳成绩``: the subject runs on into a longer possessor before ``的F``.

    Applies to a subject of at most ``SHORT_NAME`` code points (a longer one is usually
    followed by a verb or a kind word: ``龙泉镇建立的时间``, ``粉我吧公司的口号``) when every occurrence of it is followed, without a boundary, by more
    text up to a ``的`` that stands right before a field the question names; the possessor
    (the whole run) is then where the subject belongs, and it is not a subject — unless the
    run is part of the matched field's name (``梅江流域的面积`` asks 流域面积).
    """
    subject, field_name = parsed.slots[0]
    stops = {m.start for m in parsed.matches if "subject" in m.kinds and m.name != subject}
    field_starts = {m.start for m in parsed.matches if "field" in m.kinds and m.name != subject}
    if any(m.length > SHORT_NAME for m in mine):
        return parsed
    ends = [possessor_end(question, m.end, stops) for m in mine]
    def field_after(e: int) -> bool:
        """A field the question names begins after that 的, with only more name between (最佳 in
        …足球队的最佳成绩; never a particle or question phrasing: …使用的是什么武器)."""
        return any(
            f > e and not any(ch in BOUNDARY_CHARS or not ch.isalnum() for ch in question[e + 1 : f])
            and not any(max(s, e + 1) < min(t, f) for s, t in ordinary_spans(question))
            for f in field_starts
        )

    if any(e is None or not field_after(e) for e in ends):
        return parsed
    if squash(question[mine[0].end : ends[0]]) in squash(field_name):  # 梅江流域的面积: 流域面积
        return parsed
    return _inside_unknown(parsed, question[mine[0].start : ends[0]])


def _resolve(question: str, parsed: ParsedQuestion, source: EvidenceSource) -> ParsedQuestion:
    """Complete ``parsed`` by the field-matching contract (rag_lab/retrieval/fields.py).

    Runs when the question's one slot is not a key (the subject has no such field) or it
    names subjects and no field: each subject named (at most ``_MAX_LINKED``) has its own
    fields searched; one subject with a match is answered, two are ``ambiguous_subject``. A verbatim slot that is a
    key is recorded as ``verbatim``. A field with no subject, where the place of the
    subject holds a name the corpus does not know, is marked ``unknown_subject``.
    """
    slots_keyed = bool(parsed.slots) and all(source.has_key(s, f) for s, f in parsed.slots)
    if parsed.slots and (slots_keyed or len(parsed.slots) != 1):
        for s, f in parsed.slots:
            if source.has_key(s, f):
                parsed.field_matches[(s, f)] = field_matching.FieldMatch(f, f, field_matching.Method.VERBATIM, 1.0)
        return parsed
    if parsed.problem == "field_without_subject":
        name = _unknown_subject(question, parsed)
        if name is not None and "subject" not in source.name_kinds([name]).get(name, set()):
            parsed.unknown_subject, parsed.problem = name, None
        return parsed
    if not (parsed.slots or parsed.problem == "subject_without_field") or len(parsed.subjects) > _MAX_LINKED:
        return parsed
    from rag_lab.retrieval.embedding import relater_for, scorer_for

    scorer, note = scorer_for(source)
    relate = relater_for(source) if scorer is not None else None
    aliases = [*source.user_aliases(), *field_matching.general_aliases()]
    decided: list[tuple[str, field_matching.FieldDecision]] = []
    for subject in parsed.subjects:
        rest = list(question)
        for m in parsed.matches:
            if m.name == subject:
                rest[m.start : m.end] = ["\ufffc"] * m.length  # pieces never join across the subject
        own = [f for f in source.fields_of(subject) if f not in source.reserved_fields]
        named = [m.name for m in parsed.matches if m.name != subject and m.name not in own]
        asked_at = [(m.start, m.end) for m in parsed.matches if m.name in parsed.fields and m.name not in own]
        known = {p for m in parsed.matches if m.name != subject for p in (m.start, m.end)}
        whole = any(is_whole_word(question, m.start, m.end, known) for m in parsed.matches if m.name == subject)
        guess, guess_note = (scorer, note) if whole else (None, "the subject's name is not a word of its own here")
        # the shared-character step guesses from one character: whatever its length, the subject
        # may not run on, with no boundary, up to a 的 (东北大学 in 东北大学秦皇岛分校经贸学院的专业)
        stops = {m.start for m in parsed.matches if m.name != subject}
        apart = whole and any(possessor_end(question, m.end, stops) is None for m in parsed.matches if m.name == subject)
        common: dict[str, Any] = {
            "scorer_note": guess_note, "relate": relate if whole else None, "shared": apart,
            "values": functools.partial(_values_of, source, subject),
            "by_kind": apart and len(parsed.subjects) == 1 and _stands_first(question, parsed.matches, subject),
        }
        decision = field_matching.match_field("".join(rest), own, aliases, guess, named=named, asked_at=asked_at, **common)
        verbs = [m for m in parsed.matches if m.name in LIGHT_VERBS and m.name not in own and m.name != subject]
        if decision.match is None and not decision.candidates and verbs:
            # 什么时候开始实行 / 属于什么级别: the verb names no field of this subject; the other words may
            masked = list(rest)
            for m in verbs:
                masked[m.start : m.end] = ["\ufffc"] * m.length
            spans = {(m.start, m.end) for m in verbs}
            again = field_matching.match_field(
                "".join(masked), own, aliases, guess, named=[n for n in named if n not in LIGHT_VERBS],
                asked_at=[w for w in asked_at if w not in spans], **common,
            )
            why = {"method": "retry", "why": "an ordinary verb names no field here: the other words", "verbs": _unique([m.name for m in verbs])}
            again.steps[:0] = [*decision.steps, why]
            decision = again
        decided.append((subject, decision))
        parsed.field_steps.append({"subject": subject, "steps": decision.steps})
    matched = [(s, d.match) for s, d in decided if d.match is not None]
    unsure = [(s, d.candidates) for s, d in decided if d.candidates]
    if len(matched) == 1 and not unsure:
        subject, found = matched[0]
        key = (subject, found.field)
        parsed.slots, parsed.fields, parsed.problem, parsed.options = [key], [key[1]], None, []
        parsed.field_matches[key] = found
    elif len(matched) + len(unsure) > 1:  # two subjects each with a fitting field: never a guess
        parsed.slots, parsed.problem = [], "ambiguous_subject"
        parsed.options = [s for s, _ in matched] + [s for s, _ in unsure]
    elif unsure:
        parsed.slots, parsed.problem = [], "ambiguous_field"
        parsed.options = unsure[0][1][: field_matching.CANDIDATE_LIMIT]
    return parsed


def _stands_first(question: str, matches: list[Match], subject: str) -> bool:
    """Whether ``subject`` is where a question's subject usually stands: first, after openings
    (``请问``, ``你知道``) and question phrasing (``什么时候``) only. In ``上原由衣是什么时候第一次登场``
    the subject 第一次 comes after an unknown name: it is not."""
    first = min((m.start for m in matches if m.name == subject), default=-1)
    if first < 0:
        return False
    before = strip_lead_ins(question[:first])
    spans = ordinary_spans(before)
    return all(any(a <= i < b for a, b in spans) or not before[i].isalnum() for i in range(len(before)))


def _values_of(source: EvidenceSource, subject: str, field_name: str) -> list[str]:
    """The values of one key (the shared-character step checks their shape)."""
    return [str(u["value"]) for u in source.units_for_key(subject, field_name)]


def _unknown_subject(question: str, parsed: ParsedQuestion) -> str | None:
    """The text where the subject of the first field belongs (``X`` in ``X的郑码``), if any."""
    first = next((m for m in parsed.matches if m.name in parsed.fields), None)
    if first is None:
        return None
    text = question[: first.start]
    for mark in CLAUSE_MARKS:
        text = text.replace(mark, "\n")
    name = ""
    for clause in reversed(text.split("\n")):  # the field's clause, else the nearest clause before it
        before = clause.rstrip(" \u3000\t").removesuffix("的").rstrip(" \u3000\t")
        name = strip_lead_ins(before).rstrip(" \u3000\t》」』”）)】")
        if name:
            break
    if not name:  # 面积？（苍梧阁） / 时间，枫桥坊的。: the name in the clause right after the field
        after = question[first.end :]
        for mark in CLAUSE_MARKS:
            after = after.replace(mark, "\n")
        rest = after.split("\n")
        if len(rest) > 1 and not rest[0].strip():
            clause = rest[1].strip(" \u3000\t（()）《》「」『』【】").removesuffix("的")
            name = strip_lead_ins(clause).strip()
    if any(ch.isalnum() for ch in name):
        return name
    return None
