"""Graphs and fits shared by the decoder tests."""

from __future__ import annotations

import numpy as np

from hgner.graph.factor_graph import FactorGraph


def small_graph(seed: int, loopy: bool) -> FactorGraph:
    """3-8 variables, 2-3 labels, N(0, 1) potentials; ``loopy`` adds 3 skip edges (one shared table)."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(3, 9)), int(rng.integers(2, 4))
    graph = FactorGraph.chain(rng.normal(size=(n, k)), rng.normal(size=(k, k)))
    if loopy:
        pairs = [(a, b) for a in range(n) for b in range(a + 2, n)]
        pick = rng.choice(len(pairs), size=min(3, len(pairs)), replace=False)
        graph = graph.with_edges(np.array([pairs[p] for p in pick]), rng.normal(size=(k, k)))
    return graph


SMALL_GRAPHS = [(seed, loopy) for loopy in (False, True) for seed in range(10)]


def loglog_slope(t: np.ndarray, error: np.ndarray) -> float:
    return float(np.polyfit(np.log(t), np.log(error), 1)[0])
