"""Generators write the answer's sentences; the verifier checks every claim before anyone sees it.

A :class:`Generator` receives a :class:`GenerationRequest` — the decided result (status,
slots, values), the request's evidence (``E1``, ``E2``, … inside the data boundary of
:mod:`rag_lab.retrieval.package`) and the question's language — and returns a
:class:`Draft`: its raw output (kept in the trace, so a run can be replayed) and the claims
it parsed from it (``{"text": …, "evidence": ["E1", …]}``). Implementations:

- :class:`~rag_lab.generation.composer.Composer` — the default, deterministic;
- :class:`~rag_lab.generation.openai.ChatEndpointGenerator` — any OpenAI-compatible
  chat-completions endpoint (standard library HTTP, timeouts, size caps);
- :class:`RecordedGenerator` — returns a raw output saved in a trace (replay, evaluation).

Every draft passes through :func:`rag_lab.generation.verify.verify_draft`. A generator never
changes the decision: status, reason, answer and citations come from the retrieval decision.

This package sits below ``retrieval`` (it imports only records and errors): the request
hook in ``retrieval/generate.py`` builds the request and records the events in the trace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from rag_lab.records import Result, Unit


@dataclass(frozen=True)
class EvidenceRef:
    """One entry of the request's evidence: ``ref`` (``E3``) → the whole unit."""

    ref: str
    unit: Unit
    in_context: bool  # True: in the packed context; False: audited only (cited by the decision)


@dataclass(frozen=True)
class GenerationRequest:
    question: str
    language: str  # "zh" or "en"
    decision: Result  # the decided result (without text/claims/coverage)
    evidence: list[EvidenceRef]
    package: str  # the evidence rendered inside the data boundary (every ref above)
    reserved_fields: frozenset[str] = frozenset()

    def ref_of(self, evidence_id: str) -> str | None:
        return next((e.ref for e in self.evidence if e.unit.get("evidence_id") == evidence_id), None)

    def refs_of(self, evidence_ids: list[str]) -> list[str]:
        refs = [self.ref_of(i) for i in evidence_ids]
        return [r for r in refs if r is not None]


@dataclass(frozen=True)
class Draft:
    """A generator's output: ``raw`` as received, ``claims`` as parsed (nothing verified yet)."""

    raw: str
    claims: list[dict[str, Any]]
    meta: dict[str, Any] = field(default_factory=dict)  # generator name, model, url, timings


class Generator(Protocol):
    """Writes claims for the answered part of a decided result."""

    @property
    def name(self) -> str: ...

    def describe(self) -> dict[str, Any]: ...

    def generate(self, request: GenerationRequest) -> Draft: ...


_CJK = re.compile("[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[A-Za-z]{2,}")


def language_of(question: str) -> str:
    """``en`` when the question is written in English around its names (at least two Latin words and
    more Latin letters than half its CJK characters: ``What is 借阅台 开放时间?``), else ``zh``."""
    cjk = len(_CJK.findall(question))
    words = _WORD.findall(question)
    letters = sum(len(w) for w in words)
    return "en" if cjk == 0 or (len(words) >= 2 and letters > cjk / 2) else "zh"


class RecordedGenerator:
    """Replays a raw output saved in a trace: nothing is called, the same parser runs again."""

    def __init__(self, recorded: dict[str, Any]) -> None:
        self._recorded = recorded

    @property
    def name(self) -> str:
        return str(self._recorded.get("generator", "recorded"))

    def describe(self) -> dict[str, Any]:
        return {k: v for k, v in self._recorded.items() if k in ("generator", "model", "url")}

    def generate(self, request: GenerationRequest) -> Draft:
        from rag_lab.generation.parse import parse_output

        raw = str(self._recorded.get("raw", ""))
        return Draft(raw, parse_output(raw), {**self.describe(), "replayed": True})


__all__ = [
    "Draft",
    "EvidenceRef",
    "GenerationRequest",
    "Generator",
    "RecordedGenerator",
    "language_of",
]
