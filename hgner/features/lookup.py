"""Integer keys -> integer values computed once per key, looked up a whole array at a time.

The tagging path (:class:`hgner.features.AttributeScores`) turns every attribute that depends on
more than one word into an integer key (codes of words and shapes) and needs the key's weight row.
A :class:`Lookup` keeps the values in a numba typed dict, so a document's keys are looked up in
one compiled call; only the keys not seen before go back to Python (``compute``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numba
import numpy as np
from numba.extending import overload
from numba.typed import Dict

ROW_WIDTH = 4  # codes in a row key at most (shorter rows are padded with -1, so they never collide)
_ROW = numba.types.UniTuple(numba.types.int64, ROW_WIDTH)
_ABSENT = np.iinfo(np.int64).min  # what a table gives for a key it does not hold


class Lookup:
    """Key -> its value, computed on the key's first look-up (the new keys of a look-up all at
    once, by ``compute``). Keys are ints, given to :meth:`of` as an (m,) array, or tuples of
    1..:data:`ROW_WIDTH` ints >= 0, given as the rows of an (m, w) array, where a row may end early
    with -1s (its key is the ints before the first -1); the first call decides which (one kind per
    table). When the table holds ``max_entries`` keys it starts again (bounded memory).

    Args:
        compute: keys (a list of distinct ints or tuples of ints) -> their values in order, ints
            above the int64 minimum.
        max_entries: the most keys kept.
    """

    def __init__(self, compute: Callable[[list[Any]], Iterable[int]], max_entries: int) -> None:
        self.compute = compute
        self.max_entries = max_entries
        self.table: Dict | None = None
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def of(self, keys: np.ndarray) -> np.ndarray:
        """(m,) the values of ``keys``: (m,) ints or (m, w) rows."""
        keys = np.asarray(keys, np.int64)
        rows = keys.ndim == 2
        if self.table is None or self.size >= self.max_entries:
            self.table, self.size = (_new_row_table() if rows else _new_int_table()), 0
        padded = _padded(keys) if rows else np.ascontiguousarray(keys)
        values = np.empty(len(keys), np.int64)
        missing = _look_up(self.table, padded, values)
        if len(missing):
            listed = list(map(_row_key, keys[missing].tolist())) if rows else keys[missing].tolist()
            new = dict.fromkeys(listed)  # each new key once, in order
            new.update(zip(new, self.compute(list(new))))
            values[missing] = np.fromiter(map(new.__getitem__, listed), np.int64, len(listed))
            self.size = _store(self.table, padded[missing], values[missing])
        return values


class FixedLookup:
    """Int keys -> values all given up front, looked up as :meth:`Lookup.of` does; any other key's
    value is ``default`` (a table of every key that has a value: nothing is computed on sight).

    Args:
        keys: (m,) the keys that have a value (a key given twice keeps its last value).
        values: (m,) their values.
        default: the value of every other key.
    """

    def __init__(self, keys: np.ndarray, values: np.ndarray, default: int) -> None:
        self.table = _new_int_table()
        self.size = _store(self.table, np.asarray(keys, np.int64), np.asarray(values, np.int64)) if len(keys) else 0
        self.default = default

    def __len__(self) -> int:
        return self.size

    def of(self, keys: np.ndarray) -> np.ndarray:
        """(m,) the values of the (m,) ``keys``."""
        keys = np.ascontiguousarray(keys, np.int64)
        values = np.empty(len(keys), np.int64)
        values[_look_up(self.table, keys, values)] = self.default
        return values


def _row_key(row: list[int]) -> tuple[int, ...]:
    """A row's key: its ints before the first -1."""
    return tuple(row[:row.index(-1)] if -1 in row else row)


def _padded(keys: np.ndarray) -> np.ndarray:
    """Row keys (m, w) as (m, :data:`ROW_WIDTH`), padded with -1 (contiguous, as the compiled
    look-ups were compiled for)."""
    padded = np.full((len(keys), ROW_WIDTH), -1, np.int64)
    padded[:, :keys.shape[1]] = keys
    return padded


def _key(keys: np.ndarray, i: int) -> Any:
    """Row ``i`` of ``keys`` as a table key (compiled code only)."""


@overload(_key)
def _key_overload(keys, i):  # noqa: ANN001, ANN202 - numba's overload convention
    if keys.ndim == 1:
        return lambda keys, i: keys[i]
    return lambda keys, i: (keys[i, 0], keys[i, 1], keys[i, 2], keys[i, 3])


@numba.njit(cache=True)
def _new_int_table() -> Dict:
    return Dict.empty(key_type=numba.types.int64, value_type=numba.types.int64)


@numba.njit(cache=True)
def _new_row_table() -> Dict:
    return Dict.empty(key_type=_ROW, value_type=numba.types.int64)


@numba.njit(cache=True, nogil=True)
def _look_up(table: Dict, keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Fills ``values`` (m,) with the values of the ``keys`` ((m,) or (m, ROW_WIDTH)) the table
    holds; returns the positions of the others (ascending)."""
    missing = np.empty(len(values), np.int64)
    n_missing = 0
    for i in range(len(values)):
        value = table.get(_key(keys, i), _ABSENT)
        if value == _ABSENT:
            missing[n_missing] = i
            n_missing += 1
        else:
            values[i] = value
    return missing[:n_missing]


@numba.njit(cache=True, nogil=True)
def _store(table: Dict, keys: np.ndarray, values: np.ndarray) -> int:
    """Puts ``values`` (m,) under ``keys``; returns how many keys the table holds."""
    for i in range(len(values)):
        table[_key(keys, i)] = values[i]
    return len(table)
