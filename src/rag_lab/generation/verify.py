"""The verifier: every generator's claims pass through :func:`verify_draft` before anyone sees them.

Steps (docs/generation.md):

1. **Ids.** A claim's evidence ids must be this request's (``E1`` … ``En``); any other id
   (invented ``E9``, a raw ``ev_…`` id, a unit the caller may not see) is rejected and the
   claim carrying it is deleted: an invalid id is never published.
2. **Claims.** Each claim's text is split into sentences (never inside an evidence value);
   each sentence is one claim with the claim's evidence.
3. **Support matrix** ``M[i][j]``: claim *i* is supported by unit *j* when every fact of the
   claim appears in the unit's material (its text, value, subject, field, title/heading keys,
   source path and validity dates) and the claim says little else (:func:`novelty` at most
   :data:`NOVELTY_LIMIT`). Facts: numbers with their unit (阿拉伯 and 中文 numerals), dates,
   Latin tokens (names, codes, paths), every known name or value of the request's evidence,
   negation words. A unit of a reserved field never supports anything. A claim is supported
   when one unit it cites supports it alone: facts from two units in one claim are two
   sources mixed, and unsupported.
4. **Repairs.** Unsupported claims are deleted; an answered slot whose value is stated by no
   supported claim citing a unit of that slot sends the whole request to refusal
   (``unsupported_claim``). Every repair is an event for the trace.
5. **Coverage** = Σ wᵢ·supportedᵢ / Σ wᵢ over the claims as generated (before deletion), with
   weights :data:`WEIGHTS`; ``None`` when there is no claim.
"""

from __future__ import annotations

import bisect
import functools
import operator
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from rag_lab.generation import GenerationRequest
from rag_lab.generation.parse import split_sentences
from rag_lab.records import Unit
from rag_lab.text import nfkc_fold_memo

#: A supported claim may hold at most this share of CJK characters found neither in the unit
#: (as part of a two-character run) nor among :data:`FRAME_CHARS`.
NOVELTY_LIMIT = 0.25
#: Claim weights for coverage: the asked value (a conclusion) weighs most, then numbers/dates and
#: recommendations, then everything else.
WEIGHTS = {"key": 3, "number": 2, "recommendation": 2, "other": 1}
#: Function characters a sentence may add around evidence without saying anything new.
FRAME_CHARS = frozenset("的是为在和与及或了也都写于即等：:，,、（）()“”\"'《》 。；;！!？?")
#: Phrases the checker verifies against the unit's metadata instead of its text.
NO_DATE_PHRASES = ("未注明生效日期", "no effective date")
#: Metadata words that name a unit's header fields (checked through the dates they introduce).
FRAME_WORDS = ("生效日期", "失效日期")
NEGATIONS_ZH = ("不", "没", "無", "无", "未", "非", "别", "勿", "否", "莫", "禁")
_NEGATION_ZH = re.compile("|".join(map(re.escape, NEGATIONS_ZH)))  # each one character: where they are
NEGATIONS_EN = frozenset({"not", "no", "never", "none", "cannot", "without", "n't"})
RECOMMEND = ("建议", "请", "应当", "应该", "需要", "必须", "务必", "should", "recommend", "please", "must")
EN_FRAME = frozenset(
    {"the", "a", "an", "is", "are", "was", "were", "of", "for", "at", "in", "on", "to", "and", "or", "from",
     "by", "with", "as", "it", "its", "this", "that", "these", "those", "says", "say", "said", "source",
     "sources", "date", "dated", "effective", "image", "images", "measures", "measured", "has", "have"}
)
_NUMBER = re.compile(r"\d+(?:[.:：,/\-]\d+)*%?|[零〇一二三四五六七八九十百千万亿两]+")
_UNITS = "点时分秒年月日号周天人本元次层楼米个张份页位台间岁度名"
_LATIN = re.compile(r"[A-Za-z][A-Za-z0-9_.\-/]*[A-Za-z0-9]|[A-Za-z]")
_MATERIAL_SKIP = frozenset({"evidence_id", "sha256", "modality", "acl", "support_type", "span", "line"})


#: NFKC + case fold (rag_lab/text.py), memoised: one cache with the prose support check's ``norm``
normalize = nfkc_fold_memo


def _is_cjk(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff"


def material(unit: Unit) -> str:
    """Everything a unit says: its string (and list-of-string) values, normalized, one per line."""
    parts: list[str] = []
    for key in sorted(unit):
        value = unit[key]
        if key in _MATERIAL_SKIP:
            continue
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            parts.extend(value)
    return normalize("\n".join(parts))


@dataclass(frozen=True)
class Fact:
    kind: str  # number | latin | name | negation | no_date
    text: str


def facts_of(claim: str, vocabulary: list[str]) -> list[Fact]:
    """The checkable facts of one claim (normalized text). ``vocabulary``: known names and values,
    longest first; the longest non-overlapping occurrences count."""
    text = normalize(claim)
    found: list[Fact] = []
    for phrase in NO_DATE_PHRASES:
        if phrase in text:
            found.append(Fact("no_date", phrase))
            text = text.replace(phrase, " ")
    taken = [False] * len(text)
    for name in vocabulary:
        start = text.find(name)
        while start >= 0:
            if not any(taken[start : start + len(name)]):
                found.append(Fact("name", name))
                for k in range(start, start + len(name)):
                    taken[k] = True
            start = text.find(name, start + 1)
    for match in _NUMBER.finditer(text):
        end = match.end()
        unit = text[end] if end < len(text) and text[end] in _UNITS else ""
        found.append(Fact("number", match.group(0) + unit))
    for match in _LATIN.finditer(text):
        word = match.group(0)
        if word in NEGATIONS_EN:
            found.append(Fact("negation", word))
        elif word not in EN_FRAME and len(word) > 1:
            found.append(Fact("latin", word))
    for negation in _NEGATION_ZH.finditer(text):
        if not taken[negation.start()]:
            found.append(Fact("negation", negation.group()))
    return found


@functools.lru_cache(maxsize=1024)
def bigrams(stuff: str) -> frozenset[str]:
    """Every two-character run of ``stuff`` (``stuff[k : k + 2]``, joined in C; a pure function
    of the text, prepared once per distinct unit material rather than once per request)."""
    return frozenset(map(str.__add__, stuff, stuff[1:]))


def novelty(claim: str, stuff: str, names: tuple[str, ...] = (), grams: frozenset[str] | None = None) -> float:
    """Share of the claim's CJK characters that are not frame, not inside an occurrence of one of
    ``names`` (the unit's own subject, field and value, any length) and in no two-character run of
    ``stuff``."""
    text, cjk, probes = _novelty_text(claim)
    if not cjk:
        return 0.0
    positions, rescues, runs = _novelty_bits(claim)
    grams = bigrams(stuff) if grams is None else grams
    # a probe (a non-frame CJK character) is rescued by a run of it found in the unit, or by lying
    # inside a name: bit i of ``held`` stands for probes[i]
    held = functools.reduce(operator.or_, map(rescues.__getitem__, runs & grams), 0)
    for name in names:
        start = text.find(name) if name else -1
        while start >= 0:
            low, high = bisect.bisect_left(positions, start), bisect.bisect_left(positions, start + len(name))
            held |= (1 << high) - (1 << low)  # the probes at start … start + len(name) - 1
            start = text.find(name, start + 1)
    return (len(probes) - held.bit_count()) / len(cjk)


@functools.lru_cache(maxsize=1024)
def _novelty_bits(claim: str) -> tuple[tuple[int, ...], dict[str, int], frozenset[str]]:
    """For :func:`novelty`, once per claim: the probes' positions (ascending), and for each
    two-character run ending or starting at a probe, a bit set of the probes it rescues."""
    _, _, probes = _novelty_text(claim)
    rescues: dict[str, int] = {}
    for i, (_, before, after) in enumerate(probes):
        rescues[before] = rescues.get(before, 0) | (1 << i)
        rescues[after] = rescues.get(after, 0) | (1 << i)
    return tuple(k for k, _, _ in probes), rescues, frozenset(rescues)


@functools.lru_cache(maxsize=1024)
def _novelty_text(claim: str) -> tuple[str, tuple[int, ...], tuple[tuple[int, str, str], ...]]:
    """The claim as :func:`novelty` reads it (normalized, without the frame phrases), the
    positions of its CJK characters, and of those that are not frame characters: the position
    and the two-character runs ending and starting there. Once per claim, not once per
    (claim, unit): a cell then only looks runs up."""
    text = normalize(claim)
    for phrase in NO_DATE_PHRASES + FRAME_WORDS:
        text = text.replace(phrase, "")
    cjk = tuple(k for k, ch in enumerate(text) if _is_cjk(ch))
    probes = tuple((k, text[max(k - 1, 0) : k + 1], text[k : k + 2]) for k in cjk if text[k] not in FRAME_CHARS)
    return text, cjk, probes


class Prepared(NamedTuple):
    """What every cell of one unit reads of it, computed once per unit rather than per claim."""

    stuff: str  # material(unit)
    grams: frozenset[str]  # bigrams(stuff)
    names: tuple[str, ...]  # the unit's own subject, field and value, normalized (novelty)
    negatable: str  # its value (or text), normalized (dropped_negations)


def prepare(unit: Unit) -> Prepared:
    stuff = material(unit)
    names = tuple(normalize(_strip_end(str(unit[k]))) for k in ("subject", "field", "value") if unit.get(k))
    return Prepared(stuff, bigrams(stuff), names, _negatable(unit))


def supports(
    claim: str,
    facts: list[Fact],
    unit: Unit,
    reserved: frozenset[str],
    prepared: Prepared | None = None,
    whole: bool = True,
) -> tuple[bool, list[str]]:
    """``(M_ij, what is missing)`` for one claim and one unit (``prepared``: :func:`prepare` of
    the unit, when already computed). ``whole=False`` stops at the first check that fails and
    lists nothing: for a cell whose truth alone is reported (:func:`holds`)."""
    if unit.get("field") in reserved:
        return False, [f"{unit.get('field')} is a reserved field (data, never an answer)"] if whole else []
    stuff, grams, names, negatable = prepare(unit) if prepared is None else prepared
    missing: list[str] = []
    for fact in facts:
        dated = fact.kind == "no_date"
        if (dated and unit.get("valid_from")) or (not dated and fact.text not in stuff):
            if not whole:
                return False, missing
            missing.append(
                f"'{fact.text}' but the source has 生效日期 {unit['valid_from']}" if dated else f"{fact.kind} '{fact.text}'"
            )
    missing.extend(_dropped(normalize(claim), negatable))
    if missing and not whole:
        return False, missing
    share = novelty(claim, stuff, names, grams)
    if share > NOVELTY_LIMIT:
        missing.append(f"{share:.0%} of the claim's characters are not in the evidence")
    return not missing, missing


def holds(
    claim: str, facts: list[Fact], unit: Unit, reserved: frozenset[str], prepared: Prepared | None = None
) -> bool:
    """``supports(...)[0]``, stopping at the first check that fails (a cell of a unit the claim
    does not cite needs only its truth: what it misses is reported for cited units alone)."""
    return supports(claim, facts, unit, reserved, prepared, whole=False)[0]


def dropped_negations(claim: str, unit: Unit) -> list[str]:
    """A negated phrase of the unit (``不开放``) whose words the claim repeats without the negation."""
    return _dropped(normalize(claim), _negatable(unit))


def _negatable(unit: Unit) -> str:
    return normalize(str(unit.get("value") or unit.get("text") or ""))


def _dropped(text: str, value: str) -> list[str]:
    out = []
    for negation in _NEGATION_ZH.finditer(value):
        k = negation.start()
        words = value[k + 1 : k + 3]
        if len(words) == 2 and words in text and value[k] + words not in text:
            out.append(f"negation '{value[k] + words}' dropped")
    return out


@dataclass
class CheckedClaim:
    text: str
    evidence: list[str]
    evidence_ids: list[str]
    rejected: list[str]
    support: dict[str, bool]
    missing: list[str]
    weight: int
    supported: bool
    keys: list[int] = field(default_factory=list)  # answered slots whose value this claim states
    draft: int = 0  # which drafted claim (input position) this sentence came from

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "text": self.text,
            "evidence": self.evidence,
            "evidence_ids": self.evidence_ids,
            "supported": self.supported,
            "support": self.support,
            "weight": self.weight,
        }
        if self.rejected:
            out["rejected_ids"] = self.rejected
        if not self.supported:
            out["missing"] = self.missing
        return out


def _strip_end(value: str) -> str:
    return value.rstrip("。．.!！?？；;，, ")


def key_values(request: GenerationRequest) -> dict[int, list[tuple[str, list[str]]]]:
    """Per answered slot: each distinct value it answers with, and the refs of the units giving it."""
    units = {e.unit.get("evidence_id"): e for e in request.evidence}
    out: dict[int, list[tuple[str, list[str]]]] = {}
    for number, slot in enumerate(request.decision.get("slots") or []):
        if slot.get("status") != "answered":
            continue
        by_value: dict[str, list[str]] = {}
        for cite in slot.get("citations", []):
            ref = units.get(cite.get("evidence_id"))
            if ref is not None:
                value = str(ref.unit.get("value") or ref.unit.get("text") or "")
                by_value.setdefault(value, []).append(ref.ref)
        out[number] = sorted(by_value.items())
    return out


def _conclusions(request: GenerationRequest, keys: dict[int, list[tuple[str, list[str]]]]) -> list[str]:
    values = [v for slot in keys.values() for v, _ in slot]
    values += [str(s.get("value")) for slot in request.decision.get("slots") or [] for s in slot.get("sides", [])]
    return [c for c in (_strip_end(v) for v in values) if c]


def _vocabulary(request: GenerationRequest) -> list[str]:
    words: set[str] = set()
    for ref in request.evidence:
        for key in ("subject", "field", "value"):
            value = ref.unit.get(key)
            if isinstance(value, str) and len(value) > 1:
                words.add(normalize(_strip_end(value)))
    words.discard("")
    return sorted(words, key=lambda w: (-len(w), w))


def _weight(text: str, facts: list[Fact], is_key: bool) -> int:
    if is_key:
        return WEIGHTS["key"]
    if any(f.kind == "number" for f in facts):
        return WEIGHTS["number"]
    if any(word in normalize(text) for word in RECOMMEND):
        return WEIGHTS["recommendation"]
    return WEIGHTS["other"]


@dataclass
class Verified:
    claims: list[CheckedClaim]
    events: list[dict[str, Any]]
    unsupported_keys: list[int]  # answered slots with no supported key claim
    coverage: float | None


def unanswered_units(request: GenerationRequest) -> set[str]:
    """Refs of the units of slots the decision did not answer (a conflict's sides, retired units)."""
    keys = {(s.get("subject"), s.get("field")) for s in request.decision.get("slots") or []
            if s.get("status") != "answered"}
    cited = {c.get("evidence_id") for s in request.decision.get("slots") or [] if s.get("status") != "answered"
             for c in s.get("citations", [])}
    return {e.ref for e in request.evidence
            if (e.unit.get("subject"), e.unit.get("field")) in keys or e.unit.get("evidence_id") in cited}


def check_claims(
    request: GenerationRequest, drafted: list[dict[str, Any]], origin: str, guarded: int = 0
) -> Verified:
    """Split, resolve ids, compute each claim's support row, weigh, record repairs.

    The first ``guarded`` drafted claims are a generator's: they may not cite a unit of a slot
    the decision left unanswered (that would answer it), so such a claim is unsupported."""
    off_limits = unanswered_units(request) if guarded else set()
    by_ref = {e.ref: e for e in request.evidence}
    vocabulary = _vocabulary(request)
    keys = key_values(request)
    protected = [str(e.unit.get("value") or "") for e in request.evidence]
    materials = {e.ref: prepare(e.unit) for e in request.evidence}
    checked: list[CheckedClaim] = []
    events: list[dict[str, Any]] = []
    for number, draft in enumerate(drafted):
        ids = [str(i) for i in draft.get("evidence", [])]
        valid = [i for i in ids if i in by_ref]
        rejected = [i for i in ids if i not in by_ref]
        for bad in rejected:
            events.append({"step": "repair", "action": "reject_id", "origin": origin, "id": bad,
                           "detail": "not an evidence id of this request's package"})
        for sentence in split_sentences(str(draft.get("text", "")), protected) or [""]:
            claim = _check(request, sentence, valid, rejected, by_ref, vocabulary, keys, materials)
            claim.draft = number
            trespass = [r for r in valid if r in off_limits] if number < guarded else []
            if trespass:
                claim.supported, claim.keys = False, []
                claim.missing = [f"cites {trespass}, units of a slot the decision did not answer"]
            checked.append(claim)
    for claim in checked:
        if not claim.supported:
            events.append({"step": "repair", "action": "delete_claim", "origin": origin, "text": claim.text,
                           "evidence": claim.evidence, "rejected_ids": claim.rejected, "missing": claim.missing})
    stated = {k for c in checked if c.supported for k in c.keys}
    unsupported = sorted(set(keys) - stated)
    total = sum(c.weight for c in checked)
    coverage = round(sum(c.weight for c in checked if c.supported) / total, 4) if total else None
    return Verified(checked, events, unsupported, coverage)


def _check(
    request: GenerationRequest,
    sentence: str,
    valid: list[str],
    rejected: list[str],
    by_ref: dict[str, Any],
    vocabulary: list[str],
    keys: dict[int, list[tuple[str, list[str]]]],
    materials: dict[str, Prepared],
) -> CheckedClaim:
    facts = facts_of(sentence, vocabulary)
    row: dict[str, bool] = {}
    why: dict[str, list[str]] = {}
    cited = set(valid)
    for ref in request.evidence:
        if ref.ref in cited:  # what a cited unit misses is reported: the whole check
            row[ref.ref], why[ref.ref] = supports(
                sentence, facts, ref.unit, request.reserved_fields, materials[ref.ref]
            )
        else:  # only the cell's truth is reported: the checks stop at the first that fails
            row[ref.ref] = holds(sentence, facts, ref.unit, request.reserved_fields, materials[ref.ref])
    by_cited = [r for r in valid if row[r]]
    stated: list[int] = []
    text = normalize(sentence)
    for slot, values in keys.items():
        if any(normalize(_strip_end(v)) in text and any(r in by_cited for r in refs) for v, refs in values):
            stated.append(slot)
    supported = bool(by_cited) and not rejected and bool(sentence.strip())
    if not sentence.strip():
        missing = ["empty claim"]
    elif rejected:
        missing = [f"evidence id(s) {rejected} are not in this request's package"]
    elif not valid:
        missing = ["the claim cites no evidence"]
    else:
        missing = [] if supported else [f"{r}: {'; '.join(why[r])}" for r in valid]
    is_key = any(normalize(v) in text for v in _conclusions(request, keys))
    return CheckedClaim(
        text=sentence,
        evidence=valid,
        evidence_ids=[str(by_ref[r].unit.get("evidence_id")) for r in valid],
        rejected=rejected,
        support=row,
        missing=missing,
        weight=_weight(sentence, facts, is_key),
        supported=supported,
        keys=stated if supported else [],
    )
