"""How sure an F1 is: a bootstrap interval over the corpus's documents (``hgner evaluate
--bootstrap B``), for a small labelled set (a user's 200 sentences) where one F1 figure hides
how much it would move on other text of the same kind.

Each of B resamples draws D documents with replacement from the corpus's D documents (its own, or
those ``--documents`` makes: ``sentence`` resamples sentences), adds up their entity counts
(correct, predicted, gold: micro-averaged, as the reported F1) and takes the F1. The interval is
the 2.5th and 97.5th percentiles of the B figures (the percentile bootstrap, 95%). Every run is
scored on the same resamples, so their intervals compare the runs on the same draws. It says how
much the F1 depends on which documents were labelled; it says nothing of text unlike them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..core.scoring import EntityCounts

LEVEL = 0.95
CHUNK = 100  # resamples drawn at once (a (CHUNK, D, 3) array)


def micro(counts: EntityCounts) -> tuple[int, int, int]:
    """(correct, predicted, gold) entities of ``counts``, every type together."""
    return sum(counts.correct.values()), sum(counts.predicted.values()), sum(counts.gold.values())


def span_counts(gold: Iterable[tuple[int, int, str]], predicted: Iterable[tuple[int, int, str]]) -> tuple[int, int, int]:
    """(correct, predicted, gold) entities of one document's gold and predicted spans."""
    counts = EntityCounts()
    counts.add(gold, predicted)
    return micro(counts)


def _f1(sums: np.ndarray) -> np.ndarray:
    """(R,) F1 in percent of (R, 3) (correct, predicted, gold) sums; 0 where nothing was predicted or gold."""
    denominator = sums[:, 1] + sums[:, 2]
    return np.where(denominator > 0, 200.0 * sums[:, 0] / np.maximum(denominator, 1), 0.0)


def f1_intervals(per_document: Sequence[np.ndarray], resamples: int,
                 rng: np.random.Generator) -> list[tuple[float, float]]:
    """For each run's (D, 3) per-document counts, the :data:`LEVEL` percentile interval of its F1
    over ``resamples`` bootstrap resamples of the D documents (the same resamples for every run)."""
    if not per_document or len(per_document[0]) == 0:
        return [(0.0, 0.0) for _ in per_document]
    size = len(per_document[0])
    figures: list[list[np.ndarray]] = [[] for _ in per_document]
    for start in range(0, resamples, CHUNK):
        drawn = rng.integers(0, size, size=(min(CHUNK, resamples - start), size))  # (R, D) document indices
        for run, counts in enumerate(per_document):
            figures[run].append(_f1(counts[drawn].sum(axis=1)))
    tail = 100 * (1 - LEVEL) / 2
    return [tuple(float(v) for v in np.percentile(np.concatenate(f), [tail, 100 - tail])) for f in figures]  # type: ignore[misc]
