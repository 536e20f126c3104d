"""Every registered decoder on tiny seeded random graphs, against brute-force enumeration.

Exact decoders must return the MAP exactly; the others must return a valid labelling, reach
the MAP on most of these easy graphs, and give normalised marginals when they give any."""

import numpy as np
import pytest
from bruteforce import brute_map, random_graph

import hgner.pipeline  # noqa: F401  (registers the crfsuite reference, which decodes features, not graphs)
from hgner.decoders import available_decoders, decoder_class, make_decoder
from hgner.errors import GraphError

GRAPH_DECODERS = [name for name in available_decoders() if name != "crfsuite"]


def tiny_graphs(skip: bool):
    for seed in range(12):
        rng = np.random.default_rng(seed)
        k = int(rng.integers(2, 4))
        lengths = [3, 3] if skip else [int(x) for x in rng.integers(1, 5, size=2)]
        yield random_graph(rng, sum(lengths), k, lengths, n_skip=2 if skip else 0)


@pytest.mark.parametrize("name", GRAPH_DECODERS)
@pytest.mark.parametrize("skip", [False, True], ids=["chain", "skip"])
def test_decoder_against_enumeration(name, skip):
    decoder = make_decoder(name, sweeps=400, seed=0)
    hits = 0
    graphs = list(tiny_graphs(skip))
    for graph in graphs:
        try:
            decoding = decoder.decode(graph)
        except GraphError:
            assert skip and name == "viterbi", f"{name} refused a {'skip' if skip else 'chain'} graph"
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
    if not (skip and name == "viterbi"):
        assert hits >= 0.75 * len(graphs), f"{name} found the MAP on {hits} of {len(graphs)} graphs"
