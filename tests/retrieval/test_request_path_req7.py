"""Shortcuts of the request path (issue 18, req7) give what the plain computation gives.

* ``ordinary_spans`` and ``strip_lead_ins`` by first character = every phrase tried;
* ``find_matches`` / ``find_folded_matches`` looking up the set of substrings and finding the
  known names' places afterwards = the dict of every substring with its places;
* ``SourceReader`` checking a folder once per reader still refuses a symlinked folder or file;
* ``split_sentences`` cutting at the end characters a regular expression finds = the loop over
  every character; ``language_of`` counting CJK by a regular expression = the character test.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.data.names import fold, folded_positions
from rag_lab.retrieval.ordinary import ORDINARY_PHRASES, is_ordinary, ordinary_spans, splits_latin_word
from rag_lab.retrieval.question import Match, find_folded_matches, find_matches

PHRASE_CHARS = "".join(sorted(set("".join(ORDINARY_PHRASES))))
NAMES = ["甲馆", "是", "什么", "馆", "甲馆甲", "ＡＢ", "ab", "ｃｐｕ", "cpu", "时间", "开放时间", "間", "ﬁ馆"]
QUESTION = st.text(alphabet=st.sampled_from(PHRASE_CHARS[:40] + "甲馆开放时间ＡＢabCPUｃｐｕﬁ間？ ·"), max_size=18)


def plain_ordinary_spans(question: str) -> list[tuple[int, int]]:
    spans = []
    for phrase in ORDINARY_PHRASES:
        start = question.find(phrase)
        while start >= 0:
            spans.append((start, start + len(phrase)))
            start = question.find(phrase, start + 1)
    return sorted(spans)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(PHRASE_CHARS + "甲馆？ a"), max_size=24))
def test_ordinary_spans_equal_searching_every_phrase(question: str) -> None:
    assert ordinary_spans(question) == plain_ordinary_spans(question)


class _Names:
    """The name lookups of an EvidenceSource over a fixed list (kinds by position)."""

    def __init__(self, names: list[str]) -> None:
        self.kinds = {n: {"subject"} if k % 2 else {"field", "subject"} for k, n in enumerate(names)}
        self.asked: list[set[str]] = []

    def name_length_range(self) -> tuple[int, int]:
        lengths = [n for name in self.kinds for n in {len(name), len(fold(name))}]
        return min(lengths), max(lengths)

    def name_kinds(self, candidates: Iterable[str]) -> dict[str, set[str]]:
        wanted = set(candidates)
        self.asked.append(wanted)
        return {n: set(self.kinds[n]) for n in sorted(wanted) if n in self.kinds}

    def folded_name_kinds(self, candidates: Iterable[str]) -> dict[str, set[tuple[str, str]]]:
        found: dict[str, set[tuple[str, str]]] = {}
        for name, kinds in self.kinds.items():
            for text in {name, fold(name)}:
                if text in set(candidates):
                    found.setdefault(text, set()).update((name, k) for k in kinds)
        return found


def plain_find_matches(question: str, source: _Names) -> list[Match]:
    shortest, longest = source.name_length_range()
    spans: dict[str, list[tuple[int, int]]] = {}
    for start in range(len(question)):
        for end in range(start + max(shortest, 1), min(start + longest, len(question)) + 1):
            spans.setdefault(question[start:end], []).append((start, end))
    ordinary = plain_ordinary_spans(question)
    found = [
        Match(s, e, name, frozenset(kinds))
        for name, kinds in source.name_kinds(spans).items()
        for s, e in spans[name]
        if not is_ordinary(name, s, e, ordinary) and not splits_latin_word(question, s, e)
    ]
    return sorted(found, key=lambda m: (m.start, m.end))


def plain_find_folded_matches(question: str, source: _Names) -> list[Match]:
    folded, origin = folded_positions(question)
    shortest, longest = source.name_length_range()
    if folded == question:
        return []
    spans: dict[str, list[tuple[int, int]]] = {}
    for start in range(len(folded)):
        for end in range(start + max(shortest, 1), min(start + longest, len(folded)) + 1):
            if (start == 0 or origin[start - 1] != origin[start]) and (
                end == len(folded) or origin[end] != origin[end - 1]
            ):
                spans.setdefault(folded[start:end], []).append((origin[start], origin[end - 1] + 1))
    ordinary = plain_ordinary_spans(question)
    found: dict[tuple[int, int, str], set[str]] = {}
    for text, pairs in source.folded_name_kinds(spans).items():
        for name, kind in pairs:
            for s, e in spans[text]:
                if not is_ordinary(name, s, e, ordinary) and not splits_latin_word(question, s, e):
                    found.setdefault((s, e, name), set()).add(kind)
    return [Match(s, e, name, frozenset(kinds)) for (s, e, name), kinds in sorted(found.items())]


@settings(max_examples=400, deadline=None)
@given(QUESTION, st.lists(st.sampled_from(NAMES), min_size=1, max_size=8, unique=True))
def test_find_matches_equal_the_dict_of_every_substring(question: str, names: list[str]) -> None:
    source = _Names(names)
    assert find_matches(question, source) == plain_find_matches(question, source)
    assert find_folded_matches(question, source) == plain_find_folded_matches(question, source)


def test_every_substring_is_asked_once() -> None:
    source = _Names(["甲馆", "馆"])
    found = find_matches("甲馆甲馆", source)
    assert [(m.start, m.end, m.name) for m in found] == [(0, 2, "甲馆"), (1, 2, "馆"), (2, 4, "甲馆"), (3, 4, "馆")]
    assert source.asked == [{"甲", "馆", "甲馆", "馆甲"}]


def test_a_reader_checks_each_folder_once_and_still_refuses_a_symlinked_one(tmp_path: Path) -> None:
    """``SourceReader`` lstat's a folder once per reader: sources in a real folder resolve inside
    ROOT, one below a symlinked folder is still resolved through it (and refused when it leads
    out), whichever order they come in; the final part is checked for every source."""
    from rag_lab.retrieval.verify import SourceReader

    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "docs" / "sub").mkdir(parents=True)
    outside.mkdir()
    for name in ("a.md", "b.md"):
        (root / "docs" / "sub" / name).write_text("x", encoding="utf-8")
    (outside / "c.md").write_text("x", encoding="utf-8")
    (root / "link").symlink_to(outside, target_is_directory=True)
    (root / "docs" / "sub" / "d.md").symlink_to(outside / "c.md")
    real = os.path.realpath(root)
    for order in (["docs/sub/a.md", "link/c.md", "docs/sub/b.md", "docs/sub/d.md"], ["link/c.md", "docs/sub/d.md", "docs/sub/a.md"]):
        reader = SourceReader(root)
        for source in order:
            target, problem = reader.locate(source)
            if source.startswith("docs/sub/") and source != "docs/sub/d.md":
                assert target == f"{real}/{source}" and problem is None
            else:
                assert target is None and "outside ROOT" in str(problem)


def plain_split_sentences(text: str, protected: list[str] | None = None) -> list[str]:
    from rag_lab.generation.parse import _ENDS, MARKER, blocked_positions

    blocked = blocked_positions(text, protected)
    pieces: list[str] = []
    current = ""
    i = 0
    while i < len(text):
        current += text[i]
        if text[i] in _ENDS and i not in blocked:
            marker = MARKER.match(text, i + 1)
            while marker:
                current += marker.group(0)
                i = marker.end() - 1
                marker = MARKER.match(text, i + 1)
            pieces.append(current)
            current = ""
        i += 1
    pieces.append(current)
    return [p.strip() for p in pieces if p.strip()]


SENTENCE_BITS = ["甲馆", "开放", "。", "！", "?", "；", ";", "\n", " ", "[E1]", "【E2】", "[E1; E3]", "[E1；\nE2]", "[E", "]", "九点。下午"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(SENTENCE_BITS), max_size=14), st.lists(st.sampled_from(["九点。下午", "。", "开放。甲"]), max_size=2))
def test_split_sentences_by_end_positions_equals_the_character_loop(bits: list[str], protected: list[str]) -> None:
    from rag_lab.generation.parse import split_sentences

    text = "".join(bits)
    assert split_sentences(text, protected) == plain_split_sentences(text, protected)
    assert split_sentences(text) == plain_split_sentences(text)


def plain_strip_lead_ins(text: str) -> str:
    from rag_lab.retrieval.ordinary import BRACKETS, LEAD_INS

    changed = True
    while changed:
        changed = False
        text = text.lstrip(" \u3000\t，,。？?！!：:；;…~～-—" + BRACKETS)
        for lead in LEAD_INS:
            if text.startswith(lead):
                text, changed = text[len(lead) :], True
                break
    return text


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["请问", "我想问", "我想问一下", "你知道", "问", "一下", "《", " ", "，", "甲馆", "的", "想"]), max_size=8))
def test_strip_lead_ins_by_first_character_equals_trying_every_lead_in(bits: list[str]) -> None:
    from rag_lab.retrieval.ordinary import strip_lead_ins

    assert strip_lead_ins("".join(bits)) == plain_strip_lead_ins("".join(bits))


def plain_language_of(question: str) -> str:
    import re

    cjk = sum(1 for ch in question if "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff")
    words = re.findall(r"[A-Za-z]{2,}", question)
    letters = sum(len(w) for w in words)
    return "en" if cjk == 0 or (len(words) >= 2 and letters > cjk / 2) else "zh"


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from("借阅台开放时间\u3400\u9fff\uf900\ufaff\u33ff\ufb00 What is ab?Ｗ😀"), max_size=20))
def test_language_of_counts_cjk_as_the_character_test(question: str) -> None:
    from rag_lab.generation import language_of

    assert language_of(question) == plain_language_of(question)


def test_control_characters_are_unicodes_category_cc_but_tab_and_line_ends() -> None:
    import sys
    import unicodedata

    from rag_lab.errors import QuestionError
    from rag_lab.retrieval.question import _CONTROL, check_question

    refused = {c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cc"} - {9, 10, 13}
    assert {c for c in range(sys.maxunicode + 1) if _CONTROL.match(chr(c))} == refused
    assert check_question("甲馆\t开放时间\r\n") == "甲馆\t开放时间\r\n"
    try:
        check_question("甲馆\x85开放")
    except QuestionError as exc:
        assert "U+0085 at code point 2" in str(exc)
    else:
        raise AssertionError("a control character was accepted")
