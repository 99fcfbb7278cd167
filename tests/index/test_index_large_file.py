"""A large file's units are turned into rows and terms in slices: the same index, less memory."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import rag_lab.index.build as build
from rag_lab.index import Index, build_index, default_index_path
from rag_lab.index.terms import unit_terms


def test_terms_in_slices_equal_terms_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [f"主题{i} 字段{i}：值Ａ{i}" for i in range(10)] + ["", "x"]
    whole = unit_terms(texts)
    monkeypatch.setattr(build, "TERMS_SLICE", 3)
    sliced = build._terms_in_slices(texts)
    assert np.array_equal(whole[0], sliced[0]) and np.array_equal(whole[1], sliced[1])


def test_a_file_with_more_units_than_a_slice_indexes_the_same(
    make_corpus: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = "主题：大文件\n" + "".join(f"字段{i}：值{i}\n" for i in range(50))
    root = make_corpus({"documents/big.md": body})
    build_index(root)
    with Index(default_index_path(root)) as index:
        before = [index.units_for_key("大文件", f"字段{i}") for i in range(50)]
        postings = index.postings([int(c) for c in unit_terms(["字段7"])[0]])
    monkeypatch.setattr(build, "TERMS_SLICE", 7)
    build_index(root)
    with Index(default_index_path(root)) as index:
        assert [index.units_for_key("大文件", f"字段{i}") for i in range(50)] == before
        again = index.postings([int(c) for c in unit_terms(["字段7"])[0]])
    assert sorted(again) == sorted(postings)
    for term, (df, ids, weights) in postings.items():
        assert again[term][0] == df and np.array_equal(again[term][1], ids)
        assert np.allclose(again[term][2], weights)
