"""The factor graph every decoder consumes: numbers only, no model, no strings.

A graph has ``n`` variables taking one of ``K`` labels, unary log-potentials ``unary (n, K)``
and ``m`` pairwise factors on ``edges (m, 2)``: chain edges first, skip edges after. Each edge
``e = (a, b)`` scores ``potentials[edge_potential[e]][y_a, y_b]``, so a handful of (K, K)
tables (the chain's transitions, the skip potential) serve every edge. The score of a
labelling is the sum of all log-potentials it selects.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..core.errors import GraphError


@dataclass(frozen=True)
class Adjacency:
    """Every variable's neighbours in CSR form: for variable i, slots ``ptr[i]:ptr[i+1]`` hold a
    neighbour ``node[s]`` and ``table[s]``, an index into ``oriented`` (2P, K, K) whose rows are
    i's label and columns the neighbour's (the second half holds the transposed potentials)."""

    ptr: np.ndarray  # (n + 1,) int64
    node: np.ndarray  # (2m,) int64
    table: np.ndarray  # (2m,) int64
    oriented: np.ndarray  # (2P, K, K) float64


@dataclass(frozen=True)
class Components:
    """Connected components: variables ``nodes[ptr[c]:ptr[c+1]]`` (increasing) form component c,
    and ``index[i]`` is variable i's component. The score is a sum over components, so the best
    parts of several labellings can be combined component by component."""

    ptr: np.ndarray  # (C + 1,) int64
    nodes: np.ndarray  # (n,) int64
    index: np.ndarray  # (n,) int64


class FactorGraph:
    """Pairwise log-linear model over ``n`` variables with ``K`` labels.

    Args:
        unary: (n, K) log-potentials.
        edges: (m, 2) variable pairs; the first ``n_chain_edges`` are chain edges ``(i, i+1)``.
        potentials: (K, K) shared by every edge, (m, K, K) one per edge, or (P, K, K) tables
            chosen per edge by ``edge_potential``.
        edge_potential: (m,) table index of each edge (only with (P, K, K) ``potentials``).
        n_chain_edges: how many leading edges form the chains (default: all of them).
        labels: the label names, for people reading the graph; decoders never use them.
    """

    def __init__(
        self,
        unary: np.ndarray,
        edges: np.ndarray | None = None,
        potentials: np.ndarray | None = None,
        edge_potential: np.ndarray | None = None,
        n_chain_edges: int | None = None,
        labels: tuple[str, ...] | None = None,
    ) -> None:
        unary = np.ascontiguousarray(unary, dtype=np.float64)
        if unary.ndim != 2 or unary.shape[1] == 0:
            raise GraphError(f"unary must have shape (n, K) with K >= 1, got {unary.shape}")
        n, k = unary.shape
        edges = np.zeros((0, 2), np.int64) if edges is None else np.ascontiguousarray(edges, dtype=np.int64)
        if edges.ndim != 2 or edges.shape[1] != 2:
            raise GraphError(f"edges must have shape (m, 2), got {edges.shape}")
        m = len(edges)
        if m and (edges.min() < 0 or edges.max() >= n):
            raise GraphError(f"edges must name variables 0..{n - 1}, got values from {edges.min()} to {edges.max()}")
        if m and np.any(edges[:, 0] == edges[:, 1]):
            raise GraphError(f"edge {int(np.flatnonzero(edges[:, 0] == edges[:, 1])[0])} joins a variable to itself")
        if potentials is None:
            if m:
                raise GraphError(f"{m} edges given without potentials")
            potentials = np.zeros((k, k))
        potentials = np.asarray(potentials, dtype=np.float64)
        if potentials.ndim not in (2, 3) or potentials.shape[-2:] != (k, k):
            raise GraphError(f"potentials must have shape (K, K), (m, K, K) or (P, K, K) with K={k}, got {potentials.shape}")
        if potentials.ndim == 2:
            potentials = potentials[None]
            if edge_potential is None:
                edge_potential = np.zeros(m, np.int64)
        if edge_potential is None:
            if len(potentials) != m:
                raise GraphError(f"per-edge potentials must have shape ({m}, {k}, {k}), got {potentials.shape}; "
                                 "pass edge_potential to share tables")
            edge_potential = np.arange(m)
        edge_potential = np.ascontiguousarray(edge_potential, dtype=np.int64)
        if edge_potential.shape != (m,):
            raise GraphError(f"edge_potential must have shape ({m},), got {edge_potential.shape}")
        if m and (edge_potential.min() < 0 or edge_potential.max() >= len(potentials)):
            raise GraphError(f"edge_potential must index 0..{len(potentials) - 1}")
        n_chain_edges = m if n_chain_edges is None else int(n_chain_edges)
        if not 0 <= n_chain_edges <= m:
            raise GraphError(f"n_chain_edges must be between 0 and {m}, got {n_chain_edges}")
        if n_chain_edges and np.any(edges[:n_chain_edges, 1] != edges[:n_chain_edges, 0] + 1):
            raise GraphError("chain edges must join consecutive variables (i, i + 1)")
        if labels is not None and len(labels) != k:
            raise GraphError(f"expected {k} label names, got {len(labels)}")
        if not np.all(np.isfinite(unary)) or not np.all(np.isfinite(potentials)):
            raise GraphError("potentials must be finite")
        self.unary = unary
        self.edges = edges
        self.potentials = np.ascontiguousarray(potentials)
        self.edge_potential = edge_potential
        self.n_chain_edges = n_chain_edges
        self.labels = labels

    @classmethod
    def chain(
        cls,
        unary: np.ndarray,
        transitions: np.ndarray,
        lengths: list[int] | np.ndarray | None = None,
        labels: tuple[str, ...] | None = None,
    ) -> FactorGraph:
        """Sentence chains laid end to end: ``lengths`` (default one chain over all ``n``)
        splits the variables into sentences, and no edge crosses a sentence boundary."""
        n = len(unary)
        lengths = np.asarray([n] if lengths is None else lengths, dtype=np.int64)
        if lengths.sum() != n:
            raise GraphError(f"sentence lengths add up to {lengths.sum()}, expected {n} variables")
        joined = np.ones(max(n - 1, 0), bool)  # variable i is joined to i + 1
        boundary = np.cumsum(lengths)[:-1] - 1  # last variable of every sentence but the final one
        joined[boundary[(boundary >= 0) & (boundary < n - 1)]] = False
        heads = np.flatnonzero(joined)
        edges = np.stack([heads, heads + 1], axis=1)
        return cls(unary, edges, transitions, labels=labels)

    def with_edges(self, extra_edges: np.ndarray, potential: np.ndarray) -> FactorGraph:
        """This graph plus ``extra_edges`` (k, 2) that share one new (K, K) ``potential``."""
        extra_edges = np.asarray(extra_edges, dtype=np.int64).reshape(-1, 2)
        table = len(self.potentials)
        return FactorGraph(
            self.unary,
            np.concatenate([self.edges, extra_edges]),
            np.concatenate([self.potentials, np.asarray(potential, dtype=np.float64)[None]]),
            np.concatenate([self.edge_potential, np.full(len(extra_edges), table, np.int64)]),
            n_chain_edges=self.n_chain_edges,
            labels=self.labels,
        )

    def chain_part(self) -> FactorGraph:
        """This graph without its skip edges: the chains alone (itself when it has none)."""
        if self.is_chain:
            return self
        m = self.n_chain_edges
        return FactorGraph(self.unary, self.edges[:m], self.potentials, self.edge_potential[:m], labels=self.labels)

    @property
    def n_variables(self) -> int:
        return self.unary.shape[0]

    @property
    def n_labels(self) -> int:
        return self.unary.shape[1]

    @property
    def n_skip_edges(self) -> int:
        return len(self.edges) - self.n_chain_edges

    @property
    def is_chain(self) -> bool:
        """True when every edge is a chain edge (Viterbi and forward-backward are exact)."""
        return self.n_skip_edges == 0

    @cached_property
    def components(self) -> Components:
        """The connected components (see :class:`Components`)."""
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        n = self.n_variables
        adjacency = coo_matrix((np.ones(len(self.edges)), (self.edges[:, 0], self.edges[:, 1])), shape=(n, n))
        count, index = connected_components(adjacency, directed=False)
        index = index.astype(np.int64)
        ptr = np.zeros(count + 1, np.int64)
        np.cumsum(np.bincount(index, minlength=count), out=ptr[1:])
        return Components(ptr, np.argsort(index, kind="stable").astype(np.int64), index)

    def component_scores(self, y: np.ndarray) -> np.ndarray:
        """(C,) the score of labelling ``y`` split by connected component; sums to ``score(y)``."""
        y = np.asarray(y)
        components = self.components
        count = len(components.ptr) - 1
        scores = np.bincount(components.index, self.unary[np.arange(self.n_variables), y], minlength=count)
        if len(self.edges):
            edge_scores = self.potentials[self.edge_potential, y[self.edges[:, 0]], y[self.edges[:, 1]]]
            scores += np.bincount(components.index[self.edges[:, 0]], edge_scores, minlength=count)
        return scores

    @cached_property
    def adjacency(self) -> Adjacency:
        """Neighbour lists for local updates (see :class:`Adjacency`)."""
        n, p = self.n_variables, len(self.potentials)
        owner = np.concatenate([self.edges[:, 0], self.edges[:, 1]])
        other = np.concatenate([self.edges[:, 1], self.edges[:, 0]])
        table = np.concatenate([self.edge_potential, self.edge_potential + p])
        order = np.argsort(owner, kind="stable")
        ptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(owner, minlength=n), out=ptr[1:])
        oriented = np.concatenate([self.potentials, self.potentials.transpose(0, 2, 1)])
        return Adjacency(ptr, other[order].copy(), table[order].copy(), np.ascontiguousarray(oriented))

    def score(self, y: np.ndarray) -> float:
        """Sum of the log-potentials selected by labelling ``y`` (n,)."""
        y = np.asarray(y)
        total = self.unary[np.arange(self.n_variables), y].sum()
        if len(self.edges):
            total += self.potentials[self.edge_potential, y[self.edges[:, 0]], y[self.edges[:, 1]]].sum()
        return float(total)

    def local_scores(self, y: np.ndarray, i: int) -> np.ndarray:
        """(K,) log-potentials of variable ``i``'s labels with every other variable fixed as in ``y``:
        the full conditional of ``i`` is their softmax."""
        adj = self.adjacency
        scores = self.unary[i].copy()
        for s in range(adj.ptr[i], adj.ptr[i + 1]):
            scores += adj.oriented[adj.table[s], :, y[adj.node[s]]]
        return scores

    def __repr__(self) -> str:
        return (f"FactorGraph(n={self.n_variables}, K={self.n_labels}, chain_edges={self.n_chain_edges}, "
                f"skip_edges={self.n_skip_edges}, tables={len(self.potentials)})")
