"""The outside truecasing table (lowercase form -> usual spelling) as a model stores it,
``outside_truecase.npz``: the forms sorted, looked up by bisection, so that loading a model
decodes two blocks of UTF-8 instead of building a dictionary of a few hundred thousand entries
(issue 39: the table had been a sixth of a model's loading time as JSON).

Most usual spellings follow from the form: the form itself, its title case or its upper case
(228,045, 89,159 and 26,125 of en-conll03's 365,638 forms). A byte per form says which; the
others are spelled out in order. Arrays only, in numpy's format (no pickle); the forms' order
and every array's dtype and shape are checked when the model loads, and the seal covers the file.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np

from ..core.errors import ModelError
from .packed import pack_strings, read_keyed_table, write_arrays

AS_WRITTEN, TITLE, UPPER, SPELLED = range(4)  # how a form's usual spelling is made from it


class SpellingTable(Mapping[str, str]):
    """Lowercase form -> usual spelling, read-only: ``forms`` sorted, ``kinds`` (one of
    :data:`AS_WRITTEN`, :data:`TITLE`, :data:`UPPER`, :data:`SPELLED` per form, as bytes) and
    ``spellings`` (the :data:`SPELLED` forms' spellings, in the forms' order)."""

    def __init__(self, forms: list[str], kinds: bytes, spellings: list[str]) -> None:
        self.forms, self.kinds, self.spellings = forms, kinds, spellings
        self._spelled_rank = np.cumsum(np.frombuffer(kinds, np.uint8) == SPELLED) - 1  # (forms,) index in spellings

    @classmethod
    def from_mapping(cls, table: Mapping[str, str]) -> SpellingTable:
        """The table of ``table`` (a :class:`SpellingTable` is returned as it is)."""
        if isinstance(table, SpellingTable):
            return table
        forms = sorted(table)
        kinds, spellings = bytearray(len(forms)), []
        for index, form in enumerate(forms):
            spelling = table[form]
            kind = next((k for k, made in _MADE if made(form) == spelling), SPELLED)
            kinds[index] = kind
            if kind == SPELLED:
                spellings.append(spelling)
        return cls(forms, bytes(kinds), spellings)

    @classmethod
    def load(cls, path: Path) -> SpellingTable:
        """The table in ``path`` (see the module docstring); a :class:`~hgner.core.errors.ModelError`
        naming the file and the array when anything does not fit."""
        forms, spellings, kinds = read_keyed_table(path, "forms", "spellings", "kinds", np.uint8)
        if len(kinds) and kinds.max() > SPELLED:
            raise ModelError(f"{path}: kinds: expected values 0..{SPELLED}, got {int(kinds.max())}")
        if (spelled := int(np.count_nonzero(kinds == SPELLED))) != len(spellings):
            raise ModelError(f"{path}: spellings: expected {spelled} (one per form of kind {SPELLED}), got {len(spellings)}")
        return cls(forms, kinds.tobytes(), spellings)

    def save(self, path: Path) -> None:
        """Write the table to ``path`` (atomically), as :meth:`load` reads it: deflated, a quarter of
        its stored size (es-conll02's 10.5 MB table in 2.9 MB), for 0.013 CPU-s more to read it."""
        write_arrays(path, {**pack_strings("forms", self.forms), "kinds": np.frombuffer(self.kinds, np.uint8),
                            **pack_strings("spellings", self.spellings)}, compressed=True)

    def _spelling(self, index: int) -> str:
        kind, form = self.kinds[index], self.forms[index]
        return self.spellings[self._spelled_rank[index]] if kind == SPELLED else _MADE[kind][1](form)

    def _index(self, form: str) -> int:
        index = bisect.bisect_left(self.forms, form)
        return index if index < len(self.forms) and self.forms[index] == form else -1

    def __getitem__(self, form: str) -> str:
        index = self._index(form)
        if index < 0:
            raise KeyError(form)
        return self._spelling(index)

    def get(self, form: str, default: str | None = None) -> str | None:  # type: ignore[override]
        """The usual spelling of ``form``, or ``default``."""
        index = self._index(form)
        return default if index < 0 else self._spelling(index)

    def __contains__(self, form: object) -> bool:
        return isinstance(form, str) and self._index(form) >= 0

    def __iter__(self) -> Iterator[str]:
        return iter(self.forms)

    def __len__(self) -> int:
        return len(self.forms)

    def items(self) -> Iterator[tuple[str, str]]:  # type: ignore[override]
        """(form, spelling) pairs in the forms' order."""
        return zip(self.forms, map(self._spelling, range(len(self.forms))))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SpellingTable):
            return (self.forms, self.kinds, self.spellings) == (other.forms, other.kinds, other.spellings)
        return isinstance(other, Mapping) and len(self) == len(other) and dict(self.items()) == dict(other.items())

    __hash__ = None  # type: ignore[assignment]


def _as_written(form: str) -> str:
    return form


# kind -> how it makes the spelling from the form (in the order from_mapping tries them)
_MADE = ((AS_WRITTEN, _as_written), (TITLE, str.title), (UPPER, str.upper))
