"""Pipeline: features -> graph -> decoder -> tags, for every registered decoder, with the
crfsuite reference equal to Viterbi, empty documents and sentences, and marginals exactly when
the decoder gives them."""

from __future__ import annotations

import numpy as np
import pytest

from hgner.core.errors import GraphError
from hgner.crf.pipeline import Pipeline
from hgner.decoders import available_decoders, make_decoder

SHARED = {"sweeps": 30, "seed": 0}


@pytest.fixture(scope="module")
def documents(tiny_corpus):
    return [[s.tokens for s in d.sentences] for d in tiny_corpus.documents[:3]]


def test_unknown_graph_kind(tiny_model):
    with pytest.raises(GraphError, match="unknown graph kind 'tree'; expected one of chain, skip"):
        Pipeline(tiny_model, make_decoder("viterbi"), "tree")


def test_crfsuite_reference_equals_viterbi(tiny_model, documents):
    reference, ours = Pipeline(tiny_model, make_decoder("crfsuite")), Pipeline(tiny_model, make_decoder("viterbi"))
    for sentences in documents:
        expected, got = reference.decode(sentences), ours.decode(sentences)
        assert got.tags == expected.tags
        np.testing.assert_array_equal(got.labels, expected.labels)


@pytest.mark.parametrize("name", available_decoders())
def test_every_decoder_through_the_pipeline(tiny_model, documents, name):
    pipeline = Pipeline(tiny_model, make_decoder(name, shared=SHARED))
    for sentences in documents:
        prepared = pipeline.prepare(sentences)
        result = pipeline.decode_prepared(prepared)
        assert [len(tags) for tags in result.tags] == [len(s) for s in sentences]
        assert all(tag in tiny_model.labels for tags in result.tags for tag in tags)
        assert result.labels.shape == (sum(len(s) for s in sentences),)
        assert [piece.tolist() for piece in prepared.split(result.labels)] == \
            [[tiny_model.labels.index(t) for t in tags] for tags in result.tags]
        if pipeline.decoder.gives_marginals:
            assert result.marginals.shape == (len(result.labels), len(tiny_model.labels))
        else:
            assert result.marginals is None


@pytest.mark.parametrize("name", available_decoders())
def test_empty_documents(tiny_model, name):
    pipeline = Pipeline(tiny_model, make_decoder(name, shared=SHARED))
    empty = pipeline.decode([])
    assert empty.tags == [] and empty.labels.shape == (0,)
    with_empty_sentence = pipeline.decode([["Paris"], []])
    assert [len(tags) for tags in with_empty_sentence.tags] == [1, 0]


def test_viterbi_marginals_are_exact_and_sum_to_one(tiny_model, documents):
    result = Pipeline(tiny_model, make_decoder("viterbi", marginals=True)).decode(documents[0])
    np.testing.assert_allclose(result.marginals.sum(axis=1), 1.0)
    assert np.all(result.marginals[np.arange(len(result.labels)), result.labels] > 0)


@pytest.mark.parametrize("name", available_decoders())
def test_documents_decoded_together_equal_each_alone(tiny_model, documents, name):
    """decode_documents gives each document what decode gives it alone, for every decoder (the
    separable ones decode them in one graph)."""
    pipeline = Pipeline(tiny_model, make_decoder(name, **{k: v for k, v in SHARED.items()
                                                        if k in make_decoder(name).settings}))
    alone = [pipeline.decode(sentences) for sentences in documents]
    for got, expected in zip(pipeline.decode_documents(documents), alone, strict=True):
        assert got.tags == expected.tags
        np.testing.assert_array_equal(got.labels, expected.labels)
        if expected.marginals is not None and pipeline.decoder.separable:
            np.testing.assert_allclose(got.marginals, expected.marginals, rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def skip_model(tiny_model, tiny_corpus, tmp_path_factory):
    """The tiny model with a skip potential."""
    import shutil

    from hgner.crf import skip
    from hgner.crf.model import CrfModel
    from hgner.training import skip as skip_training

    directory = tmp_path_factory.mktemp("skip") / "model"
    shutil.copytree(tiny_model.directory, directory)
    skip.save(skip_training.estimate(tiny_corpus, tiny_model), directory)
    return CrfModel.load(directory)


@pytest.mark.parametrize("graph", ["chain", "skip"])
def test_documents_prepared_together_equal_each_alone(skip_model, documents, graph):
    """prepare_documents builds each document's graphs as prepare builds them alone."""
    pipeline = Pipeline(skip_model, make_decoder("viterbi" if graph == "chain" else "exact"), graph)
    together = pipeline.prepare_documents([*documents, [["Jim"]], documents[0]])
    for got, sentences in zip(together, [*documents, [["Jim"]], documents[0]], strict=True):
        expected = pipeline.prepare(sentences)
        for ours, theirs in ((got.chain, expected.chain), (got.graph, expected.graph)):
            np.testing.assert_array_equal(ours.unary, theirs.unary)
            np.testing.assert_array_equal(ours.edges, theirs.edges)
            np.testing.assert_array_equal(ours.potentials, theirs.potentials)
