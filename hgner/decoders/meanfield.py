"""Naive mean field with damping (``meanfield``): the deterministic baseline of Bornn et al.,
section 4.2 (Table 2, "Mean field (D = 0.5)" and "(D = 1)"), after Murphy (2012), section 21.3.

q (n, K) holds one factorised marginal per variable. A sweep visits the variables in order
0..n-1 and replaces each q_i in place (sequential, Gauss-Seidel updates) by

    q_i <- (1 - D) q_i + D softmax(unary_i + sum over neighbours j of sum_l q_j(l) theta_ij(., l)),

Murphy's damped update mu_i <- (1 - lambda) mu_i + lambda tanh(...) with lambda = D: D = 1 is
the plain coordinate-ascent update, smaller D moves only part of the way.
"""

from __future__ import annotations

import math
from typing import Annotated

import numba
import numpy as np

from ..graph.factor_graph import FactorGraph
from .base import Decoder, Decoding, register
from .kernels import graph_arrays, run_in_slices, sweep_stats
from .settings import Bounds, Sweeps, TimeLimit


@numba.njit(cache=True, nogil=True)
def _meanfield_sweeps(graph, q, damping, sweeps):  # pragma: no cover - compiled
    """Run ``sweeps`` damped sequential sweeps on ``q`` (n, K) in place; ``graph`` is a
    :class:`GraphArrays`. Returns the largest |change| of any q_i(k) in the last sweep."""
    unary, ptr, node, table, columns = graph
    n, k = unary.shape
    field = np.empty(k)
    change = 0.0
    for _ in range(sweeps):
        change = 0.0
        for i in range(n):
            for b in range(k):
                field[b] = unary[i, b]
            for s in range(ptr[i], ptr[i + 1]):
                t = table[s]
                j = node[s]
                for a in range(k):
                    weight = q[j, a]
                    for b in range(k):
                        field[b] += weight * columns[t, a, b]
            top = field[0]
            for b in range(1, k):
                top = max(top, field[b])
            total = 0.0
            for b in range(k):
                field[b] = math.exp(field[b] - top)
                total += field[b]
            for b in range(k):
                new = (1.0 - damping) * q[i, b] + damping * field[b] / total
                change = max(change, abs(new - q[i, b]))
                q[i, b] = new
    return change


def mean_field_start(graph: FactorGraph) -> np.ndarray:
    """(n, K) the starting q: softmax of each variable's unary (its local evidence)."""
    q = np.exp(graph.unary - graph.unary.max(axis=1, keepdims=True))
    return q / q.sum(axis=1, keepdims=True)


@register("meanfield")
class MeanField(Decoder):
    """Damped naive mean field (module docstring). Starts from q = softmax(unary); deterministic.

    Args:
        sweeps: full passes over the variables (1..MAX_SWEEPS).
        damping: D in (0, 1], the weight of the new value (Bornn et al., Table 2: D = 0.5 and 1).
        time_limit: seconds after which it stops cleanly with the current q (None: no limit).

    Returns labels = argmax of the final q (ties to the lowest label), marginals = the final q,
    and stats ``updates``, ``best_score`` (score of the labels) and ``final_change``: the
    largest |change| of q in the last sweep (0 at a fixed point).
    """

    summary = "damped naive mean field: deterministic approximate marginals, their argmax as labels"

    searches_map = False
    gives_marginals = True

    def __init__(self, *, sweeps: Sweeps = 100, damping: Annotated[float, Bounds(0, 1, low_open=True)] = 1.0,
                 time_limit: TimeLimit = None) -> None:
        self.sweeps = sweeps
        self.damping = damping
        self.time_limit = time_limit

    def decode(self, graph: FactorGraph) -> Decoding:
        arrays = graph_arrays(graph)
        q = mean_field_start(graph)
        change = 0.0

        def run(first: int, count: int) -> None:
            nonlocal change
            change = _meanfield_sweeps(arrays, q, self.damping, count)

        done = run_in_slices(run, self.sweeps, graph.n_variables, self.time_limit)
        labels = np.argmax(q, axis=1).astype(np.int64)
        stats = {**sweep_stats(graph.n_variables, self.sweeps, done), "best_score": graph.score(labels),
                 "final_change": float(change)}
        return Decoding(labels, q, stats)
