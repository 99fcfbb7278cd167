"""Proof by construction: for bob, corpus A and A + hidden documents are indistinguishable.

Every output bob can get — ``query_once`` results, ``ask --json``, ``ask --trace``,
``eval --json`` and clarification lists — is compared byte for byte between corpus A
(the demo corpus) and corpus B (A plus documents only group hr may read), for each
hidden-document case of perm_corpora.py. Both corpora live under different temporary
folders, so equal bytes also show that no absolute path reaches the output.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from perm_corpora import (
    AS_OF,
    BOB,
    CASES,
    HIDDEN_PATHS,
    HIDDEN_WORDS,
    all_questions,
    demo_questions,
    hidden_evidence_ids,
    query_kwargs,
)

from rag_lab.cli import main
from rag_lab.demo import questions_path
from rag_lab.retrieval import query_once

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

BOB_ARGS = ["--as", "bob", "--groups", "staff"]


def dumped(result: dict[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False, sort_keys=True)


def bob_outputs(root: Path) -> list[str]:
    """bob's result for every question, as sorted-key JSON."""
    return [
        dumped(query_once(q["question"], root, principal=BOB, **query_kwargs(q))) for q in all_questions()
    ]


def assert_no_hidden(words: list[str], question: str, output: str) -> None:
    """No hidden word appears in the output, except where the question itself says it."""
    for word in words:
        if word not in question:
            assert word not in output, (word, question)


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    out, _ = capsys.readouterr()
    return code, out


def ask_args(item: dict[str, Any]) -> list[str]:
    kw = query_kwargs(item)
    return ["--top-k", str(kw["top_k"]), "--budget", str(kw["budget"]), "--as-of", kw["as_of"].isoformat()]


@pytest.mark.parametrize("case", CASES)
def test_query_once_is_byte_identical_for_every_question(
    case: str, corpus_a: Path, make_b: Callable[[str], Path]
) -> None:
    corpus_b = make_b(case)
    a, b = bob_outputs(corpus_a), bob_outputs(corpus_b)
    assert len(a) == len(demo_questions()) + 15 == 64
    for item, left, right in zip(all_questions(), a, b, strict=True):
        assert left == right, item["question"]
    hidden_ids = hidden_evidence_ids(corpus_b)
    assert hidden_ids  # the case really added restricted units
    for item, out in zip(all_questions(), b, strict=True):
        assert_no_hidden([*HIDDEN_WORDS[case], *hidden_ids, *HIDDEN_PATHS[case]], item["question"], out)
    assert str(corpus_a) not in "\n".join(a) and str(corpus_b) not in "\n".join(b)


@pytest.mark.parametrize("case", CASES)
def test_cli_ask_json_and_trace_are_byte_identical(
    case: str, corpus_a: Path, make_b: Callable[[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    corpus_b = make_b(case)
    for item in all_questions():
        for mode in (["--json"], ["--trace"], ["--trace", "--show-context"]):
            extra = [*ask_args(item), *mode, *BOB_ARGS]
            code_a, out_a = cli(capsys, "ask", str(corpus_a), item["question"], *extra)
            code_b, out_b = cli(capsys, "ask", str(corpus_b), item["question"], *extra)
            assert (code_a, out_a) == (code_b, out_b), (item["question"], mode)
            assert "principal" in out_b and "bob" in out_b
            assert_no_hidden(HIDDEN_WORDS[case], item["question"], out_b)


@pytest.mark.parametrize("case", CASES)
def test_cli_eval_json_is_byte_identical(
    case: str,
    corpus_a: Path,
    make_b: Callable[[str], Path],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    corpus_b = make_b(case)
    extra = tmp_path / "extra.jsonl"
    extra.write_text(
        "".join(
            json.dumps(
                {"id": f"x{i}", "category": "perm", "question": q, "expect_status": "refused"},
                ensure_ascii=False,
            )
            + "\n"
            for i, q in enumerate(["秘密基地 地点", "测试台 开放时间", "周五全天", "地下三层"])
        ),
        encoding="utf-8",
    )
    for questions in (questions_path(), extra):
        code_a, out_a = cli(capsys, "eval", str(corpus_a), str(questions), "--json", *BOB_ARGS)
        code_b, out_b = cli(capsys, "eval", str(corpus_b), str(questions), "--json", *BOB_ARGS)
        assert code_a == code_b == 0
        assert out_a == out_b
        assert "library_copy" not in out_b and "secret/" not in out_b
    # the demo set scores the same for bob on either corpus: the hidden documents cost nothing
    report = json.loads(cli(capsys, "eval", str(corpus_b), str(questions_path()), "--json", *BOB_ARGS)[1])
    assert report["unsupported_answers"]["count"] == 0


OPEN_HOURS_SUBJECTS = [
    "一卡通服务点", "借阅台", "古籍部", "咨询台", "失物招领处", "学生服务中心", "实验室", "快递驿站", "打印室", "新台", "旧服务台", "校医室",
    "档案室", "测试台", "自习室", "自助借还机", "计算机机房", "阅览室",
]
PLACE_SUBJECTS = [
    "一卡通服务点", "会议室A", "会议室B", "借阅台", "古籍部", "咨询台", "失物招领处", "学生服务中心", "实验室", "快递驿站", "打印室", "报告厅",
    "摄影棚", "数学", "校医室", "档案室", "测试台", "研讨间", "自习室", "装订室",
]


@pytest.mark.parametrize("case", CASES)
def test_clarification_lists_are_identical_and_exact(
    case: str, corpus_a: Path, make_b: Callable[[str], Path]
) -> None:
    corpus_b = make_b(case)
    expected = {
        "测试台": ("subject_without_field", {"subject": "测试台", "fields": ["地点", "开放时间"]}),
        "开放时间": (
            "field_without_subject",
            {"field": "开放时间", "subjects": OPEN_HOURS_SUBJECTS, "more": False},
        ),
        # more than 20 subjects: the first 20 of bob's visible ones, so 装订室 is listed;
        # alice's list differs (秘密基地 takes the 19th place, see test_perm_access.py)
        "地点": ("field_without_subject", {"field": "地点", "subjects": PLACE_SUBJECTS, "more": True}),
    }
    for question, (reason, clarification) in expected.items():
        results = [query_once(question, root, principal=BOB, as_of=AS_OF) for root in (corpus_a, corpus_b)]
        assert dumped(results[0]) == dumped(results[1])
        result = results[1]
        assert (result["status"], result["reason"]) == ("needs_clarification", reason)
        assert result["clarification"] == clarification
