"""``generation.verify.normalize``'s plain-text path equals NFKC + case fold by unicodedata."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.generation import verify
from rag_lab.generation.verify import _NFKC_PLAIN, normalize


def reference(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


PLAIN = [chr(c) for c in range(0x110000) if c < 0xD800 or c > 0xDFFF if _NFKC_PLAIN.fullmatch(chr(c))]


def test_every_plain_character_is_its_nfkc() -> None:
    assert len(PLAIN) == 128 + 2 + 4 + 2 + (0x9FFF - 0x4E00 + 1) + 94
    for ch in PLAIN:
        assert normalize.__wrapped__(ch) == reference(ch), hex(ord(ch))
        # a starter with no canonical decomposition: it neither composes nor reorders
        assert unicodedata.combining(ch) == 0
        assert not unicodedata.decomposition(ch) or unicodedata.decomposition(ch).startswith("<wide>")


def test_no_plain_character_is_the_second_of_a_composition() -> None:
    plain = set(PLAIN)
    for code in range(0x110000):
        parts = unicodedata.decomposition(chr(code)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):  # a canonical pair: first + second
            assert chr(int(parts[1], 16)) not in plain, hex(code)


OTHERS = "\u0301\u0308\u1161\u3000\u3099\u302a\uac00\u1100\ufb01\u2460\u00e9e\u212b\uf900\u3131\ufe30·—\u00a0"


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(PLAIN[:200] + PLAIN[-120:] + list("主题字段值：，。？！（）「」") + list(OTHERS)),
               max_size=40))
def test_normalize_equals_unicodedata(text: str) -> None:
    verify.normalize.cache_clear()
    assert normalize(text) == reference(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30))
def test_any_text(text: str) -> None:
    assert normalize.__wrapped__(text) == reference(text)
