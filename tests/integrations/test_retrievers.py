"""The LlamaIndex and LangChain retrievers, against the real libraries; the docs' examples run here."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from rag_lab.data.access import Principal
from rag_lab.errors import ConfigError
from rag_lab.integrations.evidence import RefusedError

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"


def doc_example(heading: str) -> tuple[str, str]:
    """The python block under ``### heading`` in docs/integrations.md and the text block after it."""
    section = DOC.read_text(encoding="utf-8").split(f"### {heading}\n", 1)[1].split("\n### ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    output = re.search(r"```text\n(.*?)```", section, re.S)
    assert code and output, heading
    return code.group(1), output.group(1)


def run_example(heading: str, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, expected = doc_example(heading)
    monkeypatch.chdir(corpus.parent)  # the examples name the folder "corpus"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, f"docs/integrations.md ({heading})", "exec"), {})
    assert printed.getvalue() == expected


def test_llamaindex_example_in_the_docs_runs(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_index.core")
    run_example("LlamaIndex", corpus, monkeypatch)


def test_langchain_example_in_the_docs_runs(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("langchain_core")
    run_example("LangChain", corpus, monkeypatch)


def test_llamaindex_nodes_carry_verified_evidence_and_refusals(corpus: Path) -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

    from rag_lab.integrations.llamaindex import RagLabRetriever

    retriever = RagLabRetriever(corpus)
    [hit] = retriever.retrieve(QueryBundle("借阅台 开放时间"))
    assert isinstance(hit, NodeWithScore) and hit.score is None
    meta = hit.node.metadata
    assert hit.node.node_id == meta["evidence_id"]
    assert (meta["source"], meta["line"], meta["span"], meta["support_type"], meta["verified"]) == (
        "documents/library.md",
        6,
        [43, 61],
        "verbatim_line",
        True,
    )
    seen_by_model = hit.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "documents/library.md" in seen_by_model and meta["sha256"] not in seen_by_model

    # A question the corpus cannot answer: one refusal note, not five arbitrary documents.
    [note] = retriever.retrieve("什么时候能借东西")
    assert note.node.metadata["is_refusal"] is True
    assert note.node.metadata["reason"] == "no_supporting_evidence"
    assert note.node.text.startswith("No source in the corpus supports an answer.")

    # A clarification carries the options.
    [note] = retriever.retrieve("借阅台")
    assert note.node.metadata["clarification"]["fields"] == [
        "借用期限",
        "地点",
        "开放时间",
        "联系电话",
        "负责人",
    ]

    with pytest.raises(RefusedError) as refused:
        RagLabRetriever(corpus, on_refusal="raise").retrieve("测试台 开放时间")
    assert refused.value.reason == "conflicting_evidence"
    assert len(refused.value.result["citations"]) == 2


def test_llamaindex_principal_sees_only_its_files(corpus: Path) -> None:
    pytest.importorskip("llama_index.core")
    from rag_lab.integrations.llamaindex import RagLabRetriever

    anonymous = RagLabRetriever(corpus, principal=Principal("anonymous", frozenset()))
    [note] = anonymous.retrieve("员工休息室 开放时间")
    assert note.node.metadata["is_refusal"] is True
    bob = RagLabRetriever(corpus, principal=Principal("bob", frozenset({"staff"})))
    [hit] = bob.retrieve("员工休息室 开放时间")
    assert hit.node.text == "开放时间：七点到二十二点"


def test_langchain_documents_and_partial_answers(corpus: Path) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document

    from rag_lab.integrations.langchain import RagLabRetriever

    retriever = RagLabRetriever(root=str(corpus))
    docs = retriever.invoke("借阅台 和 测试台 的 开放时间")
    assert all(isinstance(d, Document) for d in docs)
    note, *evidence = docs
    assert (note.metadata["is_refusal"], note.metadata["status"]) == (True, "partial")
    assert [d.page_content for d in evidence][0] == "开放时间：周二至周五十四点到十七点。"
    assert {d.metadata["status"] for d in evidence} == {"partial"}
    assert all(len(d.metadata["sha256"]) == 64 and d.metadata["verified"] for d in evidence)


def test_a_file_changed_after_answering_is_never_handed_out(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("langchain_core")
    import rag_lab.integrations.evidence as evidence
    from rag_lab.integrations.langchain import RagLabRetriever

    original = evidence.verified_evidence

    def edit_then_verify(*args: object, **kwargs: object) -> object:
        path = corpus / "documents" / "library.md"
        path.write_bytes(path.read_bytes().replace("十七点".encode(), "十八点".encode()))
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(evidence, "verified_evidence", edit_then_verify)
    [note] = RagLabRetriever(root=str(corpus)).invoke("借阅台 开放时间")
    assert (note.metadata["status"], note.metadata["reason"]) == ("refused", "source_verification_failed")
    assert "documents/library.md changed while it was being cited" in note.page_content


def test_an_unknown_refusal_mode_is_a_config_error(corpus: Path) -> None:
    pytest.importorskip("langchain_core")
    from rag_lab.integrations.langchain import RagLabRetriever

    with pytest.raises(ConfigError, match="on_refusal must be one of note, raise"):
        RagLabRetriever(root=str(corpus), on_refusal="ignore").invoke("借阅台 开放时间")
