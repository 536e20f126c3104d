"""Word types as integer rows (:class:`Vocabulary`), the keys of the attributes that depend on more
than one word, and the per-document tables (one numba pass)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from operator import methodcaller
from typing import Any

import numba
import numpy as np

from .config import FeatureResources
from .lookup import Lookup
from .words import (
    CAPITALISED,
    CASED,
    JOINER,
    OWN_LOWERCASE,
    STARTS_ENTRY,
    left_bigram,
    right_bigram,
    shape_trigram,
    short_shape,
    word_flags,
)

NGRAM_CACHE_ENTRIES = 500_000  # keys an attribute-id cache holds before it starts again
_MARKS = ("<s>", "</s>")  # the neighbours of a sentence's first and last tokens: coded first
_SENTENCE_START, _SENTENCE_END = 0, 1  # their codes among lowercase words and shapes
_PAIR = 1 << 32  # bigram key = code of the first word * _PAIR + code of the second (codes stay below 2**31)

_JOINERS = frozenset(
    {"of", "de", "la", "le", "and", "&", "-", "du", "del", "van", "von", "der", "al", "el", "da", "do"}
)


class _Table:
    """Rows appended to an array that doubles when full: ``array[:len(self)]`` holds them."""

    def __init__(self, width: int, dtype: type) -> None:
        self.array: np.ndarray = np.zeros((64, width), dtype)
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def start_from(self, rows: np.ndarray) -> None:
        """Holds ``rows`` (n, width) of the table's dtype, empty before: ``rows`` itself becomes the
        array (no copy; rows added later go to a grown copy, rows changed in place change it)."""
        if self.size or rows.dtype != self.array.dtype or rows.shape[1:] != self.array.shape[1:] \
                or not rows.flags.c_contiguous or not rows.flags.writeable or len(rows) < len(self.array):
            self.extend(rows)
            return
        self.array, self.size = rows, len(rows)

    def append(self, row: Any) -> None:
        self.extend(np.asarray(row)[None])

    def extend(self, rows: np.ndarray) -> None:
        start = self.size
        self.resize(start + len(rows))
        self.array[start:self.size] = rows

    def resize(self, size: int) -> None:
        """Holds ``size`` rows (new ones zero), the array doubled as often as needed (in one copy)."""
        capacity = len(self.array)
        if size > capacity:
            while size > capacity:
                capacity *= 2
            grown = np.zeros((capacity, *self.array.shape[1:]), self.array.dtype)
            grown[:len(self.array)] = self.array
            self.array = grown
        self.size = max(self.size, size)


class _Codes(dict):
    """String (or another hashable value) -> a small integer code, given in order of first sight
    (``strings[code]``)."""

    def __init__(self, first: Iterable[str]) -> None:
        self.strings: list[str] = list(dict.fromkeys(first))  # coded in this order
        super().__init__(zip(self.strings, range(len(self.strings))))

    def __missing__(self, string: str) -> int:
        self[string] = code = len(self.strings)
        self.strings.append(string)
        return code


LOWER, SHAPE, FLAGS = 0, 1, 2  # the columns of a Vocabulary row


class Vocabulary(dict):
    """The word types seen so far, each a row (word -> row; ``words[row]``) of ``table``: the code
    of its lowercase form (``lowers.strings[code]``), of its short shape (``shapes.strings``) and
    its :func:`word_flags`. Documents become arrays of rows, so the document-level attributes are
    found with whole-document array operations; attributes are then made from codes
    (:data:`SLOT_ATTRIBUTES`, :func:`ragged_attribute`). The tagging path keeps one per model
    (:class:`AttributeScores`), the string path makes one per document."""

    def __init__(self, resources: FeatureResources | None) -> None:
        super().__init__()
        self.resources = resources if resources is not None else FeatureResources()
        self.lowers = _Codes(_MARKS)
        self.shapes = _Codes(_MARKS)
        self.words: list[str] = []
        self.rows = _Table(3, np.int64)
        # lowercase code -> shape code of its form in the truecasing table, else the outside one (-1: in neither)
        self.known_shapes = Lookup(partial(map, self._known_shape), NGRAM_CACHE_ENTRIES)
        # lowercase codes of an n-gram -> the gazetteer lists it is on (entry_lists.strings[id]; -1: none)
        self.entries = Lookup(partial(map, self._entry_lists), NGRAM_CACHE_ENTRIES)
        self.entry_lists = _Codes(())

    def restore(self, words: list[str], lowers: list[str], shapes: list[str], rows: np.ndarray) -> None:
        """Start from a saved state (:class:`~hgner.features.typecache.TypeCache`): the word types
        ``words`` with their ``rows`` (T, 3), the codes' strings ``lowers`` and ``shapes`` after the
        sentence marks."""
        self.lowers, self.shapes = _Codes((*_MARKS, *lowers)), _Codes((*_MARKS, *shapes))
        self.words = list(words)
        self.update(zip(words, range(len(words))))
        self.rows.start_from(rows)

    @property
    def table(self) -> np.ndarray:
        """(types, 3) LOWER, SHAPE and FLAGS of each row (read it after :meth:`of`, which may grow it)."""
        return self.rows.array

    def __missing__(self, word: str) -> int:
        self[word] = row = len(self.words)
        self.words.append(word)
        lower = word.lower()
        flags = (word_flags(word) | (STARTS_ENTRY if lower in self.resources.entry_starts else 0)
                 | (JOINER if lower in _JOINERS else 0))
        self.rows.append((self.lowers[lower], self.shapes[short_shape(word)], flags))
        return row

    def of(self, words: Sequence[str]) -> np.ndarray:
        """(len(words),) the rows of ``words``, made where missing."""
        return np.fromiter(map(self.__getitem__, words), np.int64, len(words))

    def _entry_lists(self, lower_codes: tuple[int, ...]) -> int:
        lists = self.resources.lookup(" ".join(self.lowers.strings[code] for code in lower_codes))
        return self.entry_lists[lists] if lists else -1

    def _known_shape(self, lower_code: int) -> int:
        lower = self.lowers.strings[lower_code]
        form = self.resources.truecase.get(lower) or self.resources.outside_truecase.get(lower)
        return -1 if form is None else self.shapes[short_shape(form)]


# Ragged attribute keys: kind * _KIND + value
_KIND = 1 << 40
_GAZETTEER, _D_LOWER, _D_CAP, _RUN, _FIRST_BEFORE, _FIRST_AFTER, _CONTEXT_BEFORE, _CONTEXT_AFTER = range(1, 9)
_RUN_PLACES = "BEIS"  # the places in a run of capitalised tokens, bit k of a run mask for _RUN_PLACES[k]
_MATCH_PLACES = "SBIE"  # the places in a gazetteer match
# a token's ragged attributes come in this order: gazetteer matches, then the document attributes
_ORDER_DOCUMENT = 1_000


def ragged_attribute(vocabulary: Vocabulary, key: int) -> str:
    """The attribute string of a key of :meth:`_Document.ragged_keys`."""
    kind, value = divmod(key, _KIND)
    if kind == _GAZETTEER:
        list_index, place = divmod(value, len(_MATCH_PLACES))
        return f"g={vocabulary.resources.list_names[list_index]}:{_MATCH_PLACES[place]}"
    if kind == _D_LOWER:
        return "d:lower"
    if kind == _D_CAP:
        return "d:cap"
    if kind == _RUN:
        return f"dp={_RUN_PLACES[value]}"
    prefix = {_FIRST_BEFORE: "f-1", _FIRST_AFTER: "f+1", _CONTEXT_BEFORE: "c-1", _CONTEXT_AFTER: "c+1"}[kind]
    return f"{prefix}:l={vocabulary.lowers.strings[value]}"


_NO_CASE, _UNKNOWN_CASE = -2, -1  # truecase-shape keys of a word without a cased letter / a word nobody knows


def _pairs(vocabulary: Vocabulary, keys: list[int]) -> tuple[list[str], list[str]]:
    """The lowercase words of bigram ``keys``: the first ones, the second ones."""
    strings = vocabulary.lowers.strings
    return [strings[key // _PAIR] for key in keys], [strings[key % _PAIR] for key in keys]


def _truecase_shape(vocabulary: Vocabulary, key: int) -> str | None:
    return None if key == _NO_CASE else "tc=?" if key == _UNKNOWN_CASE else f"tc={vocabulary.shapes.strings[key]}"


# The slot kinds whose key is a pair of lowercase words (:data:`_PAIR`), by the function that makes
# their attribute: the tagging path tables every such key that has a weight up front (:func:`pair_keys`)
PAIR_ATTRIBUTES: dict[str, Callable[[str, str], str]] = {"left_bigram": left_bigram, "right_bigram": right_bigram}


def pair_keys(vocabulary: Vocabulary, attribute: Callable[[str, str], str], strings: Iterable[str]) -> dict[int, str]:
    """The keys (word pairs, coded in ``vocabulary``) whose ``attribute`` is one of ``strings``, with
    that string: each way of cutting a string that ``attribute`` makes back from its two parts
    (``attribute(a, b)`` is a prefix, ``a``, ``|`` and ``b``; a word may hold a ``|`` itself)."""
    prefix, lowers = attribute("", "")[:-1], vocabulary.lowers
    found = {}
    for string in filter(methodcaller("startswith", prefix), strings):
        rest = string[len(prefix):]
        cut = rest.find("|")
        while cut >= 0:  # attribute(rest[:cut], rest[cut + 1:]) is the string itself
            found[lowers[rest[:cut]] * _PAIR + lowers[rest[cut + 1:]]] = string
            cut = rest.find("|", cut + 1)
    return found


# The attributes every token has at most one of, in their order (:meth:`_Document.slot_keys`): kind ->
# the attribute strings of a list of keys (None: the token has none).
SLOT_ATTRIBUTES: dict[str, Callable[[Vocabulary, list[Any]], list[str | None]]] = {
    "left_bigram": lambda v, keys: list(map(left_bigram, *_pairs(v, keys))),
    "right_bigram": lambda v, keys: list(map(right_bigram, *_pairs(v, keys))),
    "shape_trigram": lambda v, keys: [shape_trigram(*(v.shapes.strings[code] for code in key)) for key in keys],
    "caseless": lambda v, keys: ["caseless" if key else None for key in keys],
    "truecase_shape": lambda v, keys: [_truecase_shape(v, key) for key in keys],
}


def _neighbours(codes: np.ndarray, firsts: np.ndarray, lasts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n,) each token's previous and next token's code, the codes of ``<s>`` / ``</s>`` at the
    sentences' ``firsts`` / ``lasts`` tokens."""
    before, after = np.empty_like(codes), np.empty_like(codes)
    before[1:], after[:-1] = codes[:-1], codes[1:]
    before[firsts], after[lasts] = _SENTENCE_START, _SENTENCE_END
    return before, after


class _DocumentTables:
    """What the document-level rules find, from the tokens of the cased sentences: for each
    lowercase form of the document (its *form number*, the index of its key in ``codes``), its
    most frequent surface form, and the document attributes of the capitalised tokens
    (``d:lower`` ... ``c+1:l=``, :func:`ragged_attribute`; ``tokens`` (m,) and ``keys`` (m,),
    each token's in order).

    Args:
        lower, flags, rows: (n,) the tokens' keys (lowercase code, plus the document number times
            ``_PAIR`` when several documents are featurised at once), flags and vocabulary rows.
        position: (n,) each token's place in its sentence.
        cased_sentence: (n,) whether the token's sentence is cased (not caseless).
        before, after: (n,) the lowercase codes of each token's neighbours.
        context: how many capitalised occurrences of a word give context attributes.
    """

    def __init__(self, lower: np.ndarray, flags: np.ndarray, rows: np.ndarray, position: np.ndarray,
                 cased_sentence: np.ndarray, before: np.ndarray, after: np.ndarray, context: int) -> None:
        self.codes, self.form = np.unique(lower, return_inverse=True)  # (u,), (n,) each token's form number
        columns = np.stack([self.form, flags, rows, position, before, after, cased_sentence], axis=1)
        self.best, self.tokens, self.keys = _document_tables(columns, len(self.codes), context)

    def forms_of(self, codes: np.ndarray) -> np.ndarray:
        """(m,) the form numbers of the keys ``codes`` (m,), -1 for a key not in the document."""
        forms = np.minimum(np.searchsorted(self.codes, codes), len(self.codes) - 1)
        return np.where(self.codes[forms] == codes, forms, -1) if len(self.codes) else np.full(len(codes), -1)


@numba.njit(cache=True, nogil=True)
def _document_tables(tokens: np.ndarray, n_forms: int, context: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tables of :class:`_DocumentTables` in two passes over a document's tokens.

    Args:
        tokens: (n, 7) per token: form number, flags, vocabulary row, place in its sentence, the
            lowercase codes of its neighbours before and after, and 1 if its sentence is cased.
        n_forms: u, the number of forms.
        context: how many capitalised occurrences of a form give context attributes.

    Returns:
        (u,) each form's most frequent surface form at non-initial positions (a vocabulary row,
        the first seen on a tie; -1: none); then (m,) tokens and (m,) keys of the document
        attributes of the capitalised tokens of cased sentences.
    """
    n = tokens.shape[0]
    first = np.full(n_forms, -1)  # the form's first token
    n_capitalised = np.zeros(n_forms, np.int64)  # at non-initial positions
    n_lowercase = np.zeros(n_forms, np.int64)  # in its own lowercase, at non-initial positions
    runs = np.zeros(n_forms, np.int64)  # places in runs of capitalised tokens (bits, _RUN_PLACES)
    taken = np.zeros(n_forms, np.int64)  # capitalised occurrences given context so far
    context_keys = np.empty((n_forms, 2 * context), np.int64)  # each key once, in order
    context_count = np.zeros(n_forms, np.int64)
    width = tokens[:, 2].max() + 1 if n else 1
    pairs = np.empty(n, np.int64)  # form * width + row of the non-initial tokens, in order
    n_pairs = 0
    n_keys = 0  # of the document attributes
    for i in range(n):
        form, flags, position = tokens[i, 0], tokens[i, 1], tokens[i, 3]
        if tokens[i, 6] == 0 or flags & CASED == 0:  # (a caseless sentence, a word without case)
            continue
        if first[form] < 0:
            first[form] = i
        if flags & CAPITALISED != 0:
            previous = position > 0 and tokens[i - 1, 1] & CAPITALISED != 0
            following = i + 1 < n and tokens[i + 1, 3] > 0 and tokens[i + 1, 1] & CAPITALISED != 0
            if position > 0:
                runs[form] |= (4 if following else 2) if previous else (1 if following else 8)  # I, E, B, S
            if taken[form] < context:
                taken[form] += 1
                for key in (_CONTEXT_BEFORE * _KIND + tokens[i, 4], _CONTEXT_AFTER * _KIND + tokens[i, 5]):
                    known = False
                    for k in range(context_count[form]):
                        known = known or context_keys[form, k] == key
                    if not known:
                        context_keys[form, context_count[form]] = key
                        context_count[form] += 1
        if position > 0:
            n_capitalised[form] += flags & CAPITALISED != 0
            n_lowercase[form] += flags & OWN_LOWERCASE != 0
            pairs[n_pairs] = form * width + tokens[i, 2]
            n_pairs += 1
    best = np.full(n_forms, -1)
    best_count = np.zeros(n_forms, np.int64)
    best_first = np.zeros(n_forms, np.int64)
    order = np.argsort(pairs[:n_pairs], kind="mergesort")  # stable: a run's first element was seen first
    start = 0
    for end in range(1, n_pairs + 1):
        if end == n_pairs or pairs[order[end]] != pairs[order[start]]:
            form, row = divmod(pairs[order[start]], width)
            count, seen = end - start, order[start]
            if count > best_count[form] or (count == best_count[form] and seen < best_first[form]):
                best[form], best_count[form], best_first[form] = row, count, seen
            start = end
    # the document attributes of each capitalised token, in order: d:lower, d:cap, dp=, f-1, f+1, c-1/c+1
    most = 8 + 2 * context  # keys of one token at most
    key_tokens, keys = np.empty(2 * n + most, np.int64), np.empty(2 * n + most, np.int64)
    for i in range(n):
        form, flags, position = tokens[i, 0], tokens[i, 1], tokens[i, 3]
        if tokens[i, 6] == 0 or flags & CAPITALISED == 0:
            continue
        if n_keys + most > len(keys):
            key_tokens = np.concatenate((key_tokens, np.empty(len(keys), np.int64)))
            keys = np.concatenate((keys, np.empty(len(keys), np.int64)))
        start = n_keys
        if n_lowercase[form] > 0:
            keys[n_keys] = _D_LOWER * _KIND
            n_keys += 1
        if n_capitalised[form] - (position > 0) > 0:  # another capitalised occurrence
            keys[n_keys] = _D_CAP * _KIND
            n_keys += 1
        for bit in range(len(_RUN_PLACES)):
            if runs[form] >> bit & 1:
                keys[n_keys] = _RUN * _KIND + bit
                n_keys += 1
        if first[form] != i:
            keys[n_keys] = _FIRST_BEFORE * _KIND + tokens[first[form], 4]
            keys[n_keys + 1] = _FIRST_AFTER * _KIND + tokens[first[form], 5]
            n_keys += 2
        keys[n_keys:n_keys + context_count[form]] = context_keys[form, :context_count[form]]
        n_keys += context_count[form]
        key_tokens[start:n_keys] = i
    return best, key_tokens[:n_keys], keys[:n_keys]
