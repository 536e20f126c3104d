"""What the sampling decoders share: the graph as one tuple of arrays, local scores, the
categorical draw, per-component best-labelling tracking, and running kernels in slices of sweeps.

Kernels take grouped arguments: a :class:`GraphArrays` for the graph and a :class:`Tracked` for
the best labelling, unpacked once at the top of the kernel; the small helpers they call take
plain arrays (a numba call taking arrays costs reference counting per array).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterator
from typing import NamedTuple

import numba
import numpy as np

from ..core.deadline import check_stop
from ..graph.factor_graph import FactorGraph
from .chain import viterbi

SLICE_UPDATES = 1 << 16  # variable updates in a kernel's first slice (then sized by time)
SLICE_SECONDS = 0.1  # target length of one slice: Ctrl-C and time limits are checked between slices
CHUNK_UNIFORMS = 1 << 18  # samplers draw their uniforms in blocks of about this many (2 MiB)


class GraphArrays(NamedTuple):
    """A :class:`FactorGraph` as kernels see it: ``unary`` (n, K), the adjacency ``ptr`` (n + 1,),
    ``node`` (2m,), ``table`` (2m,) (see :class:`~hgner.graph.factor_graph.Adjacency`) and ``columns`` (2P, K, K),
    the oriented tables indexed [table, neighbour label, own label], so each neighbour adds one
    contiguous row to a variable's local scores."""

    unary: np.ndarray
    ptr: np.ndarray
    node: np.ndarray
    table: np.ndarray
    columns: np.ndarray


def graph_arrays(graph: FactorGraph) -> GraphArrays:
    adj = graph.adjacency
    columns = np.ascontiguousarray(adj.oriented.transpose(0, 2, 1))
    return GraphArrays(graph.unary, adj.ptr, adj.node, adj.table, columns)


def initial_labels(graph: FactorGraph, start: str) -> np.ndarray:
    """(n,) a sampler's first labelling (the ``start`` setting, :data:`~.settings.Start`):
    ``argmax``, every variable's best unary label (ties to the lowest); ``viterbi``, the best
    labelling of the graph's chains with its skip edges left out (Finkel et al. 2005; Stanford
    NER's Gibbs sampler starts there by default, ``initViterbi``). On a chain graph ``viterbi``
    is already the MAP, so only ``argmax`` makes a sampler search."""
    if start == "viterbi":
        return viterbi(graph.chain_part()).astype(np.int64)
    return np.argmax(graph.unary, axis=1).astype(np.int64)


# ----------------------------------------------------------------------------- compiled helpers


@numba.njit(cache=True, nogil=True)
def local_scores(i, unary, ptr, node, table, columns, labels, out, row):  # pragma: no cover - compiled
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
def pick(cumulative, target):  # pragma: no cover - compiled
    """The categorical draw: the first label whose running weight ``cumulative`` (K,) exceeds
    ``target`` (a uniform times the total weight), never a label of weight 0 (which rounding could
    land on when weights underflow)."""
    k = cumulative.shape[0]
    label = 0
    while label < k - 1 and cumulative[label] <= target:
        label += 1
    while label > 0 and cumulative[label] == cumulative[label - 1]:
        label -= 1
    return label


@numba.njit(cache=True, nogil=True)
def draw(scores, top, inverse, weights, uniform):  # pragma: no cover - compiled
    """A label drawn with probability proportional to exp((scores - top) * inverse), where
    ``scores`` (K,) are log-weights, ``top`` their maximum and ``inverse`` an inverse temperature,
    by ``uniform`` in [0, 1); ``weights`` (K,) is scratch."""
    total = 0.0
    for b in range(scores.shape[0]):
        total += math.exp((scores[b] - top) * inverse)
        weights[b] = total
    return pick(weights, uniform * total)


@numba.njit(cache=True, nogil=True)
def mix(h):  # pragma: no cover - compiled
    """The splitmix64 finaliser on a uint64."""
    h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


@numba.njit(cache=True, nogil=True)
def relabel(i, label, scores, row, labels, component, tracked):  # pragma: no cover - compiled
    """Change ``labels[i]`` to ``label`` and update the score of i's component, ``tracked[0,
    component[i]]``, from ``scores[row]`` (K,), i's local log-scores. Kernels call it only when the
    label changes and count labels inline: a numba call taking arrays costs more than a herded
    update (measured ~3x slower when called on every update)."""
    tracked[0, component[i]] += scores[row, label] - scores[row, labels[i]]
    labels[i] = label


@numba.njit(cache=True, nogil=True)
def keep_best(sweep, labels, best_labels, ptr, nodes, tracked):  # pragma: no cover - compiled
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


# ----------------------------------------------------------------------------- best labelling


class Tracked(NamedTuple):
    """The arrays of a :class:`BestLabelling`, as kernels take them: ``labels`` (n,) the best
    combination, ``component`` (n,) each variable's component, ``ptr`` (C + 1,) and ``nodes`` (n,)
    the components' variables, ``tracked`` (3, C) current score, best score and best sweep."""

    labels: np.ndarray
    component: np.ndarray
    ptr: np.ndarray
    nodes: np.ndarray
    tracked: np.ndarray


class BestLabelling:
    """The best end-of-sweep labelling, kept per connected component: the score is a sum over
    components, so combining each component's best sweep gives a labelling that scores at least as
    well as every visited state (on a chain, each sentence keeps its own best sample).

    ``labels`` (n,) holds the combination; ``tracked`` (3, C) the current score, best score and
    best sweep of each component, updated in place by :func:`relabel` and :func:`keep_best`."""

    def __init__(self, graph: FactorGraph, labels: np.ndarray) -> None:
        components = graph.components
        tracked = np.zeros((3, len(components.ptr) - 1))
        tracked[0] = graph.component_scores(labels)
        tracked[2] = -1.0
        self.arrays = Tracked(labels.copy(), components.index, components.ptr, components.nodes, tracked)
        self.labels = self.arrays.labels

    def stats(self, graph: FactorGraph) -> dict[str, float]:
        """``best_score`` of the combination and ``best_sweep``, the last sweep that improved a component."""
        tracked = self.arrays.tracked
        last = int(tracked[2].max()) if tracked.shape[1] else -1
        return {"best_score": graph.score(self.labels), "best_sweep": last}


# ----------------------------------------------------------------------------- slices of sweeps


def uniform_blocks(rng: np.random.Generator | None, first: int, count: int,
                   n: int) -> Iterator[tuple[int, int, np.ndarray]]:
    """Sweeps ``first .. first + count - 1`` in blocks of about :data:`CHUNK_UNIFORMS` uniforms:
    ``(first sweep, sweeps in the block, uniforms (sweeps, n))``; with no ``rng`` (a deterministic
    sampler) the uniforms are an empty (0, 0) array."""
    block = max(1, CHUNK_UNIFORMS // max(n, 1))
    for start in range(first, first + count, block):
        size = min(block, first + count - start)
        yield start, size, np.empty((0, 0)) if rng is None else rng.random((size, n))


def run_in_slices(run: Callable[[int, int], object], sweeps: int, n: int, time_limit: float | None) -> int:
    """Call ``run(first_sweep, count)`` on consecutive slices of sweeps 0..sweeps-1 and return how
    many sweeps ran. The first slice has about :data:`SLICE_UPDATES` updates of the ``n``
    variables; later ones double or halve towards :data:`SLICE_SECONDS`, so the interpreter gets
    control back several times a second: Ctrl-C (KeyboardInterrupt) stops a compiled kernel
    within a second, and with ``time_limit`` (seconds) no slice starts after it has passed (at
    least one sweep runs). Without a time limit the slicing never changes a result: every kernel
    resumes exactly where the previous slice stopped."""
    from tqdm import tqdm

    deadline = None if time_limit is None else time.perf_counter() + time_limit
    size = max(1, SLICE_UPDATES // max(n, 1))
    done = 0
    with tqdm(total=sweeps, unit="sweep", desc="decoding", file=sys.stderr, leave=False, delay=PROGRESS_AFTER_SECONDS,
              disable=not _on_terminal(), unit_scale=True) as bar:
        while done < sweeps:
            count = min(size, sweeps - done)
            started = time.perf_counter()
            run(done, count)
            done += count
            bar.update(count)
            check_stop()  # the request this decode is for has passed its deadline (hgner serve)
            now = time.perf_counter()
            if deadline is not None and now >= deadline:
                break
            if now - started < SLICE_SECONDS / 2:
                size *= 2
            elif now - started > 2 * SLICE_SECONDS:
                size = max(1, size // 2)
    return done


PROGRESS_AFTER_SECONDS = 2.0  # a decode that runs longer shows a bar of its sweeps on a terminal


def _on_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def sweep_stats(n: int, sweeps: int, done: int) -> dict[str, float]:
    """``updates`` made and, when a time limit cut the run short, ``stopped_at_sweep``."""
    return {"updates": n * done, **({} if done == sweeps else {"stopped_at_sweep": float(done)})}
