"""The binned herded-Gibbs family: ``dhg``, ``rdhg`` and ``beg``, herded Gibbs (Bornn et al.,
Algorithm 1, with weight vectors in R^K) in which one weight serves many blanket configurations
("weight sharing", Eskelinen 2013 and the weight-sharing paper, section 3). Like ``herded`` they
scan the variables in the order 0..n-1, start at the ``start`` labelling, return the
highest-scoring end-of-sweep labelling and estimate marginals by label frequencies.

K-label generalisations (the papers treat binary variables):
- ``dhg``, ``beg``: *per-label bins*. Variable i keeps a weight ``w[i, k, b]`` for every label k
  and bin b of the probability axis; with conditional p (K,), label k uses bin
  b_k = min(floor(p_k B), B - 1) (the thesis' Algorithm 4.1, step 4, applied to each p_k). The
  weight vector herded at this update is (w[i, k, b_k])_k: i takes its argmax and each component
  moves by p_k - [label = k]. Memory n K B. For K = 2, b_0 = B - 1 - b_1 (except where p_1 B is
  an integer), so the pair behaves as the thesis' single binary weight of bin b_1.
- ``rdhg``: per-label grid points theta_m = m / B, m = 0..B, and p rounded at random to a vector
  q of multiples of 1/B that sums to 1 with E[q] = p: systematic rounding of the cumulative sums,
  R_k = floor(B (p_0 + ... + p_k) + u) with one uniform u per update, q_k = (R_k - R_{k-1}) / B.
  Each q_k is floor(p_k B) / B or the next grid point; label k uses w[i, k, B q_k], which herds
  towards the fixed q_k. For K = 2 this is exactly Algorithm 9 of the weight-sharing paper (Y = b
  with probability r = (theta_{b+1} - p) B).
- ``beg``: DHG's bins, with Algorithm 8 of the weight-sharing paper: herd (take the argmax) only
  when the largest component exceeds the threshold c, otherwise draw the label from p; the
  weights move as in DHG either way. Weights start at 0 (section 5.4), so for K = 2 the test
  max_k w_k > c is Algorithm 7's |w| > c.
"""

from __future__ import annotations

import math
from typing import Annotated

import numba
import numpy as np

from ..graph.factor_graph import FactorGraph
from .base import Decoder, Decoding, register
from .kernels import (
    BestLabelling,
    graph_arrays,
    initial_labels,
    keep_best,
    local_scores,
    pick,
    relabel,
    run_in_slices,
    sweep_stats,
    uniform_blocks,
)
from .settings import Bounds, Seed, Start, Sweeps, TimeLimit

DEFAULT_BINS = 15  # Eskelinen (2013), section 5.3: 15 bins converge well where 5 plateau early
DEFAULT_THRESHOLD = 1.0  # weight-sharing paper, Fig. 7 runs BEG with c = 1 and c = 10


@numba.njit(cache=True, nogil=True)
def _binned_sweeps(graph, best, labels, counts, weights, rule, uniforms, first_sweep,
                   sweeps):  # pragma: no cover - compiled
    """``sweeps`` sweeps of per-label-binned herded Gibbs (see the module docstring) on ``graph``
    (:class:`GraphArrays`).

    weights (n, K, nbins); ``rule`` = (randomised, threshold). ``randomised`` (rdhg) uses grid
    points m / B, nbins = B + 1, and ``uniforms[t, i]`` to round; otherwise (dhg, beg) bins of
    width 1 / B, nbins = B. The argmax decides when the largest component exceeds ``threshold``
    (-inf: always), else a draw from p with ``uniforms[t, i]``. ``uniforms`` is (sweeps, n), or
    (0, 0) when no draw is ever needed. Updates ``labels``, ``counts``, ``best`` (:class:`Tracked`)
    and ``weights`` in place; returns the updates decided by the argmax."""
    unary, ptr, node, table, columns = graph
    best_labels, component, component_ptr, component_nodes, tracked = best
    randomised, threshold = rule
    n, k = unary.shape
    bins = weights.shape[2] - 1 if randomised else weights.shape[2]
    scores = np.empty((1, k))
    p = np.empty(k)
    cumulative = np.empty(k)
    target = np.empty(k)
    slot = np.empty(k, np.int64)
    herded = 0
    for t in range(sweeps):
        for i in range(n):
            top = local_scores(i, unary, ptr, node, table, columns, labels, scores, 0)
            total = 0.0
            for b in range(k):
                p[b] = math.exp(scores[0, b] - top)
                total += p[b]
            for b in range(k):
                p[b] /= total
            if randomised:
                running = 0.0
                previous = 0
                for b in range(k):
                    running += p[b]
                    rounded = bins if b == k - 1 else min(int(math.floor(running * bins + uniforms[t, i])), bins)
                    slot[b] = rounded - previous
                    target[b] = slot[b] / bins
                    previous = rounded
            else:
                for b in range(k):
                    slot[b] = min(int(p[b] * bins), bins - 1)
                    target[b] = p[b]
            label = 0
            largest = weights[i, 0, slot[0]]
            for b in range(1, k):
                if weights[i, b, slot[b]] > largest:
                    label = b
                    largest = weights[i, b, slot[b]]
            if largest > threshold:
                herded += 1
            else:  # bounded-error Gibbs below its threshold: an ordinary Gibbs draw from p
                running = 0.0
                for b in range(k):
                    running += p[b]
                    cumulative[b] = running
                label = pick(cumulative, uniforms[t, i])
            for b in range(k):
                weights[i, b, slot[b]] += target[b]
            weights[i, label, slot[label]] -= 1.0
            if label != labels[i]:
                relabel(i, label, scores, 0, labels, component, tracked)
            counts[i, label] += 1.0
        keep_best(first_sweep + t, labels, best_labels, component_ptr, component_nodes, tracked)
    return herded


Bins = Annotated[int, Bounds(1, 1_000_000)]


class _BinnedHerding(Decoder):
    """Shared decode of ``dhg``, ``rdhg`` and ``beg``: subclasses set the bins' initial weights,
    whether p is rounded at random, the herding threshold and whether uniforms are drawn."""

    gives_marginals = True
    sweeps: int
    bins: int
    start: str
    time_limit: float | None
    seed: int | None = None  # the decoders that draw uniforms (rdhg, beg) take a seed
    _randomised: bool = False

    def _initial_weights(self) -> np.ndarray:
        """(nbins,) every variable's and label's starting weight in each bin."""
        return (np.arange(self.bins) + 0.5) / self.bins  # the bin centres

    def _threshold(self) -> float:
        return -math.inf

    def _rng(self) -> np.random.Generator | None:
        """The generator of the uniforms, None for a decoder without a seed (``dhg`` draws none)."""
        return None if self.seed is None else np.random.default_rng(self.seed)

    def decode(self, graph: FactorGraph) -> Decoding:
        n, k = graph.unary.shape
        arrays = graph_arrays(graph)
        initial = self._initial_weights()
        weights = np.empty((n, k, len(initial)))  # (a broadcast copy of no rows would be read-only)
        weights[:] = initial
        labels = initial_labels(graph, self.start)
        best = BestLabelling(graph, labels)
        counts = np.zeros((n, k))
        rng = self._rng()
        rule = (self._randomised, self._threshold())
        herded = 0

        def run(first: int, count: int) -> None:
            nonlocal herded
            for start, size, uniforms in uniform_blocks(rng, first, count, n):
                herded += _binned_sweeps(arrays, best.arrays, labels, counts, weights, rule, uniforms, start, size)

        done = run_in_slices(run, self.sweeps, n, self.time_limit)
        stats = {**sweep_stats(n, self.sweeps, done), **best.stats(graph),
                 "herded_fraction": herded / max(n * done, 1), "weight_bytes": int(weights.nbytes)}
        return Decoding(best.labels, counts / done, stats)


@register("dhg")
class DiscretizedHerdedGibbs(_BinnedHerding):
    """Discretized herded Gibbs (Eskelinen 2013, Algorithm 4.1; weight-sharing paper, section 2.4,
    Algorithm 5), generalised to K labels by per-label bins (module docstring). Deterministic.

    Each weight starts at its bin's centre (b + 1/2) / B: for K = 2 that is the binary weight
    theta - 1/2, the middle of herding's invariant interval (theta - 1, theta] for the bin's
    representative probability theta. The conditional p itself (not theta) drives the update, as
    in step 6 of Algorithm 4.1, so conditionals in one bin pull one weight in different
    directions: the estimate stops improving at a level set by B (thesis, section 5.3).

    Args:
        sweeps: passes over all variables (1..MAX_SWEEPS).
        bins: B, bins over each label's conditional probability (1..1,000,000).
        start: the first labelling: ``argmax`` of each unary, or ``viterbi`` of the chains (see
            :func:`~.kernels.initial_labels`).
        time_limit: seconds after which it stops cleanly with what it has (None: no limit).

    Returns the best end-of-sweep labelling, marginals (n, K) = label frequencies over all
    updates, and stats ``updates``, ``best_sweep``, ``best_score``, ``herded_fraction`` (1 here)
    and ``weight_bytes`` = 8 n K B.
    """

    summary = "discretized herded Gibbs: herding weights kept per bin of the conditional probability"

    def __init__(self, *, sweeps: Sweeps = 100, bins: Bins = DEFAULT_BINS, start: Start = "argmax",
                 time_limit: TimeLimit = None) -> None:
        self.sweeps = sweeps
        self.bins = bins
        self.start = start
        self.time_limit = time_limit


@register("rdhg")
class RandomlyDiscretizedHerdedGibbs(_BinnedHerding):
    """Randomly discretized herded Gibbs (weight-sharing paper, section 6.5, Algorithm 9),
    generalised to K labels by systematic random rounding of p to multiples of 1/B (module
    docstring). Weights herd towards the fixed grid points m / B, so the bias DHG gets from
    sharing a weight between different conditionals (D^approx) is gone; rounding adds noise
    that falls as T^-1/2 (D^bin).

    Each weight starts at its grid point m / B (for K = 2: theta_m - 1/2). The uniforms come
    from ``numpy.random.default_rng(seed)``, one per update, drawn in blocks of whole sweeps.

    Args:
        sweeps: passes over all variables (1..MAX_SWEEPS).
        bins: B; each label has B + 1 grid points 0, 1/B, ..., 1 (1..1,000,000).
        seed: seed of the random generator.
        start, time_limit: as ``dhg``'s.

    Returns as ``dhg``, with ``weight_bytes`` = 8 n K (B + 1).
    """

    summary = "randomly discretized herded Gibbs: binned herding with randomised rounding"

    _randomised = True

    def __init__(self, *, sweeps: Sweeps = 100, bins: Bins = DEFAULT_BINS, seed: Seed = 0, start: Start = "argmax",
                 time_limit: TimeLimit = None) -> None:
        self.sweeps = sweeps
        self.bins = bins
        self.seed = seed
        self.start = start
        self.time_limit = time_limit

    def _initial_weights(self) -> np.ndarray:
        return np.arange(self.bins + 1) / self.bins


@register("beg")
class BoundedErrorGibbs(_BinnedHerding):
    """Bounded-error Gibbs (weight-sharing paper, section 5.4, Algorithms 7 and 8) on DHG's
    per-label bins: a variable takes the argmax of its weights only when the largest exceeds
    ``threshold`` c, and is otherwise drawn from its conditional p; its weights move by
    p - onehot(label) either way, so every accumulated error |w| stays near c or below while most
    draws are random, which breaks the temporal correlation behind DHG's bias (D^cor). c = 0 is
    DHG (bar exact ties at 0), c = inf is Gibbs sampling.

    Weights start at 0 (section 5.4: then w is the accumulated error). The uniforms come from
    ``numpy.random.default_rng(seed)``, one per update, drawn in blocks of whole sweeps.

    Args:
        sweeps: passes over all variables (1..MAX_SWEEPS).
        bins: B, bins over each label's conditional probability (1..1,000,000).
        threshold: c >= 0.
        seed: seed of the random generator.
        start, time_limit: as ``dhg``'s.

    Returns as ``dhg``; ``herded_fraction`` is the share of updates decided by the argmax.
    """

    summary = "bounded-error Gibbs: binned herding that draws when the herding error passes a threshold"

    def __init__(self, *, sweeps: Sweeps = 100, bins: Bins = DEFAULT_BINS,
                 threshold: Annotated[float, Bounds(0, finite=False)] = DEFAULT_THRESHOLD, seed: Seed = 0,
                 start: Start = "argmax", time_limit: TimeLimit = None) -> None:
        self.sweeps = sweeps
        self.bins = bins
        self.threshold = threshold
        self.seed = seed
        self.start = start
        self.time_limit = time_limit

    def _initial_weights(self) -> np.ndarray:
        return np.zeros(self.bins)

    def _threshold(self) -> float:
        return self.threshold
