"""The tagging path: a model's weights applied during featurising (:class:`AttributeScores`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from itertools import chain, repeat
from typing import Any

import numba
import numpy as np

from . import vocabulary as _vocabulary
from .config import FeatureConfig, FeatureResources
from .document import _Document, _offsets
from .lookup import FixedLookup, Lookup
from .typecache import TypeCache
from .vocabulary import _MARKS, PAIR_ATTRIBUTES, SLOT_ATTRIBUTES, Vocabulary, _Table, pair_keys, ragged_attribute
from .words import CASELESS_MARK, context_attributes, context_width, marked, type_attributes

ID_CACHE_TYPES = 200_000  # word types a Vocabulary holds at most before the tagging path starts again
ID_CACHE_BYTES = 16 * 2**20  # and at most about this many bytes of word types beyond the model's type cache
TYPE_BYTES = 600  # per word type beside its table rows: the word, its lowercase form and their entries (about)


def given_width(config: FeatureConfig) -> int:
    """How many attribute ids a word type gives its neighbours under ``config``: the context
    width for each offset."""
    return context_width(config) * len(_offsets(config))


def marks(config: FeatureConfig) -> tuple[str, ...]:
    """The marks word types have rows for: none, and :data:`CASELESS_MARK` with ``caseless_features``."""
    return ("", CASELESS_MARK) if config.caseless_features else ("",)


class AttributeScores:
    """A model's weights applied during featurising: the tagging path (:meth:`unary`).

    Documents become arrays of :class:`Vocabulary` rows. What depends on one word type only is
    computed once per type: the summed weights (K,) of its own attributes (:func:`type_attributes`)
    and the ids of the attributes it gives its neighbours (:func:`neighbour_attributes`). The
    other attributes' ids are cached by their keys (codes of :meth:`_Document.slot_keys` and
    :meth:`_Document.ragged_keys`). Unary rows are built by whole-document array operations, adding
    weights in the order of the attribute strings, so they equal the string path's rows
    (:meth:`~hgner.crf.model.CrfModel.unary` of :func:`document_features`) bit for bit. The caches
    start again when the vocabulary holds :data:`ID_CACHE_TYPES` word types, or the types seen
    beyond the model's type cache take :data:`ID_CACHE_BYTES` (their table rows and
    :data:`TYPE_BYTES` each: :attr:`restart_at`), or a cache of ids
    :data:`NGRAM_CACHE_ENTRIES` keys (bounded memory). With ``caseless_features`` each word type
    also has the rows of its attributes marked for caseless sentences (:data:`CASELESS_MARK`).

    Args:
        index: attribute -> row of ``weights``.
        weights: (A, K) weight of each attribute for each label.
        config: the model's feature configuration.
        resources: the model's feature resources.
        types: a model's word-type cache to start from (:mod:`~hgner.features.typecache`).
    """

    def __init__(self, index: dict[str, int], weights: np.ndarray, config: FeatureConfig,
                 resources: FeatureResources | None, types: TypeCache | None = None) -> None:
        self.index = index
        self.types = types  # the word types to start with, now and whenever the caches start again
        self.config = config
        self.resources = resources
        self.weights = np.ascontiguousarray(weights, np.float64)
        self.offsets = _offsets(config)
        self.offset_array = np.array(self.offsets, np.int64)
        self.width = context_width(config)  # neighbour attribute ids per offset
        self.edge_ids = np.array([index.get("BOS", -1), index.get("EOS", -1)], np.int64)
        row_bytes = len(self.marks) * 8 * (self.weights.shape[1] + self.given_width + 1) + 3 * 8 + TYPE_BYTES
        start = 0 if types is None else len(types.words)
        self.restart_at = start + ID_CACHE_BYTES // row_bytes  # word types, at most (and ID_CACHE_TYPES)
        self._clear()

    @property
    def given_width(self) -> int:
        """How many attribute ids a word type gives its neighbours: ``width`` for each offset."""
        return given_width(self.config)

    @property
    def marks(self) -> tuple[str, ...]:
        """The marks word types have rows for (:func:`marks`)."""
        return marks(self.config)

    def _clear(self) -> None:
        vocabulary = self.vocabulary = Vocabulary(self.resources)
        # per mark and vocabulary row: its own attributes' summed weights, and the ids it gives its neighbours;
        # the unmarked rows are made for every word type as it is first seen, the marked ones for the types of
        # caseless sentences only, when first needed (``ready``); the model's type cache gives the first ones
        # (its arrays become the tables' first arrays: the marked rows made later for its word types are
        # written into them, the same numbers whenever the caches start again)
        self.sums = {mark: _Table(self.weights.shape[1], np.float64) for mark in self.marks}
        self.neighbour_ids = {mark: _Table(self.given_width, np.int64) for mark in self.marks}
        self.ready = {mark: _Table(1, np.bool_) for mark in self.marks}
        if self.types is not None:
            vocabulary.restore(self.types.words, self.types.lowers, self.types.shapes, self.types.rows)
            for mark in self.marks:
                self.sums[mark].start_from(self.types.sums[mark])
                self.neighbour_ids[mark].start_from(self.types.neighbour_ids[mark])
                self.ready[mark].start_from(self.types.ready[mark])
        self.pair_tables: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # kind -> (P,) keys, (P,) ids
        self.slot_ids = {kind: self._pair_ids(kind) if kind in PAIR_ATTRIBUTES
                         else Lookup(partial(self._ids, partial(attributes, vocabulary)), _vocabulary.NGRAM_CACHE_ENTRIES)
                         for kind, attributes in SLOT_ATTRIBUTES.items()}
        ragged = partial(map, partial(ragged_attribute, vocabulary))
        self.ragged_ids = Lookup(partial(self._ids, ragged), _vocabulary.NGRAM_CACHE_ENTRIES)

    def _pair_ids(self, kind: str) -> FixedLookup:
        """The ids of a word pair's attribute of ``kind`` by key, every key that has one made up front
        from the model's attributes (most word pairs of a text have none: nothing is made for them),
        or taken from the type cache, which holds them for its vocabulary."""
        if self.types is not None and kind in self.types.pairs:
            keys, ids = self.types.pairs[kind]
        else:
            pairs = pair_keys(self.vocabulary, PAIR_ATTRIBUTES[kind], self.index)
            keys = np.fromiter(pairs, np.int64, len(pairs))
            ids = np.fromiter(map(self.index.__getitem__, pairs.values()), np.int64, len(pairs))
        self.pair_tables[kind] = keys, ids
        return FixedLookup(keys, ids, -1)

    def _ids(self, attributes: Callable[[list[Any]], Iterable[str | None]], keys: list[Any]) -> list[int]:
        """The ids of the attributes of ``keys`` (-1: none, or one the model has no weight for)."""
        get = self.index.get
        return [get(attribute, -1) for attribute in attributes(keys)]  # type: ignore[arg-type]

    def type_cache(self, made_for: str) -> TypeCache:
        """The word types seen so far and their rows, to save with the model (:mod:`~hgner.features.typecache`;
        ``made_for``: the model's :func:`~hgner.features.typecache.made_for`)."""
        vocabulary, n = self.vocabulary, len(self.vocabulary)
        for mark in self.marks:
            for table in (self.sums[mark], self.neighbour_ids[mark], self.ready[mark]):
                table.resize(n)
        sums, neighbour_ids, ready = ({mark: table[mark].array[:n].copy() for mark in self.marks}
                                      for table in (self.sums, self.neighbour_ids, self.ready))
        return TypeCache(made_for, list(vocabulary.words), vocabulary.lowers.strings[len(_MARKS):],
                         vocabulary.shapes.strings[len(_MARKS):], vocabulary.table[:n].copy(), sums, neighbour_ids,
                         ready, pairs=dict(self.pair_tables))

    def _type_rows(self, rows: np.ndarray, mark: str) -> None:
        """Makes, for the vocabulary ``rows`` (m,) that lack them, the summed weights (K,) of each
        word's own attributes (with ``mark``) and the ids of the attributes it gives its neighbours."""
        sums, neighbour_ids, ready = self.sums[mark], self.neighbour_ids[mark], self.ready[mark]
        for table in (sums, neighbour_ids, ready):
            table.resize(len(self.vocabulary))
        missing = ~ready.array[rows, 0]
        if not missing.any():  # (a warm tagger's usual case: no np.unique of nothing)
            return
        rows = np.unique(rows[missing])
        words = [self.vocabulary.words[row] for row in rows]
        config, resources, get = self.config, self.vocabulary.resources, self.index.get
        attributes = [marked(type_attributes(word, config, resources), mark) for word in words]
        starts = np.zeros(len(words) + 1, np.int64)
        np.cumsum(np.fromiter(map(len, attributes), np.int64, len(words)), out=starts[1:])
        ids = np.fromiter(map(get, chain.from_iterable(attributes), repeat(-1)), np.int64, starts[-1])
        rows_sums = np.zeros((len(words), self.weights.shape[1]))
        _add_weights(rows_sums, self.weights, (np.zeros((len(words), 0), np.int64), starts, ids))
        sums.array[rows] = rows_sums
        given = np.full((len(words), len(self.offsets), self.width), -1, np.int64)
        for k, offset in enumerate(self.offsets):
            for row, word in enumerate(words):
                context = marked(context_attributes(word, offset, config, resources), mark)
                given[row, k, :len(context)] = [get(attribute, -1) for attribute in context]
        neighbour_ids.array[rows] = given.reshape(len(words), -1)
        ready.array[rows] = True

    def unary(self, sentences: Sequence[Sequence[str]], documents: np.ndarray | None = None) -> np.ndarray:
        """(n, K) state scores of a document's tokens (all sentences, in order); with ``documents``
        (S,), each sentence's document number, of several documents' at once, each featurised as
        if alone."""
        if len(self.vocabulary) >= min(ID_CACHE_TYPES, self.restart_at):
            self._clear()
        document = _Document(sentences, self.config, self.vocabulary, documents)
        self._type_rows(document.rows, "")
        rows = document.rows
        n = len(rows)
        unary = self.sums[""].array[rows]
        # (n, one-per-token kinds) attribute ids (-1: none): BOS, EOS, the neighbours' by offset, the slots
        ids = np.empty((n, 2 + self.given_width + len(SLOT_ATTRIBUTES)), np.int64)
        places = (rows, document.position, document.lengths[document.sentence])
        _context_ids(ids, places, (self.neighbour_ids[""].array, self.offset_array, self.edge_ids))
        if CASELESS_MARK in self.sums and document.caseless.any():  # their marked rows (neighbours: same sentence)
            caseless = document.caseless[document.sentence]
            self._type_rows(rows[caseless], CASELESS_MARK)
            unary[caseless] = self.sums[CASELESS_MARK].array[rows[caseless]]
            marked_ids = np.empty_like(ids)
            _context_ids(marked_ids, places, (self.neighbour_ids[CASELESS_MARK].array, self.offset_array, self.edge_ids))
            ids[caseless] = marked_ids[caseless]
        for column, (kind, keys) in enumerate(document.slot_keys(), 2 + self.given_width):
            ids[:, column] = self.slot_ids[kind].of(keys)
        tokens, keys = document.ragged_keys()
        starts = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(tokens, minlength=n), out=starts[1:])
        _add_weights(unary, self.weights, (ids, starts, self.ragged_ids.of(keys)))
        return unary


@numba.njit(cache=True, nogil=True)
def _context_ids(ids: np.ndarray, tokens: tuple[np.ndarray, np.ndarray, np.ndarray],
                 context: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    """Fills ``ids`` (n, C) with its tokens' one-per-token attribute ids: ``BOS`` and ``EOS`` in
    columns 0 and 1, then for each offset the W ids a token's neighbour at that offset gives it
    (W = ``neighbour_ids.shape[1] // len(offsets)``, -1 padded), and -1 (none) everywhere else,
    the slot columns included.

    Args:
        tokens: (n,) each token's vocabulary row, place in its sentence and sentence length.
        context: the ids each vocabulary row gives its neighbours (types, W * offsets), the offsets
            (O,) and the ids of BOS and EOS (2,).
    """
    rows, position, length = tokens
    neighbour_ids, offsets, edge_ids = context
    ids[:] = -1
    width = neighbour_ids.shape[1] // max(len(offsets), 1)
    for i in range(ids.shape[0]):
        if position[i] == 0:
            ids[i, 0] = edge_ids[0]
        if position[i] == length[i] - 1:
            ids[i, 1] = edge_ids[1]
        for k in range(len(offsets)):
            if 0 <= position[i] + offsets[k] < length[i]:
                for j in range(width):
                    ids[i, 2 + width * k + j] = neighbour_ids[rows[i + offsets[k]], width * k + j]


@numba.njit(cache=True, nogil=True)
def _add_weights(unary: np.ndarray, weights: np.ndarray, ids: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    """Adds to each row of ``unary`` (n, K) the ``weights`` (A, K) rows of its attributes, one at a
    time and in order, as the sparse product of the string path does: first its one-per-token ids
    (``ids[0]``, (n, C), -1 for none), then its ragged ones, ``ids[2][ids[1][i]:ids[1][i + 1]]``."""
    single, starts, ragged = ids
    labels = unary.shape[1]
    for i in range(unary.shape[0]):  # element by element: a row added as a whole makes a temporary array each time
        for c in range(single.shape[1]):
            a = single[i, c]
            if a >= 0:
                for k in range(labels):
                    unary[i, k] += weights[a, k]
        for j in range(starts[i], starts[i + 1]):
            a = ragged[j]
            if a >= 0:
                for k in range(labels):
                    unary[i, k] += weights[a, k]
