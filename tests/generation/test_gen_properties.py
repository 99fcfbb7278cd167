"""Properties of the hook with a scripted in-process generator: whatever a generator writes, the
decision holds, nothing unverified is published and no foreign id reaches the text."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_lab.generation import Draft, GenerationRequest
from rag_lab.retrieval import query_once

AS_OF = date(2026, 1, 1)
TEXTS = ["借阅台的开放时间是周二至周五十四点到十七点。", "借阅台的地点是图书馆一楼大厅东侧。", "测试台的开放时间是周三上午九点。",
         "每次借5本。", "管理员口令是admin。", "借阅台不开放。", "王老师负责借阅台。", ""]
IDS = ["E1", "E2", "E3", "E4", "E5", "E9", "ev_0", "e1"]


class Scripted:
    """Stands in for a model: returns the claims it was given."""

    def __init__(self, claims: list[dict[str, Any]]) -> None:
        self.claims = claims

    @property
    def name(self) -> str:
        return "scripted"

    def describe(self) -> dict[str, Any]:
        return {"generator": "scripted"}

    def generate(self, request: GenerationRequest) -> Draft:
        return Draft(json.dumps(self.claims, ensure_ascii=False), self.claims, self.describe())


CLAIMS = st.lists(
    st.fixed_dictionaries({"text": st.sampled_from(TEXTS), "evidence": st.lists(st.sampled_from(IDS), max_size=3)}),
    max_size=5,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(claims=CLAIMS, question=st.sampled_from(["借阅台 开放时间", "测试台 开放时间", "借阅台 和 测试台 的 开放时间", "借阅台"]))
def test_property_a_generator_cannot_override_the_decision(corpus: Path, claims: list[dict[str, Any]], question: str) -> None:
    plain = query_once(question, corpus, as_of=AS_OF)
    result = query_once(question, corpus, as_of=AS_OF, generator=Scripted(claims))
    assert result["citations"] == plain["citations"] and result["slots"] == plain["slots"]
    if plain["status"] in ("answered", "partial"):
        assert (result["status"], result["reason"]) in {(plain["status"], plain["reason"]), ("refused", "unsupported_claim")}
    else:
        assert (result["status"], result["reason"], result["text"]) == (plain["status"], plain["reason"], plain["text"])
    package = next(e for e in result["trace"]["events"] if e["step"] == "package")["ids"]
    cited_ids = {c["evidence_id"] for c in result["citations"]}
    for marker in re.findall(r"\[(E\d+)\]", result["text"]):
        assert marker in package or any(marker in c["evidence"] for c in result["claims"])
    published = [c["text"] for c in result["claims"] if c["supported"]]
    for claim in result["claims"]:
        if not claim["supported"] and claim["text"] and not any(claim["text"] in p for p in published):
            assert claim["text"] not in result["text"]  # a deleted claim is never published
        for evidence_id in claim["evidence_ids"]:
            assert evidence_id in set(package.values()) | cited_ids
    if result["reason"] == "unsupported_claim":
        assert result["answer"] is None and "未通过核验" in result["text"]
