"""meanfield: a numpy reference sweep, the fixed point it reaches, exactness without edges, the
damping convention and settings."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hgner.core.errors import HgnerError
from hgner.decoders import make_decoder
from hgner.decoders.meanfield import MeanField, mean_field_start
from hgner.graph.factor_graph import FactorGraph
from hgner.graph.toy import brute_marginals, random_graph


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


def field(graph: FactorGraph, q: np.ndarray, i: int) -> np.ndarray:
    """(K,) unary_i + sum over i's edges of E_{q_j}[theta_ij(., y_j)], from the edge list."""
    total = graph.unary[i].copy()
    for (a, b), t in zip(graph.edges, graph.edge_potential):
        if a == i:
            total += graph.potentials[t] @ q[b]
        elif b == i:
            total += graph.potentials[t].T @ q[a]
    return total


def reference_sweep(graph: FactorGraph, q: np.ndarray, damping: float) -> np.ndarray:
    q = q.copy()
    for i in range(graph.n_variables):
        q[i] = (1 - damping) * q[i] + damping * softmax(field(graph, q, i))
    return q


@pytest.mark.parametrize("damping", [1.0, 0.5, 0.2])
def test_matches_a_numpy_reference(damping: float) -> None:
    graph = random_graph(np.random.default_rng(3), 7, 3, [4, 3], n_skip=3)
    q = mean_field_start(graph)
    for _ in range(3):
        q = reference_sweep(graph, q, damping)
    decoding = make_decoder("meanfield", sweeps=3, damping=damping).decode(graph)
    np.testing.assert_allclose(decoding.marginals, q, atol=1e-12)
    assert decoding.labels.tolist() == np.argmax(q, axis=1).tolist()


@pytest.mark.parametrize("damping", [1.0, 0.5])
def test_reaches_a_fixed_point(damping: float) -> None:
    graph = random_graph(np.random.default_rng(5), 8, 3, [5, 3], n_skip=3)
    decoding = make_decoder("meanfield", sweeps=400, damping=damping).decode(graph)
    q = decoding.marginals
    assert decoding.stats["final_change"] < 1e-12
    np.testing.assert_allclose(reference_sweep(graph, q, 1.0), q, atol=1e-10)
    np.testing.assert_allclose(q.sum(axis=1), 1.0)


def test_damping_changes_the_path_not_this_fixed_point() -> None:
    # weak couplings: a unique fixed point, reached with and without damping
    graph = random_graph(np.random.default_rng(2), 6, 3, [6], n_skip=2, scale=0.3)
    full, half = (make_decoder("meanfield", sweeps=300, damping=d).decode(graph).marginals for d in (1.0, 0.5))
    np.testing.assert_allclose(full, half, atol=1e-10)
    one_full, one_half = (make_decoder("meanfield", sweeps=1, damping=d).decode(graph).marginals for d in (1.0, 0.5))
    assert not np.allclose(one_full, one_half)


def test_exact_without_edges_and_close_on_weak_couplings() -> None:
    rng = np.random.default_rng(0)
    independent = FactorGraph(rng.normal(size=(5, 4)))
    q = make_decoder("meanfield", sweeps=1).decode(independent).marginals
    np.testing.assert_allclose(q, brute_marginals(independent), atol=1e-12)
    weak = random_graph(rng, 6, 2, [6], scale=0.1)
    q = make_decoder("meanfield", sweeps=50).decode(weak).marginals
    assert np.abs(q - brute_marginals(weak)).max() < 0.01


@pytest.mark.parametrize("damping", [0, 1.5, -0.5, float("nan"), True])
def test_bad_damping_is_refused(damping) -> None:
    with pytest.raises(ValueError, match=re.escape("damping must be a finite number in (0, 1], got")):
        MeanField(damping=damping)
    with pytest.raises(HgnerError):
        make_decoder("meanfield", damping=damping)
