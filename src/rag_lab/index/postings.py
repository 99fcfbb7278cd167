"""One term's postings as ranking reads them: decoded once, weighed only where asked.

BM25 (retrieval/rank.py) takes its candidates from the rare terms of a question and only adds
the common terms' scores to those candidates. A common term's list is long (≈ 30,000 units
for one bigram at 100,000 documents) while the candidates are few (≈ 1,000), so a
:class:`TermPostings` keeps the stored encoding and decodes it in two separate steps:

* :meth:`TermPostings.ids` — the unit ids, ascending (the prefix sum of the stored gaps; kept
  by the object, so a store that keeps the object decodes a term once per open version);
* the tf weights only of the units asked for: :meth:`TermPostings.weights_at` finds the
  candidates in the ids (binary search) and computes the weight of the hits alone, from the
  unit lengths and the few stored tf > 1 exceptions; :meth:`TermPostings.whole` weighs all.

A weight is computed element by element with the same operations as weighing the whole list,
so both give the same floats (tests/index/test_postings_lazy.py). A store keeps recently
read terms in a :class:`PostingsCache` bounded in bytes, for the life of its open version
(the version never changes; docs/stores.md).
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

Ids = npt.NDArray[np.int32]
Weights = npt.NDArray[np.float64]
Positions = npt.NDArray[np.intp]
WeightOf = Callable[[Positions | None, Ids], Weights]
"""(positions in the ascending ids or None: not known, the ids there) → their tf weights."""


BITS_FROM_DF = 128
PER_TERM_BYTES = 1024
"""What a decoded term holds beside its arrays' data (the objects, their headers, the closure)."""
BITS_PAYBACK = 4
"""A candidate found by binary search costs about as much as this many bytes of bit sets made
(measured: 15–60 ns against 6–8 ns per byte of ``universe / 8`` plus a byte per posting)."""


class TfWeights:
    """A :data:`WeightOf` in two parts: ``base(units)``, the weight of tf = 1 by each unit's
    length (one function shared by every term of a store), except at ``more_ids`` (ascending:
    the units holding the term more than once), weighed in ``more_weights``. BM25 then computes
    the base weights of its candidates once for all common terms (:func:`add_common`)."""

    __slots__ = ("base", "more_ids", "more_weights")

    def __init__(self, base: Callable[[npt.NDArray[Any]], Weights], more_ids: Ids, more_weights: Weights) -> None:
        self.base, self.more_ids, self.more_weights = base, more_ids, more_weights

    def __call__(self, _pos: Positions | None, units: npt.NDArray[Any]) -> Weights:
        weight = self.base(units)
        more_ids = self.more_ids
        if more_ids.size and units.size:
            k = np.minimum(np.searchsorted(more_ids, units), more_ids.size - 1)
            more = more_ids[k] == units
            weight[more] = self.more_weights[k[more]]
        return weight


def packed_bits(ids: npt.NDArray[Any], universe: int, more: npt.NDArray[Any] | None = None) -> npt.NDArray[Any]:
    """A bit per unit id below ``universe``: ``np.packbits(mask, bitorder="little")`` of the
    mask set at ``ids`` (``uint8``); with ``more``, a ``uint16`` array whose high byte is the
    bit set of ``more`` the same way (:meth:`TermPostings._membership`'s pairs).

    ``ids`` and ``more`` are strictly ascending ids in ``[0, universe)`` (a term's postings;
    anything else goes the mask's way, :func:`_packed_by_mask`), so a byte
    is the *sum* of its ids' bits ``1 << (id & 7)``: one ``bincount`` (exact: integers below
    2**16 in float64) over ``universe / 8`` bytes rather than a mask of ``universe`` bools
    made, set through ``int32`` indices and packed — at 100,000 documents ≈ 75 µs a term
    instead of ≈ 170–300 µs, paid once a common term's searches have cost as much
    (:meth:`TermPostings._membership`; tests/index/test_postings_bits.py: equal to the mask)."""
    if not (_inside(ids, universe) and (more is None or _inside(more, universe))):
        return _packed_by_mask(ids, universe, more)  # what the mask makes of them (or its error)
    size = (universe + 7) // 8
    sums = np.bincount(ids >> 3, weights=np.left_shift(1, ids & 7), minlength=size)
    if more is not None:
        sums += np.bincount(more >> 3, weights=np.left_shift(256, more & 7), minlength=size)
    return sums.astype(np.uint8 if more is None else np.uint16)


def _inside(ids: npt.NDArray[Any], universe: int) -> bool:
    """Strictly ascending ids, all in ``[0, universe)``."""
    return not ids.size or bool(ids[0] >= 0 and ids[-1] < universe and (ids.size < 2 or (ids[1:] > ids[:-1]).all()))


def _packed_by_mask(ids: npt.NDArray[Any], universe: int, more: npt.NDArray[Any] | None = None) -> npt.NDArray[Any]:
    """:func:`packed_bits` the plain way: a mask of ``universe`` bools, set and packed."""
    mask = np.zeros(universe, bool)
    mask[ids] = True
    packed: npt.NDArray[Any] = np.packbits(mask, bitorder="little")
    if more is None:
        return packed
    mask[:] = False
    mask[more] = True
    return packed.astype(np.uint16) | (np.packbits(mask, bitorder="little").astype(np.uint16) << 8)


_KEEP_DECODED = threading.Lock()


class TermPostings:
    """One term's visible postings: ``df``, and its ids and weights decoded on demand.

    ``decode`` returns the ascending unit ids and a :data:`WeightOf` over them; it runs at most
    once per object (two threads may both run it; they compute the same thing), and is let go
    once its result is kept, with the stored encoding it holds (``stored`` bytes).

    ``nbytes`` is what the object holds: the store's estimate of its stored bytes and decoded
    arrays, less the stored bytes once decoded, plus what :meth:`whole` and the bit sets add when
    they are made — each change told to the :class:`PostingsCache` holding it (:meth:`_grow`), so
    the cache is bounded by what its terms hold, not by what they might hold (a common term's bit
    sets are made only for terms looked up often, see :meth:`_membership`).
    """

    __slots__ = (
        "_bits", "_cache", "_decode", "_decoded", "_pairs", "_searched", "_stored", "_whole", "df", "nbytes",
        "universe",
    )

    def __init__(
        self, df: int, nbytes: int, decode: Callable[[], tuple[Ids, WeightOf]], universe: int = 0, stored: int = 0
    ) -> None:
        self.df = df
        self.universe = universe  # unit ids are below it (0: unknown, no bit set is made)
        self.nbytes = nbytes
        self._cache: PostingsCache | None = None  # the cache holding it, which counts its growth
        self._decode: Callable[[], tuple[Ids, WeightOf]] | None = decode
        self._stored = stored  # of nbytes: what decode holds (the stored encoding), let go with it
        self._decoded: tuple[Ids, WeightOf] | None = None
        self._whole: tuple[Ids, Weights] | None = None
        self._bits: npt.NDArray[np.uint8 | np.uint16] | None = None
        self._pairs: npt.NDArray[np.uint16] | None = None  # for TfWeights: _bits, and tf > 1 in the high byte
        self._searched = 0  # candidates looked up by binary search so far (no bit sets yet)

    def _state(self) -> tuple[Ids, WeightOf]:
        decoded = self._decoded
        if decoded is not None:
            return decoded
        decode = self._decode  # read first: it is let go only after _decoded is set
        decoded = self._decoded
        if decoded is not None:
            return decoded
        assert decode is not None
        made = decode()
        with _KEEP_DECODED:  # one thread keeps its result and lets decode go (counted once)
            decoded = self._decoded
            released = 0
            if decoded is None:
                decoded = self._decoded = made
                self._decode, released, self._stored = None, self._stored, 0
        if released:
            self._grow(-released)
        return decoded

    def ids(self) -> Ids:
        """The visible unit ids holding the term, ascending."""
        return self._state()[0]

    def whole(self) -> tuple[Ids, Weights]:
        """``(ids ascending, their tf weights)`` of every posting (kept once computed)."""
        whole = self._whole
        if whole is None:
            ids, weight_of = self._state()
            whole = self._whole = (ids, weight_of(np.arange(ids.size), ids))
            self._grow(whole[1].nbytes)
        return whole

    def weights_at(self, units: npt.NDArray[Any]) -> tuple[npt.NDArray[np.bool_], Weights]:
        """For ascending ``units``: which of them hold the term, and the tf weights of those."""
        ids, weight_of = self._state()
        if ids.size == 0 or units.size == 0:
            return np.zeros(units.size, bool), np.zeros(0)
        bits = self._membership(units.size)
        if bits is not None:  # which units hold the term by one bit each; positions of the hits only
            if units[0] >= 0 and units[-1] < self.universe:  # ascending: all inside
                hit = ((bits[units >> 3] >> (units & 7)) & 1).astype(bool)
            else:
                inside = (units >= 0) & (units < self.universe)
                hit = np.zeros(units.size, bool)
                at_ = units[inside]
                hit[inside] = ((bits[at_ >> 3] >> (at_ & 7)) & 1).astype(bool)
            held = units[hit]
            whole = self._whole
            if whole is not None:
                return hit, whole[1][np.searchsorted(ids, held)]
            return hit, weight_of(None, held.astype(np.int32, copy=False))
        pos = np.minimum(np.searchsorted(ids, units), ids.size - 1)
        hit = ids[pos] == units
        at = pos[hit]
        whole = self._whole
        if whole is not None:  # weighed already: look the weights up
            return hit, whole[1][at]
        return hit, weight_of(at, ids[at])


    def _may_have_bits(self) -> bool:
        return bool(self.universe) and BITS_FROM_DF * self.df >= self.universe

    def _membership(self, asked: int) -> npt.NDArray[np.uint8 | np.uint16] | None:
        """A bit per unit id, for a term with df ≥ universe / ``BITS_FROM_DF`` (its bits take at
        most 4 bytes per posting), made once the candidates searched for in its list (``asked``
        at this lookup) have cost about what making them costs (``BITS_PAYBACK``): a kept term is
        then looked up without a binary search over its long list, and a term read for a few
        questions never pays for bit sets, whose cost grows with the corpus (``universe / 8``
        bytes: at 1,000,000 documents ≈ 4–7 ms a term, as much as ≈ 80 searches of 1,800
        candidates; at 100k documents a lookup of 1,034 candidates by them took 24–66 µs, by
        binary search 38–106 µs)."""
        bits = self._bits
        if bits is None and self._may_have_bits():
            self._searched += asked
            if BITS_PAYBACK * self._searched >= self.universe // 8 + self.df:
                ids, weight_of = self._state()
                if isinstance(weight_of, TfWeights):
                    # both bit sets in one array: byte k of the tf > 1 set in the high byte of item k,
                    # so one gather reads both for a candidate (add_common); the shifts and the & 1
                    # of weights_at read the low byte alone
                    bits = self._pairs = packed_bits(ids, self.universe, weight_of.more_ids)
                else:
                    bits = packed_bits(ids, self.universe)
                self._bits = bits
                self._grow(bits.nbytes)
        return bits

    def _grow(self, added: int) -> None:
        """Count ``added`` bytes now held (two threads making the same array both count it: the
        estimate errs high, and the cache subtracts what was counted when it lets the term go)."""
        cache = self._cache
        if cache is None:
            self.nbytes += added
        else:
            cache.grew(self, added)

    def _ready(self, probe: _Probe) -> TfWeights | None:
        """This term's :class:`TfWeights` when both its bit sets exist and cover ``probe``'s
        units (:func:`add_common` then looks it up with other terms at once), else None."""
        if self._pairs is None or not probe.inside(self.universe):
            return None
        decoded = self._decoded
        weight_of = decoded[1] if decoded is not None else None
        return weight_of if isinstance(weight_of, TfWeights) else None

    def _row(self, row: Weights, units: npt.NDArray[Any]) -> None:
        """``row[i]`` = this term's tf weight at ``units[i]`` where the unit holds it (the rest
        left as they are): the weights of :meth:`weights_at` (a term :func:`add_common` cannot
        look up with the others: no bit sets yet, another store's weights, units outside)."""
        hit, weights = self.weights_at(units)
        row[hit] = weights


class _Probe:
    """Ascending candidate units prepared once for looking up many terms: the byte and bit of
    each in a bit set, and the base weights (:class:`TfWeights`) by base function."""

    __slots__ = ("_bases", "_inside", "byte", "mask", "pair_mask", "units")

    def __init__(self, units: npt.NDArray[Any]) -> None:
        self.units = units
        self.byte = (units >> 3).astype(np.intp)  # gathers index by intp (no conversion per gather)
        self.mask = np.left_shift(1, units & 7).astype(np.uint8)
        self.pair_mask = self.mask * np.uint16(257)  # the same bit in each byte of a 2-byte item
        self._inside: dict[int, bool] = {}
        self._bases: dict[int, Weights] = {}

    def inside(self, universe: int) -> bool:
        found = self._inside.get(universe)
        if found is None:
            units = self.units
            found = self._inside[universe] = bool(units[0] >= 0 and units[-1] < universe)
        return found

    def base(self, function: Callable[[npt.NDArray[Any]], Weights]) -> Weights:
        key = id(function)
        found = self._bases.get(key)
        if found is None:
            found = self._bases[key] = function(self.units)
        return found


def add_common(scores: Weights, units: npt.NDArray[Any], terms: list[tuple[TermPostings, float]]) -> None:
    """``scores[hit] += weight * idf`` for each ``(term, idf)`` in turn, at ascending ``units``
    (BM25's common terms at its candidates): every term's weights in one row of a matrix (its
    misses 0), the matrix multiplied by the idfs, the rows added in the terms' order — for each
    unit the same additions of the same floats as term by term (a miss adds 0.0; scores are
    never -0.0). The terms with both bit sets are looked up together: one gather of each bit
    set into a matrix, then a few whole-matrix operations for all of them (the candidates'
    base weights computed once); any other term by :meth:`TermPostings.weights_at`."""
    if not terms or units.size == 0:
        return
    rows = np.empty((len(terms), units.size))
    probe = _Probe(units)
    batched: dict[int, list[tuple[int, TermPostings, TfWeights]]] = {}  # by base function
    for k, (term, _) in enumerate(terms):
        weight_of = term._ready(probe)
        if weight_of is None:
            rows[k] = 0.0
            term._row(rows[k], units)
        else:
            batched.setdefault(id(weight_of.base), []).append((k, term, weight_of))
    for group in batched.values():
        _batched_rows(rows, probe, group)
    rows *= np.asarray([idf for _, idf in terms])[:, None]
    for row in rows:
        scores += row


def _batched_rows(rows: Weights, probe: _Probe, group: list[tuple[int, TermPostings, TfWeights]]) -> None:
    """Rows of terms that have both bit sets and one base function: ``rows[k]`` = the base weight
    where the unit holds term k, the tf > 1 weight where it holds it more than once, else 0."""
    pairs = np.empty((len(group), probe.units.size), np.uint16)
    for j, (_, term, _) in enumerate(group):
        term._pairs.take(probe.byte, out=pairs[j])  # type: ignore[union-attr]
    pairs &= probe.pair_mask  # the candidate's bit, in both bytes
    at = [k for k, _, _ in group]
    whole = at == list(range(rows.shape[0]))  # the usual case: every term, in order: rows themselves
    block = rows if whole else np.empty((len(group), probe.units.size))
    np.multiply(probe.base(group[0][2].base), pairs.astype(bool), out=block)  # base × 1.0 where held, else 0.0
    cells = np.flatnonzero(pairs > 255)  # (term, candidate) cells with tf > 1, by term
    if cells.size:
        term_at, unit_at = np.divmod(cells, probe.units.size)
        held_more = probe.units[unit_at]
        bounds = np.searchsorted(term_at, np.arange(len(group) + 1)).tolist()
        weights = np.empty(cells.size)
        for j, (_, _, weight_of) in enumerate(group):
            a, b = bounds[j], bounds[j + 1]
            if a < b:
                weights[a:b] = weight_of.more_weights.take(np.searchsorted(weight_of.more_ids, held_more[a:b]))
        block[term_at, unit_at] = weights
    if not whole:
        rows[at] = block


def merge_pieces(pieces: list[tuple[Ids, Any]]) -> tuple[Ids, Positions | None]:
    """Ids of several visibility labels' rows of one term (disjoint sets), ascending, and
    for each merged position the position in the concatenation (None: one piece, unchanged)."""
    if len(pieces) == 1:
        return pieces[0][0], None
    ids = np.concatenate([p[0] for p in pieces])
    order = np.argsort(ids, kind="stable")
    merged: Ids = ids[order]
    return merged, order


class PostingsBudget:
    """A bound in bytes shared by several :class:`PostingsCache` s, and their one
    least-recently-used order: when their terms together hold more, the least recently used
    term of any of them is let go. A server gives one to every view it opens of its index (one
    per principal and version, server/state.py), so that what they keep is bounded as a whole.
    """

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError(f"a postings cache bound is a number of bytes, not {limit}")
        self.limit = limit
        self.lock = threading.Lock()
        #: every held term of every cache, least recently used first, keyed (cache number, term)
        self.order: OrderedDict[tuple[int, int], TermPostings] = OrderedDict()
        self.cached_bytes = 0
        self._numbers = itertools.count()

    def number(self) -> int:
        """A number for a new cache, never given twice (its keys in ``order``)."""
        return next(self._numbers)

    def evict(self) -> None:
        """Let the least recently used terms go while over the limit (the lock held)."""
        while self.cached_bytes > self.limit:
            (_, term), old = self.order.popitem(last=False)
            owner, old._cache = old._cache, None
            assert owner is not None
            del owner._terms[term]
            owner._bytes -= old.nbytes
            self.cached_bytes -= old.nbytes


class PostingsCache:
    """One store's term → :class:`TermPostings`, least recently used first out, bounded by
    ``limit``: a number of bytes of its own, or a :class:`PostingsBudget` it shares with other
    caches (then their terms together stay within the budget's limit)."""

    def __init__(self, limit: int | PostingsBudget) -> None:
        self.budget = limit if isinstance(limit, PostingsBudget) else PostingsBudget(limit)
        self._number = self.budget.number()
        self._terms: dict[int, TermPostings] = {}
        self._bytes = 0

    @property
    def limit(self) -> int:
        return self.budget.limit

    def get(self, terms: list[int]) -> tuple[dict[int, TermPostings], list[int]]:
        """The cached ones of ``terms``, and the terms not cached."""
        found: dict[int, TermPostings] = {}
        missing: list[int] = []
        budget = self.budget
        with budget.lock:
            for term in terms:
                hit = self._terms.get(term)
                if hit is None:
                    missing.append(term)
                else:
                    budget.order.move_to_end((self._number, term))
                    found[term] = hit
        return found, missing

    def put(self, fetched: dict[int, TermPostings]) -> None:
        budget = self.budget
        with budget.lock:
            for term, posting in fetched.items():
                if term in self._terms or posting.nbytes > budget.limit:
                    continue
                self._terms[term] = budget.order[(self._number, term)] = posting
                posting._cache = self
                self._bytes += posting.nbytes
                budget.cached_bytes += posting.nbytes
            budget.evict()

    def grew(self, posting: TermPostings, added: int) -> None:
        """``posting`` holds ``added`` more bytes (its whole weights or bit sets were made)."""
        budget = self.budget
        with budget.lock:
            posting.nbytes += added
            if posting._cache is self:  # still held: counted, and the least recent let go if over
                self._bytes += added
                budget.cached_bytes += added
                budget.evict()

    def clear(self) -> None:
        """Let every term of this cache go (its store is closed): a shared budget's room is
        given back to the other caches at once."""
        budget = self.budget
        with budget.lock:
            for term, posting in self._terms.items():
                del budget.order[(self._number, term)]
                posting._cache = None
            budget.cached_bytes -= self._bytes
            self._terms, self._bytes = {}, 0

    def held(self) -> dict[int, TermPostings]:
        """The terms this cache holds now (a copy)."""
        with self.budget.lock:
            return dict(self._terms)

    @property
    def cached_bytes(self) -> int:
        """What this cache's terms hold (``budget.cached_bytes``: every cache of its budget)."""
        return self._bytes
