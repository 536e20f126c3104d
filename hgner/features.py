"""Token features: the one function that turns tokens into CRF attributes, for training and tagging.

No part-of-speech tags are needed, so raw text is featurised exactly like a CoNLL corpus.
Every attribute is a string with value 1 (crfsuite's ``name=value`` convention). What a token
contributes depends on the word alone (cached per word type) plus its neighbours' words, so
featurising is a few dictionary look-ups per token.

Configuration (stored in the model's metadata, so a model is always featurised as it was trained):
    window: neighbours on each side whose word, lowercase form and shape are attributes.
    affixes: longest prefix and suffix length.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache


@dataclass(frozen=True)
class FeatureConfig:
    window: int = 2
    affixes: int = 4

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> FeatureConfig:
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown feature settings {sorted(unknown)}")
        return cls(**data)


_SHAPE = [(re.compile(r"[A-Z]"), "X"), (re.compile(r"[a-z]"), "x"), (re.compile(r"[0-9]"), "d")]
_NOT_WORD = re.compile(r"[^\w]")


def word_shape(word: str) -> str:
    """``"McDonald's" -> "XxXxxxxx'x"``: upper X, lower x, digit d, anything else kept."""
    for pattern, symbol in _SHAPE:
        word = pattern.sub(symbol, word)
    return word


def short_shape(word: str) -> str:
    """``word_shape`` with runs collapsed: ``"McDonald's" -> "XxXx'x"``."""
    shape = word_shape(word)
    return "".join(c for i, c in enumerate(shape) if i == 0 or c != shape[i - 1])


@lru_cache(maxsize=200_000)
def word_attributes(word: str, affixes: int) -> tuple[str, ...]:
    """Attributes of the word itself, independent of context."""
    lower = word.lower()
    attributes = [f"w={word}", f"l={lower}", f"s={short_shape(word)}", f"S={word_shape(word)[:12]}"]
    for n in range(1, min(affixes, len(word)) + 1):
        attributes.append(f"p{n}={lower[:n]}")
        attributes.append(f"x{n}={lower[-n:]}")
    if word.istitle():
        attributes.append("title")
    if word.isupper():
        attributes.append("upper")
    if any(c.isdigit() for c in word):
        attributes.append("digit")
    if "-" in word:
        attributes.append("hyphen")
    if _NOT_WORD.fullmatch(word):
        attributes.append("punct")
    return tuple(attributes)


@lru_cache(maxsize=200_000)
def neighbour_attributes(word: str, offset: int) -> tuple[str, ...]:
    """What a word contributes to the token ``offset`` positions away."""
    return (f"{offset}:l={word.lower()}", f"{offset}:s={short_shape(word)}")


def sentence_features(tokens: Sequence[str], config: FeatureConfig) -> list[list[str]]:
    """One list of attribute strings per token of a sentence."""
    n = len(tokens)
    features = []
    for i, word in enumerate(tokens):
        attributes = ["bias", *word_attributes(word, config.affixes)]
        if i == 0:
            attributes.append("BOS")
        if i == n - 1:
            attributes.append("EOS")
        for offset in range(-config.window, config.window + 1):
            if offset and 0 <= i + offset < n:
                attributes.extend(neighbour_attributes(tokens[i + offset], offset))
        features.append(attributes)
    return features


def document_features(sentences: Sequence[Sequence[str]], config: FeatureConfig) -> list[list[list[str]]]:
    """Features of every sentence of a document (the unit tagging and training work on)."""
    return [sentence_features(tokens, config) for tokens in sentences]
