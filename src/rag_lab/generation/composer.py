"""The default generator: a deterministic composer that writes the decided result as sentences.

It never decides anything. Every sentence comes from the decided result: an answered slot
becomes one claim (``借阅台的开放时间是周二至周五十四点到十七点。[E1]``) citing every unit the
decision cited; a conflict names each side with its source and 生效日期 as its own claim; an
unanswered slot, a refusal or a clarification becomes a *note* (system text, not a claim about
the sources: it carries no evidence and is not verified). Chinese questions get Chinese text,
others English. :func:`parts` is the whole answer in order; :class:`Composer` is the
:class:`~rag_lab.generation.Generator` whose claims are the answered slots' claims.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from rag_lab.generation import Draft, EvidenceRef, GenerationRequest

#: Units of one conflict side named one by one; the rest are counted in a note.
SIDE_SOURCES_SHOWN = 5
#: Subjects listed in a field-without-subject clarification note.
OPTIONS_SHOWN = 20


@dataclass(frozen=True)
class Part:
    kind: str  # "claim" or "note"
    text: str
    evidence: list[str] = field(default_factory=list)
    answered: bool = False  # a claim stating an answered slot's value


def _end(text: str, zh: bool) -> str:
    return text if text.endswith(("。", "！", "？", ".", "!", "?")) else text + ("。" if zh else ".")


def _units(request: GenerationRequest, evidence_ids: list[str]) -> list[EvidenceRef]:
    wanted = set(evidence_ids)
    return [e for e in request.evidence if e.unit.get("evidence_id") in wanted]


def _slot_claims(request: GenerationRequest, slot: dict[str, Any], zh: bool) -> list[Part]:
    refs = _units(request, [c["evidence_id"] for c in slot.get("citations", [])])
    if refs and all(r.unit.get("modality") == "image" for r in refs):
        return [Part("claim", _end(f"{r.unit['source']}：{r.unit['text']}", zh), [r.ref], True) for r in refs]
    subject, name, value = slot["subject"], slot["field"], str(slot.get("answer") or "")
    if refs and all(not r.unit.get("field") for r in refs):
        # prose units (a sentence, not a field line): the answer is the verbatim sentence itself
        return [Part("claim", value, [r.ref for r in refs], True)]
    text = f"{subject}的{name}是{value}" if zh else f"{subject} {name}: {value}"
    return [Part("claim", _end(text, zh), [r.ref for r in refs], True)]


def _side_claims(request: GenerationRequest, slot: dict[str, Any], zh: bool) -> list[Part]:
    parts: list[Part] = []
    subject, name = slot["subject"], slot["field"]
    for side in slot.get("sides", []):
        refs = _units(request, side["evidence_ids"])
        for ref in refs[:SIDE_SOURCES_SHOWN]:
            day = ref.unit.get("valid_from")
            said = f"{subject}的{name}是{side['value']}" if subject else str(side["value"])
            if zh:
                when = f"生效日期 {day}" if day else "未注明生效日期"
                text = f"{ref.unit['source']}（{when}）写{said}"
            else:
                when = f"effective {day}" if day else "no effective date"
                said = f"{subject} {name}: {side['value']}" if subject else str(side["value"])
                text = f"{ref.unit['source']} ({when}): {said}"
            parts.append(Part("claim", _end(text, zh), [ref.ref]))
        if len(refs) > SIDE_SOURCES_SHOWN:
            rest = len(refs) - SIDE_SOURCES_SHOWN
            parts.append(Part("note", f"另有 {rest} 份来源写同一值。" if zh else f"{rest} more source(s) say the same."))
    return parts


_SLOT_NOTES = {
    "conflicting_evidence": ("{s}的{f}来源不一致，无法确定，没有哪一份优先：",
                             "The sources disagree on {s} {f}; none is preferred:"),
    "no_supporting_evidence": ("资料中没有{s}的{f}；这不表示它不存在。",
                               "The corpus has no {s} {f}; this is not evidence that there is none."),
    "evidence_not_retrieved": ("资料中有{s}的{f}，但检索没有取回；请换更具体的问法或增大 top_k。",
                               "The corpus has {s} {f}, but ranking did not retrieve it; ask more specifically or raise top_k."),
    "excluded_by_budget": ("{s}的{f}已检索到，但超出了上下文预算；请增大 budget。",
                           "{s} {f} was retrieved but did not fit the context budget; raise the budget."),
    "reserved_field": ("{f}是保留字段：只作为资料保存，不作为答案给出。",
                       "{f} is a reserved field: kept as data, never given as an answer."),
    "unsupported_attribute": ("图片只测量颜色、大小和形状，问题中有无法从像素回答的属性。",
                              "Images are measured only for colour, size and shape; the question asks for more."),
}


def _slot_note(slot: dict[str, Any], zh: bool) -> str:
    reason = str(slot.get("reason"))
    if not slot.get("subject"):  # a prose slot names no (subject, field)
        if reason == "conflicting_evidence":
            return "独立来源的说法不一致，没有哪一份优先：" if zh else "Independent sources disagree; none is preferred:"
        if slot.get("message"):  # the decision's message says what is missing
            return str(slot["message"])
    zh_text, en_text = _SLOT_NOTES.get(reason, ("{s}的{f}无法回答（{r}）。", "{s} {f} cannot be answered ({r})."))
    return (zh_text if zh else en_text).format(s=slot["subject"], f=slot["field"], r=reason)


def _whole_note(decision: dict[str, Any], zh: bool) -> str:
    reason, clar = str(decision.get("reason")), decision.get("clarification") or {}
    if reason == "index_stale":
        return "建立索引之后资料已改变；请先运行 `rag-lab index ROOT` 重建索引。" if zh else (
            "The corpus changed since the index was built; rebuild it with `rag-lab index ROOT`.")
    if reason == "source_verification_failed":
        failure = decision.get("verification_failure") or {}
        who = f"{failure.get('evidence_id')}（{failure.get('source')}）"
        return f"证据 {who} 未通过原件核验（{failure.get('failed_check')}），不予回答；资料改变时请重建索引。" if zh else (
            f"Evidence {failure.get('evidence_id')} failed verification ({failure.get('failed_check')}); nothing is answered.")
    if reason == "subject_without_field":
        fields = "、".join(clar.get("fields", []))
        return f"请说明要问{clar.get('subject')}的哪一项：{fields}。" if zh else (
            f"Which field of {clar.get('subject')}? It has: {', '.join(clar.get('fields', []))}.")
    if reason == "field_without_subject":
        names = clar.get("subjects", [])[:OPTIONS_SHOWN]
        more = "等" if clar.get("more") else ""
        return f"请说明要问哪一个的{clar.get('field')}：{'、'.join(names)}{more}。" if zh else (
            f"{clar.get('field')} of which subject? For example: {', '.join(names)}.")
    if reason in ("ambiguous_subject", "ambiguous_field"):
        options = clar.get("options", [])
        return f"问题可能指{'或'.join(options)}，请指明其中一个。" if zh else (
            f"The question could mean {' or '.join(options)}; name one.")
    return "问题中没有资料里已知的主题或字段，无法回答。" if zh else (
        "The question names no subject or field known in the corpus; nothing supports an answer.")


def parts(request: GenerationRequest) -> list[Part]:
    """The whole answer, in order: the answered slots' claims, then each other slot's note (and a
    conflict's side claims); a result without slots is one note."""
    zh = request.language == "zh"
    slots = request.decision.get("slots") or []
    if not slots:
        return [Part("note", _whole_note(request.decision, zh))]
    out = [p for s in slots if s.get("status") == "answered" for p in _slot_claims(request, s, zh)]
    for slot in slots:
        if slot.get("status") != "answered":
            out.append(Part("note", _slot_note(slot, zh)))
            out.extend(_side_claims(request, slot, zh))
    return out


class Composer:
    """The deterministic default generator (``--generator composer``)."""

    @property
    def name(self) -> str:
        return "composer"

    def describe(self) -> dict[str, Any]:
        return {"generator": "composer"}

    def generate(self, request: GenerationRequest) -> Draft:
        claims = [{"text": p.text, "evidence": p.evidence} for p in parts(request) if p.answered]
        return Draft(json.dumps(claims, ensure_ascii=False), claims, self.describe())
