"""The support check of one prose unit: does this sentence (or table row) say what is asked?

:func:`support_check` is the one deterministic rule that decides whether a unit may answer a prose
question (docs/prose.md, "The support check"): content-term coverage by the sentence and its
context, then the answer type. Scores never enter it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from rag_lab.answering.align import ALIGNED_TYPES, ASIDE_RE, CUE_WORDS, WH_AT, aligned_span, at_gap
from rag_lab.answering.answer_types import (
    BACKWARD_RE,
    DATE_RANGE_RE,
    DYNASTY_RE,
    AnswerType,
    answer_type,
    counter,
    defined_term,
    defines,
    is_dynasty_question,
    measure,
    time_clauses,
    typed_values,
)
from rag_lab.answering.kinds import instances, kinds_asked
from rag_lab.answering.terms import (
    STRICT_RE,
    answer_heads,
    bigrams,
    content_terms,
    norm,
    split_by_context,
    term_grams,
)
from rag_lab.records import Unit

if TYPE_CHECKING:
    from rag_lab.answering.paraphrase import Paraphrases

#: share of the question's content bigrams found in the sentence + its title/headings/caption
COVERAGE_MIN = 0.8
#: share of the content bigrams *not* found in the title/headings that the sentence itself has
OWN_MIN = 0.6
#: partial coverage: terms of two or more characters the sentence itself must say for one lone
#: single-character piece to go unsaid (docs/prose.md, "Coverage")
PARTIAL_SAID = 2
#: graded coverage (docs/prose.md, "One piece unsaid"): other pieces the sentence must say whole for
#: one piece of two or more characters to go unsaid, and the largest share of the pieces' characters
#: that piece may hold
UNSAID_BESIDE = 2
UNSAID_SHARE = 1 / 3
#: a sentence answering an untyped question must say at least this many characters the question does not
NOVEL_MIN = 2
#: a restatement (docs/prose.md, "Restatement"): pieces of two or more characters beyond what the
#: context names that the sentence itself must say whole, for an untyped question without an
#: aligned span to pass
RESTATED_PIECES = 2
#: … and at least this many characters the question does not say (where the answer must stand)
RESTATED_NOVEL = 4
#: a part of the question named by the context (the subject) of at most this many characters that the
#: sentence says again counts as one of those pieces (docs/prose.md, "Restatement")
RESTATED_FRAME = 4


@dataclass(frozen=True)
class Support:
    """The outcome of :func:`support_check` for one unit."""

    ok: bool
    answer_type: AnswerType
    terms: tuple[str, ...]
    covered: tuple[str, ...]
    missing: tuple[str, ...]
    coverage: float
    own: float
    values: tuple[tuple[int, int, str], ...]  # typed values in the unit's text (offsets into text)
    problem: str | None  # None, "no_terms", "terms", "answer_type"
    at_gap: bool = False  # a value stands where the question's interrogative stands (ranks only)
    stand_in: bool = False  # the value is the aligned span standing in for a missing name/place pattern
    #: (question piece, what the sentence says instead, similarity) credited by answering/paraphrase.py
    paraphrased: tuple[tuple[str, str, float], ...] = ()
    #: an untyped question passed as a restatement: every question piece said whole, no aligned span
    restated: bool = False
    #: a question piece left unsaid by graded coverage (``UNSAID_BESIDE``, ``UNSAID_SHARE``)
    unsaid: tuple[str, ...] = ()

    def strength(self) -> tuple[bool, bool, float, float, bool, bool]:
        """How well the check says this unit supports an answer, best first when sorted descending:
        every term said (no paraphrase credited, no piece left unsaid), something standing at the question's
        gap (not a restatement), coverage, own share, a value at the gap, a value found by its
        type pattern rather than by alignment. Equal strengths are a tie the check cannot break
        (answering/prose.py refuses it when the texts say different things)."""
        return (not (self.paraphrased or self.unsaid), not self.restated, self.coverage, self.own, self.at_gap, not self.stand_in)

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "answer_type": str(self.answer_type),
            "terms": list(self.terms),
            "covered": list(self.covered),
            "missing": list(self.missing),
            "coverage": round(self.coverage, 4),
            "own": round(self.own, 4),
            "values": [v for _, _, v in self.values],
            "problem": self.problem,
            "at_gap": self.at_gap,
            "stand_in": self.stand_in,
            **({"restated": True} if self.restated else {}),
            **({"unsaid": list(self.unsaid)} if self.unsaid else {}),
            **({"paraphrased": [list(p) for p in self.paraphrased]} if self.paraphrased else {}),
        }


def unit_context(unit: Unit) -> str:
    """What besides the unit's own text may cover question terms: title, heading path, a
    table's caption and header."""
    parts = [str(unit.get("title") or ""), *map(str, unit.get("headings") or [])]
    parts += [str(unit.get("caption") or ""), *map(str, unit.get("header") or [])]
    return " ".join(p for p in parts if p)


def support_check(question: str, unit: Unit, paraphrases: Paraphrases | None = None) -> Support:
    """Does ``unit`` (a sentence or table row) say what ``question`` asks? Deterministic rule:

    1. the question has content terms (``content_terms``); none → fails (``no_terms``);
    2. every digit and Latin run of the question occurs in the sentence or its context;
    3. at least ``COVERAGE_MIN`` of the terms' character bigrams occur in the sentence or in
       its context (title, heading path, caption, table header), every term has at least half
       of its bigrams there, and at least ``OWN_MIN`` of the bigrams not in the context occur
       in the sentence itself (``terms``);
    4. the answer type is present (``answer_type``): for number/date/name/place questions the
       sentence holds a value of that type (answer_types.py) that the question does not
       already contain; for other questions the sentence says at least ``NOVEL_MIN``
       characters not covered by the question's bigrams.

    ``paraphrases`` (the ``[neural]`` model, answering/paraphrase.py): when the check fails only
    because **one** piece of the question is not said, and crediting that piece would make the
    whole check pass, the piece counts as said if the model finds a candidate of the sentence
    close enough (``Paraphrases.said_as``); the result records it in ``paraphrased``.
    """
    return _graded(question, unit, paraphrases, verdict_only=False)


def passes(question: str, unit: Unit) -> bool:
    """``support_check(question, unit).ok``, without describing a unit that fails on its terms
    (its typed values, aligned span and gap are not looked for): the conflict audit asks only
    this, of ≈ 50 candidates per question, most of which fail there."""
    return audit_support(question, unit) is not None


def audit_support(question: str, unit: Unit) -> Support | None:
    """``support_check(question, unit)`` when it passes, else None, made as :func:`passes` makes
    it: a passing unit's check is complete whichever way it is made (only a failing one is cut
    short), so the decision reuses the audit's (answering/prose.py, ``audit_supports``)."""
    framed = _framed(question, unit_context(unit))
    if not _may_pass(question, str(unit.get("text", "")), unit, framed):
        return None  # proved to fail (``_may_pass``): the check is not made
    support = _graded(question, unit, None, verdict_only=True)
    return support if support.ok else None


@functools.lru_cache(maxsize=256)
def _may_add(question: str) -> frozenset[str]:
    """Every bigram the sentence's cue words or asked kinds may add to what it says of the question
    (``_said``: ``said_by_cue``'s words inside the terms, the asked kinds among the terms that
    ``instances`` finds), whatever the sentence: an upper bound for ``_may_pass``."""
    asked = _asked(question)
    cued = [term_grams(w) for w in _cue_words_inside(asked.terms)]
    kinds = [term_grams(k) for k in asked.kinds if k in asked.terms]
    return frozenset().union(*cued, *kinds)


#: the verdicts of the term stage alone (``_check``'s ``terms_only``), of which ``_may_pass`` reads only ``ok``
_TERMS_PASS = Support(True, AnswerType.NONE, (), (), (), 1.0, 1.0, (), None)
_TERMS_FAIL = Support(False, AnswerType.NONE, (), (), (), 0.0, 0.0, (), "terms")


def _may_pass(question: str, text: str, unit: Unit, framed: _Framed) -> bool:
    """False only if ``audit_support(question, unit)`` is None (docs/prose.md, "The audit's
    pre-filter"): the check's term stage (``_check``, ``terms_only``) made with an upper bound of
    what the sentence says instead of ``_said`` — every bigram of the question's parts the text
    holds (a part's bigram is inside a word run, so ``in`` finds exactly the text's ``bigrams``
    among them) and every one a cue word or asked kind may add (``_may_add``) — first plain, then
    with each piece ``_graded`` could leave unsaid credited. Every test of that stage only grows
    with what the sentence says of the parts' bigrams (coverage, own share, covered parts, the
    partial-coverage exception, mentions, the unsaid piece's others said whole) or does not
    depend on it (strict runs, the kind words, the counts), so a unit the full check passes
    passes the bound; a unit failing the bound fails the check, without its ``_said``, typed
    values or aligned span."""
    grams = framed.grams
    if not grams:
        return False  # no_terms
    text_n = norm(text)
    asked = _asked(question)
    said = frozenset([g for g in grams if g in text_n]) | (grams & _may_add(question))
    heads = any(h in text_n for h in asked.heads_n) or bool(said_by_cue(list(asked.heads), text_n))
    bound = _Said(text_n, said, said, (), heads)
    if _check(question, unit, frozenset(), True, framed, bound, terms_only=True).ok:
        return True
    return any(
        _check(question, unit, frozenset(term_grams(piece)), True, framed, bound, terms_only=True).ok
        for piece in framed.pieces
        if len(piece) >= 2 and piece not in asked.kind_words and _may_go_unsaid(piece, framed, bound)
    )


class _Asked(NamedTuple):
    """What the support check reads of the question alone, made once per question (``_asked``)
    rather than once per candidate sentence (≈ 50 of them per prose request)."""

    kind: AnswerType
    word: str | None
    terms: tuple[str, ...]
    question_n: str
    heads: tuple[str, ...]
    heads_n: tuple[str, ...]
    kinds: tuple[str, ...]  # kinds_asked(terms, heads)
    strict: tuple[str, ...]  # STRICT_RE runs of the terms
    date_ranges: tuple[str, ...]  # DATE_RANGE_RE matches of the normalised question
    kind_words: tuple[str, ...]  # _kind_words(question_n)
    question_grams: frozenset[str]
    slot: bool  # WH_AT finds the question's gap


@functools.lru_cache(maxsize=256)
def _asked(question: str) -> _Asked:
    kind, word = answer_type(question)
    terms = content_terms(question)
    question_n = norm(question)
    heads = answer_heads(question)
    return _Asked(
        kind,
        word,
        tuple(terms),
        question_n,
        tuple(heads),
        tuple(norm(h) for h in heads),
        tuple(kinds_asked(terms, heads)),
        tuple(s for t in terms for s in STRICT_RE.findall(t)),
        tuple(r.group() for r in DATE_RANGE_RE.finditer(question_n)),
        tuple(_kind_words(question_n)),
        frozenset(bigrams(question_n)),
        WH_AT.search(question_n) is not None,
    )


class _Framed(NamedTuple):
    """What the support check reads of the question under one context (title, headings…),
    made once per (question, context) (``_framed``): the sentences of one file share it."""

    context: str  # normalised
    named: tuple[str, ...]  # the parts of the terms the context says (split_by_context)
    pieces: tuple[str, ...]  # … and the pieces between them, which the sentence must say
    parts: tuple[tuple[str, frozenset[str]], ...]  # named + pieces, each with its term_grams
    grams: frozenset[str]  # every bigram of the parts
    in_context: frozenset[str]  # … that the context says
    rest: frozenset[str]  # … that it does not


@functools.lru_cache(maxsize=1024)
def _framed(question: str, context: str) -> _Framed:
    terms = list(_asked(question).terms)
    context_n = norm(context)
    named, pieces = split_by_context(terms, context_n)
    parts = tuple((t, frozenset(term_grams(t))) for t in named + pieces)
    grams = frozenset().union(*(g for _, g in parts)) if terms else frozenset()
    # a part's bigram (or lone character) is made of word characters, so the context says it as one
    # of its ``bigrams`` exactly when it holds it: tested on the few parts' bigrams, not all of its own
    in_context = frozenset([g for g in grams if g in context_n])
    return _Framed(context_n, tuple(named), tuple(pieces), parts, grams, in_context, grams - in_context)


class _Said(NamedTuple):
    """What one sentence says of the question's words, made once per (question, sentence text)
    (``_said``) and shared by ``_check`` (the plain and the credited check) and ``_may_go_unsaid``."""

    text_n: str  # the text normalised
    said: frozenset[str]  # its bigrams and those of the question's cue words it says (said_by_cue)
    own: frozenset[str]  # … and those of the asked kinds among the terms it names by an instance
    kinds_found: tuple[tuple[str, tuple[tuple[int, int, str], ...]], ...]  # kind → its instances
    heads_said: bool  # it says an answer head, itself or by a cue


@functools.lru_cache(maxsize=1024)
def _said(question: str, text: str) -> _Said:
    asked = _asked(question)
    terms = list(asked.terms)
    text_n = norm(text)
    said = bigrams(text_n)
    cued = said_by_cue(terms, text_n)
    said |= set().union(*(term_grams(w) for w in cued)) if cued else set()
    # kinds answered by an instance (answering/kinds.py): 职业 said by 漫画家, 什么季节 by 秋季
    # … only where the sentence does not name the kind itself (辞去省长职务 names it: the span decides)
    kinds_found = tuple(
        (k, tuple(found)) for k in asked.kinds if k not in text_n and (found := instances(k, text))
    )
    own = said | set().union(*(term_grams(k) for k, _ in kinds_found if k in terms), set())
    heads_said = any(h in text_n for h in asked.heads_n) or bool(said_by_cue(list(asked.heads), text_n))
    return _Said(text_n, frozenset(said), frozenset(own), kinds_found, heads_said)


def _graded(question: str, unit: Unit, paraphrases: Paraphrases | None, verdict_only: bool) -> Support:
    """``support_check``'s body: the plain check, then one piece unsaid, then the paraphrase test.
    A credited check only decides (its ``ok``): a failing one is never returned, so it is made
    as ``verdict_only``, once."""
    text = str(unit.get("text", ""))
    framed, said = _framed(question, unit_context(unit)), _said(question, text)
    plain = _check(question, unit, frozenset(), verdict_only, framed, said)
    if plain.ok or plain.problem != "terms" or len(plain.missing) != 1:
        return plain
    piece = plain.missing[0]
    if len(piece) < 2 or piece in _asked(question).kind_words:
        return plain
    credited: Support | None = None
    if _may_go_unsaid(piece, framed, said):
        credited = _check(question, unit, frozenset(term_grams(piece)), True, framed, said)
        if credited.ok:
            return replace(credited, unsaid=(piece,))
    if paraphrases is None:
        return plain
    if credited is None:
        credited = _check(question, unit, frozenset(term_grams(piece)), True, framed, said)
    if not credited.ok:
        return plain
    found = paraphrases.said_as(piece, text)
    if found is None:
        return plain
    return replace(credited, paraphrased=((piece, found[0], round(found[1], 4)),))


def _may_go_unsaid(piece: str, framed: _Framed, said: _Said) -> bool:
    """Graded coverage (docs/prose.md, "One piece unsaid"): the one unsaid ``piece`` may go unsaid
    when every other piece of the question beyond the context is said whole by the sentence (all its
    bigrams, cue words counted), at least ``UNSAID_BESIDE`` of them of two or more characters, and
    ``piece`` holds at most ``UNSAID_SHARE`` of the pieces' characters."""
    pieces = framed.pieces
    others = [p for p in pieces if p != piece]
    total = sum(len(p) for p in pieces)
    if len([p for p in others if len(p) >= 2]) < UNSAID_BESIDE or len(piece) > total * UNSAID_SHARE:
        return False  # the counts first: they need no bigram of the sentence
    return all(term_grams(p) <= said.said for p in others)


def _check(
    question: str,
    unit: Unit,
    credited: frozenset[str],
    verdict_only: bool = False,
    framed: _Framed | None = None,
    said: _Said | None = None,
    terms_only: bool = False,
) -> Support:
    """``support_check`` without the paraphrase test; ``credited``: bigrams counted as said by the
    sentence (those of a piece the paraphrase test may credit); ``verdict_only``: see :func:`passes`.
    ``framed``, ``said``: the unit's ``_framed`` and ``_said`` records (made here when not given);
    ``terms_only``: stop after the term stage, ok when it passes (``_may_pass``: keep every test of
    that stage monotone in ``said``'s bigrams of the parts, or independent of them)."""
    asked = _asked(question)  # the question's own analysis, once per question
    kind, word, question_n = asked.kind, asked.word, asked.question_n
    terms, heads = list(asked.terms), list(asked.heads)
    text = str(unit.get("text", ""))
    framed = framed if framed is not None else _framed(question, unit_context(unit))
    said = said if said is not None else _said(question, text)
    text_n, context = said.text_n, framed.context
    own_grams = said.own | credited if credited else said.own
    kinds_found = dict(said.kinds_found)
    named, pieces = list(framed.named), list(framed.pieces)
    grams, in_context, rest = framed.grams, framed.in_context, framed.rest
    hit = (grams & own_grams) | in_context
    coverage = len(hit) / len(grams) if grams else 0.0
    own = len(rest & own_grams) / len(rest) if rest else 1.0
    covered = tuple(t for t, g in framed.parts if len(g & hit) * 2 >= len(g))
    missing = tuple(t for t in pieces if t not in covered)
    # partial coverage: one lone character may be unsaid beside two longer terms the sentence says
    own_said = [t for t, g in framed.parts if t in covered and len(t) >= 2 and g & own_grams]
    if len(missing) == 1 and len(missing[0]) == 1 and len(own_said) >= PARTIAL_SAID:
        missing = ()
    haystack = text_n + " " + context
    strict_ok = all(s in haystack for s in asked.strict)
    # a date range of the question (1996年2月至4月) is one value: its dates in another order say another time
    strict_ok = strict_ok and all(r in haystack for r in asked.date_ranges)
    kinds = list(asked.kind_words)
    if not pieces and kinds and not any(k in text_n or k in said_by_cue([k], text_n) for k in kinds):
        missing = tuple(kinds)  # only the subject and the kind asked (王爱爱有什么美誉): name the kind
    # the sentence itself must say something the question asks about, not only the title
    mentions = bool(grams & own_grams) or said.heads_said
    failed = None if grams else "no_terms"
    if grams and (not strict_ok or missing or coverage < COVERAGE_MIN or own < OWN_MIN or not mentions):
        failed = "terms"
    if terms_only:  # the term stage alone (``_may_pass``): only its verdict is read
        return _TERMS_FAIL if failed is not None else _TERMS_PASS
    if failed is not None and verdict_only:  # the typed values only describe a unit that fails
        return Support(False, kind, tuple(terms), covered, missing, coverage, own, (), failed)
    own_hit = set(grams & own_grams)
    values = _typed(question, kind, word, text, own_hit)
    stand_in = not values and kind in ALIGNED_TYPES
    spans = tuple(aligned_span(question, text)) if stand_in or kind == AnswerType.NONE else None
    if stand_in:  # no name/place pattern: the span where the question's gap is
        values = tuple(v for v in spans or () if not any(c.isdigit() for c in v[2]))
    if stand_in and not values and kind == AnswerType.NAME:  # 谁: the title, when it is the sentence's subject
        values = _title_subject(question_n, unit, text)
    edge = at_gap(question, text, values, spans)

    def result(ok: bool, problem: str | None, restated: bool = False) -> Support:
        return Support(
            ok, kind, tuple(terms), covered, missing, coverage, own, values, problem, edge, stand_in and bool(values),
            restated=restated,
        )  # fmt: skip

    if failed is not None:
        return result(False, failed)
    if kind == AnswerType.DEFINITION:
        term = defined_term(question)
        opens = (
            unit.get("span") is None
            or unit.get("parent_span") is None
            or unit["span"][0] == unit["parent_span"][0]
        )
        values = tuple(defines(term, text, opens)) if term else ()
        return result(bool(values), None if values else "answer_type")
    if kind == AnswerType.REASON and not values and (told := _outcome_told(pieces, rest, own_grams, text, asked)):
        values = told  # 为何无缘国奥队 — 再次撕裂了十字韧带，被迫又休养一年，不但无缘国奥队…: what comes first
        return Support(True, kind, tuple(terms), covered, missing, coverage, own, values, None, edge, False, restated=True)
    if kind != AnswerType.NONE:
        return result(bool(values), None if values else "answer_type")
    question_grams = asked.question_grams
    novel = sum(
        1
        for i, ch in enumerate(text_n)
        if ch.isalnum()
        and text_n[i : i + 2] not in question_grams
        and (i == 0 or text_n[i - 1 : i + 1] not in question_grams)
    )
    slot = asked.slot
    aligned = [v for _, _, v in spans or ()]
    announced = bool(aligned) and all(_announces(v, heads + _kind_words(question_n)) for v in aligned)
    if announced:
        aligned = []  # 浮龙具有数个独有特征 announces the features, the next sentences give them
    if slot and not aligned and kinds_found:  # no aligned span: an instance of the asked kind (秋季开花)
        values = _local(tuple(v for found in kinds_found.values() for v in found), text, own_hit)
        aligned = [v for _, _, v in values]
    ok_ = novel >= NOVEL_MIN and (not slot or bool(aligned))
    if not ok_ and not slot and _YES_NO_RE.search(question_n) and rest <= own_grams:
        # a yes/no question (丙烯颜料溶于汽油吗) is answered by the sentence that says it (溶于汽油): every
        # bigram beyond the context said by the sentence itself, nothing new needed
        ok_ = all(term_grams(p) <= own_grams for p in pieces) and bool(pieces)
    restated = not ok_ and slot and not announced and novel >= RESTATED_NOVEL
    if restated and _restates(pieces + _restated_frame(named, pieces, own_grams), rest, own_grams):
        return result(True, None, restated=True)
    return result(ok_, None if ok_ else "answer_type")


#: a reason told before its outcome (docs/prose.md, "Twelfth-pass rules"): Han characters the question does
#: not say that the sentence must say before the outcome it restates
TOLD_BEFORE = 12


def _outcome_told(
    pieces: list[str], rest: AbstractSet[str], own_grams: AbstractSet[str], text: str, asked: _Asked
) -> tuple[tuple[int, int, str], ...]:
    """A reason question without a cause word, answered by a sentence that restates what the question
    asks about (every bigram beyond the context said by the sentence itself, a piece of two or more
    characters said whole) after saying at least ``TOLD_BEFORE`` Han characters the question does not before
    the first piece it restates: the
    events told before the outcome (``…再次撕裂了十字韧带，被迫又休养一年，不但无缘中国国奥队…``). The value
    is the text before the outcome; () when the sentence opens with the outcome or does not restate it."""
    whole = [p for p in pieces if len(p) >= 2 and term_grams(p) <= own_grams]
    if not whole or not rest <= own_grams:
        return ()
    text_n = norm(text)
    if len(text_n) != len(text):
        return ()
    if BACKWARD_RE.match(text_n.lstrip()):
        return ()  # 因此，… points back: the reason was said before (answering/prose.py joins the two)
    at = min(text_n.find(p) for p in whole)  # the outcome restated: the first whole piece said
    if at <= 0:
        return ()
    before = text_n[:at]
    grams = asked.question_grams
    told = sum(
        1
        for i, ch in enumerate(before)
        if "\u4e00" <= ch <= "\u9fff" and before[i : i + 2] not in grams and before[max(0, i - 1) : i + 1] not in grams
    )
    return ((0, at, text[:at]),) if told >= TOLD_BEFORE else ()


#: a yes/no question: it ends with 吗 (no other question word: those set ``slot``)
_YES_NO_RE = re.compile(r"吗\W*$")


def _restates(pieces: list[str], rest: AbstractSet[str], own_grams: AbstractSet[str]) -> bool:
    """Does the sentence restate the question (docs/prose.md, "Restatement")? Every bigram of the
    question not named by the context is said by the sentence itself, and at least
    ``RESTATED_PIECES`` pieces of two or more characters beyond the context are said whole."""
    whole = [p for p in pieces if len(p) >= 2 and term_grams(p) <= own_grams]
    return rest <= own_grams and len(whole) >= RESTATED_PIECES


def _restated_frame(named: list[str], pieces: list[str], own_grams: AbstractSet[str]) -> list[str]:
    """The subject the sentence restates beside a time frame (docs/prose.md, "Restatement"): when a piece
    of the question is a time (``在1982年，兰比尔发生了什么事情``, ``民国二年南田县…``) that the sentence says
    whole, the parts named by the context of at most ``RESTATED_FRAME`` characters (兰比尔 under the
    title 比尔·兰比尔) that the sentence itself also says whole count as restated pieces."""
    framed = any(_FRAME_RE.search(p) and term_grams(p) <= own_grams for p in pieces)
    return [p for p in named if 2 <= len(p) <= RESTATED_FRAME and term_grams(p) <= own_grams] if framed else []


#: a time frame of a question: a year, month or day, with digits or Chinese numerals (1982年, 民国二年)
_FRAME_RE = re.compile(r"[\d零〇一二两三四五六七八九十百]+[年月日]")


def said_by_cue(terms: list[str], text_n: str) -> list[str]:
    """The ``CUE_WORDS`` inside the question's terms that the sentence says by one of their cues
    (the longest word first where two overlap); their bigrams count as said by the sentence."""
    found: list[str] = []
    for word in _cue_words_inside(tuple(terms)):
        if not any(word in w for w in found) and any(cue in text_n for cue in CUE_WORDS[word]):
            found.append(word)
    return found


@functools.lru_cache(maxsize=256)
def _cue_words_inside(terms: tuple[str, ...]) -> tuple[str, ...]:
    """The ``CUE_WORDS`` inside one of ``terms``, longest first (``said_by_cue``'s order)."""
    return tuple(word for word in sorted(CUE_WORDS, key=len, reverse=True) if any(word in term for term in terms))


#: nouns that name the kind of answer; a question made only of its subject and one of these
#: (王爱爱有什么美誉, X有哪些特征) needs a sentence that names the kind itself
KIND_WORDS = (
    "原因", "定义", "特征", "特点", "作用", "意义", "寓意", "目的", "影响", "用途", "功能", "成就", "贡献",
    "美誉", "称号", "荣誉", "别名", "名字", "名称",
)  # fmt: skip
#: a typed value's clause may lean on a neighbouring clause's terms when it holds at most this
#: many word characters besides the value and bracketed asides (于1974年，…; 2011年1月1日，受聘为…)
LOCAL_SLACK = 6
#: clause boundaries for value locality (a list's 、 does not end a clause)
_LOCAL_CLAUSE = re.compile(r"[，,；;：:。！？!?]")


#: vague quantities: a span holding one and ending with the kind asked only announces it
VAGUE = ("数个", "一些", "多种", "许多", "很多", "以下", "如下", "几个", "若干", "不少", "多项", "诸多", "各种")


def _announces(span: str, kinds: list[str]) -> bool:
    """Does the aligned span only announce the answer (``具有数个独有特征``, ``有以下几种``):
    a vague quantity (``VAGUE``) and then the kind the question asks, or a closing colon?"""
    n = norm(span).rstrip()
    if n.endswith(("：", ":", "如下")):
        return True
    return any(v in n for v in VAGUE) and any(n.endswith(k) for k in kinds if k)


def _kind_words(question_n: str) -> list[str]:
    return [w for w in KIND_WORDS if w in question_n]


def _typed(
    question: str, kind: AnswerType, word: str | None, text: str, own_hit: set[str]
) -> tuple[tuple[int, int, str], ...]:
    """The typed values of ``text`` that may answer ``question``: not already in the question; a
    dynasty for 哪个朝代; a number with a unit of the asked measure (多长 → a length) or the asked
    classifier (多少个 → 个, ``answer_types.counter``); a name
    sharing no bigram with the question (首位副馆长 → not 首位代理); and each in a clause that, or
    whose neighbour, says a question term itself (``own_hit``), when the sentence says any."""
    question_n = norm(question)
    if kind == AnswerType.DATE and is_dynasty_question(word):
        found = [(m.start(), m.end(), m.group()) for m in DYNASTY_RE.finditer(text)]
    else:
        found = typed_values(kind, text, measure(question) if kind == AnswerType.NUMBER else None)
    if kind == AnswerType.NUMBER and (classifiers := counter(question)):  # 多少个 → 1800个, not 三小时
        found = [v for v in found if v[2].rstrip()[-1:] in classifiers]
    question_pairs = {g for g in bigrams(question_n) if len(g) == 2}
    if kind == AnswerType.DATE and not found:  # 在春季化雪的时候 answers 什么时候 (docs/prose.md, "Time clauses")
        found = _time_clauses(word, text, question_pairs)
    values = [
        v
        for v in found
        if norm(v[2]) not in question_n
        and not (kind == AnswerType.NAME and {g for g in bigrams(norm(v[2])) if len(g) == 2} & question_pairs)
    ]
    if kind == AnswerType.REASON:  # a cause word links clauses
        return tuple(values)
    return _local(tuple(values), text, own_hit)


#: a disambiguator after a title (占士邦 (角色人物), 杨昊 (足球运动员)): not part of the name
_TITLE_NOTE = re.compile(r"\s*[（(][^）)]*[）)]\s*$")


def document_name(unit: Unit) -> str:
    """The unit's document title without a disambiguator or title marks (占士邦 (角色人物) → 占士邦)."""
    return _TITLE_NOTE.sub("", str(unit.get("title") or "")).strip("《》 ")


def _title_subject(question_n: str, unit: Unit, text: str) -> tuple[tuple[int, int, str], ...]:
    """The document title as the value of a 谁 question when the sentence opens with it (its
    subject: ``阿若憍陈如听佛说法后，…成为…第一位阿罗汉``) and the question does not name it."""
    title = document_name(unit)
    start = len(text) - len(text.lstrip("《“\"「 "))
    title_n = norm(title)
    if len(title) < 2 or title_n in question_n or not norm(text[start:]).startswith(title_n):
        return ()
    end = _normal_prefix_end(text, start, title_n)
    return () if end is None else ((start, end, text[start:end]),)


def _normal_prefix_end(text: str, start: int, target_n: str) -> int | None:
    """The end of the raw piece of ``text`` from ``start`` whose normal form is ``target_n``: the
    sentence may spell the title differently (ﬁ for fi, full-width letters), so its length in the
    sentence is not the title's."""
    for end in range(start + 1, len(text) + 1):
        piece = norm(text[start:end])
        if piece == target_n:
            return end
        if len(piece) > len(target_n):
            return None
    return None


def _time_clauses(word: str | None, text: str, question_pairs: set[str]) -> list[tuple[int, int, str]]:
    """The time clauses (``answer_types.time_clauses``) of ``text`` that say a bigram the question
    does not between its opening 在/当 and its closing 时 (在关闭时 only repeats 什么时候关闭)."""
    inner = [(v, _TIME_FRAME.sub("", norm(v[2]))) for v in time_clauses(word, text)]
    return [v for v, core in inner if {g for g in bigrams(core) if len(g) == 2} - question_pairs]


_TIME_FRAME = re.compile(r"^(?:在|当)|(?:的时候|之时|时|之后|以后|之前|以前|后|前)$")


def _local(
    values: tuple[tuple[int, int, str], ...], text: str, own_hit: set[str]
) -> tuple[tuple[int, int, str], ...]:
    """The ``values`` standing in a clause that, or whose neighbour, says a question term itself
    (``own_hit``), when the sentence says any (docs/prose.md, "locality")."""
    if not own_hit or len(text) != len(norm(text)):
        return values
    t = norm(text)
    cuts = [0, *(m.end() for m in _LOCAL_CLAUSE.finditer(t)), len(t) + 1]
    clauses = [(cuts[i], cuts[i + 1]) for i in range(len(cuts) - 1)]
    saying = [any(g in t[a:b] for g in own_hit) for a, b in clauses]

    def local(v: tuple[int, int, str]) -> bool:
        at = next(i for i, (a, b) in enumerate(clauses) if a <= v[0] < b)
        a, b = clauses[at]
        # a neighbour's terms count only for a clause that is little more than the value (1974年，他…)
        bare = re.sub(r"\W", "", ASIDE_RE.sub("", t[a:b]))
        short = len(bare) - len(re.sub(r"\W", "", ASIDE_RE.sub("", norm(v[2])))) <= LOCAL_SLACK
        return saying[at] or (short and any(saying[j] for j in (at - 1, at + 1) if 0 <= j < len(saying)))

    return tuple(v for v in values if local(v))
