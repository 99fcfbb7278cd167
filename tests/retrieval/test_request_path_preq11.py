"""Reuse on the prose request path (issue 18, preq11) gives what the plain computation gives.

* the conflict audit's support check of a passing unit (``support.audit_support``) is the
  decision's ``support_check`` of it, with every cache of the check cold or warm, in any order, so
  ``decide_prose(audit_supports=...)`` decides exactly as when it checks the audit again;
* the per-(question, context) and per-(question, sentence) records (``support._framed``,
  ``support._said``) never carry one question's reading into another's check;
* ``Ranking.top(k)`` is the head of ``Ranking.top(50)`` and is ``rank(question, index, k)``,
  ties included (by id), and the audit over the request's ranking is the audit that ranks again;
* ``units_of_source_spanning`` is ``units_of_source`` filtered by span start, on both stores, and
  every sentence starts inside its paragraph (what parent expansion relies on).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from rag_lab.answering import answer_types, support, terms
from rag_lab.answering.prose import decide_prose
from rag_lab.answering.support import audit_support, passes, support_check
from rag_lab.demo import prose_corpus_path, prose_questions_path
from rag_lab.index import Index, build_index, default_index_path
from rag_lab.records import Unit
from rag_lab.retrieval.prose_audit import AUDIT_POOL, audit_units, previous_sentence
from rag_lab.retrieval.rank import rank, ranking

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

#: the same sentence in several files: equal BM25 scores, so only the id orders them
TIED = "东湖校区的新图书馆位于北门西侧的湖边。"
#: sentences with no character between them, in two paragraphs: previous sentences to find
ADJACENT = "# 牧场\n\n## 气候\n\n这里雨水充足。因此，畜牧业发达。草场很大。\n牧民很多。\n\n冬天很冷。所以牛羊要进棚。\n"
EXTRA_QUESTIONS = (
    "为什么这里畜牧业发达？",
    "新图书馆位于哪里？",
    "图书馆的馆长是谁？",
    "新馆共有多少个座位？",
    "东湖校区北门西侧有什么？",
    "游泳馆什么时候开放？",
)


@pytest.fixture(scope="module")
def root(store: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The prose demo corpus with tied and adjacent sentences, indexed once per store."""
    made = tmp_path_factory.mktemp(f"preq11_{store}") / "prose"
    shutil.copytree(prose_corpus_path(), made)
    for n in range(6):
        (made / "documents" / f"tied_{n}.md").write_text(f"# 湖边{n}\n\n{TIED}\n", encoding="utf-8")
    (made / "documents" / "pasture.md").write_text(ADJACENT, encoding="utf-8")
    build_index(made)
    return made


def _questions() -> list[str]:
    lines = prose_questions_path().read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines if line.strip()] + list(EXTRA_QUESTIONS)


def _sources(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in (root / "documents").rglob("*.md"))


def _units(root: Path) -> list[Unit]:
    with Index(default_index_path(root)) as index:
        return [u for s in _sources(root) for u in index.units_of_source(s) if u.get("kind") == "sentence"]


def _clear_caches() -> None:
    for module in (support, terms, answer_types):
        for value in vars(module).values():
            if isinstance(value, functools._lru_cache_wrapper):
                value.cache_clear()


def test_an_audit_support_is_the_fresh_support_check(root: Path) -> None:
    units = _units(root)
    pairs = list(itertools.product(_questions(), range(len(units))))
    expected = {}
    for q, i in pairs:
        _clear_caches()
        expected[(q, i)] = support_check(q, units[i])
    assert sum(s.ok for s in expected.values()) >= 20 and not all(s.ok for s in expected.values())
    assert any(s.unsaid for s in expected.values()) or any(s.problem == "terms" for s in expected.values())
    _clear_caches()
    for q, i in pairs + pairs[::-1]:  # warm caches, from other questions and other sentences
        fresh = expected[(q, i)]
        assert support_check(q, units[i]) == fresh, (q, units[i]["text"])
        assert audit_support(q, units[i]) == (fresh if fresh.ok else None), (q, units[i]["text"])
        assert passes(q, units[i]) is fresh.ok


def _reference(question: str, unit: Unit) -> support.Support:
    """The graded check as main made it before preq11: the records made afresh (uncached), the
    credited check made complete rather than verdict-only."""
    framed = support._framed.__wrapped__(question, support.unit_context(unit))
    said = support._said.__wrapped__(question, str(unit.get("text", "")))
    plain = support._check(question, unit, frozenset(), False, framed, said)
    if plain.ok or plain.problem != "terms" or len(plain.missing) != 1:
        return plain
    piece = plain.missing[0]
    if len(piece) < 2 or piece in support._asked(question).kind_words:
        return plain
    if support._may_go_unsaid(piece, framed, said):
        credited = support._check(question, unit, frozenset(terms.term_grams(piece)), False, framed, said)
        if credited.ok:
            return dataclasses.replace(credited, unsaid=(piece,))
    return plain


def test_the_check_equals_its_reference_made_afresh(root: Path) -> None:
    units = _units(root)
    _clear_caches()
    unsaid = 0
    for q, u in itertools.product(_questions(), units):
        want = _reference(q, u)
        assert support_check(q, u) == want, (q, u["text"])
        unsaid += bool(want.unsaid)
    assert unsaid >= 1  # the credited path is taken


def _decision(d: Any) -> tuple[Any, ...]:
    return (d.status, d.reason, d.message, d.answer, d.cited, d.sides, d.answer_span, d.independent, d.checks)


def test_a_decision_with_the_audit_s_supports_is_the_decision_that_checks_again(root: Path) -> None:
    units = _units(root)
    decided = 0
    for q in _questions():
        kept, others, audit = units[:3], units[3:6], units[6:]
        made = [support_check(q, u) for u in audit]
        passing = [(u, s) for u, s in zip(audit, made, strict=True) if s.ok]
        plain = decide_prose(q, kept, others, date(2026, 1, 1), [u for u, _ in passing])
        reused = decide_prose(
            q, kept, others, date(2026, 1, 1), [u for u, _ in passing], audit_supports=[s for _, s in passing]
        )
        assert plain is not None and reused is not None
        assert _decision(reused) == _decision(plain), q
        decided += bool(passing)
    assert decided >= 5


def test_top_k_is_the_head_of_one_total_order_ties_by_id(root: Path) -> None:
    with Index(default_index_path(root)) as index:
        for q in [*_questions(), TIED]:
            scored = ranking(q, index)
            pool = scored.top(AUDIT_POOL)
            for k in (1, 3, 5, 8):
                head = [(c["evidence"]["evidence_id"], c["score"]) for c in scored.top(k)]
                assert head == [(c["evidence"]["evidence_id"], c["score"]) for c in pool[:k]], (q, k)
                assert head == [(c["evidence"]["evidence_id"], c["score"]) for c in rank(q, index, k)[0]], (q, k)
        tied = [c for c in ranking(TIED, index).top(AUDIT_POOL) if c["evidence"]["text"] == TIED]
        assert len(tied) == 6 and len({c["score"] for c in tied}) == 1
        ids = index.ids_of([c["evidence"]["evidence_id"] for c in tied])
        assert ids == sorted(ids)  # equal scores: ascending ids


def _audited(found: list[tuple[Unit, Any]] | None) -> list[tuple[str, Any]]:
    assert found is not None
    return [(u["evidence_id"], s) for u, s in found]


def test_the_audit_over_the_request_s_ranking_is_the_audit_that_ranks_again(root: Path) -> None:
    with Index(default_index_path(root)) as index:
        checked = 0
        for q in _questions():
            seen = {c["evidence"]["evidence_id"] for c in rank(q, index, 2)[0]}
            fresh = _audited(audit_units(q, index, seen, lambda _u: None))
            scored = ranking(q, index)
            assert _audited(audit_units(q, index, seen, lambda _u: None, scored)) == fresh, q
            # a ranking of another question, or one that lifted keys, is never reused
            other = dataclasses.replace(scored, question=q + "？")
            lifted = dataclasses.replace(scored, info={**scored.info, "lifted_units": 1}, scores=-scored.scores)
            assert _audited(audit_units(q, index, seen, lambda _u: None, other)) == fresh, q
            assert _audited(audit_units(q, index, seen, lambda _u: None, lifted)) == fresh, q
            checked += bool(fresh)
        assert checked >= 5


def test_units_of_source_spanning_is_units_of_source_filtered(root: Path) -> None:
    with Index(default_index_path(root)) as index:
        for source in _sources(root):
            every = index.units_of_source(source)
            ranges = {(0, 10**9), (5, 40), (0, 0), (30, 31), (-5, 3)}
            ranges |= {tuple(u["parent_span"]) for u in every if u.get("parent_span")}  # type: ignore[misc]
            ranges |= {(u["span"][0], u["span"][1]) for u in every if u.get("span")}
            for start, end in sorted(ranges):
                want = [u for u in every if u.get("span") is not None and start <= u["span"][0] < end]
                assert index.units_of_source_spanning(source, start, end) == want, (source, start, end)
            for u in every:  # a sentence lies inside its paragraph: parent expansion reads only that
                if u.get("kind") == "sentence":
                    p0, p1 = u["parent_span"]
                    assert p0 <= u["span"][0] < p1 and u["span"][1] <= p1, (source, u["span"])


def test_the_previous_sentence_is_the_one_the_whole_file_gives(root: Path) -> None:
    with Index(default_index_path(root)) as index:
        found = 0
        for source in _sources(root):
            every = index.units_of_source(source)
            for u in every:
                if u.get("kind") != "sentence":
                    continue
                want = next(
                    (o for o in every
                     if o.get("kind") == "sentence" and o.get("parent_span") == u["parent_span"]
                     and o["span"][1] == u["span"][0]),
                    None,
                )  # fmt: skip
                assert previous_sentence(index, u) == want, (source, u["span"])
                found += want is not None
        assert found >= 4


def test_a_unit_found_by_evidence_id_is_the_same_remembered_or_searched(root: Path) -> None:
    """``unit_by_evidence_id`` (generation's lookup of cited units) answers from the rows the open
    index read already (``units_by_ids``) exactly what its binary search over ids answers."""
    units = _units(root)
    with Index(default_index_path(root)) as searched:
        expected = [searched.unit_by_evidence_id(u["evidence_id"]) for u in units]
    assert expected == units
    with Index(default_index_path(root)) as index:
        ids = index.ids_of([u["evidence_id"] for u in units])
        index.units_by_ids(ids[::2])  # half of them remembered
        assert [index.unit_by_evidence_id(u["evidence_id"]) for u in units] == expected
        assert index.unit_by_evidence_id("ev_" + "0" * 24) is None
