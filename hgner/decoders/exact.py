"""Certified MAP on skip-chain graphs: dual decomposition, then exact search where it stalls.

**Decomposition.** The graph's score is split between two tractable slaves that each own a
copy of the variables they touch: the *chains* (unaries plus chain edges) and the *skip paths*
(the skip edges, greedily covered by simple paths, each path a chain of variable copies). Both
are solved exactly by the chain Viterbi kernel. A multiplier ``lambda`` (K,) per skip copy is
added to its variable's unary in the chain slave and subtracted in the skip slave, so the sum
of the two slave maxima is an upper bound on the MAP score for every ``lambda``. The bound is
lowered by projected subgradient steps with Polyak step sizes (target: the best labelling found
so far, step factor halved when the bound stalls), separately in every connected component of
the graph (sentences joined by skip edges). Each iteration's chain labelling is also scored in
the full graph; a component is *certified* when its best bound minus its best score is within
``1e-9`` relative (it is when the copies agree).

**Search.** A component left uncertified after ``iterations`` gets an exact search: with the
labels of a vertex cover of its skip edges fixed, the rest is a chain, solved by Viterbi. Labels
of cover variables whose bound (both slaves re-solved with the variable clamped) cannot beat the
best score are pruned first; if more than ``max_search`` cover labellings remain, the component
stays uncertified and its gap is reported.

On a chain graph there are no multipliers, the first iteration is Viterbi, and it is certified.
"""

from __future__ import annotations

import itertools
from typing import Annotated

import numpy as np

from ..graph.factor_graph import FactorGraph
from .base import Decoder, Decoding, register
from .chain import _incoming_tables, _viterbi
from .settings import Bounds

TOLERANCE = 1e-9  # relative: a component is certified when bound - score <= TOLERANCE * max(1, |score|)


def _position_terms(unary: np.ndarray, tables: np.ndarray, incoming: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(n,) each position's unary plus the table of the chain edge into it, at ``labels`` (n,)."""
    values = unary[np.arange(len(labels)), labels]
    has = np.flatnonzero(incoming >= 0)
    values[has] += tables[incoming[has], labels[has - 1], labels[has]]
    return values


def _skip_paths(graph: FactorGraph) -> tuple[np.ndarray, np.ndarray]:
    """Cover the skip edges by simple paths, laid end to end as chains of variable copies.

    Returns ``copy_var`` (c,), the variable of each copy, and ``copy_incoming`` (c,), the index
    into ``graph.adjacency.oriented`` (2P, K, K) of the edge from the previous copy (-1 where a
    path starts); an edge walked against its direction uses the transposed table."""
    n_tables = len(graph.potentials)
    paths: list[list[tuple[int, int]]] = []
    members: list[set[int]] = []
    tails: dict[int, list[int]] = {}
    for (a, b), t in zip(graph.edges[graph.n_chain_edges:].tolist(), graph.edge_potential[graph.n_chain_edges:].tolist()):
        for tail, head, table in ((a, b, t), (b, a, t + n_tables)):  # noqa: B007  (the last one is used after the loop)
            path = next((p for p in tails.get(tail, []) if head not in members[p]), None)
            if path is not None:
                tails[tail].remove(path)
                break
        else:
            path, head, table = len(paths), b, t
            paths.append([(a, -1)])
            members.append({a})
        paths[path].append((head, table))
        members[path].add(head)
        tails.setdefault(head, []).append(path)
    flat = [step for path in paths for step in path]
    return np.array([v for v, _ in flat], dtype=np.int64), np.array([t for _, t in flat], dtype=np.int64)


class _Problem:
    """One graph split into its chain slave and skip-path slave, with per-component sums."""

    def __init__(self, graph: FactorGraph) -> None:
        self.graph = graph
        self.incoming = _incoming_tables(graph.chain_part())
        self.copy_var, self.copy_incoming = _skip_paths(graph)
        self.oriented = graph.adjacency.oriented
        self.component = graph.components.index
        self.n_components = len(graph.components.ptr) - 1
        self.copy_component = self.component[self.copy_var]
        skip = graph.edges[graph.n_chain_edges:]
        self.skip_edges, self.skip_tables = skip, graph.edge_potential[graph.n_chain_edges:]
        self.skip_component = self.component[skip[:, 0]]

    def per_component(self, values: np.ndarray, component: np.ndarray) -> np.ndarray:
        return np.bincount(component, weights=values, minlength=self.n_components)

    def primal(self, y: np.ndarray) -> np.ndarray:
        """(components,) score of labelling ``y`` (n,) in the full graph, per component."""
        return self.graph.component_scores(y)

    def solve_slaves(self, lam: np.ndarray, chain_unary: np.ndarray | None = None,
                     copy_unary: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Both slaves under multipliers ``lam`` (c, K): chain labels (n,), copy labels (c,) and
        the dual bound per component. ``chain_unary`` / ``copy_unary`` override the adjusted
        unaries (for clamping)."""
        if chain_unary is None:
            chain_unary = self.graph.unary.copy()
            np.add.at(chain_unary, self.copy_var, lam)
        if copy_unary is None:
            copy_unary = -lam
        y = _viterbi(chain_unary, self.graph.potentials, self.incoming)
        z = _viterbi(copy_unary, self.oriented, self.copy_incoming)
        dual = (self.per_component(_position_terms(chain_unary, self.graph.potentials, self.incoming, y), self.component)
                + self.per_component(_position_terms(copy_unary, self.oriented, self.copy_incoming, z), self.copy_component))
        return y, z, dual


def _closed(bound: np.ndarray, score: np.ndarray) -> np.ndarray:
    return bound - score <= TOLERANCE * np.maximum(1.0, np.abs(score))


def _vertex_cover(edges: np.ndarray) -> list[int]:
    """A vertex cover of ``edges`` (m, 2), greedily by highest remaining degree."""
    remaining = [tuple(e) for e in edges.tolist()]
    cover: list[int] = []
    while remaining:
        degree: dict[int, int] = {}
        for a, b in remaining:
            degree[a] = degree.get(a, 0) + 1
            degree[b] = degree.get(b, 0) + 1
        v = max(degree, key=lambda u: (degree[u], -u))
        cover.append(v)
        remaining = [e for e in remaining if v not in e]
    return cover


@register("exact")
class ExactMap(Decoder):
    """Certified MAP by dual decomposition plus exact search (see the module docstring).

    It ``certifies``: ``exact`` is False because with a finite ``max_search`` a component may
    stay uncertified; ``stats['certified']`` says when the labelling is the proven MAP.

    Args:
        iterations: subgradient iterations at most (>= 1).
        max_search: most cover labellings enumerated per uncertified component (>= 0).

    Returns the best labelling found (n,), no marginals, and stats ``certified`` (1.0 / 0.0),
    ``gap`` (upper bound minus the labelling's score, 0 when certified), ``upper_bound``,
    ``iterations`` (used), ``searched`` (components that needed the search) and
    ``search_labellings`` (cover labellings solved by Viterbi in the search).
    """

    summary = "certified MAP of any graph: dual decomposition plus exact search, with a certificate per document"

    exact = False
    certifies = True

    def __init__(self, *, iterations: Annotated[int, Bounds(1, 1_000_000)] = 300,
                 max_search: Annotated[int, Bounds(0)] = 20000) -> None:
        self.iterations = iterations
        self.max_search = max_search

    def decode(self, graph: FactorGraph) -> Decoding:
        if graph.n_variables == 0:  # nothing to label: the empty labelling is the proven MAP
            stats = {"certified": 1.0, "gap": 0.0, "upper_bound": 0.0, "iterations": 0.0, "searched": 0.0,
                     "search_labellings": 0.0}
            return Decoding(np.zeros(0, np.int64), None, stats)
        problem = _Problem(graph)
        n_comp = problem.n_components
        lam = np.zeros((len(problem.copy_var), graph.n_labels))
        best_lam = lam.copy()
        bound, score = np.full(n_comp, np.inf), np.full(n_comp, -np.inf)
        labels = np.zeros(graph.n_variables, np.int64)
        factor, stall = np.ones(n_comp), np.zeros(n_comp, np.int64)
        eye = np.eye(graph.n_labels)
        for iteration in range(1, self.iterations + 1):  # noqa: B007  (read after the loop)
            y, z, dual = problem.solve_slaves(lam)
            primal = problem.primal(y)
            better = primal > score
            score[better] = primal[better]
            take = better[problem.component]
            labels[take] = y[take]
            lower = dual < bound
            bound[lower] = dual[lower]
            best_lam[lower[problem.copy_component]] = lam[lower[problem.copy_component]]
            stall = np.where(lower, 0, stall + 1)
            factor = np.where(stall >= 10, factor / 2, factor)
            stall[stall >= 10] = 0
            done = _closed(bound, score)
            if done.all():
                break
            y_copy = y[problem.copy_var]
            disagree = (y_copy != z).astype(np.float64)
            norm = problem.per_component(2 * disagree, problem.copy_component)
            step = np.where(done | (norm == 0), 0.0, factor * (dual - score) / np.maximum(norm, 1.0))
            lam -= step[problem.copy_component][:, None] * (eye[y_copy] - eye[z])
        searched = calls = 0
        for component in np.flatnonzero(~_closed(bound, score)):
            searched += 1
            found, used = self._search(problem, int(component), best_lam, score[component], labels)
            calls += used
            if found:
                bound[component] = score[component]
        certified = bool(_closed(bound, score).all())
        total = float(graph.score(labels))
        upper = float(bound.sum())
        stats = {"certified": float(certified), "gap": 0.0 if certified else max(upper - total, 0.0),
                 "upper_bound": total if certified else upper, "iterations": float(iteration),
                 "searched": float(searched), "search_labellings": float(calls)}
        return Decoding(labels, None, stats)

    def _search(self, problem: _Problem, component: int, lam: np.ndarray, incumbent: float,
                labels: np.ndarray) -> tuple[bool, int]:
        """Exact search on one component (see the module docstring): writes a better labelling
        into ``labels`` (n,) when one exists; returns (finished, cover labellings solved)."""
        graph = problem.graph
        k = graph.n_labels
        in_skip = problem.skip_component == component
        cover = _vertex_cover(problem.skip_edges[in_skip])
        chain_unary = graph.unary.copy()
        np.add.at(chain_unary, problem.copy_var, lam)
        candidates: list[list[int]] = []
        for v in cover:
            keep = []
            for label in range(k):
                clamped_chain, clamped_copies = chain_unary.copy(), -lam
                clamped_chain[v] = -np.inf
                clamped_chain[v, label] = chain_unary[v, label]
                rows = problem.copy_var == v
                clamped_copies[rows] = -np.inf
                clamped_copies[rows, label] = -lam[rows, label]
                _, _, dual = problem.solve_slaves(lam, clamped_chain, clamped_copies)
                if dual[component] > incumbent + TOLERANCE * max(1.0, abs(incumbent)):
                    keep.append(label)
            candidates.append(keep)
        if np.prod([len(c) for c in candidates], dtype=np.float64) > self.max_search:
            return False, 0
        members = problem.component == component
        edges, tables = problem.skip_edges[in_skip], problem.skip_tables[in_skip]
        calls = 0
        for assignment in itertools.product(*candidates):
            fixed = dict(zip(cover, assignment))
            unary = graph.unary.copy()
            for (a, b), t in zip(edges.tolist(), tables.tolist()):
                if a in fixed and b not in fixed:
                    unary[b] += graph.potentials[t, fixed[a]]
                elif b in fixed and a not in fixed:
                    unary[a] += graph.potentials[t, :, fixed[b]]
            for v, label in fixed.items():
                unary[v, np.arange(k) != label] = -np.inf
            y = _viterbi(unary, graph.potentials, problem.incoming)
            calls += 1
            value = problem.primal(y)[component]
            if value > incumbent:
                incumbent = value
                labels[members] = y[members]
        return True, calls
