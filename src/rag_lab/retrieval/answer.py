"""The decision: answer with the verbatim value of a fully audited key, or refuse with a reason.

Order (SPEC §3): verify every kept unit → understand the question → per slot, find a
kept unit of the asked (subject, field) → audit *every* unit of that key in the corpus
(from the index's same-key map, or from the current files when no index is given),
verifying each against its original → all values equal: answered, citing every copy;
otherwise conflicting_evidence citing every side. Nothing here ranks, so nothing here
can prefer one side of a conflict.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from dataclasses import field as dc_field
from datetime import date
from typing import TYPE_CHECKING, Any

from rag_lab.data.access import Principal
from rag_lab.data.documents import VALIDITY_UNREADABLE
from rag_lab.limits import MAX_CLARIFICATION_OPTIONS
from rag_lab.records import (
    IMAGE_SUPPORT_SCOPE,
    PROSE_AUDIT_SUPPORT_SCOPE,
    PROSE_SUPPORT_SCOPE,
    SUPPORT_SCOPE,
    VISIBLE_SUPPORT_SCOPE,
    Candidate,
    Modality,
    Reason,
    Result,
    Status,
    Unit,
)
from rag_lab.retrieval.question import (
    ParsedQuestion,
    check_question,
    parse_image_question,
    parse_text_question,
)
from rag_lab.retrieval.sources import CorpusSource, EvidenceSource
from rag_lab.retrieval.trace import Trace
from rag_lab.retrieval.verify import SourceReader, Verification, citation, verify_unit

if TYPE_CHECKING:
    from rag_lab.answering.paraphrase import Paraphrases
    from rag_lab.retrieval.rank import Ranking

CLARIFICATION_LIMIT = 20
# A subject's fields and ambiguous names are cut at MAX_CLARIFICATION_OPTIONS, with
# ``more_options`` counting the rest (only when something was cut).


class VerificationFailed(Exception):
    """Internal: a unit failed verification; the whole request is refused."""

    def __init__(self, outcome: Verification) -> None:
        super().__init__(outcome.detail)
        self.outcome = outcome


@dataclass
class SlotResult:
    subject: str
    field: str
    status: Status
    reason: Reason | None
    message: str
    answer: str | None = None
    citations: list[dict[str, Any]] = dc_field(default_factory=list)
    checked: int = 0
    independent: int = 0
    sides: list[dict[str, Any]] = dc_field(default_factory=list)
    kind: str = "field"  # or "prose" (answering/prose.py)
    answer_span: dict[str, Any] | None = None
    field_match: dict[str, Any] | None = None  # how the field was found (retrieval/fields.py)
    audited: bool = False  # a prose answer's conflict audit ran (retrieval/prose_audit.py)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "subject": self.subject,
            "field": self.field,
            "status": str(self.status),
            "reason": None if self.reason is None else str(self.reason),
            "answer": self.answer,
            "message": self.message,
            "citations": self.citations,
            "same_key_sources_checked": self.checked,
            "field_match": self.field_match,
        }
        if self.sides:
            out["sides"] = self.sides
        if self.kind != "field":
            out["kind"], out["answer_span"] = self.kind, self.answer_span
        return out


def _unit_key(unit: Unit) -> str:
    return json.dumps(unit, sort_keys=True, ensure_ascii=False, default=str)


_PLAIN = (str, int, bool, type(None))


def _plainly_equal(a: Unit, b: Unit) -> bool:
    """True when ``a`` and ``b`` have the same keys and values of the same exact types, each a
    string, integer, boolean or None or a list (tuple) of them: then their :func:`_unit_key` are
    equal. False proves nothing (a float, a nested dict, ``1`` against ``True``…): the caller
    compares the keys themselves. About 1.5 µs where two keys cost ≈ 8 µs."""
    if a.keys() != b.keys():
        return False
    for key, x in a.items():
        y = b[key]
        kind = type(x)
        if kind is not type(y):
            return False
        if kind is list or kind is tuple:
            if len(x) != len(y):
                return False
            for p, q in zip(x, y, strict=True):
                if type(p) is not type(q) or type(p) not in _PLAIN or p != q:
                    return False
        elif kind not in _PLAIN or x != y:
            return False
    return True


def in_window(unit: Unit, as_of: date) -> bool:
    """生效日期 ≤ as_of < 失效日期 (either bound may be absent)."""
    day = as_of.isoformat()
    return bool(unit.get("valid_from", day) <= day < unit.get("valid_to", "9999-12-31"))


def unreadable_windows(units: list[Unit]) -> list[tuple[str, dict[str, Any]]]:
    """(source, problem) of every file among ``units`` whose validity window cannot be read."""
    found: dict[str, dict[str, Any]] = {}
    for unit in units:
        problem = unit.get(VALIDITY_UNREADABLE)
        if isinstance(problem, dict):
            found.setdefault(str(unit["source"]), problem)
    return sorted(found.items())


class Decider:
    """One request's decision state: the reader cache, the trace, the evidence source."""

    def __init__(
        self, root: str | os.PathLike[str], source: EvidenceSource, trace: Trace, as_of: date
    ) -> None:
        self.reader = SourceReader(root)
        self.source = source
        self.trace = trace
        self.as_of = as_of
        self.verified: dict[str, Verification] = {}
        self._first_of_id: dict[str, tuple[Unit, Verification] | None] = {}  # None: its key is in verified
        self.paraphrases: Paraphrases | None = None  # prose: the neural paraphrase test, if any
        self.ranking: Ranking | None = None  # prose: the request's lexical scoring, for the audit

    def verify(self, unit: Unit, purpose: str) -> None:
        # Keyed by the whole unit: a forged unit reusing a verified id is verified on its own.
        # A unit with an evidence id not seen before is new whatever the rest of it says, so
        # its whole-unit key is written only once a second unit with that id comes (from a
        # copy taken now).
        eid = unit.get("evidence_id")
        if isinstance(eid, str):
            if eid not in self._first_of_id:
                self._first_of_id[eid] = (dict(unit), self._check(unit, purpose))
                return
            first = self._first_of_id[eid]
            if first is not None:
                if _plainly_equal(unit, first[0]):  # the same key as the first unit: verified
                    return
                self.verified[_unit_key(first[0])] = first[1]
                self._first_of_id[eid] = None
        key = _unit_key(unit)
        if key not in self.verified:
            self.verified[key] = self._check(unit, purpose)

    def _check(self, unit: Unit, purpose: str) -> Verification:
        outcome = verify_unit(unit, self.reader)
        self.trace.add("verify", purpose=purpose, **outcome.as_dict())
        if not outcome.ok:
            raise VerificationFailed(outcome)
        return outcome

    # -- text ------------------------------------------------------------------------------
    def decide_slot(
        self, subject: str, field_name: str, kept: list[Unit], retrieved: list[Unit]
    ) -> SlotResult:
        def slot(status: Status, reason: Reason | None, message: str) -> SlotResult:
            return SlotResult(subject, field_name, status, reason, message)

        if field_name in self.source.reserved_fields:
            return slot(
                Status.REFUSED,
                Reason.RESERVED_FIELD,
                f"{field_name} is a reserved field: it is kept as data and never given as an answer.",
            )
        everything = self.source.units_for_key(subject, field_name)
        if not everything:
            return slot(
                Status.REFUSED,
                Reason.NO_SUPPORTING_EVIDENCE,
                f"{subject} has no field {field_name} in the corpus; this is not evidence that it has none.",
            )
        key = (subject, field_name)
        if not any((u.get("subject"), u.get("field")) == key for u in kept):
            if any((u.get("subject"), u.get("field")) == key for u in retrieved):
                return slot(
                    Status.REFUSED,
                    Reason.EXCLUDED_BY_BUDGET,
                    f"Evidence for {subject} {field_name} was retrieved but did not fit the context budget.",
                )
            return slot(
                Status.REFUSED,
                Reason.EVIDENCE_NOT_RETRIEVED,
                f"The corpus has {subject} {field_name}, but ranking did not retrieve it; "
                "ask with more specific words or a larger top_k.",
            )
        return self.audit(subject, field_name, everything)

    def audit(self, subject: str, field_name: str, everything: list[Unit]) -> SlotResult:
        unreadable = unreadable_windows(everything)
        if unreadable:
            return self.refuse_unreadable(subject, field_name, everything, unreadable)
        current = sorted(
            (u for u in everything if in_window(u, self.as_of)), key=lambda u: (u["source"], u["span"] or [0])
        )
        dropped = [u["evidence_id"] for u in everything if not in_window(u, self.as_of)]
        for unit in current:
            self.verify(unit, "audit")
        values = sorted({u["value"] for u in current})
        self.trace.add(
            "audit",
            subject=subject,
            field=field_name,
            same_key_units=[u["evidence_id"] for u in everything],
            out_of_window=dropped,
            values=values,
        )
        result = SlotResult(subject, field_name, Status.REFUSED, None, "")
        result.checked = len(current)
        result.citations = [citation(u) for u in current]
        result.independent = len({u["sha256"] for u in current})
        if not current:
            result.reason = Reason.NO_SUPPORTING_EVIDENCE
            result.message = (
                f"Every source of {subject} {field_name} is outside its validity window on "
                f"{self.as_of.isoformat()}."
            )
            result.citations = []
        elif len(values) == 1:
            result.status, result.answer = Status.ANSWERED, values[0]
            result.message = f"{subject} {field_name}: {values[0]} ({len(current)} source(s) agree)."
        else:
            result.reason = Reason.CONFLICTING_EVIDENCE
            result.sides = [
                {"value": v, "evidence_ids": [u["evidence_id"] for u in current if u["value"] == v]}
                for v in values
            ]
            result.message = (
                f"The sources disagree on {subject} {field_name}: "
                + " / ".join(repr(v) for v in values)
                + "; no source is preferred."
            )
        return result

    def refuse_unreadable(
        self, subject: str, field_name: str, everything: list[Unit], unreadable: list[tuple[str, dict[str, Any]]]
    ) -> SlotResult:
        """Some source of the key has a validity window that cannot be read: whether its value
        is current is unknown, so no value of the key is given (fail closed)."""
        self.trace.add(
            "audit",
            subject=subject,
            field=field_name,
            same_key_units=[u["evidence_id"] for u in everything],
            validity_unreadable=[{"source": s, **p} for s, p in unreadable],
        )
        where = "; ".join(f"{s}:{p['line']} {p['field']} {p['value']!r} ({p['problem']})" for s, p in unreadable)
        return SlotResult(
            subject,
            field_name,
            Status.REFUSED,
            Reason.VALIDITY_UNREADABLE,
            f"The validity window of {len(unreadable)} source(s) of {subject} {field_name} is unreadable: "
            f"{where}. Fix the date and rebuild the index with `rag-lab index ROOT`.",
        )

    # -- images ------------------------------------------------------------------------------
    def decide_image(
        self, asked: dict[str, list[str]], leftover: str, kept: list[Unit], retrieved: list[Unit]
    ) -> SlotResult:
        phrase = " ".join(w for attr in ("color", "size", "shape") for w in asked.get(attr, []))
        result = SlotResult(phrase, "image", Status.REFUSED, None, "")
        if leftover:
            result.reason = Reason.UNSUPPORTED_ATTRIBUTE
            result.message = (
                f"Images are measured only for colour, size and shape; {leftover!r} cannot be "
                "answered from pixels."
            )
            return result
        if any(len(words) > 1 for words in asked.values()):
            result.reason = Reason.NO_SUPPORTING_EVIDENCE
            result.message = (
                "An image has one measured colour, size and shape; the question asks two of one kind."
            )
            return result
        attrs = {attr: words[0] for attr, words in asked.items()}

        def matches(u: Unit) -> bool:
            return u.get("modality") == Modality.IMAGE and all(u.get(k) == v for k, v in attrs.items())

        everything = self.source.images_matching(attrs)
        if not everything:
            result.reason = Reason.NO_SUPPORTING_EVIDENCE
            result.message = f"No image in the corpus measures as {phrase}."
        elif not any(matches(u) for u in kept):
            result.reason = (
                Reason.EXCLUDED_BY_BUDGET
                if any(matches(u) for u in retrieved)
                else Reason.EVIDENCE_NOT_RETRIEVED
            )
            result.message = f"Images measuring as {phrase} exist but were not in the packed context."
        else:
            everything.sort(key=lambda u: u["source"])
            for unit in everything:
                self.verify(unit, "audit")
            self.trace.add(
                "audit", image_attributes=attrs, same_key_units=[u["evidence_id"] for u in everything]
            )
            phrases = sorted({u["text"] for u in everything})
            result.status, result.answer = Status.ANSWERED, "；".join(phrases)
            result.citations = [citation(u) for u in everything]
            result.checked = len(everything)
            result.independent = len({u["sha256"] for u in everything})
            result.message = f"{len(everything)} image(s) re-measured as {result.answer}."
        return result


def _units(candidates: list[Candidate] | None) -> list[Unit]:
    return [c["evidence"] for c in candidates or []]


def answer(
    question: str,
    candidates: list[Candidate],
    root: str | os.PathLike[str],
    index: EvidenceSource | None = None,
    *,
    retrieved: list[Candidate] | None = None,
    as_of: date | None = None,
    trace: Trace | None = None,
    principal: Principal | None = None,
    parsed: ParsedQuestion | None = None,
    paraphrases: Paraphrases | None = None,
    ranking: Ranking | None = None,
) -> Result:
    """Decide on ``question`` from the packed ``candidates`` (seed API, SPEC §3.5).

    ``index`` provides the same-key map; without it the current originals under
    ``root`` are read. ``retrieved`` (all ranked candidates before packing) lets a
    refusal say ``excluded_by_budget`` rather than ``evidence_not_retrieved``.
    ``parsed``: the question already parsed against ``index`` (``run_request`` parses once).
    ``paraphrases``: the neural paraphrase test for prose support checks (answering/paraphrase.py;
    ``run_request`` passes it with ``retrieval="fused"``).
    ``ranking``: the lexical scoring ``retrieved`` came from (retrieval/rank.py), which the prose
    conflict audit takes its own top ``AUDIT_POOL`` from instead of scoring the question again.
    """
    check_question(question)
    trace = trace if trace is not None else Trace()
    source: EvidenceSource = index if index is not None else CorpusSource(root, principal=principal)
    decider = Decider(root, source, trace, as_of or date.today())
    decider.paraphrases = paraphrases
    decider.ranking = ranking
    # Units the caller may not read are not evidence for it: dropped before anything looks at them.
    kept = [u for u in _units(candidates) if source.may_see(u)]
    pool = [u for u in _units(retrieved) or _units(candidates) if source.may_see(u)]
    try:
        for unit in kept:
            decider.verify(unit, "context")
        slots, parsed, image = _decide(question, decider, kept, pool, parsed)
    except VerificationFailed as failed:
        outcome = failed.outcome
        trace.add("decision", status=str(Status.REFUSED), reason=str(Reason.SOURCE_VERIFICATION_FAILED))
        return assemble(
            question,
            Status.REFUSED,
            Reason.SOURCE_VERIFICATION_FAILED,
            f"Evidence {outcome.evidence_id} ({outcome.source}) failed the {outcome.failed_check} check: "
            f"{outcome.detail}. Rebuild the index with `rag-lab index ROOT` if the corpus changed.",
            trace,
            verification_failure=outcome.as_dict(),
        )
    return _result(question, slots, parsed, image, source, trace)


def _decide(
    question: str, decider: Decider, kept: list[Unit], pool: list[Unit], parsed: ParsedQuestion | None
) -> tuple[list[SlotResult], ParsedQuestion, bool]:
    parsed = parsed or parse_text_question(question, decider.source)
    image = parse_image_question(question) if not parsed.subjects and not parsed.fields else None
    decider.trace.add(
        "parse",
        **parsed.as_dict(),
        image=None if image is None else {"asked": image[0], "leftover": image[1]},
    )
    if image is not None:
        return [decider.decide_image(image[0], image[1], kept, pool)], parsed, True
    if not parsed.slots:  # not a (subject, field) question: perhaps prose answers it
        prose = _decide_prose(question, decider, kept, pool)
        # a named subject asks for one of its fields (clarify); a field name alone may be prose
        overrides = parsed.problem is None or (
            parsed.problem == "field_without_subject" and prose is not None and prose.status == Status.ANSWERED
        )
        if prose is not None and overrides:
            return [prose], parsed, False
    slots = [decider.decide_slot(s, f, kept, pool) for s, f in parsed.slots]
    for slot in slots:
        found = parsed.field_matches.get((slot.subject, slot.field))
        slot.field_match = None if found is None else found.as_dict()
    return slots, parsed, False


def _decide_prose(question: str, decider: Decider, kept: list[Unit], pool: list[Unit]) -> SlotResult | None:
    """Prose answering (answering/prose.py); every candidate it looks at is verified first."""
    from rag_lab.answering.prose import PROSE_KINDS, decide_prose

    ids = {u["evidence_id"] for u in kept}
    others = [u for u in pool if u["evidence_id"] not in ids and u.get("kind") in PROSE_KINDS]
    for unit in others:
        decider.verify(unit, "prose")
    if not any(u.get("kind") in PROSE_KINDS for u in kept + others):
        return None
    from rag_lab.retrieval.prose_audit import audit_units, previous_sentence, units_about

    seen = ids | {u["evidence_id"] for u in others}
    audit = audit_units(question, decider.source, seen, lambda u: decider.verify(u, "prose_audit"), decider.ranking)
    def previous(unit: Unit) -> Unit | None:  # a reason said across two sentences (answering/prose.py)
        before = previous_sentence(decider.source, unit)
        if before is not None:
            decider.verify(before, "prose")
        return before

    def about(words: str) -> list[Unit]:  # the documents a piece a sentence does not say names
        return units_about(words, decider.source, lambda u: decider.verify(u, "prose_about"))

    decision = decide_prose(
        question, kept, others, decider.as_of, [u for u, _s in audit or []], decider.paraphrases, previous,
        about=about, audit_supports=[s for _u, s in audit or []],
    )
    if decision is None:
        return None
    decider.trace.add(
        "support_check",
        checks=decision.checks,
        out_of_window=decision.out_of_window,
        status=str(decision.status),
        reason=None if decision.reason is None else str(decision.reason),
    )
    result = SlotResult("", "", decision.status, decision.reason, decision.message, decision.answer)
    result.kind, result.answer_span, result.sides = "prose", decision.answer_span, decision.sides
    result.audited = audit is not None
    result.citations = [citation(u) for u in decision.cited]
    result.checked, result.independent = len(decision.cited), decision.independent
    return result


def _result(
    question: str,
    slots: list[SlotResult],
    parsed: ParsedQuestion,
    image: bool,
    source: EvidenceSource,
    trace: Trace,
) -> Result:
    if not slots:
        return _unparsed(question, parsed, source, trace)
    answered = [s for s in slots if s.status == Status.ANSWERED]
    if len(slots) == 1:
        only = slots[0]
        status, reason, text = only.status, only.reason, only.answer
    else:
        status = (
            Status.ANSWERED if len(answered) == len(slots) else Status.PARTIAL if answered else Status.REFUSED
        )
        reason = (
            None if status == Status.ANSWERED else Reason.PARTIAL_SUPPORT if answered else slots[0].reason
        )
        text = "；".join(f"{s.subject} {s.field}：{s.answer}" for s in answered) or None
    cited = [c for s in slots for c in s.citations]
    checked = sum(s.checked for s in slots)
    independent = sum(s.independent for s in slots)
    audited = any(s.checked for s in slots)
    trace.add("decision", status=str(status), reason=None if reason is None else str(reason))
    if checked:
        trace.count("duplicates_merged", checked - independent)
    for s in slots:
        if s.status != Status.ANSWERED:
            trace.count("uncovered_slots")
    return assemble(
        question,
        status,
        reason,
        " ".join(s.message for s in slots),
        trace,
        answer=text,
        citations=cited,
        support_scope=_scope(image, source, slots) if audited else None,
        same_key_sources_checked=checked,
        independent_sources=independent,
        duplicates_merged=checked - independent,
        slots=[s.as_dict() for s in slots],
        field_match=slots[0].field_match if len(slots) == 1 else None,
    )


def _scope(image: bool, source: EvidenceSource, slots: list[SlotResult]) -> str:
    if slots[0].kind == "prose":
        return PROSE_AUDIT_SUPPORT_SCOPE if slots[0].audited else PROSE_SUPPORT_SCOPE
    if image:
        return IMAGE_SUPPORT_SCOPE
    return SUPPORT_SCOPE if source.principal is None else VISIBLE_SUPPORT_SCOPE


def _capped(options: list[str]) -> tuple[list[str], int]:
    """The first MAX_CLARIFICATION_OPTIONS options, and how many more there are."""
    shown = options[:MAX_CLARIFICATION_OPTIONS]
    return shown, len(options) - len(shown)


def _unparsed(question: str, parsed: ParsedQuestion, source: EvidenceSource, trace: Trace) -> Result:
    clarification: dict[str, Any] | None = None
    if parsed.problem == "subject_without_field":
        subject = parsed.subjects[0]
        fields, rest = _capped([f for f in source.fields_of(subject) if f not in source.reserved_fields])
        clarification = {"subject": subject, "fields": fields}
        status, reason = Status.NEEDS_CLARIFICATION, Reason.SUBJECT_WITHOUT_FIELD
        message = f"Which field of {subject}? It has: {'、'.join(fields) or 'no answerable fields'}"
        if rest:
            clarification["more_options"] = rest
            message += f" and {rest} more"
        message += "."
    elif parsed.problem == "field_without_subject":
        fld = parsed.fields[0]
        subjects = source.subjects_with_field(fld, CLARIFICATION_LIMIT + 1)
        clarification = {
            "field": fld,
            "subjects": subjects[:CLARIFICATION_LIMIT],
            "more": len(subjects) > CLARIFICATION_LIMIT,
        }
        status, reason = Status.NEEDS_CLARIFICATION, Reason.FIELD_WITHOUT_SUBJECT
        message = f"{fld} of which subject? The question names none the corpus knows."
    elif parsed.problem in ("ambiguous_subject", "ambiguous_field"):
        options, rest = _capped(parsed.options)
        clarification = {"options": options}
        status, reason = Status.NEEDS_CLARIFICATION, Reason(parsed.problem)
        more = f" and {rest} more" if rest else ""
        message = f"The question could mean any of {'、'.join(options)}{more}; name one."
        if rest:
            clarification["more_options"] = rest
    elif parsed.chain is not None:  # X丈夫的父亲: never X's 丈夫
        status, reason = Status.REFUSED, Reason.NO_SUPPORTING_EVIDENCE
        chain = parsed.chain
        message = (
            f"The question asks about the value of {chain.subject}'s {chain.field} (the words at code point "
            f"{chain.at} name another field of it); rag_lab answers one field of a subject the question names, "
            f"so it does not give {chain.subject}'s {chain.field} instead. Ask for {chain.subject}的{chain.field}, "
            "then ask about that value by name."
        )
    elif parsed.unknown_subject is not None:  # X的郑码 with X not a subject: never another subject's 郑码
        status, reason = Status.REFUSED, Reason.NO_SUPPORTING_EVIDENCE
        start, end = parsed.unknown_span() or [0, 0]
        message = (  # the name is not repeated: a hidden subject must read like a made-up one
            f"The name at code points {start}–{end} of the question is not a subject in the corpus, so nothing "
            f"supports an answer about its {parsed.fields[0]}; no other subject's {parsed.fields[0]} is given instead."
        )
    else:
        status, reason = Status.REFUSED, Reason.NO_SUPPORTING_EVIDENCE
        message = "The question names no subject or field known in the corpus; nothing supports an answer."
    trace.add("decision", status=str(status), reason=str(reason))
    return assemble(question, status, reason, message, trace, clarification=clarification)


def assemble(
    question: str,
    status: Status,
    reason: Reason | None,
    message: str,
    trace: Trace,
    **extra: Any,
) -> Result:
    """The result dict (SPEC §3.6), with every key always present and in a fixed order."""
    result: Result = {
        "question": question,
        "status": str(status),
        "reason": None if reason is None else str(reason),
        "answer": extra.pop("answer", None),
        "message": message,
        "citations": extra.pop("citations", []),
        "support_scope": extra.pop("support_scope", None),
        "same_key_sources_checked": extra.pop("same_key_sources_checked", 0),
        "independent_sources": extra.pop("independent_sources", 0),
        "duplicates_merged": extra.pop("duplicates_merged", 0),
        "slots": extra.pop("slots", []),
        "field_match": extra.pop("field_match", None),
    }
    result.update(extra)
    result["trace"] = trace.as_dict()
    return result
