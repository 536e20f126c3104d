"""Integer keys -> integer values computed once per key, looked up a whole array at a time.

The tagging path (:class:`hgner.features.AttributeScores`) turns every attribute that depends on
more than one word into an integer key (codes of words and shapes) and needs the key's weight row.
A :class:`Lookup` keeps the values in a numba typed dict, so a document's keys are looked up in
one compiled call; only the keys not seen before go back to Python (``compute``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba.extending import overload
from numba.typed import Dict

ROW_WIDTH = 4  # codes in a row key at most (shorter rows are padded with -1, so they never collide)
_ROW = numba.types.UniTuple(numba.types.int64, ROW_WIDTH)
_ABSENT = np.iinfo(np.int64).min  # what a table gives for a key it does not hold


class Lookup:
    """Key -> ``compute(key)``, computed on the key's first look-up. Keys are ints (``rows=False``)
    or tuples of 1..:data:`ROW_WIDTH` ints (``rows=True``). When the table holds ``max_entries``
    keys it starts again (bounded memory).

    Args:
        compute: key (an int, or a tuple of ints for row keys) -> value, an int above the int64 minimum.
        rows: whether keys are tuples (given to :meth:`of` as the rows of an (m, w) array).
        max_entries: the most keys kept.
    """

    def __init__(self, compute: Callable[[Any], int], rows: bool, max_entries: int) -> None:
        self.compute = compute
        self.rows = rows
        self.max_entries = max_entries
        self._clear()

    def __len__(self) -> int:
        return self.size

    def _clear(self) -> None:
        self.table = _new_row_table() if self.rows else _new_int_table()
        self.size = 0

    def of(self, keys: np.ndarray) -> np.ndarray:
        """(m,) the values of ``keys``: (m,) ints, or (m, w) rows for a table of row keys."""
        if self.size >= self.max_entries:
            self._clear()
        keys = np.asarray(keys, np.int64)
        padded = self._padded(keys)
        values = np.empty(len(keys), np.int64)
        missing = _look_up(self.table, padded, values)
        if len(missing):
            new = dict.fromkeys(map(tuple, keys[missing].tolist()) if self.rows else keys[missing].tolist())
            for key in new:
                new[key] = self.compute(key)
            self.size = _store(self.table, self._padded(np.array(list(new), np.int64)),
                               np.fromiter(new.values(), np.int64, len(new)))
            found = np.empty(len(missing), np.int64)
            _look_up(self.table, padded[missing], found)
            values[missing] = found
        return values

    def _padded(self, keys: np.ndarray) -> np.ndarray:
        """Int keys (m,) as they are; row keys (m, w) padded with -1 to :data:`ROW_WIDTH` codes
        (contiguous either way, as the compiled look-ups were compiled for)."""
        if not self.rows or keys.shape[1] == ROW_WIDTH:
            return np.ascontiguousarray(keys)
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
