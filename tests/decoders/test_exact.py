"""The exact decoder against brute-force enumeration on small seeded skip-chain graphs."""

import re

import numpy as np
import pytest

from hgner.decoders import SettingError, make_decoder
from hgner.decoders.chain import viterbi
from hgner.graph.factor_graph import FactorGraph
from hgner.graph.toy import brute_map, random_graph


def skip_chain_graphs(count: int):
    """Graphs of 6-9 variables in three sentences, K in 2..3, 1-5 skip edges, strong potentials."""
    for seed in range(count):
        rng = np.random.default_rng(seed)
        k = int(rng.integers(2, 4))
        lengths = [int(x) for x in rng.integers(2, 4, size=3)]
        yield random_graph(rng, sum(lengths), k, lengths, n_skip=int(rng.integers(1, 6)), scale=2.0)


@pytest.mark.parametrize("iterations", [300, 1], ids=["dual", "search"])
def test_exact_equals_enumeration_and_is_certified(iterations):
    decoder = make_decoder("exact", iterations=iterations)
    for graph in skip_chain_graphs(40):
        decoding = decoder.decode(graph)
        labels, best = brute_map(graph)
        assert decoding.labels.tolist() == labels.tolist()
        assert decoding.stats["certified"] == 1.0
        assert decoding.stats["gap"] == 0.0
        assert decoding.stats["upper_bound"] == pytest.approx(best)


def test_uncertified_reports_a_valid_gap():
    """With one iteration and no search some components stay open: the bound must still hold."""
    decoder = make_decoder("exact", iterations=1, max_search=0)
    open_graphs = 0
    for graph in skip_chain_graphs(40):
        decoding = decoder.decode(graph)
        _, best = brute_map(graph)
        score = graph.score(decoding.labels)
        if decoding.stats["certified"] == 0.0:
            open_graphs += 1
            assert decoding.stats["gap"] > 0
            assert decoding.stats["upper_bound"] >= best - 1e-9
            assert decoding.stats["gap"] == pytest.approx(decoding.stats["upper_bound"] - score)
        else:
            assert score == pytest.approx(best)
    assert open_graphs > 0


def test_exact_equals_viterbi_on_chains():
    decoder = make_decoder("exact")
    for seed in range(20):
        rng = np.random.default_rng(seed)
        graph = random_graph(rng, 30, 5, [10, 5, 15])
        decoding = decoder.decode(graph)
        assert decoding.labels.tolist() == viterbi(graph).tolist()
        assert decoding.stats["certified"] == 1.0 and decoding.stats["iterations"] == 1.0


def test_repeated_name_path_and_reversed_edges():
    """Skip edges given against their direction and sharing endpoints use the right tables."""
    rng = np.random.default_rng(7)
    graph = FactorGraph.chain(rng.normal(size=(8, 3)), rng.normal(size=(3, 3)), [4, 4])
    graph = graph.with_edges(np.array([[6, 1], [1, 3], [3, 6], [0, 7]]), 3 * rng.normal(size=(3, 3)))
    decoding = make_decoder("exact").decode(graph)
    assert decoding.labels.tolist() == brute_map(graph)[0].tolist()


def test_settings_are_checked():
    with pytest.raises(SettingError, match=re.escape("decoder 'exact': iterations must be an integer in [1, 1000000], got 0")):
        make_decoder("exact", iterations=0)
    with pytest.raises(SettingError, match=re.escape("decoder 'exact': max_search must be an integer >= 0, got -1")):
        make_decoder("exact", max_search=-1)


def test_empty_graph_is_certified():
    decoding = make_decoder("exact").decode(FactorGraph(np.zeros((0, 3))))
    assert decoding.labels.shape == (0,)
    assert decoding.stats["certified"] == 1.0 and decoding.stats["gap"] == 0.0
