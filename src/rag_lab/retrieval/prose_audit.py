"""The conflict audit of a prose answer: a bounded look past the top k (docs/prose.md).

A key question's audit reads every unit of its (subject, field) key, a set the index holds.
A prose question has no key: the sentences that could contradict an answer are the ones that
pass the same support check, and finding *all* of them would mean checking every sentence of
the corpus per question. The audit instead takes the lexical (BM25) top ``AUDIT_POOL`` prose
units for the question — a set whose size does not grow with the corpus, ranked the same way
with or without vectors — and keeps those the caller may see that pass the support check
(answering/support.py). Each kept unit is verified against its file before it counts. The
decision uses them only to find a different value from independent bytes
(``conflicting_evidence``); they never become the answer.

Limit (documented, measured nowhere as zero): a contradicting sentence ranked below
``AUDIT_POOL`` for the question is not found. Without an index (``answer()`` on files) the
audit is skipped and the support scope says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from rag_lab.index.backend import Store
from rag_lab.records import Candidate, Unit
from rag_lab.retrieval.expand import paragraph_units
from rag_lab.retrieval.rank import Ranking, rank
from rag_lab.retrieval.sources import EvidenceSource

if TYPE_CHECKING:
    from rag_lab.answering.support import Support

AUDIT_POOL = 50
#: how many units ``units_about`` looks at for a piece of the question
ABOUT_POOL = 10


def audit_units(
    question: str,
    source: EvidenceSource,
    seen: set[str],
    verify: Callable[[Unit], None],
    ranking: Ranking | None = None,
) -> list[tuple[Unit, Support]] | None:
    """Prose units of the lexical top ``AUDIT_POOL`` not in ``seen`` that pass the support
    check, each verified (``verify`` raises on failure), with their checks (``support_check``'s,
    for the decision to reuse); None when ``source`` is no index. ``ranking``: the request's
    scoring of ``question`` on ``source``; when it lifted no key its top ``AUDIT_POOL`` is
    ``rank(question, source, AUDIT_POOL)``'s (one total order), so the question is not scored again."""
    from rag_lab.answering.support import audit_support

    if not isinstance(source, Store):  # the files themselves (CorpusSource): no index to rank
        return None
    found: list[tuple[Unit, Support]] = []
    reuse = ranking is not None and ranking.question == question and ranking.index is source and not ranking.lifted
    pool = ranking.top(AUDIT_POOL) if ranking is not None and reuse else rank(question, source, AUDIT_POOL)[0]
    for unit in _visible_prose(pool, source):
        if unit["evidence_id"] in seen:
            continue
        support = audit_support(question, unit)  # support_check(question, unit) when it passes
        if support is not None:
            verify(unit)
            found.append((unit, support))
    return found


def units_about(words: str, source: EvidenceSource, verify: Callable[[Unit], None]) -> list[Unit]:
    """The prose units of the lexical top ``ABOUT_POOL`` for ``words`` alone that the caller may
    see, each verified: whether the corpus has a document about a piece of the question that a
    passing sentence does not say (answering/prose.py, ``about``). Empty without an index."""
    if not isinstance(source, Store):
        return []
    found = list(_visible_prose(rank(words, source, ABOUT_POOL, named_keys_first=False)[0], source))
    for unit in found:
        verify(unit)
    return found


def _visible_prose(candidates: list[Candidate], source: Store) -> Iterator[Unit]:
    """The prose units of ``candidates``, in order, that the caller may see."""
    from rag_lab.answering.prose import PROSE_KINDS

    for candidate in candidates:
        unit = candidate["evidence"]
        if unit.get("kind") in PROSE_KINDS and source.may_see(unit):
            yield unit


def previous_sentence(source: EvidenceSource, unit: Unit) -> Unit | None:
    """The sentence unit of the same file whose span ends where ``unit``'s begins, in the same
    paragraph, that the caller may see (answering/prose.py joins a reason said across two
    sentences); None without an index or when there is none."""
    if not isinstance(source, Store) or unit.get("kind") != "sentence" or unit.get("parent_span") is None:
        return None
    for other in paragraph_units(unit, source):  # the units starting in its paragraph
        if (
            other.get("kind") == "sentence"
            and other.get("parent_span") == unit["parent_span"]
            and other["span"][1] == unit["span"][0]
            and source.may_see(other)
        ):
            return other
    return None
