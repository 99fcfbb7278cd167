"""The bit sets of a common term (``postings.packed_bits``, made once its searches have cost as
much) equal the mask they replaced: ``np.packbits`` of a bool per unit, the tf > 1 set in the high byte."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.index.postings import BITS_PAYBACK, TermPostings, TfWeights, _packed_by_mask, packed_bits


def by_mask(ids: np.ndarray, universe: int, more: np.ndarray | None = None) -> np.ndarray:
    """The code before: one mask of ``universe`` bools, set through the ids as they are."""
    mask = np.zeros(universe, bool)
    mask[ids] = True
    packed = np.packbits(mask, bitorder="little")
    if more is None:
        return packed
    mask[ids] = False
    mask[more] = True
    out = packed.astype(np.uint16)
    out |= np.packbits(mask, bitorder="little").astype(np.uint16) << 8
    return out


@st.composite
def postings(draw: st.DrawFn) -> tuple[int, np.ndarray, np.ndarray]:
    universe = draw(st.integers(1, 300))
    ids = sorted(draw(st.sets(st.integers(0, universe - 1), max_size=universe)))
    more = sorted(draw(st.sets(st.sampled_from(ids), max_size=len(ids)))) if ids else []
    dtype = draw(st.sampled_from([np.int32, np.int64]))
    return universe, np.asarray(ids, dtype), np.asarray(more, dtype)


@settings(max_examples=400, deadline=None)
@given(postings())
def test_packed_bits_equal_the_mask(case: tuple[int, np.ndarray, np.ndarray]) -> None:
    universe, ids, more = case
    one, two = packed_bits(ids, universe), packed_bits(ids, universe, more)
    assert one.dtype == np.uint8 and np.array_equal(one, by_mask(ids, universe))
    assert two.dtype == np.uint16 and np.array_equal(two, by_mask(ids, universe, more))
    assert np.array_equal(_packed_by_mask(ids, universe, more), two)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 200), st.lists(st.integers(-5, 205), max_size=40))
def test_unsorted_or_outside_ids_take_the_mask_way(universe: int, raw: list[int]) -> None:
    ids = np.asarray(raw, np.int32)
    try:
        expected = by_mask(ids, universe)
    except IndexError:
        with pytest.raises(IndexError):
            packed_bits(ids, universe)
        return
    assert np.array_equal(packed_bits(ids, universe), expected)


def test_a_terms_bit_sets_are_made_once_its_searches_cost_as_much_and_are_the_masks() -> None:
    rng = np.random.default_rng(7)
    universe = 4099
    ids = np.sort(rng.choice(universe, 900, replace=False)).astype(np.int32)
    more = np.sort(rng.choice(ids, 120, replace=False)).astype(np.int32)
    weights = TfWeights(lambda units: np.ones(len(units)), more, np.full(more.size, 2.0))
    term = TermPostings(ids.size, ids.nbytes, lambda: (ids, weights), universe)
    price = universe // 8 + ids.size  # 1,412 bytes: paid by 353 candidates searched
    assert term._membership(100) is None and term._membership(252) is None  # 352 searched
    pairs = term._membership(1)
    assert pairs is not None and np.array_equal(pairs, by_mask(ids, universe, more))
    assert term._pairs is pairs and BITS_PAYBACK * 353 >= price > BITS_PAYBACK * 352
    plain = TermPostings(ids.size, ids.nbytes, lambda: (ids, lambda pos, units: np.ones(len(units))), universe)
    bits = plain._membership(universe)  # one lookup costly enough: made at once
    assert bits is not None and np.array_equal(bits, by_mask(ids, universe))
