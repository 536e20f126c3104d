"""Every registered decoder on tiny seeded random graphs, against brute-force enumeration.

Exact decoders must return the MAP exactly; MAP searches (samplers) must return a valid
labelling, reach the MAP on most of these easy graphs, and give normalised marginals when they
give any; decoders that label by the argmax of approximate marginals (mean field) must get those
marginals close to the exact ones on weakly coupled graphs and label by their argmax."""

import numpy as np
import pytest
from hgner.toy import brute_map, brute_marginals, random_graph

import hgner.pipeline  # noqa: F401  (registers the crfsuite reference, which decodes features, not graphs)
from hgner.decoders import available_decoders, decoder_class, make_decoder
from hgner.errors import GraphError

GRAPH_DECODERS = [name for name in available_decoders() if name != "crfsuite"]


def tiny_graphs(skip: bool, scale: float = 1.0):
    for seed in range(12):
        rng = np.random.default_rng(seed)
        k = int(rng.integers(2, 4))
        lengths = [3, 3] if skip else [int(x) for x in rng.integers(1, 5, size=2)]
        yield random_graph(rng, sum(lengths), k, lengths, n_skip=2 if skip else 0, scale=scale)


MARGINAL_DECODERS = [name for name in GRAPH_DECODERS if not decoder_class(name).searches_map]


@pytest.mark.parametrize("name", MARGINAL_DECODERS)
@pytest.mark.parametrize("skip", [False, True], ids=["chain", "skip"])
def test_marginal_decoder_against_enumeration(name, skip):
    decoder = make_decoder(name, sweeps=400, seed=0)
    for graph in tiny_graphs(skip, scale=0.3):
        decoding = decoder.decode(graph)
        np.testing.assert_allclose(decoding.marginals, brute_marginals(graph), atol=0.05)
        assert decoding.labels.tolist() == np.argmax(decoding.marginals, axis=1).tolist()


@pytest.mark.parametrize("name", [name for name in GRAPH_DECODERS if decoder_class(name).searches_map])
@pytest.mark.parametrize("skip", [False, True], ids=["chain", "skip"])
def test_decoder_against_enumeration(name, skip):
    decoder = make_decoder(name, sweeps=400, seed=0)
    hits = 0
    graphs = list(tiny_graphs(skip))
    for graph in graphs:
        try:
            decoding = decoder.decode(graph)
        except GraphError:
            assert skip and decoder_class(name).chain_only, f"{name} refused a {'skip' if skip else 'chain'} graph"
            continue
        labels, best = brute_map(graph)
        assert decoding.labels.shape == (graph.n_variables,)
        assert decoding.labels.min() >= 0 and decoding.labels.max() < graph.n_labels
        if decoding.marginals is not None:
            assert decoding.marginals.shape == graph.unary.shape
            np.testing.assert_allclose(decoding.marginals.sum(axis=1), 1.0, atol=1e-9)
        if decoder_class(name).exact:
            assert decoding.labels.tolist() == labels.tolist()
        hits += graph.score(decoding.labels) == pytest.approx(best)
    if not (skip and decoder_class(name).chain_only):
        assert hits >= 0.75 * len(graphs), f"{name} found the MAP on {hits} of {len(graphs)} graphs"
