import numpy as np
import pytest

from hgner.core.errors import GraphError
from hgner.graph.factor_graph import FactorGraph
from hgner.graph.toy import random_graph


def test_chain_edges_stay_inside_sentences():
    graph = FactorGraph.chain(np.zeros((7, 2)), np.zeros((2, 2)), [3, 1, 3])
    assert graph.edges.tolist() == [[0, 1], [1, 2], [4, 5], [5, 6]]
    assert graph.is_chain and graph.n_skip_edges == 0


def test_skip_edges_come_after_chain_edges_with_their_own_table():
    chain = FactorGraph.chain(np.zeros((5, 2)), np.eye(2), [2, 3])
    graph = chain.with_edges([[0, 4]], 2 * np.eye(2))
    assert graph.n_chain_edges == 3 and graph.n_skip_edges == 1 and not graph.is_chain
    assert graph.edge_potential.tolist() == [0, 0, 0, 1]


def test_chain_part_drops_the_skip_edges_only():
    chain = random_graph(np.random.default_rng(0), 6, 3, [3, 3])
    graph = chain.with_edges([[0, 4], [1, 5]], np.eye(3))
    part = graph.chain_part()
    assert part.is_chain and part.edges.tolist() == chain.edges.tolist()
    np.testing.assert_array_equal(part.unary, graph.unary)
    labels = np.array([0, 1, 2, 2, 1, 0])
    assert part.score(labels) == pytest.approx(chain.score(labels))
    assert chain.chain_part() is chain


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"unary": np.zeros(3)}, r"unary must have shape \(n, K\).*got \(3,\)"),
        ({"unary": np.zeros((3, 2)), "edges": np.array([[0, 5]]), "potentials": np.zeros((2, 2))}, r"variables 0\.\.2"),
        ({"unary": np.zeros((3, 2)), "edges": np.array([[1, 1]]), "potentials": np.zeros((2, 2))}, "itself"),
        ({"unary": np.zeros((3, 2)), "edges": np.array([[0, 1]]), "potentials": np.zeros((3, 3))}, r"K=2, got \(3, 3\)"),
        ({"unary": np.zeros((3, 2)), "edges": np.array([[0, 1]])}, "without potentials"),
        ({"unary": np.zeros((3, 2)), "edges": np.array([[0, 2]]), "potentials": np.zeros((2, 2))}, "consecutive"),
        ({"unary": np.full((3, 2), np.nan)}, "finite"),
        ({"unary": np.zeros((3, 2)), "labels": ("O",)}, "expected 2 label names, got 1"),
    ],
)
def test_bad_shapes_say_expected_and_got(kwargs, message):
    with pytest.raises(GraphError, match=message):
        FactorGraph(**kwargs)


def test_chain_lengths_must_cover_the_variables():
    with pytest.raises(GraphError, match="add up to 4, expected 5"):
        FactorGraph.chain(np.zeros((5, 2)), np.zeros((2, 2)), [2, 2])


def test_score_and_local_scores_agree():
    rng = np.random.default_rng(3)
    graph = random_graph(rng, 6, 3, [2, 4], n_skip=3)
    y = rng.integers(3, size=6)
    for i in range(6):
        local = graph.local_scores(y, i)
        for label in range(3):
            changed = y.copy()
            changed[i] = label
            assert graph.score(changed) - graph.score(y) == pytest.approx(local[label] - local[y[i]])


def test_per_edge_potentials_are_accepted():
    potentials = np.stack([np.eye(2), 2 * np.eye(2)])
    graph = FactorGraph(np.zeros((3, 2)), np.array([[0, 1], [1, 2]]), potentials)
    assert graph.score(np.array([1, 1, 1])) == 3.0


def test_components_follow_chain_and_skip_edges():
    def groups(graph):
        ptr, nodes = graph.components.ptr, graph.components.nodes
        return [nodes[ptr[c]:ptr[c + 1]].tolist() for c in range(len(ptr) - 1)]

    chain = FactorGraph.chain(np.zeros((6, 2)), np.eye(2), [2, 3, 1])
    assert groups(chain) == [[0, 1], [2, 3, 4], [5]]
    assert chain.components.index.tolist() == [0, 0, 1, 1, 1, 2]
    assert groups(chain.with_edges([[1, 5]], np.eye(2))) == [[0, 1, 5], [2, 3, 4]]


def test_component_scores_add_up_to_the_score():
    rng = np.random.default_rng(4)
    graph = random_graph(rng, 9, 3, [3, 3, 3], n_skip=1)
    y = rng.integers(3, size=9)
    parts = graph.component_scores(y)
    assert len(parts) == len(graph.components.ptr) - 1
    assert parts.sum() == pytest.approx(graph.score(y))
