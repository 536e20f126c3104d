"""Viterbi and forward-backward against enumeration and against crfsuite's own tagger."""

import numpy as np
import pytest

from hgner.core.errors import GraphError
from hgner.decoders import make_decoder
from hgner.decoders.chain import forward_backward, viterbi
from hgner.graph.toy import all_scores, brute_map, brute_marginals, random_graph


@pytest.mark.parametrize("seed", range(20))
def test_viterbi_and_marginals_equal_enumeration(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 5))
    lengths = [int(x) for x in rng.integers(1, 4, size=int(rng.integers(1, 3)))]
    graph = random_graph(rng, sum(lengths), k, lengths, scale=2.0)
    labels, best = brute_map(graph)
    assert viterbi(graph).tolist() == labels.tolist()
    marginals, _ = forward_backward(graph)
    np.testing.assert_allclose(marginals, brute_marginals(graph), atol=1e-10)


def test_log_partition_function():
    rng = np.random.default_rng(0)
    graph = random_graph(rng, 5, 3, [2, 3])

    _, scores = all_scores(graph)
    assert forward_backward(graph)[1] == pytest.approx(np.log(np.exp(scores).sum()))


def test_viterbi_refuses_skip_edges():
    graph = random_graph(np.random.default_rng(1), 6, 2, [3, 3], n_skip=1)
    with pytest.raises(GraphError, match="1 skip edges"):
        make_decoder("viterbi").decode(graph)


def test_viterbi_marginals_option():
    graph = random_graph(np.random.default_rng(2), 4, 3)
    assert make_decoder("viterbi").decode(graph).marginals is None
    np.testing.assert_allclose(make_decoder("viterbi", marginals=True).decode(graph).marginals.sum(axis=1), 1.0)


def test_tiny_model_matches_crfsuite(tiny_model, tiny_corpus):
    """Same label sequences as crfsuite's tagger, marginals within 1e-6."""
    for document in tiny_corpus.documents:
        sentences = [s.tokens for s in document.sentences]
        features = tiny_model.features(sentences)
        graph = tiny_model.chain_graph(sentences)
        ours = [tiny_model.labels[k] for k in viterbi(graph)]
        theirs = [tag for sentence in tiny_model.crfsuite_tag(features) for tag in sentence]
        assert ours == theirs
        marginals, _ = forward_backward(graph)
        reference = np.concatenate([tiny_model.crfsuite_marginals(s) for s in features])
        np.testing.assert_allclose(marginals, reference, atol=1e-6)


@pytest.mark.corpus
def test_shipped_model_matches_crfsuite_on_eng_testb(conll2003):
    """Every sentence of eng.testb: identical labels; marginals within 1e-6 (checked on a sample)."""
    from hgner.crf.model import CrfModel
    from hgner.crf.modelfiles import builtin_models
    from hgner.data.corpus import read_conll

    if "en-conll03" not in builtin_models():
        pytest.skip("the shipped model en-conll03 is not installed")
    model = CrfModel.load("en-conll03")
    as_trained = CrfModel.load("en-conll03", calibration=1)  # crfsuite's marginals are those of the model as trained
    corpus = read_conll(conll2003 / "eng.testb")
    for index, document in enumerate(corpus.documents):
        sentences = [s.tokens for s in document.sentences]
        features = model.features(sentences)
        graph = model.chain_graph(sentences)  # calibrated: the same MAP
        ours = [model.labels[k] for k in viterbi(graph)]
        assert ours == [tag for sentence in model.crfsuite_tag(features) for tag in sentence]
        if index % 20 == 0:
            reference = np.concatenate([model.crfsuite_marginals(s) for s in features])
            np.testing.assert_allclose(forward_backward(as_trained.chain_graph(sentences))[0], reference, atol=1e-6)


def test_forward_backward_survives_potentials_spread_beyond_exp_range():
    """Issue 40: calibration >= 70 (or a model factor) made forward-backward divide by zero."""
    import numpy as np

    from hgner.decoders import chain

    rng = np.random.default_rng(40)
    unary, potentials = rng.normal(size=(9, 5)), rng.normal(size=(1, 5, 5))
    incoming = np.array([-1, 0, 0, 0, -1, 0, 0, 0, 0])
    plain, log_z = chain._forward_backward(unary, potentials, incoming)
    logged, log_z2 = chain._log_forward_backward(unary, potentials, incoming)
    assert np.allclose(plain, logged, atol=1e-12) and np.isclose(log_z, log_z2)
    for factor in (70.0, 100.0, 1000.0):
        marginals, log_z = chain._forward_backward(factor * unary, factor * potentials, incoming)
        assert np.isfinite(marginals).all() and np.isfinite(log_z)
        assert np.allclose(marginals.sum(axis=1), 1.0)
        labels = chain._viterbi(factor * unary, factor * potentials, incoming)
        assert (marginals.argmax(axis=1) == labels).mean() > 0.8  # nearly deterministic at this scale
