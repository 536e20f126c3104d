"""The tagging path's attribute ids (features.AttributeIds, CrfModel.feature_ids) give the same
unary rows, bit for bit, as attribute strings, so tags, F1 and confidences cannot change."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hgner import features
from hgner.corpus import load_corpus
from hgner.model import CrfModel
from corpus_support import needs_corpus

WORDS = ["John", "Smith", "visited", "Paris", ".", "JOHN", "paris", "U.S.", "Acme", "Corp", "of", "New", "York",
         "3", "-", "McDonald's", "unseenword", "Unseen", "Reuters", ",", "said"]


def assert_same_unary(model: CrfModel, documents: list[list[list[str]]]) -> None:
    for sentences in documents:
        strings = model.unary(model.features(sentences))
        ids = model.feature_ids(sentences)
        assert np.array_equal(strings, model.unary(ids))
        assert model.crfsuite_tag(ids) == model.crfsuite_tag(model.features(sentences))


def test_ids_equal_strings_on_the_tiny_corpus(tiny_model, tiny_corpus):
    assert_same_unary(tiny_model, [[s.tokens for s in d.sentences] for d in tiny_corpus.documents])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), min_size=1, max_size=4))
def test_ids_equal_strings_on_random_documents(shipped, document):
    assert_same_unary(shipped, [document])


def test_caches_are_bounded_and_stay_exact(monkeypatch, shipped):
    monkeypatch.setattr(features, "ID_CACHE_TYPES", 3)
    ids = features.AttributeIds(shipped.attribute_index)
    monkeypatch.setattr(shipped, "attribute_ids", ids)
    assert_same_unary(shipped, [[WORDS[:10], WORDS[10:]], [WORDS]])
    assert len(ids._words) <= 3 and all(len(cache) <= 3 for cache in ids._neighbours.values())


@pytest.fixture(scope="module")
def shipped() -> CrfModel:
    return CrfModel.load("en-conll03")  # truecasing, document attributes, context and gazetteer


@pytest.mark.corpus
@needs_corpus("conll2003:testb")
def test_ids_equal_strings_on_eng_testb(shipped):
    corpus = load_corpus("conll2003:testb")
    assert_same_unary(shipped, [[s.tokens for s in d.sentences] for d in corpus.documents])


@pytest.mark.corpus
@needs_corpus("nltk:ieer")
def test_ids_equal_strings_on_ieer():
    model = CrfModel.load("en-3class")
    corpus = load_corpus("nltk:ieer")
    assert_same_unary(model, [[s.tokens for s in d.sentences] for d in corpus.documents])
