"""The word-type cache saved with a model (hgner/features/typecache.py): a model built by
``train`` has one, tagging with it gives the same numbers bit for bit as without it, and a cache
that does not fit the model is refused, naming the array."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hgner.core.errors import ModelError
from hgner.core.integrity import seal
from hgner.crf.model import CrfModel
from hgner.crf.modelfiles import SEALED_FILES
from hgner.features import AttributeScores
from hgner.features.typecache import TYPES_FILE

WORDS = ["John", "Smith", "visited", "Paris", ".", "JOHN", "paris", "U.S.", "Acme", "Corp", "of", "New", "York",
         "unseenword", "Unseen", "Reuters", ",", "said", "the", "man"]


@pytest.fixture(scope="module")
def shipped() -> CrfModel:
    model = CrfModel.load("en-conll03")  # caseless rows too
    assert model.attribute_scores.types is not None and len(model.attribute_scores.vocabulary) > 40_000
    return model


@pytest.fixture
def copy_model(tiny_model, tmp_path):
    target = tmp_path / "copy"
    shutil.copytree(tiny_model.directory, target)
    return target


def without_cache(model: CrfModel) -> AttributeScores:
    return AttributeScores(model.attribute_index, model.state_weights, model.feature_config, model.resources)


def test_a_trained_model_records_its_training_word_types(tiny_model, tiny_corpus):
    assert TYPES_FILE in tiny_model.metadata["files"]
    loaded = CrfModel.load(tiny_model.directory)
    assert {token for sentence in tiny_corpus.sentences for token in sentence.tokens} <= set(
        loaded.attribute_scores.vocabulary.words)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=10), min_size=1, max_size=4))
def test_scores_with_the_cache_equal_scores_without_it(shipped, document):
    assert np.array_equal(shipped.document_unary(document), without_cache(shipped).unary(document))


def test_the_tiny_corpus_scores_the_same_with_and_without_the_cache(tiny_model, tiny_corpus):
    loaded, fresh = CrfModel.load(tiny_model.directory), without_cache(tiny_model)
    for document in tiny_corpus.documents:
        sentences = [s.tokens for s in document.sentences]
        assert np.array_equal(loaded.document_unary(sentences), fresh.unary(sentences))


@pytest.mark.parametrize(("change", "message"), [
    (lambda a: a.update(rows=a["rows"][:-1]), "rows: expected shape"),
    (lambda a: a.update(sums=np.full_like(a["sums"], np.inf)), "sums: expected finite numbers"),
    (lambda a: a.update(neighbour_ids=a["neighbour_ids"] + 10**6), "neighbour_ids: expected attribute ids"),
    (lambda a: a.update(words_utf8=np.frombuffer(b"\xff" * len(a["words_utf8"]), np.uint8)), "words: not UTF-8"),
    (lambda a: a.pop("ready"), "holds"),
    (lambda a: a.update(left_bigram_ids=np.array([10**6]), left_bigram_keys=np.array([0])),
     "left_bigram: expected pair keys >= 0 and attribute ids"),
    (lambda a: a.update(right_bigram_keys=a["right_bigram_keys"].astype(np.int32)), "right_bigram_keys: expected shape"),
    (lambda a: a.pop("right_bigram_ids"), r"holds .*optionally .*'right_bigram_ids'.*, each whole or not at all"),
])
def test_a_cache_that_does_not_fit_is_refused(copy_model, change, message):
    _rewrite_cache(copy_model, change)
    with pytest.raises(ModelError, match=f"{TYPES_FILE}: .*{message}"):
        CrfModel.load(copy_model)


def _rewrite_cache(directory, change) -> None:
    from hgner.crf.modelfiles import refresh_files

    path = directory / TYPES_FILE
    with np.load(path) as stored:
        arrays = {name: stored[name] for name in stored.files}
    change(arrays)
    np.savez(path, **arrays)
    refresh_files(directory, [TYPES_FILE])  # resealed: only our checks stand between the file and tagging


def test_the_word_pair_tables_come_from_the_cache(shipped, tmp_path):
    """The cache holds the ids of the word-pair attributes (bigrams) for its vocabulary, so loading a
    model does not make them again; a cache written before it held them still serves, the tables
    then made as before, the same."""
    loaded = shipped.attribute_scores
    assert set(loaded.types.pairs) == {"left_bigram", "right_bigram"} and len(loaded.types.pairs["left_bigram"][0]) > 1000
    assert all(loaded.pair_tables[kind][0] is loaded.types.pairs[kind][0] for kind in loaded.types.pairs)
    copy = tmp_path / "older"
    shutil.copytree(shipped.directory, copy)
    _rewrite_cache(copy, lambda a: [a.pop(f"{kind}_{part}") for kind in ("left_bigram", "right_bigram")
                                    for part in ("keys", "ids")])
    older = CrfModel.load(copy)
    assert older.attribute_scores.types.pairs == {}
    for kind, (keys, ids) in loaded.types.pairs.items():
        assert np.array_equal(older.attribute_scores.pair_tables[kind][0], keys)
        assert np.array_equal(older.attribute_scores.pair_tables[kind][1], ids)
    document = [WORDS, ["the", "man", "of", "New", "York", "said"], [w.lower() for w in WORDS]]
    assert np.array_equal(older.document_unary(document), without_cache(shipped).unary(document))


def test_a_cache_made_for_other_features_is_not_used(copy_model):
    """A meta.json edited by hand (and resealed) with other features: the cache is left unused,
    with a warning, and the model tags as it would without it."""
    import json

    from hgner.core.errors import HgnerWarning
    from hgner.crf.modelfiles import META_FILE

    meta = json.loads((copy_model / META_FILE).read_text())
    meta["features"]["affixes"] = 2
    (copy_model / META_FILE).write_text(json.dumps(meta))
    seal(copy_model, SEALED_FILES)
    with pytest.warns(HgnerWarning, match="types.npz: made for other features"):
        model = CrfModel.load(copy_model)
    assert model.attribute_scores.types is None


def test_the_tables_start_from_the_cache_without_a_copy_and_start_again_exactly(shipped, monkeypatch):
    """The tagging path's tables take the type cache's arrays as they are; caseless rows made later
    for its word types are written into them (the numbers a path without the cache makes), and when
    the caches start again from them (ID_CACHE_TYPES) the scores are still those of a path without the cache."""
    from hgner import features

    types = shipped._type_cache(len(shipped.attribute_index))
    scores = AttributeScores(shipped.attribute_index, shipped.state_weights, shipped.feature_config,
                             shipped.resources, types)
    for mark in scores.marks:
        assert scores.sums[mark].array is types.sums[mark] and scores.ready[mark].array is types.ready[mark]
    assert scores.vocabulary.rows.array is types.rows
    rows = np.flatnonzero(~types.ready["~"][:, 0])[:6]  # word types whose caseless rows are made when first needed
    scores._type_rows(rows, "~")
    assert types.ready["~"][rows].all()
    fresh = without_cache(shipped)
    made = fresh.vocabulary.of([types.words[row] for row in rows])
    fresh._type_rows(made, "~")
    assert np.array_equal(types.sums["~"][rows], fresh.sums["~"].array[made])
    assert np.array_equal(types.neighbour_ids["~"][rows], fresh.neighbour_ids["~"].array[made])
    monkeypatch.setattr(features.scores, "ID_CACHE_TYPES", len(types.words) + 3)
    words = [types.words[row] for row in rows]
    for document in [[words], [WORDS], [[w.upper() for w in WORDS]], [words, WORDS], [words, ["Zyzzyva"]]]:
        assert np.array_equal(scores.unary(document), fresh.unary(document))
    assert len(scores.vocabulary) == len(types.words) + 1  # the caches started again (from the cache) before the last
