"""The per-word caches are bounded in bytes (issue 62): a bounded number of entries, long words
never cached, and the tagging path's word types start again within a byte budget, with the same
scores."""

from __future__ import annotations

import numpy as np

from hgner import features
from hgner.crf.model import CrfModel
from hgner.features import wordcache
from hgner.features.words import word_attributes, word_shape


def test_long_words_are_not_cached_and_entries_are_bounded():
    word_shape.cache_clear()
    word_shape("x" * (wordcache.CACHED_WORD_CHARS + 1))
    assert word_shape.cache_info().currsize == 0
    for i in range(wordcache.SMALL_ENTRIES + 10):
        word_shape(f"w{i}")
    assert word_shape.cache_info().currsize == wordcache.SMALL_ENTRIES
    assert word_attributes.cache_info().maxsize == wordcache.TUPLE_ENTRIES
    assert wordcache.WORD_CACHE_BYTES < 160 * 2**20  # (with 200,000 entries a cache, they took about 800 MB)


def test_word_types_start_again_within_the_byte_budget(monkeypatch):
    model = CrfModel.load("en-conll03")
    sentences = [["Jim", "Smith", "flew", "to", "Xqzvlor", "Brrnt", "."], ["Ykkaw", "met", "Jim", "."]]
    expected = model.unary(sentences)
    monkeypatch.setattr(features.scores, "ID_CACHE_BYTES", 1)  # a new scorer restarts at every new type
    fresh = CrfModel.load("en-conll03")
    scores = fresh.attribute_scores
    assert scores.restart_at == len(scores.types.words)
    for _ in range(3):
        assert np.array_equal(fresh.unary(sentences), expected)
        assert len(scores.vocabulary) <= len(scores.types.words) + 7  # started again at each call
