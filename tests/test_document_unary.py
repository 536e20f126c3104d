"""The tagging path's unary rows (features.AttributeScores, CrfModel.document_unary) equal, bit for
bit, those summed from the attribute strings that train the model, so tags, F1 and confidences
cannot change."""

from __future__ import annotations

import numpy as np
import pytest
from corpus_support import needs_corpus
from hypothesis import given, settings
from hypothesis import strategies as st

from hgner import features
from hgner.crf.model import CrfModel
from hgner.data.corpus import load_corpus

WORDS = ["John", "Smith", "visited", "Paris", ".", "JOHN", "paris", "U.S.", "Acme", "Corp", "of", "New", "York",
         "3", "-", "McDonald's", "unseenword", "Unseen", "Reuters", ",", "said"]


def assert_same_unary(model: CrfModel, documents: list[list[list[str]]]) -> None:
    for sentences in documents:
        assert np.array_equal(model.document_unary(sentences), model.unary(model.features(sentences)))


def test_unary_equals_strings_on_the_tiny_corpus(tiny_model, tiny_corpus):
    assert_same_unary(tiny_model, [[s.tokens for s in d.sentences] for d in tiny_corpus.documents])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), min_size=1, max_size=4))
def test_unary_equals_strings_on_random_documents(shipped, document):
    assert_same_unary(shipped, [document])


def test_unary_equals_strings_with_word_clusters(tmp_path, tiny_corpus):
    from hgner.training import TrainOptions, WordTables
    from hgner.training.crf import train

    config = features.FeatureConfig(truecase=True, document=True, word_clusters=True, lowercase_clusters=True)
    clusters = {"0101": ["Paris", "London"], "0111": ["John", "smith"], "11": ["said", "Unseen"], "10": ["Smith"]}
    model = train(tiny_corpus, tmp_path / "m", TrainOptions(config=config, max_iterations=20, c1=0), WordTables(word_clusters=clusters))
    assert any(a.startswith("c4=") for a in model.attribute_index)
    assert any(a.startswith("lc4=") for a in model.attribute_index)  # Smith: its own cluster and smith's
    assert_same_unary(model, [[WORDS[:10], WORDS[10:]], [WORDS], [["SMITH", "SAID", "IN", "PARIS"]]])


def test_unary_equals_strings_with_neighbour_clusters_and_frequencies(tmp_path, tiny_corpus):
    from hgner.training import TrainOptions, WordTables
    from hgner.training.crf import train

    config = features.FeatureConfig(truecase=True, document=True, word_clusters=True, neighbour_clusters=1,
                                     frequency="en")
    clusters = {"0101": ["Paris", "London"], "0111": ["John", "smith"], "11": ["said", "Unseen"], "10": ["Smith"]}
    model = train(tiny_corpus, tmp_path / "m", TrainOptions(config=config, max_iterations=20, c1=0), WordTables(word_clusters=clusters))
    assert any(a.startswith("-1:c4=") for a in model.attribute_index)
    assert any(a.startswith("zf=") for a in model.attribute_index)
    assert_same_unary(model, [[WORDS[:10], WORDS[10:]], [WORDS], [["SMITH", "SAID", "IN", "PARIS"]]])


def test_unary_equals_strings_with_caseless_features(tmp_path, tiny_corpus):
    from hgner.data.augment import case_augmented
    from hgner.training import TrainOptions
    from hgner.training.crf import train

    config = features.FeatureConfig(truecase=True, document=True, conjunctions=True, caseless_features=True)
    model = train(case_augmented(tiny_corpus, ("lower", "upper")), tmp_path / "m", TrainOptions(config=config, max_iterations=20, c1=0))
    assert any(a.startswith("~w=") for a in model.attribute_index)
    assert any(a.startswith("~-1:l=") for a in model.attribute_index)
    lowered = [[w.lower() for w in WORDS[:10]], [w.lower() for w in WORDS[10:]]]
    assert_same_unary(model, [[WORDS[:10], WORDS[10:]], lowered, [WORDS, ["SMITH", "SAID", "IN", "PARIS"]]])


def test_empty_documents_and_sentences(shipped):
    assert shipped.document_unary([]).shape == (0, len(shipped.labels))
    assert_same_unary(shipped, [[[], ["John"], []], [["Paris"]]])


def test_caches_are_bounded_and_stay_exact(monkeypatch, shipped):
    monkeypatch.setattr(features.scores, "ID_CACHE_TYPES", 3)
    scores = features.AttributeScores(shipped.attribute_index, shipped.state_weights, shipped.feature_config,
                                      shipped.resources)
    monkeypatch.setattr(shipped, "attribute_scores", scores)
    assert_same_unary(shipped, [[WORDS[:10], WORDS[10:]], [WORDS], [WORDS[5:]]])
    assert len(scores.vocabulary) == len(scores.sums[""]) == len(set(WORDS[5:]))  # emptied before the last


def test_ngram_caches_are_bounded_and_stay_exact(monkeypatch, shipped):
    monkeypatch.setattr(features.vocabulary, "NGRAM_CACHE_ENTRIES", 4)
    scores = features.AttributeScores(shipped.attribute_index, shipped.state_weights, shipped.feature_config,
                                      shipped.resources)
    monkeypatch.setattr(shipped, "attribute_scores", scores)
    pairs = {kind: len(scores.slot_ids[kind]) for kind in features.vocabulary.PAIR_ATTRIBUTES}
    assert_same_unary(shipped, [[WORDS[:10], WORDS[10:]], [WORDS], [WORDS[5:]]])
    # each cache was emptied before the last document's n-grams, one per token, went in
    trigrams = {a for token in shipped.features([WORDS[5:]])[0] for a in token if a.startswith("-1|0|+1:s=")}
    assert len(scores.slot_ids["shape_trigram"]) == len(trigrams) > 4
    assert {kind: len(scores.slot_ids[kind]) for kind in pairs} == pairs  # the model's word pairs, made up front
    assert len(scores.vocabulary) == len(set(WORDS))  # the word types are kept


@pytest.fixture(scope="module")
def shipped() -> CrfModel:
    return CrfModel.load("en-conll03")  # truecasing, document attributes, context and gazetteer


@pytest.mark.corpus
@needs_corpus("conll2003:testb")
def test_unary_equals_strings_on_eng_testb(shipped):
    corpus = load_corpus("conll2003:testb")
    assert_same_unary(shipped, [[s.tokens for s in d.sentences] for d in corpus.documents])


@pytest.mark.corpus
@needs_corpus("nltk:ieer")
def test_unary_equals_strings_on_ieer():
    model = CrfModel.load("en-3class")
    corpus = load_corpus("nltk:ieer")
    assert_same_unary(model, [[s.tokens for s in d.sentences] for d in corpus.documents])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.lists(st.sampled_from(WORDS + ["the", "man", "new", "york"]), min_size=1, max_size=8),
                         min_size=1, max_size=3), min_size=1, max_size=5))
def test_documents_scored_together_equal_each_alone(shipped, documents):
    """Several documents in one call (each sentence numbered with its document) score as each alone:
    the document tables, the caseless rule for a document without a capital letter, and the
    truecasing never look across documents."""
    alone = [shipped.document_unary(document) for document in documents]
    numbers = np.repeat(np.arange(len(documents)), [len(document) for document in documents])
    together = shipped.document_unary([sentence for document in documents for sentence in document], numbers)
    assert np.array_equal(together, np.concatenate(alone))


def test_lowercased_document_beside_cased_ones(shipped):
    """The caseless rule of a document without any capital letter applies to that document only."""
    documents = [[["John", "Smith", "visited", "Paris", "."]], [["john", "smith", "visited", "paris", "."]]]
    numbers = np.array([0, 1])
    together = shipped.document_unary([s for d in documents for s in d], numbers)
    assert np.array_equal(together, np.concatenate([shipped.document_unary(d) for d in documents]))
    assert not np.array_equal(together[:5], together[5:])
