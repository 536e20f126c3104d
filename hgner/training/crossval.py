"""How good a model trained on a small labelled set is (``hgner train --folds K``): K-fold
cross-validation of the training itself, then the model trained on every sentence.

The training corpus's documents are split into K folds (a corpus of one document: its sentences).
The split is seeded (:data:`SEED` by default, so the same corpus always gets the same folds) and
balanced by sentences: the documents, shuffled, then ordered longest first (a stable sort, so
documents of one length stay shuffled), each go to the fold with the fewest sentences so far.
Each fold is held out in turn: a model is trained on the other K-1 folds by the same training as
the final model (a callable the caller gives: :func:`hgner.training.build_model`, or
:func:`hgner.training.adapt.train_adapted` for ``--base``), then tags the held-out fold, its
sentences still grouped in their documents, with Viterbi. Every sentence is so tagged once, by
a model that never saw it. The pooled out-of-fold tags are scored as ``hgner evaluate`` scores
(entity F1, conlleval), with a 95% bootstrap interval over the documents (or sentences) split
(:mod:`hgner.evaluation.interval`, :data:`RESAMPLES` resamples). The figure estimates a model
trained on (K-1)/K of the sentences, so it is a little pessimistic for the final model."""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..core.errors import HgnerError, named, warn
from ..core.scoring import Score, entity_spans, score
from ..core.validation import check_argument
from ..core.wording import counted
from ..crf.model import CrfModel
from ..crf.modelfiles import raw_metadata, write_metadata
from ..data.corpus import Corpus, Document
from ..evaluation import EvaluationPlan, Run, local_outcomes
from ..evaluation.interval import LEVEL, f1_intervals, span_counts

log = logging.getLogger("hgner")

SEED = 0  # of the split and of the bootstrap resamples
RESAMPLES = 1000  # bootstrap resamples of the out-of-fold documents for the interval
MODE = "conlleval"
FEW_UNITS = 20  # documents (or sentences): fewer, and the percentile bootstrap's interval is too narrow: a warning

Unit = list[tuple[int, int]]  # what a fold takes whole: (document, sentence) indices of a document (or a sentence)


class Trainer(Protocol):
    """A training, as the final model's: a model trained on ``corpus`` written to ``out``."""

    def __call__(self, corpus: Corpus, out: Path, *, progress: bool) -> CrfModel: ...


@dataclass(frozen=True)
class CrossValidation:
    """The pooled out-of-fold figures: ``score`` (micro and per type, conlleval), its F1's 95%
    ``interval`` over the ``units`` split (``by`` document or sentence), each fold's F1, and
    per document, per sentence, its ``fold`` (0-based) and its ``predicted`` tags (corpus scheme)."""

    corpus: str
    folds: int
    seed: int
    by: str
    units: int
    sentences: int
    score: Score
    interval: tuple[float, float]
    fold_f1: tuple[float, ...]
    fold: tuple[tuple[int, ...], ...]
    predicted: tuple[tuple[list[str], ...], ...]

    def record(self) -> dict[str, Any]:
        """What ``meta.json`` records (its ``cross_validation``)."""
        micro = self.score.micro
        return {"folds": self.folds, "by": self.by, "seed": self.seed, "units": self.units,
                "sentences": self.sentences, "decoder": "viterbi", "mode": MODE, "f1": round(micro.f1, 2),
                "precision": round(micro.precision, 2), "recall": round(micro.recall, 2),
                "interval": [round(v, 2) for v in self.interval], "level": LEVEL, "resamples": RESAMPLES,
                "fold_f1": [round(f, 2) for f in self.fold_f1],
                "per_type": {t: {"f1": round(c.f1, 2), "support": c.gold} for t, c in self.score.per_type.items()}}

    def summary(self) -> str:
        """The figures as ``hgner train --folds`` prints them: a heading, conlleval's table, the interval."""
        low, high = self.interval
        return (f"cross-validated on {self.corpus}: {self.folds} folds of {_units(self.units, self.by, self.sentences)}"
                ", each tagged by a model trained without its fold (Viterbi)\n"
                f"{self.score.report()}\n"
                f"F1 {self.score.micro.f1:.2f}, {LEVEL:.0%} interval [{low:.2f}, {high:.2f}] (bootstrap over the "
                f"{counted(self.units, self.by)}, {RESAMPLES} resamples, seed {self.seed}); per fold "
                f"{', '.join(f'{f:.2f}' for f in self.fold_f1)}\n")


def _units(units: int, by: str, sentences: int) -> str:
    """``50 documents (200 sentences)``, or ``200 sentences``."""
    return counted(units, by) + (f" ({counted(sentences, 'sentence')})" if by == "document" else "")


def split_units(corpus: Corpus, folds: int) -> tuple[str, list[Unit]]:
    """What the folds take whole, ``("document", ...)`` or, for a corpus of one document,
    ``("sentence", ...)``; an :class:`HgnerError` when there are fewer than ``folds``."""
    check_argument(isinstance(folds, int) and not isinstance(folds, bool) and folds >= 2, "folds",
                   "a whole number of at least 2", folds)
    documents = [(d, len(document.sentences)) for d, document in enumerate(corpus.documents) if document.sentences]
    if len(documents) == 1:
        units = [[(documents[0][0], s)] for s in range(documents[0][1])]
    else:
        units = [[(d, s) for s in range(size)] for d, size in documents]
    by = "sentence" if all(len(unit) == 1 for unit in units) else "document"
    if len(units) < folds:
        advice = (f"give at most {len(units)} folds" if len(units) >= 2 else "cross-validation needs at least 2")
        if by == "document":
            advice += f", or {named('documents')} sentence to split it by sentence"
        raise HgnerError(f"{named('folds')} {folds}: training corpus {corpus.name} has {counted(len(units), by)} to "
                         f"split into folds; {advice}")
    return by, units


def assign_folds(units: list[Unit], folds: int, seed: int = SEED) -> list[int]:
    """The fold (0..``folds``-1) of each unit: shuffled by ``seed``, then longest first, each
    to the fold with the fewest sentences so far (the lowest-numbered among equals)."""
    order = sorted(np.random.default_rng(seed).permutation(len(units)).tolist(), key=lambda u: -len(units[u]))
    sizes = [0] * folds
    assigned = [0] * len(units)
    for unit in order:
        fold = min(range(folds), key=lambda f: (sizes[f], f))
        assigned[unit] = fold
        sizes[fold] += len(units[unit])
    return assigned


def _part(corpus: Corpus, kept: set[tuple[int, int]], name: str) -> Corpus:
    """The sentences ``kept`` of ``corpus``, in their documents (a document with none left out)."""
    documents = [Document(document.name, sentences) for d, document in enumerate(corpus.documents)
                 if (sentences := [s for i, s in enumerate(document.sentences) if (d, i) in kept])]
    return replace(corpus, name=name, documents=documents, notes=list(corpus.notes))


@contextmanager
def _training(shown: set[str], notes: bool) -> Iterator[None]:
    """A training with each warning's text shown once over the trainings sharing ``shown`` (when
    the training ends), and without its notes (the logger's info lines) unless ``notes``."""
    level = log.level
    if not notes:
        log.setLevel(logging.WARNING)
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:  # type: ignore[assignment]
            warnings.simplefilter("always")
            yield
    finally:
        log.setLevel(level)
        for each in caught:
            if str(each.message) not in shown:
                shown.add(str(each.message))
                warnings.warn(each.message, stacklevel=3)


def _tag_held_out(model: CrfModel, held: Corpus) -> list[list[list[str]]]:
    """Viterbi's tags (``held``'s scheme) of each sentence of each document of ``held``."""
    plan = EvaluationPlan("chain", MODE, held.scheme, (Run("viterbi", None, None),), ())
    return [outcome.predicted[0] for outcome in local_outcomes(model, plan, held.documents, True)
            if outcome.predicted is not None]


def _scored(tagged: dict[tuple[int, int], tuple[list[str], list[str]]], scheme: str) -> Score:
    """The figures of ``tagged`` sentences' ``(gold, predicted)`` tags, in their order."""
    pairs = sorted(tagged)
    return score([tagged[p][0] for p in pairs], [tagged[p][1] for p in pairs], scheme, MODE)


def _fold(corpus: Corpus, fold_of: dict[tuple[int, int], int], number: int, folds: int, train: Trainer,
          folder: Path, shown: set[str]) -> tuple[dict[tuple[int, int], tuple[list[str], list[str]]], float]:
    """Fold ``number`` held out: a model trained on the others tags it; each of its sentences'
    ``(gold, predicted)`` tags (corpus scheme; gold as the model was trained on it), and its F1."""
    started = time.perf_counter()
    held_out = {pair for pair, fold in fold_of.items() if fold == number}
    training = _part(corpus, set(fold_of) - held_out, f"{corpus.name} (fold {number + 1} of {folds} left out)")
    held = _part(corpus, held_out, f"{corpus.name} (fold {number + 1} of {folds})")
    try:
        with _training(shown, notes=False):
            model = train(training, folder / f"fold-{number + 1}", progress=False)
    except HgnerError as error:
        raise HgnerError(f"cross-validation, fold {number + 1} of {folds} left out: {Exception.__str__(error)}") from None
    pairs = sorted(held_out)  # (the held-out corpus's order)
    sentences = [sentence for document in held.documents for sentence in document.sentences]
    predicted = [tags for document in _tag_held_out(model, held) for tags in document]
    tagged = {pair: (model.gold_labels(sentence.tags or [], corpus.scheme), tags)
              for pair, sentence, tags in zip(pairs, sentences, predicted, strict=True)}
    figure = _scored(tagged, corpus.scheme).micro.f1
    log.info("fold %d of %d: trained on %s in %.0f s; F1 %.2f on its %s", number + 1, folds,
             counted(len(training.sentences), "sentence"), time.perf_counter() - started, figure,
             counted(len(sentences), "held-out sentence"))
    shutil.rmtree(model.directory, ignore_errors=True)
    return tagged, figure


def cross_validate(corpus: Corpus, folds: int, train: Trainer, *, seed: int = SEED,
                   shown: set[str] | None = None) -> CrossValidation:
    """``corpus`` cross-validated in ``folds`` folds (split by ``seed``) by the training ``train``,
    its K models written to a temporary folder and removed; ``shown``: the warnings' texts
    already shown (each is shown once)."""
    by, units = split_units(corpus, folds)
    assigned = assign_folds(units, folds, seed)
    fold_of = {pair: assigned[u] for u, unit in enumerate(units) for pair in unit}
    shown = set() if shown is None else shown
    tagged: dict[tuple[int, int], tuple[list[str], list[str]]] = {}
    fold_f1 = []
    with tempfile.TemporaryDirectory(prefix="hgner-folds-") as folder:
        for number in range(folds):
            part, figure = _fold(corpus, fold_of, number, folds, train, Path(folder), shown)
            fold_f1.append(figure)
            tagged.update(part)
    counts = np.array([np.sum([span_counts(entity_spans(tagged[p][0], corpus.scheme, MODE),
                                           entity_spans(tagged[p][1], corpus.scheme, MODE)) for p in unit], axis=0)
                       for unit in units], dtype=np.int64).reshape(-1, 3)  # (units, 3) correct, predicted, gold
    low, high = f1_intervals([counts], RESAMPLES, np.random.default_rng(seed))[0]
    return CrossValidation(
        corpus=corpus.name, folds=folds, seed=seed, by=by, units=len(units), sentences=len(tagged),
        score=_scored(tagged, corpus.scheme),
        interval=(low, high), fold_f1=tuple(fold_f1),
        fold=tuple(tuple(fold_of[(d, s)] for s in range(len(document.sentences)))
                   for d, document in enumerate(corpus.documents)),
        predicted=tuple(tuple(tagged[(d, s)][1] for s in range(len(document.sentences)))
                        for d, document in enumerate(corpus.documents)))


def train_cross_validated(corpus: Corpus, out: str | Path, folds: int, train: Trainer, *, seed: int = SEED,
                          progress: bool = False) -> tuple[CrfModel, CrossValidation]:
    """``corpus`` cross-validated (:func:`cross_validate`), then the model trained on all of it by
    ``train`` into ``out``, its ``meta.json`` recording the figures (``cross_validation``)."""
    by, units = split_units(corpus, folds)  # (before any training)
    log.info("cross-validation: %s of %s, seed %d: %s, the last on all of them", counted(folds, "fold"),
             _units(len(units), by, len(corpus.sentences)), seed, counted(folds + 1, "training"))
    if len(units) < FEW_UNITS:
        warn(f"cross-validation: the interval is a bootstrap over {counted(len(units), by)}, too few to show how "
             "far the F1 would move (it comes out too narrow)" + (f"; {named('documents')} sentence resamples "
                                                                   "sentences" if by == "document" else ""))
    shown: set[str] = set()
    result = cross_validate(corpus, folds, train, seed=seed, shown=shown)
    low, high = result.interval
    log.info("cross-validated F1 %.2f (%.0f%% interval %.2f-%.2f); training on all %s", result.score.micro.f1,
             100 * LEVEL, low, high, counted(result.sentences, "sentence"))
    with _training(shown, notes=True):
        model = train(corpus, Path(out), progress=progress)
    metadata = raw_metadata(model.directory)
    files = metadata.pop("files")
    write_metadata(model.directory, {**metadata, "cross_validation": result.record(), "files": files}, changed=[])
    model.metadata["cross_validation"] = result.record()
    return model, result
