"""Small models with exact answers, for checking decoders: enumeration of every labelling
(exact MAP and marginals), the herded Gibbs paper's two-variable model, fully connected binary
models and random sentence chains with skip edges."""

from __future__ import annotations

import itertools

import numpy as np

from .factor_graph import FactorGraph


def all_scores(graph: FactorGraph) -> tuple[np.ndarray, np.ndarray]:
    """(K^n, n) every labelling, in lexicographic order, and (K^n,) its score."""
    n, k = graph.unary.shape
    labellings = np.array(list(itertools.product(range(k), repeat=n)), dtype=np.int64).reshape(k**n, n)
    scores = graph.unary[np.arange(n), labellings].sum(axis=1)
    if len(graph.edges):
        scores += graph.potentials[graph.edge_potential, labellings[:, graph.edges[:, 0]],
                                   labellings[:, graph.edges[:, 1]]].sum(axis=1)
    return labellings, scores


def brute_map(graph: FactorGraph) -> tuple[np.ndarray, float]:
    """The highest-scoring labelling (n,) (the first in lexicographic order on ties) and its score."""
    labellings, scores = all_scores(graph)
    best = int(np.argmax(scores))
    return labellings[best], float(scores[best])


def brute_marginals(graph: FactorGraph) -> np.ndarray:
    """(n, K) exact one-variable marginals."""
    labellings, scores = all_scores(graph)
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    return np.array([np.bincount(labellings[:, i], weights, minlength=graph.n_labels)
                     for i in range(graph.n_variables)]).reshape(graph.unary.shape)


def two_variable_model(eps: float) -> FactorGraph:
    """Table 1 of Bornn et al.: P(x1, x2) = [[1/4 - eps, eps], [eps, 3/4 - eps]] as one pairwise
    table of log-probabilities and zero unaries, so score(y) = log P(y) (Z = 1); P(X1 = 1) = 3/4."""
    return FactorGraph(np.zeros((2, 2)), np.array([[0, 1]]), np.log([[0.25 - eps, eps], [eps, 0.75 - eps]]))


def fully_connected(rng: np.random.Generator, n: int = 8, scale: float = 0.5) -> FactorGraph:
    """Boltzmann machine on n binary variables: score = sum_i b_i x_i + sum_{i<j} w_ij x_i x_j with
    b, w ~ U(-scale, scale); every pair joined (no chain edges)."""
    pairs = np.array(list(itertools.combinations(range(n), 2)))
    unary = np.zeros((n, 2))
    unary[:, 1] = rng.uniform(-scale, scale, n)
    tables = np.zeros((len(pairs), 2, 2))
    tables[:, 1, 1] = rng.uniform(-scale, scale, len(pairs))
    return FactorGraph(unary, pairs, tables, n_chain_edges=0)


def random_graph(rng: np.random.Generator, n: int, k: int, lengths: list[int] | None = None,
                 n_skip: int = 0, scale: float = 1.0) -> FactorGraph:
    """Sentence chains of ``lengths`` (default one chain of n) with N(0, scale) potentials, plus
    ``n_skip`` random skip edges (never duplicating a chain edge) sharing one table."""
    graph = FactorGraph.chain(rng.normal(scale=scale, size=(n, k)), rng.normal(scale=scale, size=(k, k)), lengths)
    if n_skip:
        chained = {tuple(edge) for edge in graph.edges.tolist()}
        pairs: set[tuple[int, int]] = set()
        while len(pairs) < n_skip:
            a, b = sorted(rng.choice(n, size=2, replace=False).tolist())
            if (a, b) not in chained:
                pairs.add((a, b))
        graph = graph.with_edges(np.array(sorted(pairs)), rng.normal(scale=scale, size=(k, k)))
    return graph
