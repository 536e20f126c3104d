"""Fitting a linear-chain CRF into a model folder: featurise the corpus, run crfsuite's L-BFGS
(:mod:`hgner.crf.crfsuite_adapter`), write the feature tables and ``meta.json``. :func:`train` does it
atomically into a model directory; :func:`fit_into` into a workspace that a caller completes
(``hgner train``'s development figures) before it is swapped in."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ..core import schemes
from ..core.errors import ModelError, named
from ..core.fileio import file_sha256
from ..core.validation import MAX_JSON_BYTES, check_argument, check_string_table, load_schema
from ..core.version import __version__
from ..crf.crfsuite_adapter import fit, read_crfsuite_weights
from ..crf.model import CrfModel, type_cache_key
from ..crf.modelfiles import MODEL_FILE, STARTS_FILE, check_model_target, model_workspace, write_metadata
from ..data.corpus import Corpus
from ..features import (
    GAZETTEER_MAX_TOKENS,
    AttributeScores,
    FeatureResources,
    FrequencyTable,
    document_features,
    fit_gazetteer,
    learn_truecase,
)
from ..features.config import CLUSTER_TABLES, table_schema
from ..features.typecache import TYPES_FILE
from ..text import sentence_starts
from ..text.tokenizer import describe as describe_tokenizer
from .options import TABLES, TrainOptions, WordTables

SOURCE_MARK = "\u00a7"  # starts the base corpus's own copy of an attribute (feature augmentation)


@dataclass(frozen=True)
class Adapted:
    """A training that adapts a base model (:mod:`hgner.training.adapt`): the first
    ``source_documents`` documents of the corpus (the base corpus's) also get a copy of every
    attribute (:func:`source_copies`); ``record`` is ``meta.json``'s ``adaptation``."""

    source_documents: int
    record: dict[str, Any]


def train(corpus: Corpus, out: str | Path, options: TrainOptions | None = None, tables: WordTables | None = None, *,
          progress: bool = False, finish: Callable[[CrfModel], None] | None = None) -> CrfModel:
    """Train a linear-chain CRF on ``corpus`` as ``options`` say and write the model directory
    ``out``: built beside it and swapped in when complete and verified (a failed or interrupted
    training leaves the previous model as it was; see :func:`~hgner.crf.modelfiles.model_workspace`).
    ``finish``, when given, is called with the built model before that, to add files to it. With
    ``progress``, bars on standard error follow featurisation and the L-BFGS iterations."""
    out = Path(out)
    if out.is_symlink():  # a link to a model directory: replace the directory, keep the link
        out = out.resolve()
    check_model_target(out, [corpus.file])
    with model_workspace(out) as work:
        built = fit_into(work, corpus, options or TrainOptions(), tables or WordTables(), progress=progress,
                         name=out.name)
        if finish is not None:
            finish(built)
        model = CrfModel.load(work)  # checked as it will be loaded, before it replaces a previous model
    model.directory = out  # the same files, swapped in
    return model


def fit_into(work: Path, corpus: Corpus, options: TrainOptions, tables: WordTables, *, progress: bool = False,
             name: str | None = None, adapted: Adapted | None = None) -> CrfModel:
    """Train into the folder ``work``: gold tags put in ``options.scheme`` with its label map; the
    truecasing table learned from ``corpus`` (``config.truecase``), the gazetteer fitted to it
    (:func:`hgner.features.fit_gazetteer`), the word clusters as given; returns the model (its
    files hashed into ``meta.json`` just now, not verified again). ``adapted``: a training that
    adapts a base model (its base documents' attributes also in a copy of their own)."""
    resources = _resources(corpus, options, tables)
    ys = [schemes.relabel_tags(s.tags or [], options.label_map, options.scheme) for s in corpus.sentences]
    labels = check_training(corpus, ys, dict(options.label_map or {}))
    source_documents = adapted.source_documents if adapted is not None else 0
    xs = []
    for k, document in enumerate(tqdm(corpus.documents, desc="features", unit="doc", disable=not progress,
                                      file=sys.stderr, leave=False)):
        features = document_features([s.tokens for s in document.sentences], options.config, resources)
        xs.extend(source_copies(features) if k < source_documents else features)
    resource_files = resources.save(work)
    iterations, seconds = _fit_checked(xs, ys, work / MODEL_FILE, options.c1, options.c2, options.max_iterations,
                                       "L-BFGS", progress)
    starts = _fit_starts(work, corpus, options.sentence_start_penalty, progress)
    training = {"corpus": corpus.name, "corpus_scheme": corpus.scheme, "sha256": corpus_checksum(corpus),
                "sentences": len(xs), "tokens": sum(len(x) for x in xs), "algorithm": "lbfgs", "c1": options.c1,
                "c2": options.c2, "max_iterations": options.max_iterations, "iterations": len(iterations),
                "loss": round(iterations[-1]["loss"], 2), "seconds": round(seconds, 1)}
    metadata = _metadata(options, tables, resources, labels, training, name or work.name)
    if adapted is not None:
        metadata["adaptation"] = adapted.record
    metadata["resources"] = resource_files
    metadata["sentence_starts"] = starts
    metadata["model_bytes"] = sum(p.stat().st_size for p in [work / MODEL_FILE, work / STARTS_FILE,
                                                             *(work / f for f in resource_files)])
    metadata = _ordered(metadata)
    write_metadata(work, metadata)
    model = CrfModel(work, metadata)
    write_type_cache(model, corpus)
    return model


def source_copies(features: list[list[list[str]]]) -> list[list[list[str]]]:
    """Every attribute of a document's ``features`` and its copy marked :data:`SOURCE_MARK`: the
    base corpus's own weights in feature augmentation (Daumé III 2007), which text tagged never has."""
    return [[[*token, *(SOURCE_MARK + a for a in token)] for token in sentence] for sentence in features]


def _fit_checked(xs: list, ys: list, path: Path, c1: float, c2: float, max_iterations: int, what: str,
                 progress: bool) -> tuple[list[dict[str, Any]], float]:
    """crfsuite's L-BFGS on ``xs``/``ys`` into ``path`` (a bar named ``what`` with ``progress``),
    the file read back; crfsuite's log of the iterations and the seconds it took."""
    started = time.perf_counter()
    with tqdm(total=max_iterations, desc=what, unit="iteration", disable=not progress, file=sys.stderr,
              leave=False) as bar:
        iterations = fit(xs, ys, path, c1=c1, c2=c2, max_iterations=max_iterations, bar=bar)
    seconds = time.perf_counter() - started
    if not iterations:
        raise ModelError(f"crfsuite's L-BFGS stopped before its first iteration (c1={c1}, c2={c2}); "
                         "smaller regularisation may help")
    try:  # crfsuite does not report a short write (a full disk): read the file back
        read_crfsuite_weights(path)
    except (OSError, ValueError) as error:
        raise ModelError(f"{path}: crfsuite wrote a damaged model ({error}); is the disk full?") from None
    return iterations, seconds


def _fit_starts(work: Path, corpus: Corpus, ended_penalty: float, progress: bool) -> dict[str, Any]:
    """Fit the sentence starts (:mod:`hgner.text.sentence_starts`) on ``corpus``'s cased documents into
    ``work``; returns what ``meta.json`` records of it (with the penalty they apply inside a sentence
    the rules ended)."""
    xs, ys = sentence_starts.training_sequences([s.tokens for s in document.sentences] for document in corpus.documents)
    if not xs:
        raise ModelError(f"training corpus {corpus.name}: no document with both upper- and lower-case letters to "
                         "learn sentence starts from")
    c1, c2, most = sentence_starts.C1, sentence_starts.C2, sentence_starts.MAX_ITERATIONS
    iterations, seconds = _fit_checked(xs, ys, work / STARTS_FILE, c1, c2, most, "sentence starts", progress)
    return {"sequences": len(xs), "tokens": sum(len(x) for x in xs), "c1": c1, "c2": c2, "max_iterations": most,
            "iterations": len(iterations), "seconds": round(seconds, 1), "ended_penalty": ended_penalty}


def write_type_cache(model: CrfModel, corpus: Corpus) -> None:
    """Save with ``model`` the word types of its training ``corpus`` and their rows
    (:mod:`hgner.features.typecache`): the state of its tagging path after scoring every document."""
    scores = AttributeScores(model.attribute_index, model.state_weights, model.feature_config, model.resources)
    for document in corpus.documents:
        scores.unary([s.tokens for s in document.sentences])
    scores.type_cache(type_cache_key(model.metadata)).save(model.directory / TYPES_FILE)
    write_metadata(model.directory, model.metadata, changed=[TYPES_FILE])


_META_ORDER = ("name", "language", "scheme", "documents", "labels", "features", "tokenizer", "hgner_version",
               "crfsuite_version", "sklearn_crfsuite_version", "label_map", "resources", "gazetteer_sources",
               "word_clusters_sources", "outside_truecase_sources", "capitalised_share_sources", "vector_clusters_sources",
               "training", "adaptation", "sentence_starts", "model_bytes")


def _ordered(metadata: dict[str, Any]) -> dict[str, Any]:
    """``metadata`` with its keys in ``meta.json``'s order."""
    return {key: metadata[key] for key in _META_ORDER if key in metadata}


def _metadata(options: TrainOptions, tables: WordTables, resources: FeatureResources, labels: list[str],
              training: dict[str, Any], name: str) -> dict[str, Any]:
    """``meta.json`` of a model trained as ``options`` say (without its files)."""
    metadata: dict[str, Any] = {
        "name": options.name or name, "language": options.language, "scheme": options.scheme,
        "documents": options.documents, "labels": labels, "features": options.config.to_json(),
        "tokenizer": describe_tokenizer(), "hgner_version": __version__,
        "crfsuite_version": _package_version("python-crfsuite"),
        "sklearn_crfsuite_version": _package_version("sklearn-crfsuite"),
        "label_map": dict(options.label_map or {}), "training": training,
    }
    for setting in TABLES:
        _, sources = tables.table(setting)
        if getattr(resources, setting) and sources:
            metadata[f"{setting}_sources"] = source_line(sources)
    return metadata


def _resources(corpus: Corpus, options: TrainOptions, tables: WordTables) -> FeatureResources:
    """The feature tables of a model trained on ``corpus``, checked before any training."""
    config = options.config
    for setting in TABLES:
        _check_outside_table(setting, *tables.table(setting), bool(getattr(config, setting)))
    truecase = learn_truecase(s.tokens for s in corpus.sentences) if config.truecase or config.gazetteer else {}
    gazetteer, word_clusters, vector_clusters = tables.gazetteer, tables.word_clusters, tables.vector_clusters
    resources = FeatureResources(truecase=truecase if config.truecase else {},
                                 gazetteer=fit_gazetteer(gazetteer, truecase) if config.gazetteer and gazetteer else {},
                                 word_clusters=word_clusters if config.word_clusters and word_clusters else {},
                                 outside_truecase=tables.outside_truecase if config.outside_truecase
                                 and tables.outside_truecase else {},
                                 capitalised_share=tables.capitalised_share if config.capitalised_share
                                 and tables.capitalised_share else {},
                                 word_frequency=FrequencyTable.from_wordfreq(config.frequency) if config.frequency else None,
                                 vector_clusters=vector_clusters if config.vector_clusters and vector_clusters else {})
    # (checked before training, as the model would be refused on loading)
    for setting, problem in (*((table, resources.repeated_cluster_word(table)) for table in CLUSTER_TABLES),
                             ("capitalised_share", resources.repeated_share_word())):
        if problem is not None:
            sources = tables.table(setting)[1]
            raise ModelError(f"{setting.replace('_', ' ')}{f' ({sources})' if sources else ''}: {problem}")
    if config.gazetteer and not resources.gazetteer:
        raise ModelError(f"the gazetteer lists keep no entry for {corpus.name} (entries of at most "
                         f"{GAZETTEER_MAX_TOKENS} tokens that it does not usually write in lower case)")
    return resources


def corpus_checksum(corpus: Corpus) -> str:
    """sha256 of the corpus file when it is one, else of its tokens and tags."""
    if corpus.file is not None:
        return file_sha256(corpus.file)
    digest = hashlib.sha256()
    for sentence in corpus.sentences:
        digest.update("\n".join(f"{t} {g}" for t, g in zip(sentence.tokens, sentence.tags or [])).encode())
        digest.update(b"\n\n")
    return digest.hexdigest()


def check_training(corpus: Corpus, ys: list[list[str]], label_map: dict[str, str] | None) -> list[str]:
    """The sorted labels of the training tags ``ys``, or a :class:`ModelError` saying why
    ``corpus`` cannot train a model: no tokens, no entity types, a single label, a bad label name."""
    if not any(ys):
        raise ModelError(f"training corpus {corpus.name} is empty (no tokens)")
    labels = sorted({tag for tags in ys for tag in tags})
    if labels == ["O"]:
        dropped = sorted(t for t, new in (label_map or {}).items() if new == "O")
        why = f" left after dropping {', '.join(dropped)} ({named('drop_types')}: it removes every type)" if dropped else ""
        raise ModelError(f"training corpus {corpus.name} has no entity types{why}: every tag is O")
    if len(labels) < 2:
        raise ModelError(f"training corpus {corpus.name} has a single label ({labels[0]}); a CRF needs at least "
                         "two (tokens outside entities are tagged O)")
    bad = [label for label in labels if not schemes.is_wellformed(label)]
    if bad:
        raise ModelError(f"training corpus {corpus.name}: label {bad[0]!r} is not O or B-/I-/E-/S- and a type of "
                         "letters, digits, '_', '.' or '-' (at most 64 characters)")
    return labels


def source_line(text: str) -> str:
    """``text`` (where a table came from) as meta.json records it: one line of at most the
    schema's ``maxLength`` of ``word_clusters_sources`` (and ``gazetteer_sources``) characters,
    control characters shown as escapes, cut with ``...``."""
    longest = load_schema("meta")["properties"]["word_clusters_sources"]["maxLength"]
    line = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return line if len(line) <= longest else line[:longest - 3] + "..."


def _check_outside_table(setting: str, table: Any, sources: Any, used: bool) -> None:
    """A table from outside the corpus given to :func:`train` (``setting``), with the text saying
    where it came from: a :class:`ModelError` unless it is given exactly when ``used`` and is a
    non-empty table the model will load again (its schema, UTF-8 text, a file of at most
    :data:`~hgner.core.validation.MAX_JSON_BYTES`)."""
    what = setting.replace("_", " ")
    check_argument(sources is None or isinstance(sources, str), f"{setting}_sources", "a string or None", sources)
    if table is not None and not used:
        raise ModelError(f"{what} given but config.{setting} is false")
    if not used:
        return
    if not table:
        raise ModelError(f"config.{setting} needs {what}")
    where = f"{what} ({sources})" if sources else what
    check_string_table(table, table_schema(setting), Path(where))
    if not any(table.values()):
        raise ModelError(f"config.{setting} needs {what}: every list given is empty")
    try:
        size = len(json.dumps(table, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    except UnicodeEncodeError:
        raise ModelError(f"{where}: a string holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not "
                         "text") from None
    if size > MAX_JSON_BYTES:
        raise ModelError(f"{where}: {size:,} bytes as JSON, expected at most {MAX_JSON_BYTES:,}: keep fewer entries")


def _package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"
