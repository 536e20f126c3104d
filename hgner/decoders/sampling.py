"""Annealed Gibbs sampling (``gibbs``) on any factor graph.

It scans the variables in the fixed order 0..n-1 (one pass is a *sweep*), starts from the argmax
of each variable's unary (or, with ``start="viterbi"``, from the chains' Viterbi labelling), keeps
the score of the current labelling up to date from local score differences and returns the
highest-scoring labelling among the states at the end of each sweep. At constant temperature it
estimates marginals by sample frequencies: every variable's label is counted after each of its
updates, over all sweeps. Herded Gibbs and its variants are in
:mod:`hgner.decoders.herding`.
"""

from __future__ import annotations

from typing import Literal

import numba
import numpy as np

from ..graph.factor_graph import FactorGraph
from .base import Decoder, Decoding, register
from .kernels import (
    BestLabelling,
    draw,
    graph_arrays,
    initial_labels,
    keep_best,
    local_scores,
    relabel,
    run_in_slices,
    sweep_stats,
    uniform_blocks,
)
from .settings import Seed, Start, Sweeps, Temperature, TimeLimit


@numba.njit(cache=True, nogil=True)
def _gibbs_sweeps(graph, best, labels, counts, uniforms, temperatures, first_sweep):  # pragma: no cover - compiled
    """Run ``len(temperatures)`` sweeps on ``graph`` (:class:`GraphArrays`); ``uniforms`` (sweeps, n)
    drive the draws. Updates ``labels``, ``counts`` (n, K) and ``best`` (:class:`Tracked`) in place."""
    unary, ptr, node, table, columns = graph
    best_labels, component, component_ptr, component_nodes, tracked = best
    n, k = unary.shape
    scores = np.empty((1, k))
    weights = np.empty(k)
    for t in range(temperatures.shape[0]):
        inverse = 1.0 / temperatures[t]
        for i in range(n):
            top = local_scores(i, unary, ptr, node, table, columns, labels, scores, 0)
            label = draw(scores[0], top, inverse, weights, uniforms[t, i])
            if label != labels[i]:
                relabel(i, label, scores, 0, labels, component, tracked)
            counts[i, label] += 1.0
        keep_best(first_sweep + t, labels, best_labels, component_ptr, component_nodes, tracked)


def temperatures(schedule: str, initial: float, sweeps: int, start: int = 0, stop: int | None = None) -> np.ndarray:
    """(stop - start,) temperature of sweeps start..stop-1 (default all ``sweeps``): ``linear``
    falls as initial * (sweeps - t) / sweeps, ``exponential`` falls geometrically from ``initial``
    to the same last value initial / sweeps, ``constant`` stays at ``initial`` (plain Gibbs
    sampling). Computed per slice, so no array grows with ``sweeps``."""
    t = np.arange(start, sweeps if stop is None else stop, dtype=np.float64)
    if schedule == "linear":
        return initial * (sweeps - t) / sweeps
    if schedule == "exponential":
        return initial * (1.0 / sweeps) ** (t / max(sweeps - 1, 1))
    return np.full(len(t), float(initial))


@register("gibbs")
class AnnealedGibbs(Decoder):
    """Gibbs sampling with a cooling schedule, as in Stanford NER (Finkel et al., 2005).

    Each sweep resamples every variable, in order 0..n-1, from its full conditional at the sweep's
    temperature T: p ∝ exp(local_scores / T), from the ``start`` labelling. The
    uniforms come from ``numpy.random.default_rng(seed)``, drawn in blocks of whole sweeps; the
    stream does not depend on the block size, so with ``schedule="constant"`` a run of T sweeps is
    the prefix of any longer run with the same seed.

    Marginals only with ``schedule="constant"`` (then it samples the model itself): the label
    frequencies of an annealed run describe the cooling walk, not the model, so they are None.

    Args:
        sweeps: passes over all variables (1..MAX_SWEEPS).
        seed: seed of the random generator.
        schedule: ``linear``, ``exponential`` or ``constant`` (see :func:`temperatures`).
        initial_temperature: temperature of the first sweep (>= 1e-6), and of every sweep if constant.
        start: the first labelling: ``argmax`` of each unary, or ``viterbi`` of the chains (see
            :func:`~.kernels.initial_labels`).
        time_limit: seconds after which it stops cleanly with what it has (None: no limit).

    Returns the best end-of-sweep labelling, marginals (n, K) = label frequencies over all
    updates (constant schedule only), and stats ``updates``, ``best_sweep`` (0-based),
    ``best_score``, ``final_temperature`` (and ``stopped_at_sweep`` when the time limit hit).
    """

    summary = "annealed Gibbs sampling with a cooling schedule, as Stanford NER decodes"

    def __init__(self, *, sweeps: Sweeps = 100, seed: Seed = 0,
                 schedule: Literal["linear", "exponential", "constant"] = "linear",
                 initial_temperature: Temperature = 1.0, start: Start = "argmax",
                 time_limit: TimeLimit = None) -> None:
        self.sweeps = sweeps
        self.seed = seed
        self.schedule = schedule
        self.initial_temperature = initial_temperature
        self.start = start
        self.time_limit = time_limit

    @property
    def gives_marginals(self) -> bool:  # type: ignore[override]
        return self.schedule == "constant"

    def decode(self, graph: FactorGraph) -> Decoding:
        n, k = graph.unary.shape
        arrays = graph_arrays(graph)
        rng = np.random.default_rng(self.seed)
        labels = initial_labels(graph, self.start)
        best = BestLabelling(graph, labels)
        counts = np.zeros((n, k))

        def run(first: int, count: int) -> None:
            for start, size, uniforms in uniform_blocks(rng, first, count, n):
                chunk = temperatures(self.schedule, self.initial_temperature, self.sweeps, start, start + size)
                _gibbs_sweeps(arrays, best.arrays, labels, counts, uniforms, chunk, start)

        done = run_in_slices(run, self.sweeps, n, self.time_limit)
        final = temperatures(self.schedule, self.initial_temperature, self.sweeps, done - 1, done)
        stats = {**sweep_stats(n, self.sweeps, done), **best.stats(graph), "final_temperature": float(final[0])}
        return Decoding(best.labels, counts / done if self.gives_marginals else None, stats)
