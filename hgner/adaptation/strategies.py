"""Selection strategies, registered by name in :data:`strategies` (a catalogue registry, entry-point
group ``hgner_selection_strategies``). A strategy scores every sentence of the pool from its
:class:`~hgner.adaptation.signals.Signals` (higher: more worth labelling) and says how much the
ranking gives way to diversity (:func:`hgner.adaptation.diversity.pick`): 0 takes the scores in
order, skipping near-copies of sentences already taken; the baseline ``random`` keeps a plain
random draw of distinct sentences."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core import registry
from .signals import Signals

strategies = registry.Registry("selection_strategies", "selection strategy", ("hgner.adaptation.strategies",))


@dataclass(frozen=True)
class Strategy:
    """How to rank a pool of C sentences: ``score(signals, C, rng) -> (C,)`` (higher first; the
    signals are None when it does not use them), the weight of diversity
    against it (scores rescaled to ranks in [0, 1] when above 0), whether near-copies of a chosen
    sentence are skipped, whether it reads the decoders' signals at all, and whether it reads the
    Gibbs decoders' disagreement (herded and annealed Gibbs decode the pool only when one does)."""

    summary: str
    score: Callable[[Signals | None, int, np.random.Generator], np.ndarray]
    diversity: float = 0.0
    skip_near_copies: bool = True
    uses_signals: bool = True
    uses_rivals: bool = True


def register(name: str, strategy: Strategy) -> None:
    strategies.register(name, func=strategy)


def strategy(name: str) -> Strategy:
    """The strategy registered as ``name``; :class:`~hgner.core.errors.UnknownNameError` lists them."""
    return registry.lookup(strategies, name)


def available_strategies() -> list[str]:
    return registry.names(strategies)


def ranks(values: np.ndarray) -> np.ndarray:
    """(C,) ``values`` as ranks scaled to (0, 1], ties in pool order (numpy's stable sort: scipy.stats
    would add a second to every start)."""
    ranked = np.empty(len(values))
    ranked[np.argsort(values, kind="stable")] = np.arange(1, len(values) + 1)
    return ranked / max(len(values), 1)


def _given(signals: Signals | None) -> Signals:
    assert signals is not None  # (computed for every strategy that uses them)
    return signals


def uncertainty(signals: Signals) -> np.ndarray:
    """(C,) the mean of the ranks of the three signals: entropy, entity margins, disagreement."""
    return (ranks(signals.entropy) + ranks(signals.margin) + ranks(signals.disagreement)) / 3


register("random", Strategy("a random draw of distinct sentences (the baseline; the seed chooses it)",
                            lambda signals, size, rng: rng.random(size), skip_near_copies=False,
                            uses_signals=False))
register("entropy", Strategy("the largest total token entropy of Viterbi's marginals",
                             lambda signals, size, rng: _given(signals).entropy, uses_rivals=False))
register("margin", Strategy("the smallest entity-confidence margins (summed over entities and other tokens)",
                            lambda signals, size, rng: _given(signals).margin, uses_rivals=False))
register("disagreement", Strategy("the most tokens where herded and annealed Gibbs disagree with Viterbi",
                                  lambda signals, size, rng: _given(signals).disagreement))
register("diverse", Strategy("the three signals' mean rank, each pick traded against its likeness to those taken",
                             lambda signals, size, rng: uncertainty(_given(signals)), diversity=0.5))
