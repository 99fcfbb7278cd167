"""``novelty`` looks runs up from a per-claim table; it must count exactly as the plain loop."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.generation.verify import (
    FRAME_CHARS,
    FRAME_WORDS,
    NO_DATE_PHRASES,
    _is_cjk,
    bigrams,
    normalize,
    novelty,
)

CHARS = "甲乙丙丁的是为在生效日期未注明abc 。，１２"


def plain_novelty(claim: str, stuff: str, names: tuple[str, ...]) -> float:
    """The computation before the table: every CJK character checked in place."""
    text = normalize(claim)
    for phrase in NO_DATE_PHRASES + FRAME_WORDS:
        text = text.replace(phrase, "")
    cjk = [k for k, ch in enumerate(text) if _is_cjk(ch)]
    if not cjk:
        return 0.0
    covered = [False] * len(text)
    for name in names:
        start = text.find(name) if name else -1
        while start >= 0:
            covered[start : start + len(name)] = [True] * len(name)
            start = text.find(name, start + 1)
    grams = bigrams(stuff)
    novel = 0
    for k in cjk:
        if covered[k] or text[k] in FRAME_CHARS:
            continue
        if text[max(k - 1, 0) : k + 1] in grams or text[k : k + 2] in grams:
            continue
        novel += 1
    return novel / len(cjk)


@settings(max_examples=300, deadline=None)
@given(
    claim=st.text(alphabet=CHARS, max_size=20),
    stuff=st.text(alphabet=CHARS, max_size=20),
    names=st.lists(st.text(alphabet=CHARS, max_size=4), max_size=3),
)
def test_novelty_counts_as_the_plain_loop(claim: str, stuff: str, names: list[str]) -> None:
    expected = plain_novelty(claim, stuff, tuple(names))
    assert novelty(claim, stuff, tuple(names)) == expected
    assert novelty(claim, stuff, tuple(names), bigrams(stuff)) == expected


@given(st.text(max_size=30))
def test_bigrams_are_the_two_character_slices(stuff: str) -> None:
    assert bigrams(stuff) == frozenset(stuff[k : k + 2] for k in range(len(stuff) - 1))


NEGATION_CHARS = "不没無无未非开放禁止周一ab 。"


def plain_dropped_negations(claim: str, value: str) -> list[str]:
    """``dropped_negations`` as every character of the value was tested in turn."""
    from rag_lab.generation.verify import NEGATIONS_ZH

    text, value = normalize(claim), normalize(value)
    out = []
    for k, ch in enumerate(value):
        words = value[k + 1 : k + 3]
        if ch in NEGATIONS_ZH and len(words) == 2 and words in text and ch + words not in text:
            out.append(f"negation '{ch + words}' dropped")
    return out


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=NEGATION_CHARS, max_size=12), st.text(alphabet=NEGATION_CHARS, min_size=1, max_size=12))
def test_negations_are_found_as_the_character_loop_finds_them(claim: str, value: str) -> None:
    from rag_lab.generation.verify import NEGATIONS_ZH, Fact, dropped_negations, facts_of

    assert dropped_negations(claim, {"value": value}) == plain_dropped_negations(claim, value)
    vocabulary = sorted({value[:2], value[1:4]} - {""}, key=lambda w: (-len(w), w))
    facts = facts_of(claim, [normalize(v) for v in vocabulary])
    names = [f for f in facts if f.kind == "name"]
    text = normalize(claim)
    for phrase in NO_DATE_PHRASES:
        text = text.replace(phrase, " ")
    taken = [False] * len(text)
    for name in (f.text for f in names):
        start = text.find(name)
        while start >= 0:
            if not any(taken[start : start + len(name)]):
                taken[start : start + len(name)] = [True] * len(name)
            start = text.find(name, start + 1)
    want = [Fact("negation", ch) for k, ch in enumerate(text) if ch in NEGATIONS_ZH and not taken[k]]
    assert [f for f in facts if f.kind == "negation" and f.text in NEGATIONS_ZH] == want
