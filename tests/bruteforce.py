"""Exact answers by enumerating every labelling: the oracle for tiny graphs in tests."""

from __future__ import annotations

import itertools

import numpy as np

from hgner.graph import FactorGraph


def all_scores(graph: FactorGraph) -> tuple[np.ndarray, np.ndarray]:
    """(K^n, n) every labelling and (K^n,) its score."""
    labellings = np.array(list(itertools.product(range(graph.n_labels), repeat=graph.n_variables)), dtype=np.int64)
    return labellings, np.array([graph.score(y) for y in labellings])


def brute_map(graph: FactorGraph) -> tuple[np.ndarray, float]:
    """The highest-scoring labelling and its score."""
    labellings, scores = all_scores(graph)
    best = int(np.argmax(scores))
    return labellings[best], float(scores[best])


def brute_marginals(graph: FactorGraph) -> np.ndarray:
    """(n, K) exact one-variable marginals."""
    labellings, scores = all_scores(graph)
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    marginals = np.zeros((graph.n_variables, graph.n_labels))
    for i in range(graph.n_variables):
        np.add.at(marginals[i], labellings[:, i], weights)
    return marginals


def random_graph(rng: np.random.Generator, n: int, k: int, lengths: list[int] | None = None,
                 n_skip: int = 0, scale: float = 1.0) -> FactorGraph:
    """Sentence chains with random potentials, plus ``n_skip`` random skip edges sharing one table."""
    graph = FactorGraph.chain(rng.normal(scale=scale, size=(n, k)), rng.normal(scale=scale, size=(k, k)), lengths)
    if n_skip:
        pairs = set()
        while len(pairs) < n_skip:
            a, b = sorted(rng.choice(n, size=2, replace=False).tolist())
            if b != a + 1 or a + 1 not in np.cumsum(lengths or [n]):
                pairs.add((a, b))
        graph = graph.with_edges(np.array(sorted(pairs)), rng.normal(scale=scale, size=(k, k)))
    return graph
