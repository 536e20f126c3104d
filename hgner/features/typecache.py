"""A model's word-type cache, ``types.npz``: what the tagging path (:class:`~hgner.features.scores.AttributeScores`)
computes at the first sight of a word type, made once for the word types of the model's training
corpus when the model is built, so that tagging starts with them instead of making them again in
every process (issue 39: first sight was most of a process's fixed cost).

The cache is the state of the tagging path after featurising the training corpus: the
:class:`~hgner.features.vocabulary.Vocabulary` (word types, lowercase forms and short shapes in
the order they were coded, each type's row) and, per mark, each type's summed weights and the
attribute ids it gives its neighbours, with which rows are made; and the ids of the word-pair
attributes (bigrams) by pair key, so that loading a model does not make them again (an older
cache without them still serves: they are then made as before). The rows were made by the same
code from the same weights, so tagging with the cache gives the same numbers bit for bit
(``tests/test_typecache.py``). Arrays only, in numpy's format (no pickle); every array's dtype,
shape and range is checked when the model loads, and the seal covers the file. A cache made for
other feature settings, weights or word tables than the model's (:func:`made_for`: a hand-edited
``meta.json``, resealed) is not used, with a warning: the model then tags as it would without it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..core.errors import ModelError
from .packed import check_array, pack_strings, read_arrays, unpack_strings, write_arrays
from .vocabulary import PAIR_ATTRIBUTES
from .words import CASELESS_MARK

TYPES_FILE = "types.npz"
_MARK_NAMES = {"": "", CASELESS_MARK: "caseless_"}  # mark -> the prefix of its arrays' names
PAIR_KINDS = tuple(PAIR_ATTRIBUTES)  # the attribute kinds whose key is a pair of lowercase words
_STRINGS = ("words", "lowers", "shapes")  # each stored as UTF-8 bytes and (m,) end offsets


def made_for(features: dict, files: dict) -> str:
    """What a cache's rows depend on: the sha256 of the model's feature settings (``meta.json``'s
    ``features``) and of the entries of ``meta.json``'s ``files`` map for its weights and word
    tables (``files``: those entries only). A cache made for anything else is not used."""
    recorded = sorted((name, entry["sha256"]) for name, entry in files.items())
    return hashlib.sha256(json.dumps([features, recorded], sort_keys=True).encode("utf-8")).hexdigest()


@dataclass
class TypeCache:
    """The cached state (see the module docstring): ``words``, ``lowers`` and ``shapes`` (the
    codes' strings after the sentence marks), ``rows`` (T, 3) and per mark ``sums`` (T, K),
    ``neighbour_ids`` (T, W) and ``ready`` (T,); per word-pair attribute kind (``left_bigram``,
    ``right_bigram``), ``pairs`` holds its table ((P,) pair keys, (P,) attribute ids), empty in a
    cache written before it had them."""

    made_for: str
    words: list[str]
    lowers: list[str]
    shapes: list[str]
    rows: np.ndarray
    sums: dict[str, np.ndarray]
    neighbour_ids: dict[str, np.ndarray]
    ready: dict[str, np.ndarray]
    pairs: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def save(self, path: Path) -> None:
        """Write the cache to ``path`` (atomically)."""
        arrays: dict[str, np.ndarray] = {"rows": self.rows, "made_for": np.frombuffer(self.made_for.encode("ascii"), np.uint8)}
        for name in _STRINGS:
            arrays.update(pack_strings(name, getattr(self, name)))
        for mark, prefix in _MARK_NAMES.items():
            if mark in self.sums:
                arrays[f"{prefix}sums"] = self.sums[mark]
                arrays[f"{prefix}neighbour_ids"] = self.neighbour_ids[mark].astype(np.int32)  # (ids < 2**31)
                arrays[f"{prefix}ready"] = self.ready[mark]
        for kind, (keys, ids) in self.pairs.items():
            arrays[f"{kind}_keys"], arrays[f"{kind}_ids"] = keys, ids
        write_arrays(path, arrays)


def load_type_cache(path: Path, key: str, marks: tuple[str, ...], labels: int, attributes: int,
                    width: int) -> TypeCache | None:
    """The cache in ``path`` for a model whose :func:`made_for` is ``key``, of ``labels`` labels
    and ``attributes`` attributes, whose word types give their neighbours ``width`` ids, with
    rows for ``marks``; None when it was made for another ``key``; a
    :class:`~hgner.core.errors.ModelError` naming the array when anything does not fit."""
    expected = {"rows", "made_for", *(f"{n}_{part}" for n in _STRINGS for part in ("utf8", "ends")),
                *(f"{_MARK_NAMES[mark]}{part}" for mark in marks for part in ("sums", "neighbour_ids", "ready"))}
    arrays = read_arrays(path, expected, (frozenset(f"{kind}_{part}" for kind in PAIR_KINDS for part in ("keys", "ids")),))
    check_array(path, "made_for", arrays["made_for"], np.uint8, (64,))
    if arrays["made_for"].tobytes() != key.encode("ascii"):
        return None
    strings = {name: unpack_strings(path, name, arrays) for name in _STRINGS}
    n = len(strings["words"])
    for name, values in strings.items():
        if len(set(values)) != len(values):
            raise ModelError(f"{path}: {name}: expected distinct strings")
    check_array(path, "rows", arrays["rows"], np.int64, (n, 3))
    for column, (name, most) in enumerate((("lowers", len(strings["lowers"]) + 2), ("shapes", len(strings["shapes"]) + 2),
                                            ("flags", 1 << 16))):
        if n and not (arrays["rows"][:, column].min() >= 0 and arrays["rows"][:, column].max() < most):
            raise ModelError(f"{path}: rows: {name} column out of range (expected 0..{most - 1})")
    cache = TypeCache(key, strings["words"], strings["lowers"], strings["shapes"], arrays["rows"], {}, {}, {})
    for mark in marks:
        prefix = _MARK_NAMES[mark]
        sums, ids, ready = (arrays[f"{prefix}{part}"] for part in ("sums", "neighbour_ids", "ready"))
        check_array(path, f"{prefix}sums", sums, np.float64, (n, labels))
        check_array(path, f"{prefix}neighbour_ids", ids, np.int32, (n, width))
        check_array(path, f"{prefix}ready", ready, np.bool_, (n, 1))
        if not np.isfinite(sums).all():
            raise ModelError(f"{path}: {prefix}sums: expected finite numbers")
        if ids.size and not (ids.min() >= -1 and ids.max() < attributes):
            raise ModelError(f"{path}: {prefix}neighbour_ids: expected attribute ids -1..{attributes - 1}")
        cache.sums[mark], cache.neighbour_ids[mark], cache.ready[mark] = sums, ids.astype(np.int64), ready
    for kind in PAIR_KINDS if f"{PAIR_KINDS[0]}_keys" in arrays else ():
        keys, ids = arrays[f"{kind}_keys"], arrays[f"{kind}_ids"]
        check_array(path, f"{kind}_keys", keys, np.int64, keys.shape[:1])
        check_array(path, f"{kind}_ids", ids, np.int64, keys.shape)
        if ids.size and not (ids.min() >= 0 and ids.max() < attributes and keys.min() >= 0):
            raise ModelError(f"{path}: {kind}: expected pair keys >= 0 and attribute ids 0..{attributes - 1}")
        cache.pairs[kind] = keys, ids
    return cache
