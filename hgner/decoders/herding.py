"""The herded-Gibbs family with shared weights: ``herded-shared``, ``dhg``, ``rdhg`` and ``beg``.

All of them are herded Gibbs (Bornn et al., Algorithm 1, with weight vectors in R^K) in which
one weight serves many blanket configurations ("weight sharing", Eskelinen 2013 and the
weight-sharing paper, section 3). Like ``gibbs`` and ``herded`` they scan the variables in the
order 0..n-1, start at the argmax of each unary, return the highest-scoring end-of-sweep
labelling and estimate marginals (n, K) by label frequencies over all updates.

K-label generalisations (the papers treat binary variables):

- ``herded-shared``: blankets that give variable i the same full conditional *by construction*
  share a weight vector: the key is the multiset of (table, neighbour label) pairs, where oriented
  tables equal in content are one table. On the Ising lattice (one symmetric table) this is the
  number of +1 neighbours, i.e. the paper's "sum of neighbour spins" (Bornn et al., section 4.2).
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

import numba
import numpy as np

from ..graph import FactorGraph
from .base import Decoder, Decoding, register
from .sampling import (
    _CHUNK_UNIFORMS,
    BestLabelling,
    HerdedGibbs,
    _check_seed,
    _check_sweeps,
    _columns,
    _initial_labels,
    _keep_best,
    _local_scores,
    _relabel,
)

DEFAULT_BINS = 15  # Eskelinen (2013), section 5.3: 15 bins converge well where 5 plateau early
DEFAULT_THRESHOLD = 1.0  # weight-sharing paper, Fig. 7 runs BEG with c = 1 and c = 10


def table_groups(graph: FactorGraph) -> np.ndarray:
    """(2P,) one id per distinct oriented table: ``adjacency.oriented`` tables equal in every
    entry (a table and its transpose when symmetric, or two equal edge tables) share an id."""
    oriented = graph.adjacency.oriented
    _, groups = np.unique(oriented.reshape(len(oriented), -1), axis=0, return_inverse=True)
    return groups.reshape(-1).astype(np.int64)


@register("herded-shared")
class SharedHerdedGibbs(HerdedGibbs):
    """Herded Gibbs with one weight vector per *distinct conditional* of each variable (Bornn et
    al., section 4.2, "shared herded Gibbs").

    Variable i's blanket is keyed by the multiset of (table group, neighbour label) pairs over its
    neighbours (see :func:`table_groups`): equal multisets add the same log-potentials, so give the
    same full conditional exactly, with no floating-point comparison. On a lattice whose edges
    share one symmetric table the key is the count of neighbours per label (5 weight vectors per
    degree-4 pixel instead of 16); on a skip-chain node whose skip edges share a table, the order
    of its skip neighbours no longer matters. The key is two sums of independent 64-bit hashes of
    the pairs, so two different multisets of one variable share a weight by accident with
    probability about 2**-127. Everything else (argmax, update, initial w0 = p, marginals, stats)
    is ``herded``'s.

    Args:
        sweeps: passes over all variables (>= 1).
    """

    def _groups(self, graph: FactorGraph) -> np.ndarray:
        return table_groups(graph)


@numba.njit(cache=True, nogil=True)
def _binned_sweeps(unary, ptr, node, table, columns, labels, counts, best_labels, component, component_ptr,
                   component_nodes, tracked, weights, randomised, threshold, uniforms,
                   first_sweep):  # pragma: no cover - compiled
    """``uniforms.shape[0]`` sweeps of per-label-binned herded Gibbs (see the module docstring).

    weights (n, K, nbins): ``randomised`` (rdhg) uses grid points m / B, nbins = B + 1, and
    ``uniforms[t, i]`` to round; otherwise (dhg, beg) bins of width 1 / B, nbins = B. The argmax
    decides when the largest component exceeds ``threshold`` (-inf: always), else a draw from p
    with ``uniforms[t, i]``. Updates ``labels``, ``counts``, ``best_labels``, ``tracked`` (see
    :class:`BestLabelling`) and ``weights`` in place; returns the updates decided by the argmax."""
    n, k = unary.shape
    bins = weights.shape[2] - 1 if randomised else weights.shape[2]
    scores = np.empty((1, k))
    p = np.empty(k)
    target = np.empty(k)
    slot = np.empty(k, np.int64)
    herded = 0
    for t in range(uniforms.shape[0]):
        for i in range(n):
            top = _local_scores(i, unary, ptr, node, table, columns, labels, scores, 0)
            total = 0.0
            for b in range(k):
                p[b] = math.exp(scores[0, b] - top)
                total += p[b]
            for b in range(k):
                p[b] /= total
            if randomised:
                cumulative = 0.0
                previous = 0
                for b in range(k):
                    cumulative += p[b]
                    rounded = bins if b == k - 1 else min(int(math.floor(cumulative * bins + uniforms[t, i])), bins)
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
                draw = uniforms[t, i]
                label = k - 1
                cumulative = 0.0
                for b in range(k - 1):
                    cumulative += p[b]
                    if draw < cumulative:
                        label = b
                        break
            for b in range(k):
                weights[i, b, slot[b]] += target[b]
            weights[i, label, slot[label]] -= 1.0
            if label != labels[i]:
                _relabel(i, label, scores, 0, labels, component, tracked)
            counts[i, label] += 1.0
        _keep_best(first_sweep + t, labels, best_labels, component_ptr, component_nodes, tracked)
    return herded


def _check_bins(bins: int) -> int:
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"bins must be an integer >= 1, got {bins!r}")
    return int(bins)


class _BinnedHerding(Decoder):
    """Shared decode of ``dhg``, ``rdhg`` and ``beg``: subclasses set the bins' initial weights,
    whether p is rounded at random, the herding threshold and whether uniforms are drawn."""

    sweeps: int
    bins: int
    _randomised: bool = False

    def _initial_weights(self) -> np.ndarray:
        """(nbins,) every variable's and label's starting weight in each bin."""
        return (np.arange(self.bins) + 0.5) / self.bins  # the bin centres

    def _threshold(self) -> float:
        return -math.inf

    def _rng(self) -> np.random.Generator | None:
        return None

    def decode(self, graph: FactorGraph) -> Decoding:
        n, k = graph.unary.shape
        adj = graph.adjacency
        columns = _columns(graph)
        initial = self._initial_weights()
        weights = np.ascontiguousarray(np.broadcast_to(initial, (n, k, len(initial))))
        labels = _initial_labels(graph)
        best = BestLabelling(graph, labels)
        counts = np.zeros((n, k))
        rng = self._rng()
        herded = 0
        block = self.sweeps if rng is None else max(1, _CHUNK_UNIFORMS // max(n, 1))
        for start in range(0, self.sweeps, block):
            size = min(block, self.sweeps - start)
            uniforms = np.empty((size, 0)) if rng is None else rng.random((size, n))
            herded += _binned_sweeps(
                graph.unary, adj.ptr, adj.node, adj.table, columns, labels, counts, best.labels, best.index,
                best.ptr, best.nodes, best.tracked, weights, self._randomised, self._threshold(), uniforms, start)
        stats = {"updates": n * self.sweeps, **best.stats(graph),
                 "herded_fraction": herded / max(n * self.sweeps, 1), "weight_bytes": int(weights.nbytes)}
        return Decoding(best.labels, counts / self.sweeps, stats)


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
        sweeps: passes over all variables (>= 1).
        bins: B, bins over each label's conditional probability (>= 1).

    Returns the best end-of-sweep labelling, marginals (n, K) = label frequencies over all
    updates, and stats ``updates``, ``best_sweep``, ``best_score``, ``herded_fraction`` (1 here)
    and ``weight_bytes`` = 8 n K B.
    """

    def __init__(self, *, sweeps: int = 100, bins: int = DEFAULT_BINS) -> None:
        self.sweeps = _check_sweeps(sweeps)
        self.bins = _check_bins(bins)


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
        sweeps: passes over all variables (>= 1).
        bins: B; each label has B + 1 grid points 0, 1/B, ..., 1 (>= 1).
        seed: seed of the random generator.

    Returns as ``dhg``, with ``weight_bytes`` = 8 n K (B + 1).
    """

    _randomised = True

    def __init__(self, *, sweeps: int = 100, bins: int = DEFAULT_BINS, seed: int = 0) -> None:
        self.sweeps = _check_sweeps(sweeps)
        self.bins = _check_bins(bins)
        self.seed = _check_seed(seed)

    def _initial_weights(self) -> np.ndarray:
        return np.arange(self.bins + 1) / self.bins

    def _rng(self) -> np.random.Generator:
        return np.random.default_rng(self.seed)


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
        sweeps: passes over all variables (>= 1).
        bins: B, bins over each label's conditional probability (>= 1).
        threshold: c >= 0.
        seed: seed of the random generator.

    Returns as ``dhg``; ``herded_fraction`` is the share of updates decided by the argmax.
    """

    def __init__(self, *, sweeps: int = 100, bins: int = DEFAULT_BINS, threshold: float = DEFAULT_THRESHOLD,
                 seed: int = 0) -> None:
        self.sweeps = _check_sweeps(sweeps)
        self.bins = _check_bins(bins)
        if (isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number))
                or math.isnan(threshold) or threshold < 0):
            raise ValueError(f"threshold must be a number >= 0, got {threshold!r}")
        self.threshold = float(threshold)
        self.seed = _check_seed(seed)

    def _initial_weights(self) -> np.ndarray:
        return np.zeros(self.bins)

    def _threshold(self) -> float:
        return self.threshold

    def _rng(self) -> np.random.Generator:
        return np.random.default_rng(self.seed)
