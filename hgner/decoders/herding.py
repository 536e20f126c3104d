"""The herded-Gibbs decoders: ``herded`` (Bornn et al., Algorithm 1) and, with weights shared by
the blanket configurations that give a variable the same full conditional, ``herded-shared``;
the binned variants ``dhg``, ``rdhg`` and ``beg`` are :mod:`hgner.decoders.herding_bins`'s.

They scan the variables in the order 0..n-1, start at the ``start`` labelling (each unary's
argmax by default), return the highest-scoring end-of-sweep labelling and estimate marginals
(n, K) by label frequencies over all updates.

- ``herded-shared``: blankets that give variable i the same full conditional *by construction*
  share a weight vector: the key is the multiset of (table, neighbour label) pairs, where oriented
  tables equal in content are one table. On the Ising lattice (one symmetric table) this is the
  number of +1 neighbours, i.e. the paper's "sum of neighbour spins" (Bornn et al., section 4.2).
"""

from __future__ import annotations

import math
from typing import NamedTuple

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
    mix,
    relabel,
    run_in_slices,
    sweep_stats,
)
from .settings import Start, Sweeps, TimeLimit

_EMPTY = -1  # free slot in the herded hash index



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

    summary = "herded Gibbs (Bornn et al.): deterministic herding weights per variable and neighbour configuration"

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

    summary = "herded Gibbs whose variables of one word share their weight tables"

    def _groups(self, graph: FactorGraph) -> np.ndarray:
        return table_groups(graph)
