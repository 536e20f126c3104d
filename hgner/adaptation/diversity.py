"""Diversity: the N sentences chosen should not be near-copies of one another.

Each sentence is a TF-IDF vector of its lowercased words and word bigrams (scikit-learn), so
cosine likeness counts shared content, rare words most. Picking is greedy (maximal marginal
relevance): each step takes the sentence of highest ``score - weight * likeness``, its likeness
being its largest cosine to a sentence already taken; one at least :data:`NEAR_COPY` alike to a
taken sentence is a near-copy and is skipped while others remain. Sentences already labelled
(``hgner select --exclude``) count as taken from the start."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

NEAR_COPY = 0.8  # cosine likeness at which a sentence counts as a near-copy of one taken
CHUNK_ROWS = 64  # rows of sentences already labelled compared at once: a dense (C, 64) product at a time


def _words(tokens: Sequence[str]) -> list[str]:
    lower = [t.lower() for t in tokens]
    return lower + [f"{a} {b}" for a, b in zip(lower, lower[1:])]


def vectors(sentences: Sequence[Sequence[str]]) -> Any:
    """(C, V) TF-IDF rows (l2-normalised; a scipy sparse CSR matrix) of the sentences' words and bigrams."""
    from sklearn.feature_extraction.text import TfidfVectorizer  # (a second to import: only when asked)

    return TfidfVectorizer(analyzer=_words, lowercase=False).fit_transform(sentences).tocsr()


def likeness_to(rows: Any, others: Any) -> np.ndarray:
    """(C,) each of (C, V) ``rows``' largest cosine to one of (E, V) ``others`` (0 when E is 0)."""
    most = np.zeros(rows.shape[0])
    for start in range(0, others.shape[0], CHUNK_ROWS):
        product = (rows @ others[start:start + CHUNK_ROWS].T).toarray()
        most = np.maximum(most, product.max(axis=1))
    return most


def pick(scores: np.ndarray, rows: Any, n: int, weight: float, skip_near_copies: bool,
         advance: Callable[[int], object] | None = None, taken: np.ndarray | None = None) -> list[int]:
    """Up to ``n`` indices into (C,) ``scores``, in the order taken (greedy; see the module);
    ``taken``: (C,) each sentence's likeness to those taken before (:func:`likeness_to`)."""
    count = len(scores)
    likeness = np.zeros(count) if taken is None else taken.astype(float)
    free = np.ones(count, dtype=bool)
    chosen: list[int] = []
    for _ in range(min(n, count)):
        value = scores - weight * likeness
        allowed = free & (likeness < NEAR_COPY) if skip_near_copies else free
        if not allowed.any():
            allowed = free
        best = int(np.flatnonzero(allowed)[np.argmax(value[allowed])])
        chosen.append(best)
        free[best] = False
        if weight or skip_near_copies:
            likeness = np.maximum(likeness, (rows @ rows[best].T).toarray().ravel())
        if advance is not None:
            advance(1)
    return chosen
