"""Calibration: one factor on every potential of a model, fitted on a development corpus.

A CRF trained with light regularisation is overconfident: its marginals are sharper than its
accuracy (the shipped models' entities of confidence 0.9-0.99 were right 77-87% of the time on
their dev sets). Temperature scaling (Guo et al. 2017, "On calibration of modern neural
networks") fixes most of it with one number: the factor ``f`` on every potential that minimises
the development corpus's gold negative log-likelihood under the chain,

    NLL(f) = sum over sentences of  log Z(f * scores) - f * score(gold labels),

a convex function of ``f``. Below 1 the model is overconfident. One positive factor on every
potential (state scores, transitions and the skip potential) leaves every MAP labelling
(Viterbi, ``exact``) as it was; it changes marginals, so ``hgner tag``'s confidences, and what
samplers visit: on the flatter model herded Gibbs makes the type swaps it missed on the sharp one.
``hgner train --dev`` fits the factor and records it in ``meta.json``; :class:`hgner.crf.model.CrfModel`
applies it. The entity confidences stay over-confident on new names after it; a map of them is fitted
next, at this factor (:mod:`hgner.training.confidence`).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from tqdm import tqdm

from ..core.errors import HgnerError
from ..crf.model import CrfModel
from ..data.corpus import Corpus
from ..decoders.chain import forward_backward
from ..graph.factor_graph import FactorGraph

BOUNDS = (0.05, 5.0)  # the factors searched


def at_bound(factor: float) -> bool:
    """Whether a fitted factor is at (within 1% of) an end of :data:`BOUNDS`: the likelihood kept
    falling, so the corpus is fitted (almost) perfectly, or not at all. (Near the upper end the
    likelihood of a corpus fitted perfectly is flat, and the search stops a little short of it.)"""
    return not BOUNDS[0] * 1.01 < factor < BOUNDS[1] * 0.99


def fit(model: CrfModel, corpus: Corpus, *, progress: bool = False) -> dict[str, Any]:
    """The factor on ``model``'s crfsuite scores (as trained, whatever calibration it records)
    that minimises the gold negative log-likelihood of ``corpus``'s sentences, as ``meta.json``'s
    ``calibration`` records it: ``factor`` (3 decimals), ``corpus``, ``sentences`` (those whose
    gold labels the model has; others are left out) and the mean gold NLL per sentence at factor
    1 and at the factor."""
    from scipy.optimize import minimize_scalar  # (scipy loads with training, not with every import)

    index = {label: k for k, label in enumerate(model.labels)}
    pieces: list[np.ndarray] = []
    lengths: list[int] = []
    gold: list[int] = []
    for document in tqdm(corpus.documents, desc=f"calibration: featurising {corpus.name}", unit="doc",
                         disable=not progress, file=sys.stderr, leave=False):
        scores = model.document_unary([s.tokens for s in document.sentences])
        start = 0
        for sentence in document.sentences:
            end = start + len(sentence.tokens)
            tags = model.gold_labels(sentence.tags or [])
            if tags and all(tag in index for tag in tags):
                pieces.append(scores[start:end])
                lengths.append(len(tags))
                gold.extend(index[tag] for tag in tags)
            start = end
    if not lengths:
        raise HgnerError(f"calibration: no sentence of {corpus.name} has only the model's labels "
                         f"({', '.join(model.labels)})")
    unary = np.concatenate(pieces)
    gold_score = FactorGraph.chain(unary, model.transitions, lengths).score(np.array(gold, dtype=np.int64))

    def gold_nll(factor: float) -> float:  # the score is linear in the factor
        scaled = FactorGraph.chain(factor * unary, factor * model.transitions, lengths)
        return forward_backward(scaled)[1] - factor * gold_score

    found = minimize_scalar(gold_nll, bounds=BOUNDS, method="bounded", options={"xatol": 1e-4})
    factor = round(float(found.x), 3)
    return {"factor": factor, "corpus": corpus.name, "sentences": len(lengths),
            "gold_nll_per_sentence": round(gold_nll(1.0) / len(lengths), 4),
            "gold_nll_per_sentence_at_factor": round(gold_nll(factor) / len(lengths), 4)}
