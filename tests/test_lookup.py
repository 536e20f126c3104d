"""lookup.Lookup: values equal ``compute`` of each key, each key computed once until the table
starts again, and row keys of different lengths kept apart."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hgner.features.lookup import ROW_WIDTH, Lookup


def counting(compute):
    """A Lookup's ``compute`` of keys by ``compute`` of each key, and the keys it was given."""
    calls = []

    def counted(keys):
        assert len(set(keys)) == len(keys)  # each new key once
        calls.extend(keys)
        return [compute(key) for key in keys]

    return counted, calls


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(-(2**62), 2**62), max_size=30), min_size=1, max_size=5))
def test_int_keys(batches):
    compute, calls = counting(lambda key: key // 3 - 1)
    lookup = Lookup(compute, max_entries=10**6)
    for keys in batches:
        values = lookup.of(np.array(keys, np.int64))
        assert values.tolist() == [key // 3 - 1 for key in keys]
    seen = {key for keys in batches for key in keys}
    assert sorted(calls) == sorted(seen) and len(lookup) == len(seen)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, ROW_WIDTH).flatmap(lambda width: st.tuples(
    st.just(width), st.lists(st.lists(st.integers(0, 5), min_size=width, max_size=width), max_size=20))), max_size=6))
def test_row_keys_of_any_length(batches):
    compute, calls = counting(lambda key: hash(key) % 1000 - 500)
    lookup = Lookup(compute, max_entries=10**6)
    for width, rows in batches:
        keys = np.array(rows, np.int64).reshape(len(rows), width)
        assert lookup.of(keys).tolist() == [hash(tuple(row)) % 1000 - 500 for row in rows]
    seen = {tuple(row) for _, rows in batches for row in rows}
    assert sorted(calls) == sorted(seen)  # (1, 2) and (1, 2, 0) are different keys


def test_starts_again_when_full():
    compute, calls = counting(lambda key: key)
    lookup = Lookup(compute, max_entries=3)
    lookup.of(np.arange(5))
    assert len(lookup) == 5  # the table is checked before a look-up
    assert lookup.of(np.array([0, 9])).tolist() == [0, 9]
    assert len(lookup) == 2 and calls == [0, 1, 2, 3, 4, 0, 9]


def test_empty_and_non_contiguous_keys():
    lookup = Lookup(lambda keys: map(sum, keys), max_entries=10)
    assert lookup.of(np.zeros((0, 2), np.int64)).tolist() == []
    keys = np.arange(12).reshape(3, 4)[:, ::2]  # a strided view
    assert lookup.of(keys).tolist() == [2, 10, 18]
