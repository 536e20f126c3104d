"""A document made arrays of vocabulary rows (:class:`_Document`: caseless sentences, truecasing,
document tables, gazetteer matches) and the string path :func:`document_features`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from .config import GAZETTEER_MAX_TOKENS, FeatureConfig, FeatureResources
from .vocabulary import (
    _GAZETTEER,
    _KIND,
    _MATCH_PLACES,
    _NO_CASE,
    _ORDER_DOCUMENT,
    _PAIR,
    _UNKNOWN_CASE,
    FLAGS,
    LOWER,
    SHAPE,
    SLOT_ATTRIBUTES,
    Vocabulary,
    _DocumentTables,
    _neighbours,
    ragged_attribute,
)
from .words import (
    CASED,
    CASELESS_MARK,
    HAS_UPPER,
    JOINER,
    NAME_CASE,
    STARTS_ENTRY,
    caseless_sentences,
    context_attributes,
    marked,
    type_attributes,
)


class _Document:
    """A document's tokens as rows of a :class:`Vocabulary`, with what featurising needs beyond
    them, found once by whole-document array operations: which sentences are caseless, the words
    the tokens are featurised as (truecased in caseless sentences) and the document tables.
    ``rows``, ``lower``, ``shape``, ``flags``: (n,) those of the words."""

    def __init__(self, sentences: Sequence[Sequence[str]], config: FeatureConfig, vocabulary: Vocabulary,
                 documents: np.ndarray | None = None) -> None:
        self.config, self.vocabulary = config, vocabulary
        lengths = np.fromiter(map(len, sentences), np.int64, len(sentences))
        ends = np.cumsum(lengths)
        self.starts, self.lengths = ends - lengths, lengths
        self.firsts, self.lasts = self.starts[lengths > 0], ends[lengths > 0] - 1
        self.sentence = np.repeat(np.arange(len(sentences)), lengths)  # (n,) each token's sentence
        self.position = np.arange(len(self.sentence)) - self.starts[self.sentence]  # (n,)
        # several documents featurised at once, each as if alone: (S,) each sentence's document number
        documents = np.zeros(len(sentences), np.int64) if documents is None else np.asarray(documents, np.int64)
        self.document_key = documents[self.sentence] * _PAIR  # (n,) added to a lowercase code: a form of one document
        rows = vocabulary.of([token for tokens in sentences for token in tokens])
        lower, flags = vocabulary.table[rows, LOWER], vocabulary.table[rows, FLAGS]
        self.caseless = np.zeros(len(sentences), bool)
        if config.truecase:
            self.caseless = caseless_sentences(flags, self.sentence, len(sentences))
            self._lowercased_documents(documents, flags)
        self.tables = None
        if config.truecase or config.document:
            before, after = _neighbours(lower, self.firsts, self.lasts)
            self.tables = _DocumentTables(self.document_key + lower, flags, rows, self.position,
                                          ~self.caseless[self.sentence], before, after, config.context)
        self.words = list(sentences)
        for si in np.flatnonzero(self.caseless).tolist():
            start = self.starts[si]
            forms = self._tables.form[start:start + len(sentences[si])].tolist()
            self.words[si] = list(map(self._truecase, sentences[si], forms))
            rows[start:start + len(sentences[si])] = vocabulary.of(self.words[si])
        self.rows = rows
        self.lower, self.shape, self.flags = vocabulary.table[rows].T

    @property
    def _tables(self) -> _DocumentTables:
        """The document's tables, built when truecasing or document attributes are on."""
        assert self.tables is not None, "document tables are built only for truecasing or document attributes"
        return self.tables

    def _lowercased_documents(self, documents: np.ndarray, flags: np.ndarray) -> None:
        """A document without a capital letter is lowercased text: every sentence of it with a
        letter is caseless (unless all of its sentences are already)."""
        n_documents = int(documents.max()) + 1 if len(documents) else 0
        token_documents = documents[self.sentence]
        has_upper = np.bincount(token_documents[(flags & HAS_UPPER) != 0], minlength=n_documents) > 0
        all_caseless = np.bincount(documents[~self.caseless], minlength=n_documents) == 0
        lowercased = ~has_upper & ~all_caseless
        if lowercased.any():
            with_case = np.bincount(self.sentence[(flags & CASED) != 0], minlength=len(documents)) > 0
            self.caseless = np.where(lowercased[documents], with_case, self.caseless)

    def _truecase(self, word: str, form: int) -> str:
        """The truecased form of ``word``, whose form number is ``form`` (see the module docstring)."""
        best = self._tables.best[form]
        if best >= 0:
            return self.vocabulary.words[best]
        resources, lower = self.vocabulary.resources, word.lower()
        known = resources.truecase.get(lower) or resources.outside_truecase.get(lower)
        if known is not None:
            return known
        if word.isupper() and len(word) > 1:
            return word.title()
        if resources.lookup(lower):  # a name or place the training text never showed
            return word.title()
        return word

    def slot_keys(self) -> Iterator[tuple[str, np.ndarray]]:
        """The attributes every token has at most one of, by kind (:data:`SLOT_ATTRIBUTES`), in
        their order: (kind, one key per token: (n,) ints, or (n, 3) codes for the shape trigram)."""
        if self.config.conjunctions:
            before, after = _neighbours(self.lower, self.firsts, self.lasts)
            yield "left_bigram", before * _PAIR + self.lower
            yield "right_bigram", self.lower * _PAIR + after
            trigrams = np.empty((len(self.shape), 3), self.shape.dtype)  # (n, 3): before, own, after
            trigrams[:, 1] = self.shape
            trigrams[:, 0], trigrams[:, 2] = _neighbours(self.shape, self.firsts, self.lasts)
            yield "shape_trigram", trigrams
        if self.config.truecase:
            if self.caseless.any():  # else no token has the flag
                yield "caseless", self.caseless[self.sentence]
            yield "truecase_shape", self._truecase_shapes()

    def _truecase_shapes(self) -> np.ndarray:
        """(n,) each word's truecase-shape key: the shape code of its form in the document (its
        most frequent surface form there), else in the truecasing table, else _UNKNOWN_CASE;
        _NO_CASE for a word without a cased letter."""
        forms = self._tables.forms_of(self.document_key + self.lower)
        best = np.where(forms >= 0, self._tables.best[forms], -1)
        shapes = np.where(best >= 0, self.vocabulary.table[best, SHAPE], _UNKNOWN_CASE)
        cased = (self.flags & CASED) != 0
        unknown = np.flatnonzero(cased & (best < 0))
        shapes[unknown] = self.vocabulary.known_shapes.of(self.lower[unknown])
        return np.where(cased, shapes, _NO_CASE)

    def ragged_keys(self) -> tuple[np.ndarray, np.ndarray]:
        """The attributes a token may have several of (gazetteer matches, document attributes,
        context aggregation; :func:`ragged_attribute`) as (m,) tokens and (m,) keys, each token's
        keys together and in order."""
        config = self.config
        pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        if config.gazetteer and self.vocabulary.resources.gazetteer:
            pieces.append(self._gazetteer_keys())
        if config.document:  # after the gazetteer's (the sort below is stable)
            pieces.append((self._tables.tokens, self._tables.keys, np.full(len(self._tables.keys), _ORDER_DOCUMENT)))
        if not pieces:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        tokens, keys, orders = (np.concatenate(arrays) for arrays in zip(*pieces))
        order = np.lexsort((orders, tokens))
        return tokens[order], keys[order]

    def _gazetteer_keys(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``g=LIST:P`` (as (tokens, keys, orders)) for every gazetteer list an n-gram of
        capitalised tokens (:data:`NAME_CASE`; up to :data:`GAZETTEER_MAX_TOKENS`, joined by
        :data:`_JOINERS`) is on, for its tokens, longest n-gram first at each start, a match
        starting after the last one (P: ``S`` single token, ``B`` first, ``I`` inside, ``E`` last)."""
        n, position, vocabulary = len(self.rows), self.position, self.vocabulary
        capitalised = (self.flags & NAME_CASE) != 0
        starts = np.flatnonzero(capitalised & ((self.flags & STARTS_ENTRY) != 0))  # where an entry may start
        if not len(starts):
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
        joinable = (self.flags & (NAME_CASE | JOINER)) != 0
        # (starts, lengths 1..GAZETTEER_MAX_TOKENS): the n-gram's last token, and whether the n-gram is
        # in the start's window (one sentence, every token after the first capitalised or a joiner)
        steps = np.arange(GAZETTEER_MAX_TOKENS)
        last = np.minimum(starts[:, None] + steps, n - 1)
        window = (position[last] == position[starts, None] + steps) & joinable[last]
        window[:, 0] = True
        np.logical_and.accumulate(window, axis=1, out=window)
        start_index, length_index = np.nonzero(window & capitalised[last])  # the candidate n-grams
        # each candidate's lowercase codes, padded with -1 (Lookup: a row key ends at its first -1)
        codes = np.where(steps <= length_index[:, None], self.lower[last[start_index]], -1)
        found = np.full(last.shape, -1)  # the lists (in vocabulary.entry_lists) of each n-gram on one
        found[start_index, length_index] = vocabulary.entries.of(codes)
        on_list = found >= 0
        longest = np.where(on_list.any(axis=1), GAZETTEER_MAX_TOKENS - np.argmax(on_list[:, ::-1], axis=1), 0)
        found = found[np.arange(len(starts)), longest - 1]  # those of the longest (any value where there is none)
        tokens: list[int] = []
        keys: list[int] = []
        orders: list[int] = []
        resume = 0  # the token after the last match: a match starts at or after it
        matched = np.flatnonzero(longest)
        for i, length, lists in zip(starts[matched].tolist(), longest[matched].tolist(), found[matched].tolist()):
            if i < resume:
                continue
            resume = i + length
            lists = vocabulary.entry_lists.strings[lists]
            for k in range(length):
                place = 0 if length == 1 else 1 if k == 0 else 3 if k == length - 1 else 2
                tokens.extend([i + k] * len(lists))
                keys.extend(_GAZETTEER * _KIND + list_index * len(_MATCH_PLACES) + place for list_index in lists)
                orders.extend(range(len(lists)))
        return np.array(tokens, np.int64), np.array(keys, np.int64), np.array(orders, np.int64)


def _offsets(config: FeatureConfig) -> list[int]:
    return [k for k in range(-config.window, config.window + 1) if k]



def document_features(
    sentences: Sequence[Sequence[str]],
    config: FeatureConfig,
    resources: FeatureResources | None = None,
) -> list[list[list[str]]]:
    """Features of every sentence of a document (the unit tagging and training work on): one list
    of attribute strings per token, one list of those per sentence. Per token, in this order: the
    word type's attributes, ``BOS``/``EOS``, the neighbours' attributes by offset, the one-per-token
    kinds (:meth:`_Document.slot_keys`), then the rest (:meth:`_Document.ragged_keys`);
    :class:`AttributeScores` sums the weights in the same order. With ``caseless_features``, the
    word type's and the neighbours' attributes of a caseless sentence start with
    :data:`CASELESS_MARK` (their own weights, learned from caseless text only)."""
    vocabulary = Vocabulary(resources)
    document = _Document(sentences, config, vocabulary)
    offsets = _offsets(config)
    slots = [SLOT_ATTRIBUTES[kind](vocabulary, keys.tolist()) for kind, keys in document.slot_keys()]
    ragged: list[list[str]] = [[] for _ in document.rows]
    for token, key in zip(*(array.tolist() for array in document.ragged_keys())):
        ragged[token].append(ragged_attribute(vocabulary, key))
    out = []
    start = 0  # the sentence's first token in the document
    for words, caseless in zip(document.words, document.caseless.tolist()):
        n = len(words)
        mark = CASELESS_MARK if caseless and config.caseless_features else ""
        features = []
        for i, word in enumerate(words):
            attributes = list(marked(type_attributes(word, config, vocabulary.resources), mark))
            if i == 0:
                attributes.append("BOS")
            if i == n - 1:
                attributes.append("EOS")
            for offset in offsets:
                if 0 <= i + offset < n:
                    attributes.extend(marked(context_attributes(words[i + offset], offset, config, vocabulary.resources),
                                             mark))
            attributes.extend(value for slot in slots if (value := slot[start + i]) is not None)
            attributes.extend(ragged[start + i])
            features.append(attributes)
        out.append(features)
        start += n
    return out



def sentence_features(tokens: Sequence[str], config: FeatureConfig,
                      resources: FeatureResources | None = None) -> list[list[str]]:
    """Features of one sentence taken as a document of its own."""
    return document_features([tokens], config, resources)[0]
