"""Entity confidence calibrated on a development corpus: a map of the confidence ``hgner tag``
reports, fitted on the development corpus's entities.

The temperature (:mod:`hgner.training.calibration`) fits the marginals of tokens; an entity's
confidence, the minimum over its tokens of the marginal of its predicted label, stays
over-confident after it (en-conll03 on eng.testb: mean confidence 0.908, 87.5% right). Platt
scaling of the log-odds (Platt 1999) fits that number directly: the model's entities on the
development corpus, each right when the gold has the same span and type, and the map

    p' = sigmoid(a * logit(p) + b)

of maximum likelihood (``a > 0``: increasing), recorded in ``meta.json``'s ``entity_confidence``
(:class:`hgner.crf.model.ConfidenceMap` applies it). Two maps, chosen on the dev sets
(experiments/entity_calibration.md): one for entities whose every token is a word of the training
corpus (:meth:`~hgner.crf.model.CrfModel.knows`), one for new names, which are right less often at
the same confidence (en-conll03 on eng.testa: 23% of its entities, mean confidence 0.877 against
82.7% right); a group of fewer than :data:`MIN_GROUP` entities gets the map of all of them. A test
set with more new names than the development corpus then gets lower confidences where it should.
Labels, decoding and the marginals of tokens do not change; only the entity confidences reported
(and so a minimum confidence) do.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.errors import warn
from ..crf.model import CONFIDENCE_GROUPS, ConfidenceMap, CrfModel, log_odds
from ..data.corpus import Corpus
from ..tagging.settings import TagSettings
from ..tagging.tagger import Tagger
from ..text.rawtext import rebuild
from ..text.tokenizer import TokenizedSentence

BINS = (0.0, 0.5, 0.7, 0.9, 0.99, 1.0)  # the reliability bins: [low, high), the last one [0.99, 1]
MIN_GROUP = 100  # dev entities a group needs for a map of its own
SLOPES = (1e-3, 100.0)  # the slopes searched (meta.schema.json allows (0, 100])
INTERCEPTS = (-100.0, 100.0)


@dataclass(frozen=True)
class EntitySample:
    """A model's entities on a tagged corpus: (N,) each one's type, confidence, whether the gold
    has the same span and type, and the number of its document."""

    types: np.ndarray
    confidences: np.ndarray
    right: np.ndarray
    documents: np.ndarray
    known: np.ndarray

    def part(self, chosen: np.ndarray) -> EntitySample:
        """The entities where the (N,) mask ``chosen`` is true."""
        return EntitySample(self.types[chosen], self.confidences[chosen], self.right[chosen], self.documents[chosen],
                            self.known[chosen])


def tagged_entities(model: CrfModel, corpus: Corpus, *, raw: bool = False, decoder: str = "viterbi") -> EntitySample:
    """``model``'s entities on ``corpus``'s own tokens and sentences, with their confidences as
    ``hgner tag`` reports them (``decoder`` on the chain; the document laid out as text by
    :func:`~hgner.text.rawtext.rebuild`, so the tokenizer plays no part; NaN from a decoder without
    confidences); ``raw``: without the model's confidence map."""
    if raw:
        model = copy.copy(model)
        model.confidence_map = None
    tagger = Tagger(TagSettings(str(model.directory), decoder), model=model)
    types, confidences, right, documents, known = [], [], [], [], []
    for number, document in enumerate(corpus.documents):
        text = rebuild([s.tokens for s in document.sentences], [s.tags or [] for s in document.sentences])
        sentences = [TokenizedSentence(list(s.tokens), offsets) for s, offsets in zip(document.sentences, text.sentences)]
        gold = set(text.entities)
        for group in tagger.tag_sentences(text.text, sentences):
            for entity in group.entities:
                types.append(entity.label)
                confidences.append(entity.confidence)
                right.append((entity.start, entity.end, entity.label) in gold)
                documents.append(number)
                known.append(model.knows([token for sentence in group.sentences
                                          for token, (start, end) in zip(sentence.tokens, sentence.offsets)
                                          if entity.start <= start and end <= entity.end]))
    return EntitySample(np.array(types, dtype=object), np.array(confidences, dtype=float), np.array(right, dtype=bool),
                        np.array(documents, dtype=np.int64), np.array(known, dtype=bool))


def reliability(confidences: np.ndarray, right: np.ndarray, bins: tuple[float, ...] = BINS) -> dict[str, dict]:
    """Per bin of (N,) ``confidences``: the entities, their mean confidence and the share ``right``."""
    found = {}
    for low, high in zip(bins, bins[1:]):
        chosen = (confidences >= low) & ((confidences < high) | (high == bins[-1]))
        if chosen.any():
            found[f"[{low}, {high}{']' if high == bins[-1] else ')'}"] = {
                "entities": int(chosen.sum()), "mean_confidence": float(confidences[chosen].mean()),
                "right": float(right[chosen].mean())}
    return found


def expected_calibration_error(confidences: np.ndarray, right: np.ndarray, bins: tuple[float, ...] = BINS) -> float:
    """The entity-weighted mean gap between confidence and share right over the :func:`reliability` bins."""
    rows = reliability(confidences, right, bins).values()
    return sum(row["entities"] * abs(row["mean_confidence"] - row["right"]) for row in rows) / max(1, len(confidences))


def platt(confidences: np.ndarray, right: np.ndarray) -> dict[str, Any]:
    """The ``slope`` and ``intercept`` on the log-odds of (N,) ``confidences`` that maximise the
    likelihood of (N,) ``right`` (4 decimals), and the ``entities`` fitted on."""
    from scipy.optimize import minimize  # (scipy loads with training, not with every import)

    x, y = log_odds(confidences), right.astype(float)

    def loss(ab: np.ndarray) -> tuple[float, np.ndarray]:
        z = ab[0] * x + ab[1]
        gap = 1 / (1 + np.exp(-z)) - y
        return float(np.sum(np.logaddexp(0, z) - y * z)), np.array([gap @ x, gap.sum()])

    found = minimize(loss, np.array([1.0, 0.0]), jac=True, method="L-BFGS-B", bounds=[SLOPES, INTERCEPTS])
    return {"slope": round(float(found.x[0]), 4), "intercept": round(float(found.x[1]), 4), "entities": len(y)}


def fit_groups(sample: EntitySample) -> dict[str, dict[str, Any]]:
    """:func:`platt` of each group of :data:`~hgner.crf.model.CONFIDENCE_GROUPS` (entities of
    known words, new names); a group of fewer than :data:`MIN_GROUP` entities gets that of all."""
    pooled = platt(sample.confidences, sample.right)
    groups = {}
    for name, chosen in zip(CONFIDENCE_GROUPS, (sample.known, ~sample.known)):
        groups[name] = platt(sample.confidences[chosen], sample.right[chosen]) if chosen.sum() >= MIN_GROUP else pooled
    return groups


def mapped(groups: dict[str, dict[str, Any]], sample: EntitySample) -> np.ndarray:
    """(N,) ``sample``'s confidences under the maps ``groups`` (:func:`fit_groups`)."""
    return ConfidenceMap({"groups": groups})(sample.confidences, sample.known)


def cross_fitted(sample: EntitySample) -> np.ndarray | None:
    """(N,) each entity's confidence under the maps fitted on the other half of the documents
    (even and odd document numbers); None when a half has no entity."""
    even = sample.documents % 2 == 0
    if even.all() or not even.any():
        return None
    out = np.empty_like(sample.confidences)
    for half in (even, ~even):
        out[half] = mapped(fit_groups(sample.part(~half)), sample.part(half))
    return out


def fit(model: CrfModel, corpus: Corpus) -> dict[str, Any] | None:
    """The confidence maps of ``model`` (at the calibration factor it has) fitted on ``corpus``'s
    entities, as ``meta.json``'s ``entity_confidence`` records them: ``method``, ``corpus``,
    ``entities``, ``groups`` (:func:`fit_groups`), the ECE of the confidences before (``ece``) and
    under maps fitted on the other half of the documents (``ece_cross_fitted``, when both halves
    have entities). None, with a warning, when the model finds no entity in ``corpus``."""
    sample = tagged_entities(model, corpus, raw=True)
    if not len(sample.right):
        warn(f"entity confidence: the model finds no entity in {corpus.name}: its confidences are not mapped")
        return None
    record: dict[str, Any] = {"method": "platt", "corpus": corpus.name, "entities": len(sample.right),
                              "groups": fit_groups(sample),
                              "ece": round(expected_calibration_error(sample.confidences, sample.right), 4)}
    crossed = cross_fitted(sample)
    if crossed is not None:
        record["ece_cross_fitted"] = round(expected_calibration_error(crossed, sample.right), 4)
    return record
