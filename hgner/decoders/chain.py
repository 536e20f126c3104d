"""Exact inference on chains: Viterbi (max-sum) and forward-backward (sum-product)."""

from __future__ import annotations

import numba
import numpy as np

from ..core.errors import GraphError
from ..graph.factor_graph import FactorGraph
from .base import Decoder, Decoding, register


def _incoming_tables(graph: FactorGraph) -> np.ndarray:
    """(n,) potential table of the chain edge into each variable, -1 where a chain starts."""
    if not graph.is_chain:
        raise GraphError(
            f"this decoder is exact only on chains, but the graph has {graph.n_skip_edges} skip edges; "
            "use a sampler (gibbs, herded) or exact"
        )
    incoming = np.full(graph.n_variables, -1, np.int64)
    incoming[graph.edges[:, 1]] = graph.edge_potential
    return incoming


@numba.njit(cache=True, nogil=True)
def _viterbi(unary, potentials, incoming):  # pragma: no cover - compiled
    n, k = unary.shape
    delta = np.empty((n, k))
    back = np.zeros((n, k), np.int64)
    labels = np.empty(n, np.int64)
    for i in range(n):
        t = incoming[i]
        if t < 0:
            for b in range(k):
                delta[i, b] = unary[i, b]
        else:
            for b in range(k):
                best = -np.inf
                arg = 0
                for a in range(k):
                    value = delta[i - 1, a] + potentials[t, a, b]
                    if value > best:
                        best = value
                        arg = a
                delta[i, b] = best + unary[i, b]
                back[i, b] = arg
    i = n - 1
    while i >= 0:
        # the end of a chain: the last variable, or one whose successor starts a new chain
        label = 0
        for b in range(1, k):
            if delta[i, b] > delta[i, label]:
                label = b
        labels[i] = label
        while incoming[i] >= 0:
            labels[i - 1] = back[i, labels[i]]
            i -= 1
        i -= 1
    return labels


@numba.njit(cache=True, nogil=True)
def _log_sum_exp(values):  # pragma: no cover - compiled
    top = values.max()
    if top == -np.inf:
        return top
    return top + np.log(np.exp(values - top).sum())


@numba.njit(cache=True, nogil=True)
def _log_forward_backward(unary, potentials, incoming):  # pragma: no cover - compiled
    """Sum-product in log space: slower than :func:`_forward_backward`, used when its scaled
    products underflow (potentials that differ by more than exp's range, e.g. a large calibration
    factor); every row is normalised by its log-sum-exp."""
    n, k = unary.shape
    alpha = np.empty((n, k))
    beta = np.empty((n, k))
    terms = np.empty(k)
    log_z = 0.0
    for i in range(n):
        t = incoming[i]
        for b in range(k):
            if t >= 0:
                for a in range(k):
                    terms[a] = alpha[i - 1, a] + potentials[t, a, b]
                alpha[i, b] = unary[i, b] + _log_sum_exp(terms)
            else:
                alpha[i, b] = unary[i, b]
        total = _log_sum_exp(alpha[i])
        alpha[i] -= total
        log_z += total
    for i in range(n - 1, -1, -1):
        if i == n - 1 or incoming[i + 1] < 0:
            beta[i] = 0.0
            continue
        t = incoming[i + 1]
        for a in range(k):
            for b in range(k):
                terms[b] = potentials[t, a, b] + unary[i + 1, b] + beta[i + 1, b]
            beta[i, a] = _log_sum_exp(terms)
        beta[i] -= _log_sum_exp(beta[i])
    marginals = alpha + beta
    for i in range(n):
        marginals[i] = np.exp(marginals[i] - _log_sum_exp(marginals[i]))
    return marginals, log_z


@numba.njit(cache=True, nogil=True)
def _forward_backward(unary, potentials, incoming):  # pragma: no cover - compiled
    """Scaled sum-product in probability space (as crfsuite does): every row of alpha is
    normalised and its scale kept, so no logarithm or exponential sits in the inner loops."""
    n, k = unary.shape
    shift = np.empty(n)
    u = np.empty((n, k))
    for i in range(n):
        shift[i] = unary[i].max()
        for b in range(k):
            u[i, b] = np.exp(unary[i, b] - shift[i])
    table_shift = np.empty(len(potentials))
    edge = np.empty_like(potentials)
    for t in range(len(potentials)):
        table_shift[t] = potentials[t].max()
        for a in range(k):
            for b in range(k):
                edge[t, a, b] = np.exp(potentials[t, a, b] - table_shift[t])
    alpha = np.empty((n, k))
    beta = np.empty((n, k))
    log_z = 0.0
    for i in range(n):
        t = incoming[i]
        total = 0.0
        for b in range(k):
            value = u[i, b]
            if t >= 0:
                inner = 0.0
                for a in range(k):
                    inner += alpha[i - 1, a] * edge[t, a, b]
                value *= inner
            alpha[i, b] = value
            total += value
        if not (total > 0.0 and total < np.inf):  # underflow (potentials spread over more than ~700)
            return _log_forward_backward(unary, potentials, incoming)
        for b in range(k):
            alpha[i, b] /= total
        log_z += np.log(total) + shift[i] + (table_shift[t] if t >= 0 else 0.0)
    for i in range(n - 1, -1, -1):
        if i == n - 1 or incoming[i + 1] < 0:
            for a in range(k):
                beta[i, a] = 1.0
            continue
        t = incoming[i + 1]
        total = 0.0
        for a in range(k):
            value = 0.0
            for b in range(k):
                value += edge[t, a, b] * u[i + 1, b] * beta[i + 1, b]
            beta[i, a] = value
            total += value
        if not (total > 0.0 and total < np.inf):
            return _log_forward_backward(unary, potentials, incoming)
        for a in range(k):
            beta[i, a] /= total
    marginals = alpha * beta
    for i in range(n):
        total = marginals[i].sum()
        if not (total > 0.0 and total < np.inf):
            return _log_forward_backward(unary, potentials, incoming)
        for b in range(k):
            marginals[i, b] /= total
    return marginals, log_z


def viterbi(graph: FactorGraph) -> np.ndarray:
    """(n,) the highest-scoring labelling of a chain graph."""
    return _viterbi(graph.unary, graph.potentials, _incoming_tables(graph))


def forward_backward(graph: FactorGraph) -> tuple[np.ndarray, float]:
    """(n, K) exact marginals of a chain graph, and its log partition function."""
    return _forward_backward(graph.unary, graph.potentials, _incoming_tables(graph))


@register("viterbi")
class Viterbi(Decoder):
    """Max-sum on the chain; exact, and raises on graphs with skip edges.

    Args:
        marginals: also run forward-backward so each label gets its exact marginal (confidence).
    """

    summary = "exact MAP of a chain by max-sum; exact marginals by forward-backward when asked (tag asks)"

    exact = True
    chain_only = True
    separable = True

    def __init__(self, *, marginals: bool = False) -> None:
        self.marginals = marginals

    @property
    def gives_marginals(self) -> bool:  # type: ignore[override]
        return self.marginals

    def decode(self, graph: FactorGraph) -> Decoding:
        labels = viterbi(graph)
        return Decoding(labels, forward_backward(graph)[0] if self.marginals else None)
