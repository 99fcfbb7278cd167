"""Property-based tests: parser and spans, packing, verification (issue 7, item 4).

Documents are generated line by line with known contents (field lines, prose, blank
lines, indentation, LF or CRLF, an optional BOM, CJK, emoji and combining marks), so the
expected units are known by construction and compared with what the parser returns.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rag_lab.data.documents import parse_document
from rag_lab.retrieval import pack_context
from rag_lab.retrieval.verify import SourceReader, verify_unit

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# name and value characters: CJK, Latin, digits, emoji, a combining mark, inner spaces
NAME_CHARS = st.sampled_from(list("借阅台开放时间地点电话甲乙丙abcXYZ019é😀") + ["e\u0301"])
VALUE_CHARS = st.sampled_from(list("九点到十七。，、：:abc 019😀（）#-") + ["a\u0301", "\u3000"])


def _no_edge_space(text: str) -> bool:
    return text == text.strip() and text != ""


NAMES = st.lists(NAME_CHARS, min_size=1, max_size=6).map("".join).filter(lambda n: n != "主题")
VALUES = st.lists(VALUE_CHARS, min_size=1, max_size=12).map("".join).filter(_no_edge_space)
PROSE = st.sampled_from(["# 标题", "", "   ", "这是正文，没有字段。", "- 列表项", "http://x.cn/a:b"])


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, list[tuple[str, str, str]]]:
    """(document text, expected (subject, field, value) triples in order)."""
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    lines: list[str] = []
    expected: list[tuple[str, str, str]] = []
    subject: str | None = None
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["subject", "field", "field", "prose"]))
        indent = draw(st.sampled_from(["", "", "  ", "\t"]))
        if kind == "subject":
            subject = draw(VALUES)
            lines.append(f"{indent}主题：{subject}")
        elif kind == "field":
            name, value = draw(NAMES), draw(VALUES)
            lines.append(f"{indent}{name}：{value}")
            if subject is not None:
                expected.append((subject, name, value))
        else:
            lines.append(draw(PROSE))
    text = newline.join(lines) + draw(st.sampled_from(["", newline]))
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text, expected


def parse(text: str, source: str = "documents/p.md") -> list[dict[str, Any]]:
    """The field units (prose units have their own properties: tests/data/test_prose.py)."""
    data = text.encode("utf-8")
    return [u for u in parse_document(source, data, hashlib.sha256(data).hexdigest()).units if "kind" not in u]


@FAST
@given(documents())
def test_rel_parser_finds_exactly_the_field_lines(doc: tuple[str, list[tuple[str, str, str]]]) -> None:
    text, expected = doc
    units = parse(text)
    assert [(u["subject"], u["field"], u["value"]) for u in units] == expected


@FAST
@given(documents())
def test_rel_every_span_reconstructs_its_line(doc: tuple[str, list[tuple[str, str, str]]]) -> None:
    text, _ = doc
    units = parse(text)
    for unit in units:
        start, end = unit["span"]
        assert text[start:end] == unit["text"] == f"{unit['field']}：{unit['value']}"
        assert text.split("\n")[unit["line"] - 1].strip() == unit["text"]
        assert "\ufeff" not in unit["text"]
    assert len({u["evidence_id"] for u in units}) == len(units)


# -- packing ------------------------------------------------------------------------------------


@st.composite
def candidate_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    sizes = draw(st.lists(st.integers(0, 60), max_size=25))
    return [
        {"evidence": {"evidence_id": f"ev_{i:03d}", "text": "字" * n}, "score": float(100 - i)}
        for i, n in enumerate(sizes)
    ]


@FAST
@given(candidate_lists(), st.integers(0, 300))
def test_rel_packing_is_greedy_whole_and_within_budget(cands: list[dict[str, Any]], budget: int) -> None:
    kept, report = pack_context(cands, budget)
    used = sum(len(c["evidence"]["text"]) for c in kept)
    assert used == report["characters"] <= budget
    # kept units are whole, in rank order, and are the very candidates given
    assert all(any(k is c for c in cands) for k in kept)
    assert [cands.index(k) for k in kept] == sorted(cands.index(k) for k in kept)
    skipped = {s["evidence_id"]: s for s in report["skipped"]}
    assert len(kept) + len(skipped) == len(cands)
    # greedy: a unit was skipped exactly when it did not fit what was left at its turn
    left = budget
    for rank, cand in enumerate(cands, 1):
        size = len(cand["evidence"]["text"])
        eid = cand["evidence"]["evidence_id"]
        if size <= left:
            assert eid not in skipped
            left -= size
        else:
            assert skipped[eid] == {
                "evidence_id": eid,
                "rank": rank,
                "characters": size,
                "reason": "over_budget",
                "remaining": left,
            }


# -- verification --------------------------------------------------------------------------------

CORPUS_DOC = "\ufeff# 说明\r\n主题：借阅台\r\n开放时间：九点到十七点。\r\n地点：一楼 😀 e\u0301\r\n"


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_rel_any_byte_change_in_a_cited_file_fails_verification(data: st.DataObject) -> None:
    folder = Path(tempfile.mkdtemp(prefix="rel-verify-"))
    try:
        original = CORPUS_DOC.encode("utf-8")
        (folder / "documents").mkdir()
        path = folder / "documents/a.md"
        units = parse(CORPUS_DOC, "documents/a.md")
        assert len(units) == 2
        unit = data.draw(st.sampled_from(units))
        path.write_bytes(original)
        assert verify_unit(unit, SourceReader(folder)).ok
        kind = data.draw(st.sampled_from(["replace", "insert", "delete", "truncate", "append"]))
        pos = data.draw(st.integers(0, len(original) - 1))
        if kind == "replace":
            byte = data.draw(st.integers(0, 255).filter(lambda b: b != original[pos]))
            changed = original[:pos] + bytes([byte]) + original[pos + 1 :]
        elif kind == "insert":
            changed = original[:pos] + data.draw(st.binary(min_size=1, max_size=3)) + original[pos:]
        elif kind == "delete":
            changed = original[:pos] + original[pos + 1 :]
        elif kind == "truncate":
            changed = original[:pos]
        else:
            changed = original + data.draw(st.binary(min_size=1, max_size=3))
        assume(changed != original)
        path.write_bytes(changed)
        outcome = verify_unit(unit, SourceReader(folder))
        assert not outcome.ok
        assert outcome.failed_check == "sha256" and outcome.checks[:2] == ["path", "exists"]
        assert "documents/a.md now has sha256" in str(outcome.detail)
    finally:
        shutil.rmtree(folder)


@settings(max_examples=100, deadline=None)
@given(documents(), st.data())
def test_rel_a_unit_with_any_other_span_fails_verification(
    doc: tuple[str, list[tuple[str, str, str]]], data: st.DataObject
) -> None:
    text, _ = doc
    units = parse(text, "documents/a.md")
    assume(units)
    folder = Path(tempfile.mkdtemp(prefix="rel-span-"))
    try:
        (folder / "documents").mkdir()
        (folder / "documents/a.md").write_bytes(text.encode("utf-8"))
        unit = dict(data.draw(st.sampled_from(units)))
        start, end = unit["span"]
        shift = data.draw(st.sampled_from([(-1, -1), (1, 1), (0, -1), (1, 0), (0, 1), (-1, 0)]))
        unit["span"] = [start + shift[0], end + shift[1]]
        piece = text[max(unit["span"][0], 0) : unit["span"][1]].strip()
        assume(piece != unit["text"])  # e.g. a shift onto indentation still reads the line
        outcome = verify_unit(unit, SourceReader(folder))
        assert (outcome.ok, outcome.failed_check) == (False, "span")
    finally:
        shutil.rmtree(folder)
