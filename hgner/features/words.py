"""Attributes of one word type (shapes, affixes, flags, clusters, frequency), what it gives its
neighbours, and the corpus-level tables learned from words (truecasing, fitted gazetteers). The
functions of one word are cached, bounded in bytes (:mod:`~hgner.features.wordcache`)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from .config import CLUSTER_PREFIXES, GAZETTEER_MAX_TOKENS, FeatureConfig, FeatureResources
from .wordcache import SMALL_ENTRIES, TUPLE_ENTRIES, word_cache

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


@word_cache(SMALL_ENTRIES)
def word_shape(word: str) -> str:
    """``"McDonald's" -> "XxXxxxxx'x"``, ``"Zürich" -> "Xxxxxx"``: upper-case letter X, lower-case
    letter x, digit d, a letter without case a (``str.isupper`` / ``islower`` / ``isdigit`` /
    ``isalpha``, so any script), anything else kept."""
    if word.isascii() and word.isalpha():  # the common case, without a call per character
        return "".join("X" if c.isupper() else "x" for c in word)
    return "".join(map(_shape_char, word))


@word_cache(SMALL_ENTRIES)
def short_shape(word: str) -> str:
    """``word_shape`` with runs collapsed: ``"McDonald's" -> "XxXx'x"``."""
    shape = word_shape(word)
    return "".join(c for i, c in enumerate(shape) if i == 0 or c != shape[i - 1])


def _length_bucket(n: int) -> str:
    return "1" if n == 1 else "2" if n == 2 else "3" if n == 3 else "4-5" if n <= 5 else "6-8" if n <= 8 else "9+"


@word_cache(TUPLE_ENTRIES)
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
    (:meth:`FeatureResources.cluster_attributes`) when the model uses word clusters, then its vector
    cluster's when it uses those, then its frequency bucket (:func:`frequency_attribute`) when the
    model uses word frequencies, then its capitalised share's buckets
    (:meth:`FeatureResources.share_attributes`) when it uses those."""
    own = word_attributes(word, config.affixes)
    if config.word_clusters:
        own += resources.cluster_attributes(word, config.lowercase_clusters)
    if config.vector_clusters:
        own += resources.cluster_attributes(word, setting="vector_clusters")
    if config.frequency:
        own += (resources.frequency_attribute(word, config.frequency),)
    if config.capitalised_share:
        own += resources.share_attributes(word, config.capitalised_share)
    return own


def context_attributes(word: str, offset: int, config: FeatureConfig, resources: FeatureResources) -> tuple[str, ...]:
    """What a word contributes to the token ``offset`` positions away: :func:`neighbour_attributes`,
    then, within ``config.neighbour_clusters`` of the token, its cluster path's prefixes
    (:meth:`FeatureResources.neighbour_cluster_attributes`), and, one position away, its vector
    cluster's when the model uses vector clusters and its capitalised share's buckets when it uses
    the neighbours' shares."""
    own = neighbour_attributes(word, offset)
    if config.word_clusters and abs(offset) <= config.neighbour_clusters:
        own += resources.neighbour_cluster_attributes(word, offset)
    if config.vector_clusters and abs(offset) == 1:
        own += resources.neighbour_cluster_attributes(word, offset, "vector_clusters")
    if config.capitalised_share and config.neighbour_shares and abs(offset) == 1:
        own += resources.neighbour_share_attributes(word, offset, config.capitalised_share)
    return own


CASELESS_MARK = "~"  # [caseless_features] starts the word-type and neighbour attributes of caseless sentences


def marked(attributes: tuple[str, ...], mark: str) -> tuple[str, ...]:
    """``attributes`` each prefixed with ``mark`` (unchanged when it is empty)."""
    return tuple(mark + attribute for attribute in attributes) if mark else attributes


def context_width(config: FeatureConfig) -> int:
    """The most attributes :func:`context_attributes` gives for one offset."""
    return (2 + (len(CLUSTER_PREFIXES) if config.word_clusters and config.neighbour_clusters else 0)
            + (len(CLUSTER_PREFIXES) if config.vector_clusters else 0)
            + (2 if config.capitalised_share and config.neighbour_shares else 0))


@word_cache(2 * TUPLE_ENTRIES)
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


@word_cache(SMALL_ENTRIES)
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


def shows_case(tokens: Sequence[str]) -> bool:
    """True for a sentence whose cased words are not all lower case nor all upper case: the only
    sentences whose casing is evidence for the truecasing table. Unlike :func:`is_caseless` (which
    decides how text is featurised, and leaves a short all-lower-case sentence alone as a possible
    fragment of cased text), two lower-case words (``new york``) are no evidence either way."""
    cased = [flags for flags in map(word_flags, tokens) if flags & CASED]
    return not (all(flags & ALL_LOWER for flags in cased) or all(flags & ALL_UPPER for flags in cased))


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
    positions of the sentences that show case (:func:`shows_case`; ties go to the form seen
    first). Sentences all in lower or all in upper case count for nothing, so the
    lowercased and uppercased copies of case augmentation (:func:`hgner.data.augment.case_augmented`)
    leave the table as the original corpus gives it."""
    counts: dict[str, Counter] = {}
    for tokens in sentences:
        if not shows_case(tokens):
            continue
        for word in tokens[1:]:
            if word_flags(word) & CASED:
                counts.setdefault(word.lower(), Counter())[word] += 1
    return {lower: forms.most_common(1)[0][0] for lower, forms in counts.items()}
