"""Learning a model's skip potential (:mod:`hgner.crf.skip`) from tagged corpora: the function words
never joined, the label-pair table estimated on the training corpus, and its weight tuned on the
development corpus (the grid, and the held-out check over random halvings)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from tqdm import tqdm

from ..core import schemes
from ..core.errors import ModelError
from ..core.scoring import Counts, EntityCounts, entity_spans
from ..crf.model import CrfModel
from ..crf.pipeline import Pipeline
from ..crf.skip import SkipConfig, SkipModel, save, skip_edges, stop_words
from ..data.corpus import Corpus
from ..decoders import make_decoder
from ..decoders.chain import viterbi
from ..evaluation import gold_tags

SMOOTHING = 0.5


# The function-word rule, chosen on eng.testa, esp.testa and ned.testa (docs/development/research-log.md).
MIN_COUNT = 3


O_FRACTION = 0.95


def function_words(corpus: Corpus, language: str | None, *, min_count: int = MIN_COUNT, o_fraction: float = O_FRACTION,
                   min_length: int = SkipConfig.min_length) -> tuple[str, ...]:
    """The lower-case forms never joined by skip edges: the words learned from a tagged ``corpus``
    plus spaCy's stop words for ``language`` (none when ``language`` is None), sorted. A word is
    learned when it was seen capitalised (first character upper case, at least ``min_length``
    characters) at least ``min_count`` times with gold tag ``O`` in at least ``o_fraction`` of
    them; the stop words cover the function words too rare in ``corpus`` to learn, and the ones
    that also start names, which the learned rule lets through (capitalised Dutch "De" is O in
    only 68% of its occurrences in ned.train)."""
    seen: dict[str, list[int]] = {}  # lower-case form -> [capitalised occurrences, of them tagged O]
    for sentence in corpus.sentences:
        for token, tag in zip(sentence.tokens, sentence.tags or ()):
            if len(token) >= min_length and token[0].isupper():
                counts = seen.setdefault(token.lower(), [0, 0])
                counts[0] += 1
                counts[1] += tag == "O"
    learned = {word for word, (n, n_o) in seen.items() if n >= min_count and n_o >= o_fraction * n}
    return tuple(sorted(learned | (stop_words(language) if language else frozenset())))


def estimate(corpus: Corpus, model: CrfModel, config: SkipConfig = SkipConfig()) -> SkipModel:
    """Count gold label pairs on the skip edges of ``corpus`` (tags put in ``model``'s scheme and
    label map, as training does) and return their smoothed log-ratio table with weight 1."""
    index = {label: k for k, label in enumerate(model.labels)}
    counts = np.zeros((len(index), len(index)))
    for document in corpus.documents:
        tags = [tag for s in document.sentences for tag in model.gold_labels(s.tags or [])]
        unknown = set(tags) - set(index)
        if unknown:
            raise ModelError(f"corpus {corpus.name} has tags {sorted(unknown)} that model {model.name} lacks "
                             f"(model labels: {', '.join(model.labels)})")
        y = np.array([index[t] for t in tags], dtype=np.int64)
        edges = skip_edges([s.tokens for s in document.sentences], config)
        np.add.at(counts, (y[edges[:, 0]], y[edges[:, 1]]), 1.0)
    return SkipModel(config, model.labels, counts, log_ratio(counts),
                     info={"corpus": corpus.name, "edges": int(counts.sum()), "smoothing": SMOOTHING},
                     calibration=model.calibration)


def log_ratio(counts: np.ndarray, smoothing: float = SMOOTHING) -> np.ndarray:
    """(K, K) ``log p(a, b) - log p(a) - log p(b)`` of add-``smoothing`` pair frequencies ``counts`` (K, K)."""
    joint = (counts + smoothing) / (counts.sum() + smoothing * counts.size)
    return np.log(joint) - np.log(joint.sum(axis=1, keepdims=True)) - np.log(joint.sum(axis=0, keepdims=True))


# The weight grid of tune(); 0 is the chain itself.
WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0)


HALVINGS = 30  # random halvings of the development documents for tune()'s held-out check


HALVING_SEED = 0  # their generator's seed, so training stays deterministic


def tune(table: SkipModel, model: CrfModel, dev: Corpus, weights: Sequence[float] = WEIGHTS,
         decoder: str = "exact", progress: bool = False) -> SkipModel:
    """``table`` with the weight on the grid ``weights`` (the first 0: the chain, decoded by
    Viterbi) whose skip-chain decoding of ``dev`` (by ``decoder``) scores the best entity F1, ties
    to the smaller weight, so a weight above 0 is chosen only when it beats the chain on ``dev``,
    and only when the choice carries over to documents it was not made on: ``dev``'s documents
    are halved at random :data:`HALVINGS` times (seed :data:`HALVING_SEED`), the weight chosen on
    each half is scored on the other (:func:`held_out_gains`), and when its mean gain over the
    chain there is not positive the weight is 0 (a ``dev`` of one document is not checked). The grid's
    figures go into ``info["tuning"]``,
    the check's into ``info["held_out"]``."""
    if not weights or weights[0] != 0.0:
        raise ValueError(f"the weight grid must start with 0 (the chain), got {list(weights)}")
    counts, certified = weight_counts(table, model, dev, weights, decoder, progress)
    f1 = grid_f1(counts)
    tuning = [{"weight": float(weight), "f1": float(score), "certified": share}
              for weight, score, share in zip(weights, f1, certified)]
    best = best_weight(f1)
    gains, _ = held_out_gains(counts, np.random.default_rng(HALVING_SEED))
    held_out = None
    if len(gains):
        held_out = {"halvings": HALVINGS, "pairs": len(gains), "mean_gain": round(float(gains.mean()), 3),
                    "below_chain": int((gains < 0).sum())}
        if gains.mean() <= 0:
            best = 0
    info = {**table.info, "tuned_on": dev.name, "tuning_decoder": decoder, "tuning": tuning, "held_out": held_out}
    return replace(table, weight=float(weights[best]), info=info)


def tuned_f1(tuned: SkipModel) -> float:
    """The development F1 of the weight :func:`tune` chose (the chain's when it kept weight 0)."""
    return next(row["f1"] for row in tuned.info["tuning"] if row["weight"] == tuned.weight)


def dev_record(tuned: SkipModel) -> dict[str, Any]:
    """The ``dev.skip`` record of a model's ``meta.json``: the tuning decoder, weight and dev F1."""
    return {"decoder": tuned.info["tuning_decoder"], "weight": tuned.weight, "f1": round(tuned_f1(tuned), 2)}


def tuning_summary(tuned: SkipModel) -> str:
    """One line on the weight :func:`tune` chose and why, for logs."""
    rows, held_out, corpus = tuned.info["tuning"], tuned.info.get("held_out"), tuned.info["tuned_on"]
    best, chain = rows[best_weight(np.array([row["f1"] for row in rows]))], rows[0]["f1"]
    decoder = tuned.info["tuning_decoder"]
    if tuned.weight:
        carried = (f"; chosen on half of its documents, {held_out['mean_gain']:+.2f} F1 over the chain on the "
                   f"other half on average" if held_out
                   else "; not checked on held-out documents: it has one document, which cannot be halved")
        return f"weight {tuned.weight} (skip-chain F1 {best['f1']:.2f} with {decoder} on {corpus}{carried})"
    if best["weight"] and held_out is not None:
        return (f"weight 0, skip edges left out: skip-chain F1 {best['f1']:.2f} with {decoder} at weight "
                f"{best['weight']} on {corpus} against the chain's {chain:.2f}, but a weight chosen on half of its "
                f"documents scores {held_out['mean_gain']:+.2f} F1 against the chain on the other half on average")
    return f"weight 0, skip edges left out: no weight beats the chain's F1 {chain:.2f} with {decoder} on {corpus}"


def weight_counts(table: SkipModel, model: CrfModel, dev: Corpus, weights: Sequence[float] = WEIGHTS,
                  decoder: str = "exact", progress: bool = False) -> tuple[np.ndarray, list[float]]:
    """(W, D, 3) the entities found correctly, predicted and in the gold standard (conlleval's
    chunks in ``dev``'s scheme) in each of ``dev``'s D documents decoded with ``table`` at each
    of the W ``weights`` (weight 0, and a document without skip edges, by Viterbi; the rest by
    ``decoder``), and per weight the share of documents the decoder certified."""
    gold = gold_tags(dev, model)
    builder = Pipeline(model, make_decoder("viterbi"))
    documents = [[s.tokens for s in d.sentences] for d in dev.documents]
    prepared = [builder.prepare(sentences) for sentences in tqdm(
        documents, desc=f"skip weight: featurising {dev.name}", unit="doc", disable=not progress, leave=False)]
    edges = [skip_edges(sentences, table.config) for sentences in documents]
    firsts = np.cumsum([0, *map(len, documents)])  # each document's first sentence in gold
    skip_decoder = make_decoder(decoder)
    counts = np.zeros((len(weights), len(documents), 3), np.int64)
    certified = []
    for w, weight in enumerate(tqdm(weights, desc=f"skip weight on {dev.name} ({decoder})", unit="weight",
                                    disable=not progress, leave=False)):
        sure = 0.0
        for d, (p, e) in enumerate(zip(prepared, edges)):
            if weight == 0.0 or len(e) == 0:
                labels = viterbi(p.chain)
                sure += 1.0
            else:
                decoding = skip_decoder.decode(p.chain.with_edges(e, replace(table, weight=weight).potential))
                labels = decoding.labels
                sure += decoding.stats.get("certified", 0.0)
            found = EntityCounts()
            for sentence_gold, piece in zip(gold[firsts[d]:firsts[d + 1]], p.split(labels)):
                predicted = schemes.convert([model.labels[k] for k in piece], dev.scheme)
                found.add(entity_spans(sentence_gold, dev.scheme), entity_spans(predicted, dev.scheme))
            counts[w, d] = [sum(found.correct.values()), sum(found.predicted.values()), sum(found.gold.values())]
        certified.append(round(sure / len(prepared), 4) if prepared else 1.0)
    return counts, certified


def grid_f1(counts: np.ndarray) -> np.ndarray:
    """(W,) the entity F1 (percent, rounded to 3 decimals) of (W, D, 3) :func:`weight_counts`, all D documents together."""
    return np.array([round(Counts(*map(int, row)).f1, 3) for row in counts.sum(axis=1)])


def best_weight(f1: np.ndarray) -> int:
    """The index of the best of (W,) grid F1 scores, ties to the first (the smaller weight)."""
    return int(np.flatnonzero(f1 == f1.max())[0])


def held_out_gains(counts: np.ndarray, rng: np.random.Generator, halvings: int = HALVINGS,
                   rule: Callable[[np.ndarray], int] = best_weight) -> tuple[np.ndarray, np.ndarray]:
    """For ``halvings`` random halvings of the documents of :func:`weight_counts` (W, D, 3), each
    half picking once: (2 * halvings,) how much the weight ``rule`` picks from one half's grid F1
    beats the chain (weight index 0) on the other half, and (2 * halvings,) the indices it picked;
    both empty with fewer than 2 documents."""
    documents = counts.shape[1]
    gains, picked = [], []
    for _ in range(halvings if documents >= 2 else 0):
        order = rng.permutation(documents)
        halves = (order[: documents // 2], order[documents // 2:])
        for picked_on, scored_on in (halves, halves[::-1]):
            scores = grid_f1(counts[:, scored_on])
            picked.append(rule(grid_f1(counts[:, picked_on])))
            gains.append(scores[picked[-1]] - scores[0])
    return np.array(gains), np.array(picked, np.int64)


def build(model: CrfModel, train: Corpus, dev: Corpus, language: str, *, decoder: str = "exact",
          words: tuple[str, ...] | None = None, progress: bool = False) -> SkipModel:
    """Learn ``model``'s skip potential from ``train`` (function words of ``language`` learned
    there too, unless ``words`` gives the list), tune its weight on ``dev`` and save it into the
    model directory."""
    if words is None:
        words = function_words(train, language)
        how = {"language": language, "min_count": MIN_COUNT, "o_fraction": O_FRACTION, "plus": "spacy stop words"}
    else:
        how = {"language": language, "given": True}
    config = SkipConfig(function_words=words)
    table = estimate(train, model, config)
    table = replace(table, info={**table.info, "function_words": how})
    tuned = tune(table, model, dev, decoder=decoder, progress=progress)
    save(tuned, model.directory)
    return tuned
