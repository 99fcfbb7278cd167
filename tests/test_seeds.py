# ruff: noqa: I001, E702  (the seed code is copied verbatim, style included)
"""The two code examples of seed 000 are acceptance tests: they run exactly as written."""

from __future__ import annotations

import pytest


def test_seed_api_imports() -> None:
    from rag_lab.data import extract_documents
    from rag_lab.retrieval import answer, pack_context, query_once

    assert [f.__name__ for f in (pack_context, answer, query_once, extract_documents)] == [
        "pack_context",
        "answer",
        "query_once",
        "extract_documents",
    ]


def test_seed_example_one_pack_context(capsys: pytest.CaptureFixture[str]) -> None:
    # --- verbatim from seeds/000_55485c2f4026b0ca.txt (算例一) ---
    from rag_lab.retrieval import pack_context
    x=[{'evidence':{'text':s}} for s in ['abc','defg','hi']]
    kept,report=pack_context(x,5)
    assert [a['evidence']['text'] for a in kept]==['abc','hi']
    assert report['characters']==5
    print(report)
    # --- end of seed code ---
    assert report["budget"] == 5
    assert [s["rank"] for s in report["skipped"]] == [2]
    assert capsys.readouterr().out.startswith("{'budget': 5")


def test_seed_example_two_sixth_source_outside_top5(capsys: pytest.CaptureFixture[str]) -> None:
    # --- verbatim from seeds/000_55485c2f4026b0ca.txt (反例) ---
    from pathlib import Path
    import tempfile
    from rag_lab.data import extract_documents
    from rag_lab.retrieval import answer
    # 不需要训练/加载编码器：真正测试回答边界与实际源文件。
    with tempfile.TemporaryDirectory() as d:
        root=Path(d);(root/'documents').mkdir()
        for i in range(6):
            (root/'documents'/f'{i}.md').write_text('主题：新台\n开放时间：'+('上午九点。' if i<5 else '上午十点。')+'\n',encoding='utf-8')
        entries=extract_documents(root)
        first_five=[{'evidence':e,'score':1.} for e in entries[:5]]
        result=answer('新台 开放时间',first_five,root)
        assert result['reason']=='conflicting_evidence'
        assert result['same_key_sources_checked']==6
        assert len(result['citations'])==6
        print(result['reason'],result['support_scope'],result['same_key_sources_checked'])
    # --- end of seed code ---
    assert result["status"] == "refused"
    assert result["answer"] is None
    assert capsys.readouterr().out == (
        "conflicting_evidence complete_current_subject_field_source_set 6\n"
    )
