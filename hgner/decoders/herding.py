"""The herded-Gibbs family: ``herded`` (Bornn et al., Algorithm 1) and, with shared weights,
``herded-shared``, ``dhg``, ``rdhg`` and ``beg``.

The variants are herded Gibbs (Bornn et al., Algorithm 1, with weight vectors in R^K) in which
one weight serves many blanket configurations ("weight sharing", Eskelinen 2013 and the
weight-sharing paper, section 3). Like ``gibbs`` and ``herded`` they scan the variables in the
order 0..n-1, start at the ``start`` labelling (each unary's argmax by default), return the
highest-scoring end-of-sweep labelling and estimate marginals (n, K) by label frequencies over
all updates.

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
from typing import Annotated, NamedTuple

import numba
import numpy as np

from ..graph import FactorGraph
from .base import Decoder, Decoding, register
from .kernels import BestLabelling, graph_arrays, initial_labels, keep_best, local_scores, mix, pick, relabel, \
    run_in_slices, sweep_stats, uniform_blocks
from .settings import Bounds, Seed, Start, Sweeps, TimeLimit

_EMPTY = -1  # free slot in the herded hash index
DEFAULT_BINS = 15  # Eskelinen (2013), section 5.3: 15 bins converge well where 5 plateau early
DEFAULT_THRESHOLD = 1.0  # weight-sharing paper, Fig. 7 runs BEG with c = 1 and c = 10



# ----------------------------------------------------------------------------- herded Gibbs


@numba.njit(cache=True, nogil=True)
def _hashed_key(i, ptr, node, labels):  # pragma: no cover - compiled
    """Key of variable ``i``'s blanket configuration when its mixed-radix code would not fit in
    62 bits: two independent 64-bit hashes of the neighbour labels (the second made even)."""
    h1 = np.uint64(0x243F6A8885A308D3)
    h2 = np.uint64(0x13198A2E03707344)
    for s in range(ptr[i], ptr[i + 1]):
        label = np.uint64(labels[node[s]])
        h1 = mix(h1 + label + np.uint64(0x9E3779B97F4A7C15))
        h2 = mix((h2 ^ label) * np.uint64(0xC2B2AE3D27D4EB4F) + np.uint64(0x165667B19E3779F9))
    return np.int64(h1), np.int64(h2 & ~np.uint64(1))  # even, so never -1


@numba.njit(cache=True, nogil=True)
def _multiset_key(i, ptr, node, table, groups, labels, k):  # pragma: no cover - compiled
    """Key of the *multiset* of (``groups[table]``, neighbour label) pairs around variable ``i``,
    whatever their order: two sums of independent 64-bit hashes of the pairs (the second made
    even). Blankets with equal multisets give i the same full conditional (weight sharing)."""
    h1 = np.uint64(0)
    h2 = np.uint64(0)
    for s in range(ptr[i], ptr[i + 1]):
        code = np.uint64(groups[table[s]] * k + labels[node[s]])
        h1 += mix(code * np.uint64(0x9E3779B97F4A7C15) + np.uint64(0x243F6A8885A308D3))
        h2 += mix((code ^ np.uint64(0x13198A2E03707344)) * np.uint64(0xC2B2AE3D27D4EB4F)
                   + np.uint64(0x165667B19E3779F9))
    return np.int64(h1), np.int64(h2 & ~np.uint64(1))  # even, so never -1


@numba.njit(cache=True, nogil=True)
def _find(slots, shift, i, key1, key2):  # pragma: no cover - compiled
    """Slot of key (i, key1, key2) in ``slots`` (2**(64 - shift), 4) = [variable, key1, key2,
    entry], or of the empty slot (entry -1) where it belongs; linear probing from a
    multiplicative hash."""
    h = (np.uint64(i) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(key1) * np.uint64(0xC2B2AE3D27D4EB4F)
         + np.uint64(key2) * np.uint64(0x165667B19E3779F9))
    h = (h ^ (h >> np.uint64(29))) * np.uint64(0xBF58476D1CE4E5B9)
    s = np.int64(h >> np.uint64(shift))
    mask = slots.shape[0] - 1
    while slots[s, 3] != _EMPTY and not (slots[s, 0] == i and slots[s, 1] == key1 and slots[s, 2] == key2):
        s = (s + 1) & mask
    return s


@numba.njit(cache=True, nogil=True)
def _rehash(slots, new_slots, shift):  # pragma: no cover - compiled
    """Insert every key of ``slots`` into the empty, twice as large ``new_slots`` with hash ``shift``."""
    for old in range(slots.shape[0]):
        if slots[old, 3] != _EMPTY:
            new_slots[_find(new_slots, shift, slots[old, 0], slots[old, 1], slots[old, 2])] = slots[old]


@numba.njit(cache=True, nogil=True)
def _start_weights(logs, weights, e, top):  # pragma: no cover - compiled
    """A new entry e: ``weights[e]`` = [p | p], p = softmax(logs[e]) (``top`` is their max):
    the herding start w0 = p."""
    k = logs.shape[1]
    total = 0.0
    for b in range(k):
        weights[e, k + b] = math.exp(logs[e, b] - top)
        total += weights[e, k + b]
    for b in range(k):
        weights[e, k + b] /= total
        weights[e, b] = weights[e, k + b]


class HerdingState(NamedTuple):
    """Herded Gibbs' weight table, kept between slices of sweeps: entry e owns ``weights[e]`` =
    [w | p] (2K,) and ``logs[e]`` (K,) local log-scores; ``slots`` (2 * entries, 4) map keys
    [variable, key1, key2, entry] to entries (open addressing, load <= 1/2); ``last`` (n, 3)
    remembers each variable's previous (key1, key2, entry), which skips the lookup when its
    blanket has not changed (it starts at (-1, -1, -1), which is no key: mixed-radix codes are
    >= 0 and hashed key2 is even); ``meta`` (2,) int64 = [entries used, hash shift]."""

    weights: np.ndarray
    logs: np.ndarray
    slots: np.ndarray
    last: np.ndarray
    meta: np.ndarray

    @classmethod
    def allocate(cls, n: int, k: int, capacity: int) -> HerdingState:
        """An empty table with room for ``capacity`` entries (a power of two)."""
        shift = 64 - int(np.log2(2 * capacity) + 0.5)
        return cls(np.empty((capacity, 2 * k)), np.empty((capacity, k)), np.full((2 * capacity, 4), _EMPTY, np.int64),
                   np.full((n, 3), _EMPTY, np.int64), np.array([0, shift], np.int64))

    @property
    def nbytes(self) -> int:
        return self.weights.nbytes + self.logs.nbytes + self.slots.nbytes + self.last.nbytes

    def grown(self) -> HerdingState:
        """The table with twice the entry rows and slots, every key re-inserted. (Done here, not in
        the kernel: a kernel that returns arrays can lose a Ctrl-C that arrives as it returns.)"""
        entries, k = self.logs.shape
        weights = np.empty((2 * entries, 2 * k))
        weights[:entries] = self.weights
        logs = np.empty((2 * entries, k))
        logs[:entries] = self.logs
        slots = np.full((2 * len(self.slots), 4), _EMPTY, np.int64)
        meta = np.array([self.meta[0], self.meta[1] - 1], np.int64)
        _rehash(self.slots, slots, meta[1])
        return HerdingState(weights, logs, slots, self.last, meta)


@numba.njit(cache=True, nogil=True)
def _herded_sweeps(graph, keys, best, labels, counts, state, position, stop):  # pragma: no cover - compiled
    """Herded Gibbs on ``graph`` (:class:`GraphArrays`) from update ``position`` (2,) = [sweep,
    variable] up to the end of sweep ``stop`` - 1, from ``labels`` (updated in place, as are
    ``counts``, ``best`` (a :class:`Tracked`), ``state`` (a :class:`HerdingState`) and
    ``position``). ``keys`` = (radix (n,), groups (2P,)): with ``groups`` non-empty, blankets are
    keyed by :func:`_multiset_key` (shared weights), else by configuration (mixed-radix code where
    ``radix[i]``, else hashed). Returns False when it stopped because the table is full (grow it
    and call again: it resumes at ``position``), True when it reached ``stop``."""
    unary, ptr, node, table, columns = graph
    radix, groups = keys
    best_labels, component, component_ptr, component_nodes, tracked = best
    weights, logs, slots, last, meta = state
    n, k = unary.shape
    used = meta[0]
    shift = meta[1]
    t = position[0]
    first = position[1]
    while t < stop:
        for i in range(first, n):
            if groups.shape[0]:
                key1, key2 = _multiset_key(i, ptr, node, table, groups, labels, k)
            elif radix[i]:  # the mixed-radix code of the neighbour labels (inline: hot)
                key1, key2 = 0, 0
                for a in range(ptr[i], ptr[i + 1]):
                    key1 = key1 * k + labels[node[a]]
            else:
                key1, key2 = _hashed_key(i, ptr, node, labels)
            if last[i, 0] == key1 and last[i, 1] == key2:
                e = last[i, 2]
            else:
                s = _find(slots, shift, i, key1, key2)
                e = slots[s, 3]
                if e == _EMPTY:
                    if used == weights.shape[0]:
                        meta[0] = used
                        position[0] = t
                        position[1] = i
                        return False
                    e = used
                    used += 1
                    slots[s, 0] = i
                    slots[s, 1] = key1
                    slots[s, 2] = key2
                    slots[s, 3] = e
                    top = local_scores(i, unary, ptr, node, table, columns, labels, logs, e)
                    _start_weights(logs, weights, e, top)
                last[i, 0] = key1
                last[i, 1] = key2
                last[i, 2] = e
            label = 0
            top = weights[e, 0]
            for b in range(1, k):
                if weights[e, b] > top:
                    label = b
                    top = weights[e, b]
            for b in range(k):
                weights[e, b] += weights[e, k + b]
            weights[e, label] -= 1.0
            if label != labels[i]:
                relabel(i, label, logs, e, labels, component, tracked)
            counts[i, label] += 1.0
        keep_best(t, labels, best_labels, component_ptr, component_nodes, tracked)
        first = 0
        t += 1
    meta[0] = used
    position[0] = t
    position[1] = 0
    return True


def _radix_fits(graph: FactorGraph) -> np.ndarray:
    """(n,) whether a variable's neighbour labels fit a mixed-radix code: K**degree <= 2**62."""
    degree = np.diff(graph.adjacency.ptr)
    return degree * math.log2(graph.n_labels) <= 62.0


def initial_capacity(n: int, sweeps: int) -> int:
    """Entries herded allocates up front: the power of two >= min(2n, n * sweeps), at least 16."""
    return 1 << max(4, (min(2 * n, n * sweeps) - 1).bit_length())


def table_bytes(n: int, k: int, entries: int) -> int:
    """Bytes herded allocates for ``entries`` entry rows (3K floats each), twice as many slots (4
    int64 each) and the (n, 3) int64 last-entry cache."""
    return entries * 3 * k * 8 + 2 * entries * 4 * 8 + n * 3 * 8


@register("herded")
class HerdedGibbs(Decoder):
    """Herded Gibbs (Bornn et al., Algorithm 1) with weight vectors in R^K; deterministic, not annealed.

    Every (variable i, configuration of i's neighbours' labels) met gets a weight vector w (K,);
    i takes argmax(w) (ties to the lowest label), then w += p - onehot(label), where p (K,) is i's
    full conditional given that configuration. A vector is allocated when its configuration is
    first met, initialised to w0 = p. (The paper starts the binary weight anywhere in
    (p1 - 1, p1]; for K = 2, w0 = p is the scalar w0 = p1 - 1/2, the middle of that interval, and
    the paper's rule "x = 1 iff w > 0" is ties to the lower label.) The walk starts at the
    ``start`` labelling.

    Only configurations actually visited are stored (at most one per update), in an
    open-addressing hash table whose entries also cache the configuration's conditional p and
    local log-scores, so a revisit costs a lookup (none when the blanket is unchanged since the
    variable's previous update), K additions and an argmax, and no exp. The key is the
    mixed-radix code of the neighbour labels (in adjacency order) when K**degree <= 2**62;
    otherwise two independent 64-bit hashes of them, so two different configurations of one
    variable collide (and share a weight vector) with probability about 2**-127 per pair.

    Args:
        sweeps: passes over all variables (1..MAX_SWEEPS).
        start: the first labelling: ``argmax`` of each unary, or ``viterbi`` of the chains (see
            :func:`~.kernels.initial_labels`).
        time_limit: seconds after which it stops cleanly with what it has (None: no limit).

    Returns the best end-of-sweep labelling, marginals (n, K) = label frequencies over all
    updates, and stats ``updates``, ``best_sweep`` (0-based), ``best_score``, ``weight_vectors``
    (configurations stored) and ``weight_bytes``: bytes *allocated* for the table (see
    :func:`table_bytes`); capacity doubles when full, so it is at most
    ``table_bytes(n, K, max(initial_capacity(n, sweeps), 2 * weight_vectors))``.
    """

    gives_marginals = True

    def __init__(self, *, sweeps: Sweeps = 100, start: Start = "argmax", time_limit: TimeLimit = None) -> None:
        self.sweeps = sweeps
        self.start = start
        self.time_limit = time_limit

    def _groups(self, graph: FactorGraph) -> np.ndarray:
        """(2P,) group of each oriented table when blankets share weights (see ``herded-shared``);
        empty here: one weight vector per configuration."""
        return np.zeros(0, np.int64)

    def decode(self, graph: FactorGraph) -> Decoding:
        n, k = graph.unary.shape
        arrays = graph_arrays(graph)
        keys = (_radix_fits(graph), self._groups(graph))
        labels = initial_labels(graph, self.start)
        best = BestLabelling(graph, labels)
        counts = np.zeros((n, k))
        state = HerdingState.allocate(n, k, initial_capacity(n, self.sweeps))
        position = np.zeros(2, np.int64)  # the next update: [sweep, variable]

        def run(first: int, count: int) -> None:
            nonlocal state
            while not _herded_sweeps(arrays, keys, best.arrays, labels, counts, state, position, first + count):
                state = state.grown()

        done = run_in_slices(run, self.sweeps, n, self.time_limit)
        stats = {**sweep_stats(n, self.sweeps, done), **best.stats(graph), "weight_vectors": int(state.meta[0]),
                 "weight_bytes": int(state.nbytes)}
        return Decoding(best.labels, counts / done, stats)


# ----------------------------------------------------------------------------- shared weights


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

    Settings as ``herded``'s.
    """

    def _groups(self, graph: FactorGraph) -> np.ndarray:
        return table_groups(graph)


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
