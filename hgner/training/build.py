"""``hgner train``'s work in one call: a complete model directory from a training and a development
corpus (the crfsuite CRF, its skip potential with the weight tuned on the development corpus, its
calibration factor and entity confidence map fitted there, and ``meta.json`` with the language, documents mode and
development figures). Progress notes go to the ``hgner`` logger, warnings to :mod:`warnings`."""

from __future__ import annotations

import logging
from pathlib import Path

from ..core import schemes
from ..core.errors import HgnerError, named, warn
from ..core.wording import counted
from ..crf.model import CrfModel
from ..crf.modelfiles import SKIP_FILES, check_model_target, model_workspace, write_metadata
from ..data.corpus import Corpus
from ..evaluation import EvaluateOptions, evaluate, unknown_types_warning
from ..features.clusters import ClusterTable
from ..features.config import CLUSTER_TABLES
from ..text.languages import likelier_language
from . import calibration, confidence
from . import skip as skip_training
from .crf import Adapted, fit_into
from .options import TrainOptions, WordTables

log = logging.getLogger("hgner")


def build_model(train_corpus: Corpus, out: str | Path, options: TrainOptions | None = None,
                tables: WordTables | None = None, *, dev: Corpus | None = None, dev_documents: str | None = None,
                function_words: tuple[str, ...] | None = None, progress: bool = False,
                adapted: Adapted | None = None) -> CrfModel:
    """Train a CRF on ``train_corpus`` into ``out`` as ``options`` say; with ``dev``, score it
    there with Viterbi, learn the skip potential from ``train_corpus`` and tune its weight on
    ``dev`` (:func:`hgner.training.skip.build`, decoded by ``exact``; weight 0 when skip edges do
    not beat the chain, or when the weight picked on half of ``dev``'s documents does not beat it
    on the other half), and fit the calibration factor on ``dev``
    (:func:`hgner.training.calibration.fit`), then the map of entity confidences
    (:func:`hgner.training.confidence.fit`). Without ``dev`` no skip potential is written (its
    weight needs a development corpus) and the model is not calibrated. ``function_words``
    replaces the learned list of words never joined by skip edges. The model is built beside
    ``out`` and swapped in when complete. ``adapted``: the training adapts a base model
    (:func:`hgner.training.adapt.train_adapted`)."""
    options = options or TrainOptions()
    out = Path(out)
    if out.is_symlink():  # a link to a model directory: replace the directory, keep the link
        out = out.resolve()
    check_model_target(out, [train_corpus.file, dev.file if dev is not None else None])
    _check_types(train_corpus, dev, options)
    _announce(train_corpus, dev, options.language)
    with model_workspace(out) as work:
        model = fit_into(work, train_corpus, options, tables or WordTables(), progress=progress, name=out.name,
                         adapted=adapted)
        _report_training(model, train_corpus)
        if dev is None:
            log.info("no development corpus: no skip potential written and no calibration (a development corpus "
                     "gives both)")
        else:
            _add_development(model, train_corpus, dev, dev_documents or options.documents, function_words, progress)
        built = CrfModel.load(work)  # checked as it will be loaded, before it replaces a previous model
    built.directory = out  # the same files, swapped in
    return built


def _entity_types(corpus: Corpus) -> list[str]:
    """The entity types of ``corpus``'s gold tags."""
    return schemes.entity_types(tag for sentence in corpus.sentences for tag in sentence.tags or [])


def _check_types(train_corpus: Corpus, dev: Corpus | None, options: TrainOptions) -> None:
    """An :class:`HgnerError` for a dropped type the training corpus lacks, or a development corpus
    with no entity of the model's types."""
    types = set(_entity_types(train_corpus))
    dropped = {name for name, target in (options.label_map or {}).items() if target == "O"}
    if dropped - types:
        missing = ", ".join(name if name.strip() else repr(name) for name in sorted(dropped - types))
        raise HgnerError(f"{named('drop_types')} {missing}: no such entity type in "
                         f"{train_corpus.name} (its types: {', '.join(sorted(types)) or 'none'})")
    if dev is not None and types - dropped and not types.intersection(_entity_types(dev)) - dropped:
        raise HgnerError(f"development corpus {dev.name}: no entity of the model's types "
                         f"({', '.join(sorted(types - dropped)) or 'none'}) to score or tune on")


def _announce(train_corpus: Corpus, dev: Corpus | None, language: str) -> None:
    """Say what is trained on, and warn about corpora that look like another language."""
    log.info("training on %s: %s, %s, %s (language %s)", train_corpus.name,
             counted(len(train_corpus.documents), "document"), counted(len(train_corpus.sentences), "sentence"),
             counted(train_corpus.n_tokens, "token"), language)
    other = likelier_language(train_corpus.tokens, language)
    if other is not None:
        warn(f"training corpus {train_corpus.name}: {other.evidence}, the language recorded in the model: "
             f"if the corpus is in {other.language!r}, train with {named('language')} {other.language}")
    dev_other = likelier_language(dev.tokens, language) if dev is not None else None
    if dev is not None and dev_other is not None and (other is None or other.language != dev_other.language):
        warn(f"development corpus {dev.name}: {dev_other.evidence}, the model's language: "
             f"its dev figures and the skip weight tuned on it are for another language than "
             f"{train_corpus.name}'s; give a development corpus in the training corpus's language")


def _report_training(model: CrfModel, train_corpus: Corpus) -> None:
    """Log the tables fitted and how L-BFGS went."""
    training = model.metadata["training"]
    lists = model.resources.gazetteer
    if lists:
        kept = ", ".join(f"{name} {counted(len(entries), 'entry')}" for name, entries in sorted(lists.items()))
        log.info("gazetteer lists fitted to %s: %s", train_corpus.name, kept)
    for setting in CLUSTER_TABLES:
        clusters = ClusterTable.from_mapping(getattr(model.resources, setting))
        if clusters:
            log.info("%s: %s in %s", setting.replace("_", " "), counted(len(clusters.words), "word"),
                     counted(len(clusters), "cluster"))
    log.info("trained in %.0f s (%s of at most %s, loss %.2f): %s attributes", training["seconds"],
             counted(training["iterations"], "L-BFGS iteration"), training["max_iterations"], training["loss"],
             len(model.attribute_index))


def _add_development(model: CrfModel, train_corpus: Corpus, dev: Corpus, documents: str,
                     function_words: tuple[str, ...] | None, progress: bool) -> None:
    """Score ``dev``, add the skip potential and the calibration factor, in the model's workspace."""
    unknown = unknown_types_warning(model, dev, "development corpus")
    if unknown is not None:
        warn(unknown)
    result = evaluate(model, dev, EvaluateOptions(), progress=progress).results[0]
    log.info("dev F1 on %s: %.2f (Viterbi)", dev.name, result.f1)
    tuned = skip_training.build(model, train_corpus, dev, model.metadata["language"], words=function_words,
                                progress=progress)
    log.info("skip potential: %s skip edges in %s, %s function words; %s", tuned.info["edges"], train_corpus.name,
             len(tuned.config.function_words), skip_training.tuning_summary(tuned))
    model.metadata["dev"] = {"corpus": dev.name, "documents": documents, "decoder": "viterbi",
                             "f1": round(result.f1, 2), "precision": round(result.precision, 2),
                             "recall": round(result.recall, 2), "skip": skip_training.dev_record(tuned)}
    model.metadata["calibration"] = fitted = calibration.fit(model, dev, progress=progress)
    log.info("calibration: every potential times %s (gold NLL per sentence on %s %.3f -> %.3f; "
             "Viterbi and exact labellings do not change)", fitted["factor"], dev.name,
             fitted["gold_nll_per_sentence"], fitted["gold_nll_per_sentence_at_factor"])
    if calibration.at_bound(fitted["factor"]):
        warn(f"the calibration factor is at its bound {fitted['factor']}: {dev.name} is fitted "
             "(almost) perfectly or not at all; is it the training corpus?")
    model.calibration = fitted["factor"]  # the entity confidences are mapped as the model will give them
    _add_confidence_map(model, dev)
    write_metadata(model.directory, model.metadata, changed=SKIP_FILES)  # skip.build wrote them


def _add_confidence_map(model: CrfModel, dev: Corpus) -> None:
    """Fit the map of ``model``'s entity confidences on ``dev`` into its metadata, and log it."""
    fitted = confidence.fit(model, dev)
    if fitted is None:
        return
    model.metadata["entity_confidence"] = fitted
    log.info("entity confidence: mapped on the log-odds (%s; labels do not change); on %s's %s, "
             "ECE %.3f before, %.3f after (the map of each half of its documents on the other half)",
             ", ".join(f"{name} {g['slope']} x + {g['intercept']}" for name, g in fitted["groups"].items()),
             dev.name, counted(fitted["entities"], "entity"), fitted["ece"], fitted.get("ece_cross_fitted", float("nan")))
