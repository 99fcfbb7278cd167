"""The generation hook of a request: after the decision, generate and verify the answer's text.

``attach`` builds the request's evidence — the packed context as ``E1`` … ``En`` (the same ids
as the ``package`` event) followed by every unit the decision cites that was not in the context
(audited copies, the other side of a conflict) — hands it to the generator, passes the draft
through the verifier and adds ``text``, ``claims`` and ``coverage`` to the result. Trace events,
after ``decision``: ``generate`` (the raw output, so ``replay`` can re-run it), one ``repair`` per
repair, ``claims`` (the summary). The decision's status, reason, answer and citations are kept,
except that an answered slot without a supported key claim refuses the request
(``unsupported_claim``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rag_lab.errors import GenerationError
from rag_lab.generation import Draft, EvidenceRef, GenerationRequest, Generator, language_of
from rag_lab.generation.composer import Composer, Part, parts
from rag_lab.generation.verify import CheckedClaim, check_claims
from rag_lab.records import Candidate, Reason, Result, Status, Unit
from rag_lab.retrieval.package import render_package
from rag_lab.retrieval.trace import Trace

ANSWERING = (str(Status.ANSWERED), str(Status.PARTIAL))


def _lookup(source: object) -> Callable[[str], Unit | None]:
    found = getattr(source, "unit_by_evidence_id", None)
    return found if callable(found) else (lambda _id: None)


def evidence_of(result: Result, kept: list[Candidate], source: object) -> list[EvidenceRef]:
    """The request's evidence: context units first (package order), then cited units not in it."""
    units = [c["evidence"] for c in kept]
    seen = {u.get("evidence_id") for u in units}
    refs = [EvidenceRef(f"E{n}", u, True) for n, u in enumerate(units, 1)]
    lookup = _lookup(source)
    for cite in result.get("citations", []):
        evidence_id = cite.get("evidence_id")
        if evidence_id in seen:
            continue
        unit = lookup(str(evidence_id))
        if unit is not None:
            seen.add(evidence_id)
            refs.append(EvidenceRef(f"E{len(refs) + 1}", unit, False))
    return refs


def _request(result: Result, evidence: list[EvidenceRef], reserved: frozenset[str]) -> GenerationRequest:
    decision = {k: v for k, v in result.items() if k != "trace"}
    package, _ = render_package([e.unit for e in evidence])
    question = str(result["question"])
    return GenerationRequest(question, language_of(question), decision, evidence, package, reserved)


def _draft(generator: Generator, request: GenerationRequest, answering: bool, trace: Trace) -> Draft | None:
    try:
        draft = generator.generate(request)
    except GenerationError as exc:
        if answering:
            raise
        trace.add("generate", **generator.describe(), used=False, error=str(exc))
        return None
    trace.add("generate", **draft.meta, used=answering, raw=draft.raw, claims=draft.claims)
    return draft


def attach(
    result: Result,
    kept: list[Candidate],
    source: object,
    generator: Generator | None,
    trace: Trace,
) -> Result:
    """``result`` with ``text``, ``claims`` and ``coverage`` (and the trace re-rendered)."""
    generator = generator or Composer()
    evidence = evidence_of(result, kept, source)
    reserved = frozenset(getattr(source, "reserved_fields", frozenset()))
    request = _request(result, evidence, reserved)
    answering = result["status"] in ANSWERING
    composed = parts(request)
    untrusted = result["reason"] in (Reason.INDEX_STALE, Reason.SOURCE_VERIFICATION_FAILED)
    call = answering or (generator.name != "composer" and not untrusted)
    draft = _draft(generator, request, answering, trace) if call else None
    if draft is not None and not answering:
        trace.add("repair", action="discard_generator_text", origin=generator.name,
                  detail=f"the decision is {result['status']}; the composer writes its explanation")
    if answering and draft is not None:
        sequence: list[Part | list[dict[str, Any]]] = [draft.claims]
        sequence += [p for p in composed if not p.answered]
    else:
        sequence = list(composed)
    drafted = [s if isinstance(s, list) else [{"text": s.text, "evidence": s.evidence}] for s in sequence
               if isinstance(s, list) or s.kind == "claim"]
    flat = [c for group in drafted for c in group]
    guarded = len(draft.claims) if answering and draft is not None and generator.name != "composer" else 0
    verified = check_claims(request, flat, generator.name if answering else "composer", guarded)
    for event in verified.events:
        trace.add(**event)
    text = _text(sequence, verified.claims, request.language)
    out = dict(result)
    if answering and verified.unsupported_keys:
        out, text = _refuse(out, request, verified.unsupported_keys, trace)
    trace.add("claims", generator=generator.name, total=len(verified.claims),
              supported=sum(c.supported for c in verified.claims), coverage=verified.coverage)
    out.pop("trace", None)
    out["text"] = text
    out["claims"] = [c.as_dict() for c in verified.claims]
    out["coverage"] = verified.coverage
    out["trace"] = trace.as_dict()
    return out


def _text(sequence: list[Part | list[dict[str, Any]]], checked: list[CheckedClaim], language: str) -> str:
    """Notes and supported claims in order, each claim followed by its ``[E…]`` markers."""
    by_draft: dict[int, list[CheckedClaim]] = {}
    for claim in checked:
        by_draft.setdefault(claim.draft, []).append(claim)
    pieces: list[str] = []
    index = 0
    for item in sequence:
        if isinstance(item, Part) and item.kind == "note":
            pieces.append(item.text)
            continue
        for _ in item if isinstance(item, list) else [item]:
            pieces.extend(
                c.text + "".join(f"[{r}]" for r in c.evidence) for c in by_draft.get(index, []) if c.supported
            )
            index += 1
    return ("" if language == "zh" else " ").join(pieces)


def _refuse(
    result: Result, request: GenerationRequest, slots: list[int], trace: Trace
) -> tuple[Result, str]:
    names = [f"{request.decision['slots'][k]['subject']} {request.decision['slots'][k]['field']}" for k in slots]
    trace.add("repair", action="refuse_unsupported_key_claim", slots=names,
              detail="no supported claim states the decided value with a citation of its unit")
    trace.add("decision", status=str(Status.REFUSED), reason=str(Reason.UNSUPPORTED_CLAIM))
    zh = request.language == "zh"
    text = (
        f"生成的回答未通过核验：{'、'.join(names)}的答案没有一句得到所引证据的支持，因此不予回答。"
        if zh
        else f"The generated answer failed verification: no claim stating {', '.join(names)} is supported "
        "by the evidence it cites, so nothing is answered."
    )
    result.update(
        status=str(Status.REFUSED),
        reason=str(Reason.UNSUPPORTED_CLAIM),
        answer=None,
        message=f"The generator's answer failed verification for {', '.join(names)}: no supported claim "
        "states the decided value; use --generator composer or another model.",
    )
    return result, text
