"""``rag_lab.text.nfkc_fold`` equals NFKC + case fold by unicodedata, for any text.

Every BMP character alone, after a base letter and before a combining mark; generated texts,
arbitrary and biased toward what could go wrong: the full-width forms it maps to ASCII next to
combining marks (＜ + U+0338 is ≮, Ａ + U+0301 is Á), half-width katakana and their voiced marks
(just past the mapped range), jamo and syllables, ligatures, compatibility ideographs, ß, İ and
astral characters; texts of ``_LONG`` characters or more (mapped by numpy). The memoised users
(``answering.terms.norm``, ``generation.verify.normalize``) are one ``nfkc_fold`` behind an lru_cache.
"""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.answering import terms
from rag_lab.generation import verify
from rag_lab.text import _LONG, _narrow, _narrow_long, nfkc_fold


def reference(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


MAPPED = [chr(c) for c in range(0xFF01, 0xFF5F)] + ["\u3000"]


def test_every_bmp_character_alone_after_a_base_and_before_a_combining_mark() -> None:
    for code in range(0x10000):
        ch = chr(code)
        for text in (ch, "a" + ch, "Ａ" + ch, ch + "\u0301", ch + "\u0338", ch + "\u3099", "\u1100" + ch):
            assert nfkc_fold(text) == reference(text), (hex(code), text)


def test_both_ways_of_mapping_agree_on_every_code_point_and_the_long_way_is_used_on_long_text() -> None:
    every = "".join(chr(code) for code in range(0x110000))  # lone surrogates too
    assert _narrow_long(every) == _narrow(every)
    assert len(_narrow(every)) == len(every)
    mixed = "ＡＢＣ\u0301　＜\u0338主题：ＣＰＵ类型，ß İ ﬁ\u1100\u1161" * (_LONG // 10)
    assert len(mixed) >= _LONG and nfkc_fold(mixed) == reference(mixed)


def test_each_mapped_character_decomposes_to_one_ascii_character_that_decomposes_no_further() -> None:
    for ch in MAPPED:
        kind, code = unicodedata.decomposition(ch).split()
        assert kind == "<wide>" and len(code) == 4 and int(code, 16) < 0x80, hex(ord(ch))
        assert unicodedata.decomposition(chr(int(code, 16))) == ""


def test_no_ascii_character_is_the_second_of_a_canonical_composition() -> None:
    for code in range(0x110000):
        parts = unicodedata.decomposition(chr(code)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):  # a canonical pair: first + second
            assert int(parts[1], 16) >= 0x80, hex(code)


def test_a_mapped_character_composes_as_its_ascii_would() -> None:
    for text, expected in (("＜\u0338", "≮"), ("＝\u0338", "≠"), ("Ａ\u0301", "á"), ("ｅ\u0308ｓ", "ës"),
                           ("ｶﾞ", "ガ"), ("\u3000\u0301", " \u0301"), ("ﬁＸ", "fix"), ("ＳＳß", "ssss")):
        assert nfkc_fold(text) == reference(text) == expected, text


TRICKY = (
    MAPPED[:20] + MAPPED[-20:]
    + [chr(c) for c in range(0x0300, 0x0370, 7)]  # combining marks
    + list("\u1100\u1161\u11a8\u3131\u314f\uac00\uac01\ud7a3")  # jamo, compatibility jamo, syllables
    + list("\ufb00\ufb01\ufb02\ufb03\ufb06\u2460\u00bd\u2126\u212b\u1e9e")  # ligatures, compatibility
    + list("\uf900\uf91c\ufa10\ufa2e\u2f00\u3300")  # compatibility ideographs, radicals, squares
    + list("ßİıſςΣ\u0345")  # case-folding specials
    + list("\uff61\uff76\uff8a\uff9e\uff9f\uff5f\uff60\uffe0\uffe5\u3099\u309a\u304b")  # past FF5E
    + list("\U0001d400\U0001d7ce\U0002f800\U0001f600\U00010400\U0001f1e8")  # astral
    + list("aZ09 <=>.,_\x01\x00主题字段值、。「」")
)


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet=st.sampled_from(TRICKY), max_size=40))
def test_tricky_texts(text: str) -> None:
    assert nfkc_fold(text) == reference(text)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=40))
def test_any_text(text: str) -> None:
    assert nfkc_fold(text) == reference(text)


@settings(max_examples=50, deadline=None)
@given(st.text(alphabet=st.sampled_from(TRICKY), min_size=1, max_size=40), st.text(max_size=40))
def test_long_texts(tricky: str, any_text: str) -> None:
    text = (tricky + any_text) * (_LONG // len(tricky + any_text) + 1)  # past _LONG: the numpy way
    assert len(text) >= _LONG and nfkc_fold(text) == reference(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(TRICKY), max_size=40))
def test_the_memoised_users_are_nfkc_fold(text: str) -> None:
    assert verify.normalize.__wrapped__ is nfkc_fold
    verify.normalize.cache_clear()
    terms.norm.cache_clear()
    for _ in range(2):  # a miss, then a hit
        assert verify.normalize(text) == terms.norm(text) == reference(text)
