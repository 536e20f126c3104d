"""Minibatch Gibbs decoders (De Sa, Chen & Wong, 2018): ``min-gibbs``, ``mgpmh``, ``doublemin-gibbs``.

All three resample one variable at a time in the fixed order 0..n-1 (a *sweep*), like ``gibbs``
with ``schedule="constant"``: they sample the model itself at temperature 1 (no annealing). A
variable's unary is always used exactly; only its incident pairwise factors are subsampled, which
pays off on heavily connected skip-chain nodes. They start at the ``start`` labelling, return the
highest-scoring labelling among the end-of-sweep states (scores kept exactly, from exact local
differences whenever a label changes) and estimate marginals by label frequencies over all updates.

Notation. Pairwise factor phi (an edge) has values phi(x) = table[y_a, y_b] - min(table), so
0 <= phi <= M_phi, M_phi = max(table) - min(table) (the shift does not change the distribution;
a factor with M_phi = 0 is constant and never sampled). A(i) are i's factors and
L_i = sum_{phi in A(i)} M_phi its *local maximum energy*. A minibatch is a vector of independent
counts s_phi ~ Poisson(mu_phi), phi in A(i), drawn in time proportional to its size rather than
to i's degree: when sum mu_phi <= |A(i)|, as in the paper's Sec. 3, a total S ~ Poisson(sum mu)
is split by S draws of phi with probability mu_phi / sum mu; otherwise each s_phi is drawn.
``mean_batch`` reports the mean of sum_phi s_phi per minibatch actually drawn.

``min-gibbs`` (Algorithm 2, MIN-Gibbs, with the bias-adjusted Poisson estimator (2)). The energy
of the pairwise factors is estimated by eps(x) = sum_phi s_phi * log(1 + phi(x) / mu_phi), whose
exponential is unbiased: E[exp(eps(x))] = exp(sum_phi phi(x)) (Lemma 1, the Poisson MGF), so the
chain's x-marginal is exactly the model (Theorem 1). The estimate is *cached*: each factor keeps
the term it was last drawn with, at the current state. Updating i: for its current label u = x_i
the energy is unary[i, u] + the cached terms of A(i); for every other label u a fresh minibatch of
A(i) at x[i <- u] gives unary[i, u] + eps_u; the new label v is drawn with probability
proportional to exp(energy); if v changes, A(i)'s cached terms become those drawn for v. This is
the paper's Algorithm 2 with the estimate factorised over factors and applied to the block
(x_i, cached terms of A(i)), whose other terms do not depend on x_i, so Theorem 1 holds as is; the
paper re-estimates every factor of the graph for each candidate instead, which costs O(total
energy^2) per update. Means: mu_phi = lambda * M_phi / max(L_a, L_b) for phi = (a, b) (a fixed
mean per factor, as the cache needs, in place of the paper's lambda * M_phi / Psi), so every
fresh minibatch has expected size <= lambda, with equality at a variable (a hub) that is the more
energetic end of all its factors. Cost per update: (K - 1) minibatches.

``mgpmh`` (Algorithm 4, Minibatch-Gibbs-Proposal Metropolis-Hastings). One minibatch s of A(i),
mu_phi = lambda * M_phi / L_i (expected size exactly lambda; the paper uses the graph's largest
L), gives the unbiased linear estimate e_u = unary[i, u] + sum_phi s_phi / mu_phi * phi(x[i <- u])
for every label u at once; the proposal is v ~ psi(u) proportional to exp(e_u), and it is accepted
with probability min(1, exp(zeta(x[i <- v]) - zeta(x)) * psi(x_i) / psi(v)) =
min(1, exp(exact local score difference - (e_v - e_{x_i}))): the exact energy difference is
computed over all of i's factors (O(degree) per update, but not O(degree * K)). Reversible with
the model as its stationary distribution for any lambda (Theorem 3); as lambda grows the proposal
tends to the exact conditional and the acceptance rate to 1 (plain Gibbs).

``doublemin-gibbs`` (Algorithm 5, DoubleMIN-Gibbs). The proposal of ``mgpmh`` (batch size
lambda), and the acceptance test of MIN-Gibbs: a fresh estimator-(2) minibatch of A(i) at
x[i <- v] (batch size ``accept_batch_size``, means as in ``min-gibbs``) replaces the exact energy
difference, which becomes unary[i, v] - unary[i, x_i] + eps_v - (cached terms of A(i)); on
acceptance the cache takes the new terms. Stationary x-marginal: the model (Theorem 5 with (2)).

Batch sizes. Lemma 2 (and Theorem 4) ask for lambda of the order of the squared local energy
L^2 for the estimates to stay within O(1) of the truth; smaller batches stay unbiased but mix
more slowly (the chain lingers in states whose cached estimate came out high). The defaults
(32) suit CRF-like chains (L ~ 5-10). Because a cached factor's mean is set by its more energetic
end, the leaves of a hub get tiny estimator batches (lambda * M_phi / L_hub): ``mgpmh``, whose
acceptance is exact, is the robust choice there.

Randomness: one ``numpy.random.default_rng(seed)`` seeds a splitmix64 stream inside the compiled
loop (Poisson counts by multiplication of uniforms for means < 10, else Hoermann's PTRS), so runs
are reproducible and a run of T sweeps is the prefix of a longer one with the same seed.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from ..graph.factor_graph import FactorGraph
from .base import Decoder, Decoding, register
from .kernels import BestLabelling, draw, graph_arrays, initial_labels, keep_best, mix, run_in_slices, sweep_stats
from .settings import BatchSize, Seed, Start, Sweeps, TimeLimit

MIN_GIBBS, MGPMH, DOUBLE_MIN = 0, 1, 2
_TALLIES = 6  # proposal draws, proposal batches, estimator draws, estimator batches, moves proposed, accepted


# ----------------------------------------------------------------------------- random numbers


@numba.njit(cache=True, nogil=True)
def _uniform(state):  # pragma: no cover - compiled
    """A uniform in [0, 1) from the splitmix64 stream ``state`` (1,) uint64, advanced in place."""
    state[0] += np.uint64(0x9E3779B97F4A7C15)
    return float(mix(state[0]) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True, nogil=True)
def _poisson(mean, state):  # pragma: no cover - compiled
    """A Poisson(mean) count: multiplication of uniforms below 10, else PTRS (Hoermann, 1993)."""
    if mean < 10.0:
        limit = math.exp(-mean)
        count = 0
        product = _uniform(state)
        while product > limit:
            count += 1
            product *= _uniform(state)
        return count
    root = math.sqrt(mean)
    log_mean = math.log(mean)
    b = 0.931 + 2.53 * root
    a = -0.059 + 0.02483 * b
    inverse_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2.0)
    while True:
        u = _uniform(state) - 0.5
        v = _uniform(state)
        us = 0.5 - abs(u)
        count = float(math.floor((2.0 * a / us + b) * u + mean + 0.43)) if us > 0.0 else -1.0
        if us >= 0.07 and v <= v_r:
            return int(count)
        if count < 0 or (us < 0.013 and v > us):
            continue
        if (math.log(v) + math.log(inverse_alpha) - math.log(a / (us * us) + b)
                <= -mean + count * log_mean - math.lgamma(count + 1.0)):
            return int(count)


# ----------------------------------------------------------------------------- minibatches


@numba.njit(cache=True, nogil=True)
def _reserve(rows, needed):  # pragma: no cover - compiled
    """``rows`` (r, 3), doubled until it has ``needed`` rows (the first rows kept)."""
    if needed <= rows.shape[0]:
        return rows
    bigger = np.empty((max(needed, 2 * rows.shape[0]), 3))
    bigger[:rows.shape[0]] = rows
    return bigger


@numba.njit(cache=True, nogil=True)
def _draw(i, ptr, means, cumulative, state, rows, start):  # pragma: no cover - compiled
    """Draw a minibatch of variable i's factors, s_phi ~ Poisson(means[slot]) independently, into
    ``rows`` from row ``start`` as [slot, count, 0] (a slot may take several rows). ``cumulative``
    (2m,) holds the running sums of ``means`` within each variable's slots. Returns (rows, end,
    total count)."""
    lo, hi = ptr[i], ptr[i + 1]
    if hi == lo:
        return rows, start, 0
    total_mean = cumulative[hi - 1]
    end = start
    if total_mean <= hi - lo:  # S ~ Poisson(sum), then S categorical draws
        total = _poisson(total_mean, state)
        rows = _reserve(rows, start + total)
        for _ in range(total):
            target = _uniform(state) * total_mean
            while target >= total_mean:  # rounding of u * sum up to sum itself
                target = _uniform(state) * total_mean
            left, right = lo, hi - 1  # the first slot whose running sum exceeds target
            while left < right:
                middle = (left + right) // 2
                if cumulative[middle] > target:
                    right = middle
                else:
                    left = middle + 1
            rows[end, 0] = left
            rows[end, 1] = 1.0
            rows[end, 2] = 0.0
            end += 1
        return rows, end, total
    rows = _reserve(rows, start + hi - lo)
    total = 0
    for s in range(lo, hi):
        if means[s] > 0.0:
            count = _poisson(means[s], state)
            if count:
                rows[end, 0] = s
                rows[end, 1] = count
                rows[end, 2] = 0.0
                end += 1
                total += count
    return rows, end, total


@numba.njit(cache=True, nogil=True)
def _estimate(label, node, table, shifted, labels, means, rows, start, end):  # pragma: no cover - compiled
    """Estimator (2) of the minibatch ``rows[start:end]`` with the updated variable at ``label``:
    sum of count * log(1 + phi / mean); each row's term is kept in its third column."""
    total = 0.0
    for r in range(start, end):
        s = int(rows[r, 0])
        rows[r, 2] = rows[r, 1] * math.log1p(shifted[table[s], labels[node[s]], label] / means[s])
        total += rows[r, 2]
    return total


@numba.njit(cache=True, nogil=True)
def _recache(i, ptr, node, slot_edge, cache, local, rows, start, end, new_local):  # pragma: no cover - compiled
    """Variable i takes a new label: its factors' cached terms become the terms of
    ``rows[start:end]`` (0 for factors not drawn); ``local`` (n,) = each variable's sum of the
    cached terms of its factors."""
    for s in range(ptr[i], ptr[i + 1]):
        local[node[s]] -= cache[slot_edge[s]]
        cache[slot_edge[s]] = 0.0
    for r in range(start, end):
        s = int(rows[r, 0])
        cache[slot_edge[s]] += rows[r, 2]
        local[node[s]] += rows[r, 2]
    local[i] = new_local


@numba.njit(cache=True, nogil=True)
def _score_change(i, new, unary, ptr, node, table, columns, labels):  # pragma: no cover - compiled
    """Exact change of the labelling score when variable i moves from ``labels[i]`` to ``new``."""
    old = labels[i]
    change = unary[i, new] - unary[i, old]
    for s in range(ptr[i], ptr[i + 1]):
        change += columns[table[s], labels[node[s]], new] - columns[table[s], labels[node[s]], old]
    return change


# ----------------------------------------------------------------------------- the sampler


class MinibatchTables(NamedTuple):
    """Per-graph tables of the minibatch kernels: ``shifted`` (2P, K, K) the oriented tables
    [t, neighbour, own] shifted to a minimum of 0, ``slot_edge`` (2m,) the edge of each adjacency
    slot, and per slot the Poisson means of the proposal and of the cached estimator with their
    running sums within each variable's slots (2m,) (see :func:`minibatch_means`)."""

    shifted: np.ndarray
    slot_edge: np.ndarray
    proposal_means: np.ndarray
    proposal_cumulative: np.ndarray
    estimator_means: np.ndarray
    estimator_cumulative: np.ndarray


class MinibatchState(NamedTuple):
    """What a run carries from one slice of sweeps to the next: ``cache`` (m,) the estimator (2)
    term of every factor, ``local`` (n,) each variable's sum of its factors' cached terms, the
    splitmix64 generator ``rng`` (1,) uint64 and ``tallies`` (6,)."""

    cache: np.ndarray
    local: np.ndarray
    rng: np.ndarray
    tallies: np.ndarray


@numba.njit(cache=True, nogil=True)
def _fill_cache(graph, tables, labels, state):  # pragma: no cover - compiled
    """Draw every factor's estimator-(2) term at ``labels`` into ``state.cache`` and ``state.local``."""
    unary, ptr, node, table, columns = graph
    shifted, slot_edge, proposal_means, proposal_cumulative, estimator_means, estimator_cumulative = tables
    cache, local, rng, tallies = state
    for i in range(unary.shape[0]):
        for s in range(ptr[i], ptr[i + 1]):
            if i < node[s] and estimator_means[s] > 0.0:
                count = _poisson(estimator_means[s], rng)
                term = count * math.log1p(shifted[table[s], labels[node[s]], labels[i]] / estimator_means[s])
                cache[slot_edge[s]] = term
                local[i] += term
                local[node[s]] += term


@numba.njit(cache=True, nogil=True)
def _minibatch_sweeps(mode, graph, tables, best, labels, counts, carried, first_sweep,
                      sweeps):  # pragma: no cover - compiled
    """Run ``sweeps`` sweeps of ``mode`` (MIN_GIBBS, MGPMH or DOUBLE_MIN) on ``graph``
    (:class:`GraphArrays`) from ``labels``, updated in place as are ``counts`` (n, K), ``best``
    (:class:`Tracked`) and ``carried`` (:class:`MinibatchState`); ``tables``: :class:`MinibatchTables`."""
    unary, ptr, node, table, columns = graph
    shifted, slot_edge, proposal_means, proposal_cumulative, estimator_means, estimator_cumulative = tables
    best_labels, component, component_ptr, component_nodes, tracked = best
    cache, local, state, tallies = carried
    n, k = unary.shape
    energy = np.empty(k)
    weights = np.empty(k)
    offsets = np.zeros(k + 1, np.int64)
    rows = np.empty((64, 3))
    for t in range(sweeps):
        for i in range(n):
            current = labels[i]
            if mode == MIN_GIBBS:
                end = 0
                for b in range(k):
                    offsets[b] = end
                    if b == current:
                        energy[b] = unary[i, b] + local[i]
                    else:
                        start = end
                        rows, end, total = _draw(i, ptr, estimator_means, estimator_cumulative, state, rows, start)
                        energy[b] = unary[i, b] + _estimate(b, node, table, shifted, labels, estimator_means,
                                                            rows, start, end)
                        tallies[2] += total
                        tallies[3] += 1.0
                offsets[k] = end
                label = draw(energy, energy.max(), 1.0, weights, _uniform(state))
                if label != current:
                    tracked[0, component[i]] += _score_change(i, label, unary, ptr, node, table, columns, labels)
                    _recache(i, ptr, node, slot_edge, cache, local, rows, offsets[label], offsets[label + 1],
                             energy[label] - unary[i, label])
                    labels[i] = label
            else:
                rows, end, total = _draw(i, ptr, proposal_means, proposal_cumulative, state, rows, 0)
                tallies[0] += total
                tallies[1] += 1.0
                for b in range(k):
                    energy[b] = unary[i, b]
                for r in range(end):
                    s = int(rows[r, 0])
                    weight = rows[r, 1] / proposal_means[s]
                    neighbour = labels[node[s]]
                    for b in range(k):
                        energy[b] += weight * columns[table[s], neighbour, b]
                label = draw(energy, energy.max(), 1.0, weights, _uniform(state))
                if label != current:
                    tallies[4] += 1.0
                    change = _score_change(i, label, unary, ptr, node, table, columns, labels)
                    estimate = 0.0
                    if mode == MGPMH:
                        log_accept = change - (energy[label] - energy[current])
                    else:
                        rows, end, total = _draw(i, ptr, estimator_means, estimator_cumulative, state, rows, 0)
                        estimate = _estimate(label, node, table, shifted, labels, estimator_means, rows, 0, end)
                        tallies[2] += total
                        tallies[3] += 1.0
                        log_accept = (unary[i, label] - unary[i, current] + estimate - local[i]
                                      - (energy[label] - energy[current]))
                    if log_accept >= 0.0 or _uniform(state) < math.exp(log_accept):
                        tallies[5] += 1.0
                        tracked[0, component[i]] += change
                        if mode == DOUBLE_MIN:
                            _recache(i, ptr, node, slot_edge, cache, local, rows, 0, end, estimate)
                        labels[i] = label
            counts[i, labels[i]] += 1.0
        keep_best(first_sweep + t, labels, best_labels, component_ptr, component_nodes, tracked)


# ----------------------------------------------------------------------------- per-graph tables


def _slot_edges(graph: FactorGraph) -> np.ndarray:
    """(2m,) the edge of every adjacency slot. ``FactorGraph.adjacency`` lists the slots of
    ``concatenate([edges[:, 0], edges[:, 1]])`` stably sorted by owner; checked against its neighbours."""
    m = len(graph.edges)
    order = np.argsort(np.concatenate([graph.edges[:, 0], graph.edges[:, 1]]), kind="stable")
    if not np.array_equal(np.concatenate([graph.edges[:, 1], graph.edges[:, 0]])[order], graph.adjacency.node):
        raise RuntimeError("FactorGraph.adjacency no longer lists slots in stable owner order")
    return order % max(m, 1)


def _running_sums(ptr: np.ndarray, means: np.ndarray) -> np.ndarray:
    """(2m,) running sums of ``means`` (2m,) restarting at each variable's first slot."""
    sums = np.cumsum(means)
    owner = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    before = np.concatenate([[0.0], sums])[ptr[:-1]]
    return sums - before[owner]


def minibatch_means(graph: FactorGraph, batch_size: float) -> tuple[np.ndarray, np.ndarray]:
    """Poisson means per adjacency slot (2m,) for expected batch size ``batch_size``: the proposal
    means lambda * M_phi / L_i (each variable's minibatch has expected size lambda) and the cached
    estimator's means lambda * M_phi / max(L_a, L_b) (one mean per factor, expected size <= lambda).
    Constant factors (M_phi = 0) get mean 0."""
    adj = graph.adjacency
    n = graph.n_variables
    spans = graph.potentials.max(axis=(1, 2)) - graph.potentials.min(axis=(1, 2))
    slot_span = np.concatenate([spans, spans])[adj.table]
    owner = np.repeat(np.arange(n), np.diff(adj.ptr))
    local_energy = np.bincount(owner, slot_span, minlength=n)
    with np.errstate(divide="ignore", invalid="ignore"):
        proposal = np.where(slot_span > 0, batch_size * slot_span / local_energy[owner], 0.0)
        estimator = np.where(slot_span > 0, batch_size * slot_span
                             / np.maximum(local_energy[owner], local_energy[adj.node]), 0.0)
    return proposal, estimator


class _MinibatchGibbs(Decoder):
    """Shared settings and decoding of the minibatch decoders (see the module docstring).

    Args:
        sweeps: passes over all variables (1..MAX_SWEEPS).
        seed: seed of the random generator (>= 0).
        batch_size: expected minibatch size lambda (> 0): of the estimator (2) in ``min-gibbs``,
            of the proposal in ``mgpmh`` and ``doublemin-gibbs``.
        start: the first labelling: ``argmax`` of each unary, or ``viterbi`` of the chains (see
            :func:`~.kernels.initial_labels`).
        time_limit: seconds after which it stops cleanly with what it has (None: no limit).

    Returns the best end-of-sweep labelling, marginals (n, K) = label frequencies over all
    updates, and stats ``updates``, ``best_sweep``, ``best_score``, ``mean_batch`` (mean factor
    draws per minibatch) and, with an acceptance test, ``acceptance`` (accepted / proposed label
    changes; 1 when none was proposed).
    """

    gives_marginals = True
    _mode: int

    def __init__(self, *, sweeps: Sweeps = 100, seed: Seed = 0, batch_size: BatchSize = 32.0,
                 start: Start = "argmax", time_limit: TimeLimit = None) -> None:
        self.sweeps = sweeps
        self.seed = seed
        self.batch_size = batch_size
        self.start = start
        self.time_limit = time_limit

    def _estimator_batch_size(self) -> float:
        """Expected size of the estimator-(2) minibatches."""
        return self.batch_size

    def decode(self, graph: FactorGraph) -> Decoding:
        n, k = graph.unary.shape
        arrays = graph_arrays(graph)
        proposal_means, _ = minibatch_means(graph, self.batch_size)
        _, estimator_means = minibatch_means(graph, self._estimator_batch_size())
        ptr = arrays.ptr
        tables = MinibatchTables(arrays.columns - arrays.columns.min(axis=(1, 2), keepdims=True), _slot_edges(graph),
                                 proposal_means, _running_sums(ptr, proposal_means), estimator_means,
                                 _running_sums(ptr, estimator_means))
        state = MinibatchState(np.zeros(len(graph.edges)), np.zeros(n),
                               np.random.default_rng(self.seed).integers(0, 2**64, size=1, dtype=np.uint64),
                               np.zeros(_TALLIES))
        labels = initial_labels(graph, self.start)
        best = BestLabelling(graph, labels)
        counts = np.zeros((n, k))
        if self._mode != MGPMH:
            _fill_cache(arrays, tables, labels, state)

        def run(first: int, count: int) -> None:
            _minibatch_sweeps(self._mode, arrays, tables, best.arrays, labels, counts, state, first, count)

        done = run_in_slices(run, self.sweeps, n, self.time_limit)
        tallies = state.tallies
        draws, batches = (tallies[2], tallies[3]) if self._mode == MIN_GIBBS else (tallies[0], tallies[1])
        stats = {**sweep_stats(n, self.sweeps, done), **best.stats(graph),
                 "mean_batch": float(draws / batches) if batches else 0.0}
        if self._mode != MIN_GIBBS:
            stats["acceptance"] = float(tallies[5] / tallies[4]) if tallies[4] else 1.0
        if self._mode == DOUBLE_MIN:
            stats["mean_accept_batch"] = float(tallies[2] / tallies[3]) if tallies[3] else 0.0
        return Decoding(best.labels, counts / done, stats)


@register("min-gibbs")
class MinGibbs(_MinibatchGibbs):
    """MIN-Gibbs (Algorithm 2): every candidate label's energy from a fresh bias-adjusted Poisson
    minibatch (estimator (2)), the current label's from the cache; unbiased. See the module docstring."""

    summary = "MIN-Gibbs: Gibbs on minibatch estimates of each conditional's factors"

    _mode = MIN_GIBBS


@register("mgpmh")
class MinibatchGibbsProposalMH(_MinibatchGibbs):
    """MGPMH (Algorithm 4): a minibatch Gibbs proposal, accepted on the exact energy difference;
    unbiased. See the module docstring."""

    summary = "MGPMH: minibatch Gibbs proposals corrected by a Metropolis-Hastings test"

    _mode = MGPMH


@register("doublemin-gibbs")
class DoubleMinGibbs(_MinibatchGibbs):
    """DoubleMIN-Gibbs (Algorithm 5): the MGPMH proposal (``batch_size``) and an estimator-(2)
    acceptance test against the cached energy (``accept_batch_size``, expected minibatch size > 0);
    unbiased. Adds stat ``mean_accept_batch``. See the module docstring."""

    summary = "DoubleMIN-Gibbs: minibatch proposals accepted on a second minibatch"

    _mode = DOUBLE_MIN

    def __init__(self, *, sweeps: Sweeps = 100, seed: Seed = 0, batch_size: BatchSize = 32.0,
                 accept_batch_size: BatchSize = 32.0, start: Start = "argmax",
                 time_limit: TimeLimit = None) -> None:
        super().__init__(sweeps=sweeps, seed=seed, batch_size=batch_size, start=start, time_limit=time_limit)
        self.accept_batch_size = accept_batch_size

    def _estimator_batch_size(self) -> float:
        return self.accept_batch_size
