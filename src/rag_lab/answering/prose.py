"""Answering a prose question from sentence (and table-row) units: extract, never compose.

A *prose question* is one that names no (subject, field) key. Its answer is the verbatim text
of one retrieved sentence, and only when :func:`support_check` passes for it. Relevance
scores only order the candidates; the check alone decides (docs/prose.md).

:func:`decide_prose` takes candidate units in rank order (the packed context, then the other
retrieved ones), all already verified against their files by the caller, and returns a
:class:`ProseDecision`:

1. units outside their validity window on ``as_of`` are dropped (listed in the decision);
2. every remaining sentence/table-row unit is checked (with the neural paraphrase credit when
   ``paraphrases`` is given; a reason question's sentence opening with 因此… checked together with
   the sentence before it, ``_with_previous``); none passes → ``insufficient_evidence``,
   saying what the best candidate lacks (terms it does not mention, or the asked type);
3. a passing unit exists only outside the packed context → ``excluded_by_budget``;
4. passing units are grouped by source bytes (sha256): copies of the same bytes are one
   independent source. For a typed question (number, date, name, place) two independent
   sources whose typed values share nothing → ``conflicting_evidence``, citing every side;
5. a typed answer and an audited unit (``audit``: the bounded conflict audit past the top k,
   retrieval/prose_audit.py) from other bytes passing with values that share nothing with the
   answer's → ``conflicting_evidence``;
6. the best-supported passing sentence of the context (``Support.strength``: coverage, own
   share, a value at the gap, a value by its type pattern) ties with another passing sentence of
   the context that says something else (typed: no agreeing value; untyped: another text) →
   ``insufficient_evidence``: only the relevance rank could choose, and scores never decide;
7. otherwise ``answered`` with that sentence, citing every passing unit that agrees with it
   (rank orders only sentences that say the same).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

from rag_lab.answering.align import aligned_span
from rag_lab.answering.answer_types import BACKWARD_RE, DESCRIPTION, AnswerType
from rag_lab.answering.paraphrase import Paraphrases
from rag_lab.answering.support import Support, document_name, support_check, unit_context
from rag_lab.answering.terms import answer_heads, content_terms, norm
from rag_lab.records import Reason, Status, Unit

__all__ = [
    "PROSE_KINDS",
    "ProseDecision",
    "Support",
    "aligned_span",
    "answer_heads",
    "content_terms",
    "decide_prose",
    "support_check",
    "unit_context",
]

PROSE_KINDS = ("sentence", "table_row")


@dataclass
class ProseDecision:
    status: Status
    reason: Reason | None
    message: str
    answer: str | None = None
    cited: list[Unit] = field(default_factory=list)
    sides: list[dict[str, Any]] = field(default_factory=list)
    answer_span: dict[str, Any] | None = None
    independent: int = 0
    checks: list[dict[str, Any]] = field(default_factory=list)
    out_of_window: list[str] = field(default_factory=list)


def _in_window(unit: Unit, as_of: date) -> bool:
    day = as_of.isoformat()
    return bool(unit.get("valid_from", day) <= day < unit.get("valid_to", "9999-12-31"))


def _value_set(support: Support) -> frozenset[str]:
    return frozenset(norm(v) for _, _, v in support.values)


def _agree(a: frozenset[str], b: frozenset[str]) -> bool:
    """Two value sets agree when a value of one holds, or is held by, a value of the other
    (2007年 and 2007年5月21日 say the same year)."""
    return any(x in y or y in x for x in a for y in b)


def decide_prose(
    question: str,
    kept: list[Unit],
    others: list[Unit],
    as_of: date,
    audit: list[Unit] | None = None,
    paraphrases: Paraphrases | None = None,
    previous: Callable[[Unit], Unit | None] | None = None,
    about: Callable[[str], list[Unit]] | None = None,
    audit_supports: Sequence[Support] | None = None,
) -> ProseDecision | None:
    """The decision on a prose question (module docstring); None when no candidate is prose.

    ``paraphrases``: the neural paraphrase test (answering/paraphrase.py) for the retrieved
    candidates' support checks; the audit's checks stay lexical (it bounds the cost).
    ``previous``: the sentence right before a unit in its paragraph (verified by the caller), for
    a reason whose consequence opens the next sentence (``joined``).

    ``about``: the units a few words are most about (retrieval/prose_audit.py ``units_about``),
    verified by the caller: where a passing sentence was credited a piece it does not say, the
    titles of the documents about that piece (docs/prose.md, "A named document").

    ``audit``: further prose units (the conflict audit, retrieval/prose_audit.py), verified by
    the caller; they never answer, but one that passes the check with values disjoint from the
    answer's, from other bytes, makes the decision ``conflicting_evidence``. ``audit_supports``:
    ``support_check(question, u)`` of each unit of ``audit``, in its order, already made (by the
    audit, ``support.audit_support``), so it is not made again."""
    ranked = [(u, True) for u in kept] + [(u, False) for u in others]
    prose = [(u, in_ctx) for u, in_ctx in ranked if u.get("kind") in PROSE_KINDS]
    if not prose:
        return None
    decision = ProseDecision(Status.REFUSED, Reason.INSUFFICIENT_EVIDENCE, "")
    current = []
    for unit, in_ctx in prose:
        if _in_window(unit, as_of):
            current.append((unit, in_ctx))
        else:
            decision.out_of_window.append(str(unit["evidence_id"]))
    checked = [(u, in_ctx, support_check(question, u, paraphrases)) for u, in_ctx in current]
    if previous is not None:
        checked = [_with_previous(question, u, c, s, previous, paraphrases) for u, c, s in checked]
    seen = {u["evidence_id"] for u, _c in prose}
    audit = audit or []
    made: Sequence[Support | None] = [None] * len(audit) if audit_supports is None else audit_supports
    audited = [
        (u, support_check(question, u) if s is None else s)
        for u, s in zip(audit, made, strict=True)
        if u.get("kind") in PROSE_KINDS and u["evidence_id"] not in seen and _in_window(u, as_of)
    ]
    # a question naming a candidate document's title asks about that document's subject
    pool = [u for u, _c, _s in checked] + [u for u, _s in audited]
    if about is not None:  # the documents about a piece some passing sentence was credited
        credited = {p for _u, _c, s in checked for p in _credited(s)} | {p for _u, s in audited for p in _credited(s)}
        pool += [u for words in _phrases(question, credited) for u in about(words)]
    named = _named_titles(question, pool)
    checked = [(u, c, _about_named(s, u, named)) for u, c, s in checked]
    audited = [(u, _about_named(s, u, named)) for u, s in audited]
    decision.checks = [
        {
            "evidence_id": u["evidence_id"],
            "in_context": c,
            **s.as_dict(),
            **({"joined": [p["evidence_id"] for p in u[JOINED]]} if JOINED in u else {}),
        }
        for u, c, s in checked
    ]
    passing = [(u, c, s) for u, c, s in checked if s.ok]
    decision.checks += [
        {"evidence_id": u["evidence_id"], "in_context": False, "audit": True, **s.as_dict()}
        for u, s in audited
    ]
    if not passing:
        decision.message = _what_is_missing(question, [s for _, _, s in checked])
        return decision
    in_context = [(u, s) for u, c, s in passing if c]
    if not in_context:
        decision.reason = Reason.EXCLUDED_BY_BUDGET
        decision.message = "A retrieved passage supports an answer but did not fit the context budget."
        return decision
    # the best-supported passing sentence of the context; rank only breaks ties
    best_unit, best = min(
        enumerate(in_context),
        key=lambda item: (tuple(-float(x) for x in item[1][1].strength()), item[0]),
    )[1]
    by_source: dict[str, list[Support]] = {}
    for unit, _c, support in passing:
        by_source.setdefault(str(unit["sha256"]), []).append(support)
    decision.independent = len(by_source)
    typed = best.answer_type != AnswerType.NONE
    # a source agrees when any of its passing sentences gives a value of the answer (one text may
    # name several values of a type; only a source saying none of the answer's disagrees)
    agree = {
        sha
        for sha, supports in by_source.items()
        if not typed or any(_agree(_value_set(s), _value_set(best)) for s in supports)
    }
    # audited sentences from other bytes that pass the check and share no value with the answer
    disagreeing: list[tuple[Unit, bool, Support]] = []
    for unit, support in audited:
        sha = str(unit["sha256"])
        other = typed and support.ok and sha not in by_source and not _agree(_value_set(support), _value_set(best))
        if other and all(str(u["sha256"]) != sha for u, _c, _s in disagreeing):  # one per source (reprints)
            disagreeing.append((unit, False, support))
    if typed and (len(agree) < len(by_source) or disagreeing):
        decision.reason = Reason.CONFLICTING_EVIDENCE
        sides: dict[frozenset[str], list[Unit]] = {}
        for unit, _c, support in passing + disagreeing:
            sides.setdefault(_value_set(support), []).append(unit)
        decision.sides = [
            {
                "value": "、".join(sorted(values)),  # as key sides have it (render, server)
                "values": sorted(values),
                "evidence_ids": [u["evidence_id"] for u in units],
                "text": units[0]["text"],
            }
            for values, units in sorted(sides.items(), key=lambda item: sorted(item[0]))
        ]
        decision.cited = [
            part
            for _v, units in sorted(sides.items(), key=lambda i: sorted(i[0]))
            for u in units
            for part in u.get(JOINED, [u])
        ]
        decision.message = (
            f"Independent sources give different values ({DESCRIPTION[best.answer_type]}): "
            + " / ".join("、".join(s["values"]) for s in decision.sides)
            + "; no source is preferred."
        )
        return decision
    tied = _tied(best_unit, best, in_context)
    if tied is not None:  # rank alone would choose between them: scores never decide
        decision.message = (
            f"Two passages pass the support check equally well and say different things "
            f"({_clip(best_unit['text'])} / {_clip(tied['text'])}); no answer is preferred by the evidence, "
            "ask more specifically."
        )
        level = (best_unit["evidence_id"], tied["evidence_id"])
        decision.checks = [{**c, "tied": c["evidence_id"] in level} for c in decision.checks]
        return decision
    decision.status, decision.reason, decision.answer = Status.ANSWERED, None, str(best_unit["text"])
    decision.cited = [  # the answer's own sentence(s), and every passage that says the same
        part
        for u, _c, s in passing
        if str(u["sha256"]) in agree
        and (_agree(_value_set(s), _value_set(best)) if typed else u["text"] == best_unit["text"])
        for part in u.get(JOINED, [u])
    ]
    if len(best.values) == 1:
        start, end, value = best.values[0]
        origin = best_unit["span"][0]
        decision.answer_span = {"text": value, "span": [origin + start, origin + end]}
    decision.message = (
        f"Answered with {'two adjacent verbatim sentences' if JOINED in best_unit else 'a verbatim sentence'} "
        f"from {best_unit['source']} "
        f"({len(decision.cited)} passage(s), {len(agree)} independent source(s))."
    )
    return decision


#: a joined unit's parts (the sentence before and the sentence itself), cited one by one
JOINED = "joined"


def _named_titles(question: str, units: list[Unit]) -> frozenset[str]:
    """The normalised titles of the candidates' documents that the question says whole."""
    question_n = norm(question)
    titles = {norm(title) for title in {document_name(u) for u in units}}  # one file's units share theirs
    return frozenset(t for t in titles if len(t) >= 2 and t in question_n)


#: what bounds the phrase of the question a credited piece stands in: 的 and any non-word character
_PHRASE_CUT = re.compile(r"[的\W]+")


def _phrases(question: str, pieces: set[str]) -> list[str]:
    """The phrase of the question (between 的 and punctuation) around each piece, once each: the
    name a piece is part of (栖霞半山 → 栖霞半山藏书楼), which the lookup then ranks by whole."""
    runs = _PHRASE_CUT.split(norm(question))
    return sorted({next((r for r in runs if p in r), p) for p in pieces})


def _credited(support: Support) -> tuple[str, ...]:
    """The question pieces a passing check counted as said although the sentence does not say them."""
    return support.unsaid + tuple(p for p, _said, _score in support.paraphrased) if support.ok else ()


def _about_named(support: Support, unit: Unit, named: frozenset[str]) -> Support:
    """``support``, or a failure on its terms when the question names a candidate document's title
    that this sentence neither says nor is under (docs/prose.md, "A named document"): the question
    is about that document's subject, and bigram coverage would also accept another thing's
    sentence that says the name's parts apart (槐里怀瑾图书馆位于哪里 against 青岚怀瑾图书馆位于
    槐里市…) or leaves it unsaid (沧澜博雅学堂的第二次扩建… against 槐里怀瑾图书馆的第二次扩建…)."""
    if not support.ok or not named:
        return support
    said = norm(str(unit.get("text", ""))) + "\n" + norm(unit_context(unit))
    unsaid = tuple(sorted(t for t in named if t not in said))
    if not unsaid:
        return support
    return replace(support, ok=False, problem="terms", missing=unsaid, unsaid=(), paraphrased=())


def _with_previous(
    question: str,
    unit: Unit,
    in_ctx: bool,
    support: Support,
    previous: Callable[[Unit], Unit | None],
    paraphrases: Paraphrases | None,
) -> tuple[Unit, bool, Support]:
    """A reason said across two sentences (docs/prose.md, "Two sentences"): a sentence that fails
    only the answer type of a 为什么 question and opens with a backward cause word (``因此，畜牧业
    发达``) points to the sentence before it; when that sentence is of the same paragraph and
    immediately adjacent (no character between them), the two are checked as one text, and if
    that passes they answer together (the answer is their verbatim concatenation, both cited).
    Otherwise the unit stays as it was checked."""
    opens = BACKWARD_RE.match(str(unit.get("text", "")).lstrip())
    if support.ok or support.problem != "answer_type" or support.answer_type != AnswerType.REASON or not opens:
        return unit, in_ctx, support
    before = previous(unit)
    adjacent = (
        before is not None
        and before.get("kind") == "sentence"
        and before.get("sha256") == unit.get("sha256")
        and before.get("parent_span") is not None
        and before.get("parent_span") == unit.get("parent_span")
        and before["span"][1] == unit["span"][0]
    )
    if not adjacent or before is None:
        return unit, in_ctx, support
    joined: Unit = {
        **unit,
        "text": str(before["text"]) + str(unit["text"]),
        "span": [before["span"][0], unit["span"][1]],
        JOINED: [before, unit],
    }
    both = support_check(question, joined, paraphrases)
    return (joined, in_ctx, both) if both.ok else (unit, in_ctx, support)


def _clip(text: str, size: int = 30) -> str:
    return f"“{text}”" if len(text) <= size else f"“{text[:size]}…”"


def _tied(best_unit: Unit, best: Support, in_context: list[tuple[Unit, Support]]) -> Unit | None:
    """Another passing sentence of the context that the check ranks level with the answer's
    (the same ``Support.strength``) and that says something else: for a typed
    question, no value agreeing with the answer's; for another, a different text. None when the
    check itself prefers the answer."""
    typed = best.answer_type != AnswerType.NONE
    for unit, support in in_context:
        if unit["evidence_id"] == best_unit["evidence_id"] or unit["text"] == best_unit["text"]:
            continue
        level = support.strength() == best.strength()
        # untyped answers with values (a kind's instance, kinds.py) say the same when the values agree
        valued = typed or bool(best.values and support.values)
        if level and (not valued or not _agree(_value_set(support), _value_set(best))):
            return unit
    return None


def _what_is_missing(question: str, supports: list[Support]) -> str:
    if not supports or supports[0].problem == "no_terms":
        return "The question names nothing the passages could be checked against; ask with the names it is about."
    best = max(supports, key=lambda s: (s.problem == "answer_type", s.coverage))
    if best.problem == "answer_type":
        mentioned = "、".join(best.covered)
        return (
            f"The passages mention {mentioned} but give no {DESCRIPTION[best.answer_type]}; "
            "this is not evidence that there is none."
        )
    return (
        f"No retrieved passage mentions {'、'.join(best.missing) or '、'.join(best.terms)}"
        + (f" (the closest mentions {'、'.join(best.covered)})" if best.covered else "")
        + "; nothing supports an answer."
    )
