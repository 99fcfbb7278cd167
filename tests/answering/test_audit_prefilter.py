"""The conflict audit's pre-filter (issue 18, preq12): ``support._may_pass`` is False only for a
unit the full check fails, so ``audit_support`` is exactly the check it skips.

* with every cache of the check cold: ``_may_pass`` False ⇒ ``_graded(…, verdict_only=True).ok`` is
  False, and ``audit_support`` is ``support_check`` when it passes, None otherwise — on questions
  and sentences drawn from a vocabulary that makes every rule meet (cue words and their cues, kinds
  and their instances, answer heads, digits, Latin runs, one piece unsaid, a context naming part
  of a term), and on the demo prose corpus's questions against every one of its sentences;
* ``terms.norm`` memoised is NFKC + casefold; ``terms._split_by_context`` growing each match from
  its bigram is the longest-first search it replaced; ``_framed``'s parts' bigrams said by the
  context, found by substring, are those among the context's ``bigrams``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.answering import answer_types, support, terms
from rag_lab.answering.support import audit_support, support_check
from rag_lab.data.documents import parse_document
from rag_lab.demo import prose_corpus_path, prose_questions_path
from rag_lab.records import Unit

#: words the questions and sentences share, so that coverage, cues, kinds and pieces all meet
SUBJECTS = ("沧澜博雅学堂", "杏坛学堂", "王家瑞", "东湖校区", "新图书馆", "比尔·兰比尔", "丙烯颜料")
WORDS = (
    "位于", "出生", "生于", "出生于", "得名", "命名", "美誉", "誉为", "职业", "漫画家", "季节", "秋季",
    "开花", "担任", "省长", "职务", "扩建", "主持", "完成", "第二次", "工作人员", "开放", "溶于", "汽油",
    "原因", "特征", "因为", "所以", "北门", "西侧", "湖边", "名字", "英文名", "英文", "故名", "1884年",
    "2023年10月8日", "abc", "3.5", "446名", "市", "区", "路", "号",
)  # fmt: skip
ASK = ("哪里", "什么", "谁", "多少", "什么时候", "为什么", "吗", "哪些", "什么季节", "什么职务", "如何")
PUNCT = ("，", "。", "、", "：", " ", "（", "）")


def _clear() -> None:
    for module in (support, terms, answer_types):
        for value in vars(module).values():
            if isinstance(value, functools._lru_cache_wrapper):
                value.cache_clear()


def _expected(question: str, unit: Unit) -> support.Support | None:
    full = support_check(question, unit)
    return full if full.ok else None


def _agrees(question: str, unit: Unit) -> None:
    _clear()
    graded = support._graded(question, unit, None, True)
    framed = support._framed(question, support.unit_context(unit))
    if not support._may_pass(question, str(unit.get("text", "")), unit, framed):
        assert not graded.ok, (question, unit["text"])
    _clear()
    expected = _expected(question, unit)
    _clear()
    assert audit_support(question, unit) == expected
    assert audit_support(question, unit) == expected  # warm


words = st.sampled_from(SUBJECTS + WORDS)
chars = st.text(alphabet="的是在有了和学堂位于哪里王生名春秋季节市区路号", max_size=3)


@st.composite
def questions(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.one_of(words, chars), min_size=1, max_size=4))
    ask = draw(st.sampled_from(ASK))
    at = draw(st.integers(0, len(parts)))
    return "".join(parts[:at]) + ask + "".join(parts[at:]) + draw(st.sampled_from(("？", "?", "")))


@st.composite
def units(draw: st.DrawFn) -> Unit:
    pieces = draw(st.lists(st.one_of(words, chars, st.sampled_from(PUNCT)), min_size=1, max_size=10))
    text = "".join(pieces) + draw(st.sampled_from(("。", "！", "")))
    title = draw(st.one_of(st.sampled_from(SUBJECTS), chars))
    headings = draw(st.lists(st.one_of(st.sampled_from(SUBJECTS + WORDS), chars), max_size=2))
    start = draw(st.integers(0, 3))
    return {
        "evidence_id": "ev_x", "text": text, "kind": "sentence", "title": title, "headings": headings,
        "span": [start, start + len(text)], "parent_span": [0, start + len(text) + 5], "source": "a.md",
    }  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(questions(), units())
def test_the_prefilter_skips_only_checks_that_fail(question: str, unit: Unit) -> None:
    _agrees(question, unit)


@settings(max_examples=300, deadline=None)
@given(questions(), st.lists(units(), min_size=2, max_size=6))
def test_the_audit_support_of_sentences_in_any_order_is_the_check(question: str, found: list[Unit]) -> None:
    """Several sentences under one question, caches warm between them (as in one request)."""
    _clear()
    expected = [_expected(question, unit) for unit in found]
    _clear()
    assert [audit_support(question, unit) for unit in found] == expected
    assert [audit_support(question, unit) for unit in reversed(found)] == expected[::-1]


def _demo_units() -> list[Unit]:
    found: list[Unit] = []
    for path in sorted((prose_corpus_path() / "documents").rglob("*.md")):
        data = path.read_bytes()
        parsed = parse_document(path.name, data, hashlib.sha256(data).hexdigest())
        found += [u for u in parsed.units if u.get("kind") == "sentence"]
    return found


def test_the_prefilter_on_the_demo_corpus() -> None:
    """Every demo prose question against every sentence of the corpus (some pass: not vacuous)."""
    asked = [json.loads(line)["question"] for line in prose_questions_path().read_text(encoding="utf-8").splitlines()]
    found = _demo_units()
    passed = skipped = 0
    for question in asked:
        for unit in found:
            framed = support._framed(question, support.unit_context(unit))
            may = support._may_pass(question, str(unit.get("text", "")), unit, framed)
            full = support_check(question, unit)
            assert may or not full.ok, (question, unit["text"])
            assert audit_support(question, unit) == (full if full.ok else None)
            passed += full.ok
            skipped += not may
    assert passed > len(asked) // 2 and skipped > len(asked) * len(found) // 2


@given(st.text(max_size=20))
def test_memoised_norm_is_nfkc_casefold(text: str) -> None:
    assert terms.norm(text) == unicodedata.normalize("NFKC", text).casefold()
    assert terms.norm(text) == unicodedata.normalize("NFKC", text).casefold()


def _split_longest_first(terms_: tuple[str, ...], context: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``terms._split_by_context`` as it was before preq12 (longest match first at each place)."""
    named: list[str] = []
    pieces: list[str] = []
    for term in terms_:
        i, current = 0, ""
        while i < len(term):
            length = next((n for n in range(len(term) - i, 1, -1) if term[i : i + n] in context), 0)
            if length:
                named.append(term[i : i + length])
                if current:
                    pieces.append(current)
                current, i = "", i + length
            else:
                current, i = current + term[i], i + 1
        if current:
            pieces.append(current)
    return tuple(named), tuple(pieces)


small = st.text(alphabet="沧澜博雅学堂位于王生ab1", min_size=1, max_size=9)


@settings(max_examples=800, deadline=None)
@given(st.lists(small, min_size=1, max_size=4), st.text(alphabet="沧澜博雅学堂位于王生ab1 ，·", max_size=16))
def test_the_split_grown_from_its_bigram_is_the_longest_first_split(found: list[str], context: str) -> None:
    assert terms._split_by_context.__wrapped__(tuple(found), context) == _split_longest_first(tuple(found), context)


@settings(max_examples=500, deadline=None)
@given(questions(), units())
def test_the_parts_said_by_the_context_are_among_its_bigrams(question: str, unit: Unit) -> None:
    framed = support._framed.__wrapped__(question, support.unit_context(unit))
    assert framed.in_context == framed.grams & frozenset(terms.bigrams(framed.context))
    assert framed.rest == framed.grams - framed.in_context


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(WORDS + ASK), chars), min_size=3, max_size=3))
def test_the_cue_word_a_question_ends_with_is_found_once(ends: list[str]) -> None:
    from rag_lab.answering.align import CUE_WORDS, _cue_asked

    assert _cue_asked(tuple(ends)) == next((w for w in CUE_WORDS if any(e.endswith(w) for e in ends)), "")
