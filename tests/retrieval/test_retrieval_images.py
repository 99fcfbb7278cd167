"""Image questions: a closed grammar, re-measured pixels, refusal of unmeasured attributes."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from rag_lab.data import extract_corpus
from rag_lab.data.images import measure_png
from rag_lab.retrieval import answer, query_once

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

RED = "images/red_circle.png"


def test_image_unsupported_attribute(indexed_demo: Path) -> None:
    result = query_once("红色 小 圆形 材质", indexed_demo)
    assert (result["status"], result["reason"], result["answer"]) == ("refused", "unsupported_attribute", None)
    assert result["citations"] == []
    assert "'材质'" in result["message"]


def test_image_question_with_a_poison_word_is_refused(indexed_demo: Path) -> None:
    result = query_once("红色圆形是否有毒", indexed_demo)
    assert (result["reason"], result["answer"]) == ("unsupported_attribute", None)


def test_image_answer_remeasures(indexed_demo: Path) -> None:
    result = query_once("红色 小 圆形", indexed_demo)
    assert (result["status"], result["reason"], result["answer"]) == ("answered", None, "红色 小 圆形")
    assert result["support_scope"] == "complete_current_image_attribute_set"
    [cite] = result["citations"]
    assert (cite["source"], cite["modality"], cite["support_type"]) == (RED, "image", "remeasured_pixels")
    data = (indexed_demo / RED).read_bytes()
    assert cite["sha256"] == hashlib.sha256(data).hexdigest()
    measured = measure_png(data)  # the test measures the original itself
    assert cite["bbox"] == measured["bbox"] == [45, 45, 75, 75]
    assert (measured["color"], measured["size"], measured["shape"]) == ("红色", "小", "圆形")
    verify = [e for e in result["trace"]["events"] if e["step"] == "verify"]
    assert all(e["ok"] and e["checks"][-2:] == ["remeasure", "id"] for e in verify)


def test_image_question_without_size_matches_every_size(indexed_demo: Path) -> None:
    result = query_once("正方形", indexed_demo, top_k=5)
    assert (result["status"], result["answer"]) == ("answered", "蓝色 大 正方形；黄色 小 正方形")
    assert sorted(c["source"] for c in result["citations"]) == ["images/blue_square.png", "images/yellow_square.png"]
    blue = query_once("蓝色 正方形", indexed_demo)
    assert (blue["status"], blue["answer"]) == ("answered", "蓝色 大 正方形")
    assert [c["source"] for c in blue["citations"]] == ["images/blue_square.png"]


def test_word_order_and_punctuation_do_not_matter(indexed_demo: Path) -> None:
    for question in ("红色 圆形 小", "小 红色 圆形？"):
        assert query_once(question, indexed_demo)["answer"] == "红色 小 圆形"


def test_image_with_no_match_is_no_supporting_evidence(indexed_demo: Path) -> None:
    for question in ("紫色 圆形", "红色 大 圆形"):
        result = query_once(question, indexed_demo)
        assert (result["status"], result["reason"], result["answer"]) == ("refused", "no_supporting_evidence", None)


def test_tampered_image_unit_fails_remeasure(demo_root: Path) -> None:
    [record] = [r for r in extract_corpus(demo_root) if r.path == RED]
    unit = dict(record.units[0], bbox=[44, 45, 75, 75])
    result = answer("红色 小 圆形", [{"evidence": unit, "score": 1.0}], demo_root)
    assert result["reason"] == "source_verification_failed"
    assert result["verification_failure"]["failed_check"] == "remeasure"
    assert "bbox" in result["verification_failure"]["detail"]
