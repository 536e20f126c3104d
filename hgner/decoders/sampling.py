"""Sampling decoders on any factor graph: annealed Gibbs (``gibbs``) and herded Gibbs (``herded``).

Both scan the variables in the fixed order 0..n-1 (one pass is a *sweep*), start from the
argmax of each variable's unary, keep the score of the current labelling up to date from local
score differences, return the highest-scoring labelling among the states at the end of each
sweep, and estimate marginals by sample frequencies: every variable's label is counted after
each of its updates, over all sweeps (for the fixed scan this equals counting the end-of-sweep
states of Bornn et al.'s Definition 1).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ..graph import FactorGraph
from .base import Decoder, Decoding, register

SCHEDULES = ("linear", "exponential", "constant")
_CHUNK_UNIFORMS = 1 << 18  # Gibbs draws its uniforms in blocks of about this many (2 MiB)
_EMPTY = -1  # free slot in the herded hash index


def _columns(graph: FactorGraph) -> np.ndarray:
    """(2P, K, K) ``oriented`` with the neighbour's label first: ``[t, neighbour, own]``, so each
    neighbour adds one contiguous row to a variable's local scores."""
    return np.ascontiguousarray(graph.adjacency.oriented.transpose(0, 2, 1))


def _initial_labels(graph: FactorGraph) -> np.ndarray:
    """(n,) argmax of every variable's unary (ties to the lowest label)."""
    return np.argmax(graph.unary, axis=1).astype(np.int64)


def _check_sweeps(sweeps: int) -> int:
    if isinstance(sweeps, bool) or not isinstance(sweeps, (int, np.integer)) or sweeps < 1:
        raise ValueError(f"sweeps must be an integer >= 1, got {sweeps!r}")
    return int(sweeps)


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


# ----------------------------------------------------------------------------- shared kernels


@numba.njit(cache=True, nogil=True)
def _local_scores(i, unary, ptr, node, table, columns, labels, out, row):  # pragma: no cover - compiled
    """Fill ``out[row]`` (K,) with variable ``i``'s log-potentials given its neighbours' labels;
    returns their maximum. (Kernels pass 2-D arrays and row indices, never row views, which cost
    reference counting.)"""
    k = unary.shape[1]
    for b in range(k):
        out[row, b] = unary[i, b]
    for s in range(ptr[i], ptr[i + 1]):
        t = table[s]
        j = labels[node[s]]
        for b in range(k):
            out[row, b] += columns[t, j, b]
    top = out[row, 0]
    for b in range(1, k):
        top = max(top, out[row, b])
    return top


@numba.njit(cache=True, nogil=True)
def _relabel(i, label, scores, row, labels, component, tracked):  # pragma: no cover - compiled
    """Change ``labels[i]`` to ``label`` and update the score of i's component, ``tracked[0,
    component[i]]``, from ``scores[row]`` (K,), i's local log-scores. Kernels call it only when the
    label changes and count labels inline: a numba call taking arrays costs more than a herded
    update (measured ~3x slower when called on every update)."""
    tracked[0, component[i]] += scores[row, label] - scores[row, labels[i]]
    labels[i] = label


@numba.njit(cache=True, nogil=True)
def _keep_best(sweep, labels, best_labels, ptr, nodes, tracked):  # pragma: no cover - compiled
    """End of a sweep: for every connected component c (variables ``nodes[ptr[c]:ptr[c+1]]``)
    whose current score ``tracked[0, c]`` beats its best ``tracked[1, c]`` by more than the
    rounding drift of the incrementally kept score (relative 1e-9), copy its labels into
    ``best_labels`` and record the sweep in ``tracked[2, c]`` (-1 before the first sweep)."""
    for c in range(tracked.shape[1]):
        if tracked[2, c] < 0 or tracked[0, c] > tracked[1, c] + 1e-9 * (1.0 + abs(tracked[1, c])):
            for j in range(ptr[c], ptr[c + 1]):
                best_labels[nodes[j]] = labels[nodes[j]]
            tracked[1, c] = tracked[0, c]
            tracked[2, c] = sweep


class BestLabelling:
    """The best end-of-sweep labelling, kept per connected component: the score is a sum over
    components, so combining each component's best sweep gives a labelling that scores at least as
    well as every visited state (on a chain, each sentence keeps its own best sample).

    ``labels`` (n,) holds the combination; ``tracked`` (3, C) the current score, best score and
    best sweep of each component, updated in place by :func:`_relabel` and :func:`_keep_best`."""

    def __init__(self, graph: FactorGraph, labels: np.ndarray) -> None:
        components = graph.components
        self.ptr, self.nodes, self.index = components.ptr, components.nodes, components.index
        self.labels = labels.copy()
        self.tracked = np.zeros((3, len(self.ptr) - 1))
        self.tracked[0] = graph.component_scores(labels)
        self.tracked[2] = -1.0

    def stats(self, graph: FactorGraph) -> dict[str, float]:
        """``best_score`` of the combination and ``best_sweep``, the last sweep that improved a component."""
        last = int(self.tracked[2].max()) if self.tracked.shape[1] else -1
        return {"best_score": graph.score(self.labels), "best_sweep": last}


# ----------------------------------------------------------------------------- annealed Gibbs


@numba.njit(cache=True, nogil=True)
def _gibbs_sweeps(unary, ptr, node, table, columns, labels, counts, best_labels, component, component_ptr,
                  component_nodes, tracked, uniforms, temperatures, first_sweep):  # pragma: no cover - compiled
    """Run ``len(temperatures)`` sweeps; ``uniforms`` (sweeps, n) drive the draws. Updates
    ``labels``, ``counts``, ``best_labels`` and ``tracked`` (see :class:`BestLabelling`) in place."""
    n, k = unary.shape
    scores = np.empty((1, k))
    weights = np.empty(k)
    for t in range(temperatures.shape[0]):
        inverse = 1.0 / temperatures[t]
        for i in range(n):
            top = _local_scores(i, unary, ptr, node, table, columns, labels, scores, 0)
            total = 0.0
            for b in range(k):
                total += math.exp((scores[0, b] - top) * inverse)
                weights[b] = total
            target = uniforms[t, i] * total
            label = 0
            while label < k - 1 and weights[label] <= target:
                label += 1
            while label > 0 and weights[label] == weights[label - 1]:
                label -= 1  # rounding landed on a label of probability 0 (at a very low temperature)
            if label != labels[i]:
                _relabel(i, label, scores, 0, labels, component, tracked)
            counts[i, label] += 1.0
        _keep_best(first_sweep + t, labels, best_labels, component_ptr, component_nodes, tracked)


def temperatures(schedule: str, initial: float, sweeps: int) -> np.ndarray:
    """(sweeps,) temperature of each sweep: ``linear`` falls as initial * (sweeps - t) / sweeps,
    ``exponential`` falls geometrically from ``initial`` to the same last value initial / sweeps,
    ``constant`` stays at ``initial`` (plain Gibbs sampling)."""
    t = np.arange(sweeps, dtype=np.float64)
    if schedule == "linear":
        return initial * (sweeps - t) / sweeps
    if schedule == "exponential":
        return initial * (1.0 / sweeps) ** (t / max(sweeps - 1, 1))
    return np.full(sweeps, float(initial))


@register("gibbs")
class AnnealedGibbs(Decoder):
    """Gibbs sampling with a cooling schedule, as in Stanford NER (Finkel et al., 2005).

    Each sweep resamples every variable, in order 0..n-1, from its full conditional at the sweep's
    temperature T: p ∝ exp(local_scores / T). The walk starts at the argmax of each unary. The
    uniforms come from ``numpy.random.default_rng(seed)``, drawn in blocks of whole sweeps; the
    stream does not depend on the block size, so with ``schedule="constant"`` a run of T sweeps is
    the prefix of any longer run with the same seed.

    Args:
        sweeps: passes over all variables (>= 1).
        seed: seed of the random generator.
        schedule: ``linear``, ``exponential`` or ``constant`` (see :func:`temperatures`).
        initial_temperature: temperature of the first sweep (> 0), and of every sweep if constant.

    Returns the best end-of-sweep labelling, marginals (n, K) = label frequencies over all
    updates, and stats ``updates``, ``best_sweep`` (0-based), ``best_score``, ``final_temperature``.
    """

    def __init__(self, *, sweeps: int = 100, seed: int = 0, schedule: str = "linear",
                 initial_temperature: float = 1.0) -> None:
        self.sweeps = _check_sweeps(sweeps)
        self.seed = _check_seed(seed)
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
        if (isinstance(initial_temperature, bool) or not isinstance(initial_temperature, (int, float, np.number))
                or not math.isfinite(initial_temperature) or initial_temperature <= 0):
            raise ValueError(f"initial_temperature must be a finite number > 0, got {initial_temperature!r}")
        self.schedule = schedule
        self.initial_temperature = float(initial_temperature)

    def decode(self, graph: FactorGraph) -> Decoding:
        n, k = graph.unary.shape
        adj = graph.adjacency
        columns = _columns(graph)
        rng = np.random.default_rng(self.seed)
        temps = temperatures(self.schedule, self.initial_temperature, self.sweeps)
        labels = _initial_labels(graph)
        best = BestLabelling(graph, labels)
        counts = np.zeros((n, k))
        block = max(1, _CHUNK_UNIFORMS // max(n, 1))
        for start in range(0, self.sweeps, block):
            chunk = temps[start:start + block]
            uniforms = rng.random((len(chunk), n))
            _gibbs_sweeps(graph.unary, adj.ptr, adj.node, adj.table, columns, labels, counts, best.labels,
                          best.index, best.ptr, best.nodes, best.tracked, uniforms, chunk, start)
        stats = {"updates": n * self.sweeps, **best.stats(graph), "final_temperature": float(temps[-1])}
        return Decoding(best.labels, counts / self.sweeps, stats)


# ----------------------------------------------------------------------------- herded Gibbs


@numba.njit(cache=True, nogil=True)
def _mix(h):  # pragma: no cover - compiled
    """The splitmix64 finaliser on a uint64."""
    h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


@numba.njit(cache=True, nogil=True)
def _hashed_key(i, ptr, node, labels):  # pragma: no cover - compiled
    """Key of variable ``i``'s blanket configuration when its mixed-radix code would not fit in
    62 bits: two independent 64-bit hashes of the neighbour labels (the second made even)."""
    h1 = np.uint64(0x243F6A8885A308D3)
    h2 = np.uint64(0x13198A2E03707344)
    for s in range(ptr[i], ptr[i + 1]):
        label = np.uint64(labels[node[s]])
        h1 = _mix(h1 + label + np.uint64(0x9E3779B97F4A7C15))
        h2 = _mix((h2 ^ label) * np.uint64(0xC2B2AE3D27D4EB4F) + np.uint64(0x165667B19E3779F9))
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
        h1 += _mix(code * np.uint64(0x9E3779B97F4A7C15) + np.uint64(0x243F6A8885A308D3))
        h2 += _mix((code ^ np.uint64(0x13198A2E03707344)) * np.uint64(0xC2B2AE3D27D4EB4F)
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
def _grow(weights, logs, slots, shift):  # pragma: no cover - compiled
    """Double the entry rows and the slots (re-inserting every key); returns them and the new shift."""
    entries = weights.shape[0]
    new_weights = np.empty((2 * entries, weights.shape[1]))
    new_weights[:entries] = weights
    new_logs = np.empty((2 * entries, logs.shape[1]))
    new_logs[:entries] = logs
    new_slots = np.full((2 * slots.shape[0], 4), _EMPTY, np.int64)
    shift -= 1
    for old in range(slots.shape[0]):
        if slots[old, 3] != _EMPTY:
            new_slots[_find(new_slots, shift, slots[old, 0], slots[old, 1], slots[old, 2])] = slots[old]
    return new_weights, new_logs, new_slots, shift


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


@numba.njit(cache=True, nogil=True)
def _herded(unary, ptr, node, table, columns, radix, groups, labels, counts, best_labels, component, component_ptr,
            component_nodes, tracked, sweeps, capacity):  # pragma: no cover - compiled
    """Herded Gibbs for ``sweeps`` sweeps from ``labels`` (updated in place, as are ``counts`` and
    ``best_labels``). With ``groups`` (2P,) non-empty, blankets are keyed by :func:`_multiset_key`
    (shared weights) instead of by configuration. Configuration entry e owns ``weights[e]`` =
    [w | p] (2K,) and ``logs[e]`` (K,) local log-scores; ``slots`` (open addressing, load <= 1/2) map keys to entries, and
    ``last`` (n, 3) remembers each variable's previous (key1, key2, entry), which skips the lookup
    when its blanket has not changed (it starts at (-1, -1, -1), which is no key: mixed-radix codes
    are >= 0 and hashed key2 is even). ``tracked``: see :class:`BestLabelling`. Returns (entries,
    bytes allocated)."""
    n, k = unary.shape
    weights = np.empty((capacity, 2 * k))
    logs = np.empty((capacity, k))
    slots = np.full((2 * capacity, 4), _EMPTY, np.int64)
    shift = 64 - int(np.log2(2 * capacity) + 0.5)  # capacity is a power of two
    last = np.full((n, 3), _EMPTY, np.int64)
    used = 0
    for t in range(sweeps):
        for i in range(n):
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
                        weights, logs, slots, shift = _grow(weights, logs, slots, shift)
                        s = _find(slots, shift, i, key1, key2)
                    e = used
                    used += 1
                    slots[s, 0] = i
                    slots[s, 1] = key1
                    slots[s, 2] = key2
                    slots[s, 3] = e
                    top = _local_scores(i, unary, ptr, node, table, columns, labels, logs, e)
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
                _relabel(i, label, logs, e, labels, component, tracked)
            counts[i, label] += 1.0
        _keep_best(t, labels, best_labels, component_ptr, component_nodes, tracked)
    return used, weights.nbytes + logs.nbytes + slots.nbytes + last.nbytes


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
    the paper's rule "x = 1 iff w > 0" is ties to the lower label.) The walk starts at the argmax
    of each unary.

    Only configurations actually visited are stored (at most one per update), in an
    open-addressing hash table whose entries also cache the configuration's conditional p and
    local log-scores, so a revisit costs a lookup (none when the blanket is unchanged since the
    variable's previous update), K additions and an argmax, and no exp. The key is the
    mixed-radix code of the neighbour labels (in adjacency order) when K**degree <= 2**62;
    otherwise two independent 64-bit hashes of them, so two different configurations of one
    variable collide (and share a weight vector) with probability about 2**-127 per pair.

    Args:
        sweeps: passes over all variables (>= 1).

    Returns the best end-of-sweep labelling, marginals (n, K) = label frequencies over all
    updates, and stats ``updates``, ``best_sweep`` (0-based), ``best_score``, ``weight_vectors``
    (configurations stored) and ``weight_bytes``: bytes *allocated* for the table (see
    :func:`table_bytes`); capacity doubles when full, so it is at most
    ``table_bytes(n, K, max(initial_capacity(n, sweeps), 2 * weight_vectors))``.
    """

    def __init__(self, *, sweeps: int = 100) -> None:
        self.sweeps = _check_sweeps(sweeps)

    def _groups(self, graph: FactorGraph) -> np.ndarray:
        """(2P,) group of each oriented table when blankets share weights (see ``herded-shared``);
        empty here: one weight vector per configuration."""
        return np.zeros(0, np.int64)

    def decode(self, graph: FactorGraph) -> Decoding:
        n, k = graph.unary.shape
        adj = graph.adjacency
        labels = _initial_labels(graph)
        best = BestLabelling(graph, labels)
        counts = np.zeros((n, k))
        used, nbytes = _herded(
            graph.unary, adj.ptr, adj.node, adj.table, _columns(graph), _radix_fits(graph), self._groups(graph),
            labels, counts, best.labels, best.index, best.ptr, best.nodes, best.tracked, self.sweeps,
            initial_capacity(n, self.sweeps))
        stats = {"updates": n * self.sweeps, **best.stats(graph), "weight_vectors": int(used), "weight_bytes": int(nbytes)}
        return Decoding(best.labels, counts / self.sweeps, stats)
