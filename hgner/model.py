"""CRF models: the one place that talks to crfsuite (training, loading, its reference tagger).

A model is a directory holding ``model.crfsuite`` (crfsuite's native file) and ``meta.json``
(labels, tag scheme, feature configuration, tokenizer, versions, training data checksum, scores).
No pickle anywhere. Loading reads crfsuite's weights into numpy arrays so a document becomes a
:class:`~hgner.graph.FactorGraph` by one sparse matrix product.

**Never trusted.** ``meta.json`` is checked against ``hgner/schemas/meta.schema.json`` (unknown
top-level fields are allowed and ignored; the fields hgner reads are checked strictly), and its
``files`` map records the size and sha256 of every model file (:data:`MODEL_FILES` present in
the folder). Loading verifies every recorded file, and that every file the model needs is
recorded, before any byte reaches crfsuite's C code: a damaged, truncated or missing file is a
one-line :class:`~hgner.errors.ModelError`, never a crash or silently wrong weights.
:func:`write_metadata` (re)writes the map; training, ``scripts/build_models.py`` and
``scripts/build_skip.py`` call it after writing files.

**Written atomically.** :func:`train` builds the model in a temporary folder beside ``out`` and
swaps it in only when it is complete and verified; a failed or interrupted training leaves the
previous model as it was. Files in ``out`` that are not model files (a README, notes) are carried
over; the previous model's files (stale ``skip.npz``/``skip.json`` included) go.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cached_property, partial
from itertools import repeat
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pycrfsuite

from . import __version__, crfsuite_format, integrity, schemes
from .corpus import Corpus, relabel_tags
from .errors import HgnerError, ModelError
from .fileio import exchange_paths, file_sha256, refuse_inputs, signals_deferred, umask, write_text
from .integrity import read_regular
from .features import (GAZETTEER_MAX_TOKENS, TABLE_FILES, TRUECASE_FILE, AttributeScores, FeatureConfig,
                       FeatureResources, document_features, fit_gazetteer, learn_truecase)
from .graph import FactorGraph
from .tokenizer import DEFAULT_LANGUAGE
from .tokenizer import describe as describe_tokenizer
from .validation import MAX_JSON_BYTES, check, check_argument, check_string_table, read_json

MODEL_FILE = "model.crfsuite"
META_FILE = "meta.json"
SKIP_FILES = ("skip.npz", "skip.json")  # the skip potential (hgner.skip): arrays, settings
MODEL_FILES = (MODEL_FILE, *TABLE_FILES.values(), *SKIP_FILES)  # the files meta.json's map covers
SEALED_FILES = (META_FILE, *MODEL_FILES)  # the files the seal covers (hgner.integrity)
_OUTSIDE_TABLES = ("gazetteer", "word_clusters", "outside_truecase")  # the feature settings that need a table from outside the corpus
MAX_META_BYTES = 2**20
MAX_CALIBRATION = 100  # the largest calibration factor (meta.schema.json's calibration.factor too)

Features = list[list[list[str]]]  # sentences -> tokens -> attribute strings


def shipped_models_dir() -> Path:
    """Where the shipped models are: the installed ``hgner.models`` package data, or the
    top-level ``models/`` folder when running from a source checkout."""
    try:
        return Path(str(resources.files("hgner.models")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / "models"


def builtin_models() -> list[str]:
    """Names of the models shipped with the package."""
    root = shipped_models_dir()
    return sorted(p.name for p in root.iterdir() if (p / META_FILE).is_file()) if root.is_dir() else []


def model_language(metadata: dict[str, Any]) -> str:
    """The language a model's ``meta.json`` records (English for a model that records none)."""
    return metadata.get("language", DEFAULT_LANGUAGE)


def model_name(directory: Path, metadata: dict[str, Any]) -> str:
    """A model's name: the one its ``meta.json`` records, else its directory's."""
    return metadata.get("name", directory.name)


def shipped_languages() -> dict[str, list[str]]:
    """The languages of the shipped models, each with its models' names (a model whose ``meta.json``
    does not read is left out: loading it says what is wrong)."""
    languages: dict[str, list[str]] = {}
    for name in builtin_models():
        try:
            language = model_language(read_metadata(shipped_models_dir() / name))
        except ModelError:
            continue
        languages.setdefault(language, []).append(name)
    return languages


def model_advice(language: str) -> str:
    """What to use for text in ``language``: the shipped models for it, or ``hgner train``."""
    shipped = shipped_languages().get(language)
    if shipped:
        return f"for {language!r} text use --model {' or '.join(shipped)}"
    return f"no shipped model is for {language!r}: hgner train --lang {language} builds one"


def model_directory(name_or_path: str | Path) -> Path:
    """A model directory from a path, or from the name of a shipped model."""
    check_argument(isinstance(name_or_path, (str, os.PathLike)), "model", "a model name or directory", name_or_path)
    path = Path(name_or_path)
    if (path / META_FILE).is_file():
        return path
    if path.name == str(name_or_path):  # a bare name: look among the shipped models
        candidate = shipped_models_dir() / str(name_or_path)
        if (candidate / META_FILE).is_file():
            return candidate
    known = ", ".join(builtin_models()) or "none installed"
    raise ModelError(f"model {str(name_or_path)!r}: not a model directory (no {META_FILE}) "
                     f"and not a shipped model (shipped: {known})")


class CrfModel:
    """A trained linear-chain CRF: its labels, feature configuration and weights as arrays.

    Attributes:
        labels: (K,) label names in the model's tag scheme.
        state_weights: (A, K) weight of each attribute for each label.
        transitions: (K, K) weight of label a followed by label b.
        calibration: the factor on every potential of the model's graphs (``meta.json``'s
            ``calibration.factor``, fitted by :func:`hgner.calibration.fit`; 1 when it records
            none). The weights above are crfsuite's as trained; :meth:`chain_graph` and the skip
            potential (:func:`hgner.skip.load`) apply the factor, so MAP labellings do not change
            with it, while marginals, confidences and samplers do.
    """

    def __init__(self, directory: Path, metadata: dict[str, Any], calibration: float | None = None) -> None:
        """``metadata`` must already be validated (:func:`read_metadata`) and the files verified
        (:func:`verify_files`); use :meth:`load`. ``calibration`` replaces the factor it records."""
        self.directory = directory
        self.metadata = metadata
        self.feature_config = FeatureConfig.from_json(metadata["features"])
        check_resources(self.feature_config, metadata.get("resources", []), directory / META_FILE)
        self.resources = FeatureResources.load(directory, metadata.get("resources", []))
        for setting in _OUTSIDE_TABLES:
            if getattr(self.feature_config, setting) and not any(getattr(self.resources, setting).values()):
                raise ModelError(f"{directory / TABLE_FILES[setting]}: no entries, but the model's features.{setting} is true")
        self.scheme: str = metadata["scheme"]
        self.calibration = float(calibration if calibration is not None
                                 else metadata.get("calibration", {}).get("factor", 1.0))
        try:
            labels, attributes, self.state_weights, self.transitions = read_crfsuite_weights(directory / MODEL_FILE)
        except ValueError as error:
            raise ModelError(f"{directory / MODEL_FILE}: {error}") from None
        if sorted(labels) != sorted(metadata["labels"]):
            raise ModelError(f"{directory / MODEL_FILE}: labels {sorted(labels)} differ from {directory / META_FILE}'s "
                             f"{sorted(metadata['labels'])}")
        self.labels: tuple[str, ...] = tuple(labels)
        self.attribute_index: dict[str, int] = {attribute: a for a, attribute in enumerate(attributes)}
        self.attribute_scores = AttributeScores(self.attribute_index, self.state_weights, self.feature_config,
                                                self.resources)

    @classmethod
    def load(cls, name_or_path: str | Path, calibration: float | None = None) -> CrfModel:
        """The model in a directory or shipped under a name, validated and checksum-verified.
        ``calibration`` replaces the factor ``meta.json`` records (1: the model as trained)."""
        if calibration is not None and not (math.isfinite(calibration) and 0 < calibration <= MAX_CALIBRATION):
            raise HgnerError(f"calibration: expected a number > 0 and at most {MAX_CALIBRATION}, got {calibration}")
        directory = model_directory(name_or_path)
        metadata = read_metadata(directory)
        verify_files(directory, metadata)
        try:
            return cls(directory, metadata, calibration)
        except OSError as error:
            raise ModelError(f"model {directory}: cannot load ({error.strerror or error})") from None

    def files(self) -> list[Path]:
        """The model's files (meta.json and every recorded file): inputs no output may overwrite."""
        return [self.directory / META_FILE, self.directory / integrity.SEAL_FILE,
                *(self.directory / name for name in self.metadata["files"])]

    @property
    def name(self) -> str:
        return model_name(self.directory, self.metadata)

    @property
    def entity_types(self) -> list[str]:
        return schemes.entity_types(self.labels)

    def gold_labels(self, tags: Sequence[str], scheme: str | None = None) -> list[str]:
        """Gold ``tags`` as the model was trained on them: entity types renamed by its label map
        (MISC -> O for a 3-class model), in ``scheme`` (the model's when None). Tags of a type it
        never saw stay as they are."""
        return relabel_tags(tags, self.metadata.get("label_map"), scheme or self.scheme)

    def features(self, sentences: Sequence[Sequence[str]]) -> Features:
        """Attributes of a document given as token lists, one list per sentence."""
        return document_features(sentences, self.feature_config, self.resources)

    def document_unary(self, sentences: Sequence[Sequence[str]]) -> np.ndarray:
        """(n, K) state scores of a document's tokens, per-word-type work cached (the tagging path):
        equal to ``unary(features(sentences))`` bit for bit."""
        return self.attribute_scores.unary(sentences)

    def unary(self, features: Features) -> np.ndarray:
        """(n, K) state scores of a document's tokens from their attribute strings: attribute
        indicator matrix times weights (each row summed in the attributes' order)."""
        flat: list = []
        lengths: list[int] = []
        for sentence in features:
            for attributes in sentence:
                flat.extend(attributes)
                lengths.append(len(attributes))
        n_attributes = len(self.attribute_index)
        columns = np.fromiter(map(self.attribute_index.get, flat, repeat(-1)), dtype=np.int64, count=len(flat))
        known = columns >= 0  # attributes the model has no weight for are left out
        rows = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)[known]
        row_ends = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=len(lengths)), out=row_ends[1:])
        import scipy.sparse  # the string path only (training, tests, the crfsuite reference): not at startup

        indicator = scipy.sparse.csr_matrix(
            (np.ones(int(known.sum())), columns[known], row_ends), shape=(len(lengths), n_attributes)
        )
        return np.asarray(indicator @ self.state_weights)

    def chain_graph(self, sentences: Sequence[Sequence[str]]) -> FactorGraph:
        """A document's factor graph: one chain per sentence, no edge across sentences; its
        potentials are the CRF's scores times :attr:`calibration`."""
        return FactorGraph.chain(self.calibration * self.document_unary(sentences), self.calibration * self.transitions,
                                 [len(s) for s in sentences], labels=self.labels)

    @cached_property
    def _crfsuite(self) -> pycrfsuite.Tagger:
        """crfsuite's own tagger on the model file, opened on first use (the reference decoder only)."""
        tagger = pycrfsuite.Tagger()
        try:
            with checked_copy(self.directory / MODEL_FILE) as copy:
                tagger.open(copy)
        except OSError as error:
            raise ModelError(f"{self.directory / MODEL_FILE}: crfsuite cannot open it ({error})") from None
        return tagger

    def crfsuite_tag(self, features: Features) -> list[list[str]]:
        """crfsuite's own Viterbi, sentence by sentence: the reference our decoders must match."""
        try:
            return [self._crfsuite.tag(sentence) if sentence else [] for sentence in features]
        except RuntimeError as error:  # what crfsuite reports (a label its hash tables do not find)
            raise ModelError(f"{self.directory / MODEL_FILE}: crfsuite: {error}") from None

    def crfsuite_marginals(self, sentence: list[list[str]]) -> np.ndarray:
        """(n, K) crfsuite's own marginals for one sentence."""
        try:
            self._crfsuite.set(sentence)
            return np.array([[self._crfsuite.marginal(label, i) for label in self.labels]
                             for i in range(len(sentence))])
        except RuntimeError as error:
            raise ModelError(f"{self.directory / MODEL_FILE}: crfsuite: {error}") from None


def read_crfsuite_weights(path: str | Path) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    """Labels, attributes, state weights (A, K) and transitions (K, K) of a crfsuite CRF1d model,
    read from crfsuite's binary file after checking every structure crfsuite itself reads
    (:func:`hgner.crfsuite_format.parse`), because crfsuite's text dump, which ``Tagger.info()``
    parses, prints weights with only six decimals and so shifts scores by up to 5e-7 per feature."""
    model = crfsuite_format.parse(read_regular(Path(path)))
    features, labels, attributes = model.features, model.labels, model.attributes
    state = features[features["type"] == 0]
    transition = features[features["type"] == 1]
    state_weights = np.zeros((len(attributes), len(labels)))
    state_weights[state["source"], state["target"]] = state["weight"]
    transitions = np.zeros((len(labels), len(labels)))
    transitions[transition["source"], transition["target"]] = transition["weight"]
    return labels, attributes, state_weights, transitions


def corpus_checksum(corpus: Corpus) -> str:
    """sha256 of the corpus file when it is one, else of its tokens and tags."""
    if corpus.file is not None:
        return file_sha256(corpus.file)
    digest = hashlib.sha256()
    for sentence in corpus.sentences:
        digest.update("\n".join(f"{t} {g}" for t, g in zip(sentence.tokens, sentence.tags)).encode())
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
        why = f" left after --drop-type {', '.join(dropped)} (it removes every type)" if dropped else ""
        raise ModelError(f"training corpus {corpus.name} has no entity types{why}: every tag is O")
    if len(labels) < 2:
        raise ModelError(f"training corpus {corpus.name} has a single label ({labels[0]}); a CRF needs at least "
                         "two (tokens outside entities are tagged O)")
    bad = [label for label in labels if not schemes.is_wellformed(label)]
    if bad:
        raise ModelError(f"training corpus {corpus.name}: label {bad[0]!r} is not O or B-/I-/E-/S- and a type of "
                         "letters, digits, '_', '.' or '-' (at most 64 characters)")
    return labels


def train(
    corpus: Corpus,
    out: str | Path,
    *,
    config: FeatureConfig = FeatureConfig(),
    scheme: str = "IO",
    c1: float = 0.05,
    c2: float = 0.01,
    max_iterations: int = 150,
    label_map: dict[str, str] | None = None,
    name: str | None = None,
    progress: bool = False,
    gazetteer: dict[str, list[str]] | None = None,
    gazetteer_sources: str | None = None,
    word_clusters: dict[str, list[str]] | None = None,
    word_clusters_sources: str | None = None,
    outside_truecase: dict[str, str] | None = None,
    outside_truecase_sources: str | None = None,
    language: str = DEFAULT_LANGUAGE,
    documents: str = "corpus",
    finish: Callable[[CrfModel], None] | None = None,
) -> CrfModel:
    """Train a linear-chain CRF with sklearn-crfsuite (L-BFGS, L1 ``c1`` + L2 ``c2``) and write
    the model directory ``out``. Gold tags are converted to ``scheme`` first; ``label_map``
    renames entity types (a type mapped to ``"O"`` is dropped, e.g. MISC for a 3-class model).
    Feature resources go into ``out`` as JSON: the truecasing table, learned from ``corpus`` when
    ``config.truecase``, and ``gazetteer`` (list name -> entries) when ``config.gazetteer``, fitted
    to ``corpus`` (:func:`hgner.features.fit_gazetteer`) and recorded with ``gazetteer_sources``, and
    ``word_clusters`` (cluster path -> words) when ``config.word_clusters``, recorded with
    ``word_clusters_sources``.
    ``language`` (ISO code) and ``documents`` (how ``corpus`` was grouped into documents, see
    :func:`hgner.corpus.regroup_documents`) are recorded in ``meta.json``. The model is built beside
    ``out`` and swapped in when complete (see the module docstring); ``finish``, when given, is
    called with the built model before that, to add files to it (the skip potential). With
    ``progress``, bars on standard error follow featurisation and the L-BFGS iterations (crfsuite's
    own log is never printed)."""
    import sklearn_crfsuite
    from tqdm import tqdm

    out = Path(out)
    if out.is_symlink():  # a link to a model directory: replace the directory, keep the link
        out = out.resolve()
    check_model_target(out, [corpus.file])
    scheme = schemes.normalize_scheme(scheme)
    if not (math.isfinite(c1) and math.isfinite(c2) and c1 >= 0 and c2 >= 0):
        raise ModelError(f"c1 and c2 must be finite and >= 0, got {c1} and {c2}")
    if max_iterations < 1:
        raise ModelError(f"max_iterations must be at least 1, got {max_iterations}")
    if config.lowercase_clusters and not config.word_clusters:
        raise ModelError("config: lowercase_clusters adds to the word-cluster features; expected word_clusters too")
    for setting, table, sources in (("gazetteer", gazetteer, gazetteer_sources),
                                    ("word_clusters", word_clusters, word_clusters_sources),
                                    ("outside_truecase", outside_truecase, outside_truecase_sources)):
        _check_outside_table(setting, table, sources, getattr(config, setting))
    truecase = learn_truecase(s.tokens for s in corpus.sentences) if config.truecase or config.gazetteer else {}
    resources = FeatureResources(truecase=truecase if config.truecase else {},
                                 gazetteer=fit_gazetteer(gazetteer, truecase) if config.gazetteer and gazetteer else {},
                                 word_clusters=word_clusters if config.word_clusters else {},
                                 outside_truecase=outside_truecase if config.outside_truecase else {})
    problem = resources.repeated_cluster_word()  # before training, as the model would be refused on loading
    if problem is not None:
        raise ModelError(f"word clusters{f' ({word_clusters_sources})' if word_clusters_sources else ''}: {problem}")
    if config.gazetteer and not resources.gazetteer:
        raise ModelError(f"the gazetteer lists keep no entry for {corpus.name} (entries of at most "
                         f"{GAZETTEER_MAX_TOKENS} tokens that it does not usually write in lower case)")
    ys = [relabel_tags(s.tags, label_map, scheme) for s in corpus.sentences]
    labels = check_training(corpus, ys, label_map)
    xs = []
    for document in tqdm(corpus.documents, desc="features", unit="doc", disable=not progress, file=sys.stderr,
                         leave=False):
        xs.extend(document_features([s.tokens for s in document.sentences], config, resources))
    with model_workspace(out) as work:
        resource_files = resources.save(work)
        started = time.perf_counter()
        with tqdm(total=max_iterations, desc="L-BFGS", unit="iteration", disable=not progress, file=sys.stderr,
                  leave=False) as bar:
            crf = sklearn_crfsuite.CRF(
                algorithm="lbfgs",
                c1=c1,
                c2=c2,
                max_iterations=max_iterations,
                all_possible_transitions=True,
                model_filename=str(work / MODEL_FILE),
                trainer_cls=partial(_IterationTrainer, bar=bar),
            )
            crf.fit(xs, ys)
        seconds = time.perf_counter() - started
        iterations = crf.training_log_.iterations
        if not iterations:
            raise ModelError(f"crfsuite's L-BFGS stopped before its first iteration (c1={c1}, c2={c2}); "
                             "smaller regularisation may help")
        try:  # crfsuite does not report a short write (a full disk): read the file back
            read_crfsuite_weights(work / MODEL_FILE)
        except (OSError, ValueError) as error:
            raise ModelError(f"{out / MODEL_FILE}: crfsuite wrote a damaged model ({error}); is the disk full?") from None
        metadata = {
            "name": name or out.name,
            "language": language,
            "scheme": scheme,
            "documents": documents,
            "labels": labels,
            "features": config.to_json(),
            "tokenizer": describe_tokenizer(),
            "hgner_version": __version__,
            "crfsuite_version": _package_version("python-crfsuite"),
            "sklearn_crfsuite_version": _package_version("sklearn-crfsuite"),
            "label_map": label_map or {},
            "resources": resource_files,
            **({"gazetteer_sources": source_line(gazetteer_sources)} if resources.gazetteer and gazetteer_sources
               else {}),
            **({"word_clusters_sources": source_line(word_clusters_sources)}
               if resources.word_clusters and word_clusters_sources else {}),
            **({"outside_truecase_sources": source_line(outside_truecase_sources)}
               if resources.outside_truecase and outside_truecase_sources else {}),
            "training": {
                "corpus": corpus.name,
                "corpus_scheme": corpus.scheme,
                "sha256": corpus_checksum(corpus),
                "sentences": len(xs),
                "tokens": sum(len(x) for x in xs),
                "algorithm": "lbfgs",
                "c1": c1,
                "c2": c2,
                "max_iterations": max_iterations,
                "iterations": len(iterations),
                "loss": round(iterations[-1]["loss"], 2),
                "seconds": round(seconds, 1),
            },
            "model_bytes": sum(p.stat().st_size for p in [work / MODEL_FILE, *(work / f for f in resource_files)]),
        }
        write_metadata(work, metadata)
        if finish is not None:
            finish(CrfModel(work, metadata))  # the files were hashed just now: not verified again
        model = CrfModel.load(work)  # checked as it will be loaded, before it replaces a previous model
    model.directory = out  # the same files, swapped in
    return model


def source_line(text: str) -> str:
    """``text`` (where a table came from) as meta.json records it: one line of at most the
    schema's ``maxLength`` of ``word_clusters_sources`` (and ``gazetteer_sources``) characters,
    control characters shown as escapes, cut with ``...``."""
    from .validation import load_schema

    longest = load_schema("meta")["properties"]["word_clusters_sources"]["maxLength"]
    line = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return line if len(line) <= longest else line[:longest - 3] + "..."


def _check_outside_table(setting: str, table: Any, sources: Any, used: bool) -> None:
    """A gazetteer or word-cluster table given to :func:`train` (``setting``), with the text saying
    where it came from: a :class:`ModelError` unless it is given exactly when ``used`` and is a
    non-empty table the model will load again (its schema, UTF-8 text, a file of at most
    :data:`~hgner.validation.MAX_JSON_BYTES`)."""
    what = setting.replace("_", " ")
    check_argument(sources is None or isinstance(sources, str), f"{setting}_sources", "a string or None", sources)
    if table is not None and not used:
        raise ModelError(f"{what} given but config.{setting} is false")
    if not used:
        return
    if not table:
        raise ModelError(f"config.{setting} needs {what}")
    where = f"{what} ({sources})" if sources else what
    check_string_table(table, setting, Path(where))
    if not any(table.values()):
        raise ModelError(f"config.{setting} needs {what}: every list given is empty")
    try:
        size = len(json.dumps(table, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    except UnicodeEncodeError:
        raise ModelError(f"{where}: a string holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not "
                         "text") from None
    if size > MAX_JSON_BYTES:
        raise ModelError(f"{where} would make a {TABLE_FILES[setting]} of {size:,} bytes, expected at most "
                         f"{MAX_JSON_BYTES:,}: keep fewer entries")


class _IterationTrainer(pycrfsuite.Trainer):
    """crfsuite's trainer, silent: each L-BFGS iteration advances ``bar`` (a tqdm) and shows the
    loss; the log is still parsed (``crf.training_log_``)."""

    def __init__(self, *, bar: Any, **options: Any) -> None:
        super().__init__(**options)
        self.bar = bar

    def message(self, message: str) -> None:
        if self.logparser.feed(message) == "iteration":
            self.bar.set_postfix(loss=f"{self.logparser.last_iteration['loss']:.1f}", refresh=False)
            self.bar.update(1)


def _package_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


def write_metadata(directory: Path, metadata: dict[str, Any], changed: Sequence[str] | None = None) -> None:
    """Write ``meta.json`` (atomically) with its ``files`` map (``{name: {"size", "sha256"}}`` of the
    model files, :data:`MODEL_FILES`, present in ``directory``): call it after adding, replacing or
    removing model files, naming them in ``changed``; the map's other entries are kept as they are
    (default: every model file is hashed again)."""
    directory = Path(directory)
    kept = {} if changed is None else {k: v for k, v in metadata.get("files", {}).items() if k not in changed}
    for name in MODEL_FILES if changed is None else changed:
        if (directory / name).is_file():
            kept[name] = {"size": (directory / name).stat().st_size, "sha256": file_sha256(directory / name)}
    metadata["files"] = {name: kept[name] for name in MODEL_FILES if name in kept}
    write_text(directory / META_FILE, json.dumps(metadata, indent=2, sort_keys=False, ensure_ascii=False) + "\n")
    integrity.seal(directory, SEALED_FILES)


def refresh_files(directory: str | Path, changed: Sequence[str] | None = None) -> None:
    """Recompute the ``files`` map of an existing model's ``meta.json`` for the files ``changed``
    (default: all; after ``skip.save`` or a script that rewrote a file). Only meta.json's JSON
    syntax is checked: this is how a model written by an older hgner, without the map, is sealed."""
    directory = Path(directory)
    metadata = read_json(directory / META_FILE, MAX_META_BYTES)
    if not isinstance(metadata, dict):
        raise ModelError(f"{directory / META_FILE}: top level: expected a JSON object")
    write_metadata(directory, metadata, changed)


def reseal(directory: Path) -> None:
    """Seal the model in ``directory`` as it is now (``python -m hgner.reseal DIR``): its
    ``files`` map and seal recomputed, then the model loaded with every check; the seal is removed
    again when it does not load."""
    refresh_files(directory)
    try:
        CrfModel.load(directory)
    except BaseException:
        (directory / integrity.SEAL_FILE).unlink(missing_ok=True)
        raise


@contextmanager
def checked_copy(path: Path) -> Iterator[str]:
    """A path crfsuite can open holding exactly the bytes of ``path`` that passed
    :func:`hgner.crfsuite_format.parse` (an anonymous in-memory file on Linux, so the file cannot
    change between the check and crfsuite's read); a :class:`ModelError` when they do not pass."""
    data = read_regular(path)
    try:
        crfsuite_format.parse(data)
    except ValueError as error:
        raise ModelError(f"{path}: {error}") from None
    if not hasattr(os, "memfd_create") or not os.path.isdir("/proc/self/fd"):
        yield str(path)  # (checked already by the seal and on loading)
        return
    fd = os.memfd_create("model.crfsuite", getattr(os, "MFD_CLOEXEC", 1))
    try:
        view = memoryview(data)
        written = 0
        while written < len(data):
            written += os.write(fd, view[written:])
        yield f"/proc/self/fd/{fd}"
    finally:
        os.close(fd)


def read_metadata(directory: Path) -> dict[str, Any]:
    """``meta.json`` of a model directory, checked against its schema after the model's seal
    (:func:`hgner.integrity.verify`: no model file changed since it was sealed)."""
    integrity.verify(directory, SEALED_FILES)
    path = directory / META_FILE
    metadata = read_json(path, MAX_META_BYTES)
    check(metadata, "meta", path)
    problem = schemes.label_problem(metadata["labels"], metadata["scheme"])
    if problem is not None:
        raise ModelError(f"{path}: labels do not fit scheme {metadata['scheme']}: {problem}")
    return metadata


def check_resources(config: FeatureConfig, resources: Sequence[str], path: Path) -> None:
    """A :class:`ModelError` naming ``path`` (meta.json) when its ``resources`` do not go with its
    features: the gazetteer features need gazetteer.json and the word-cluster features
    word_clusters.json, and nothing else reads either; truecase.json is read only by the truecase
    features (which may do without: a corpus can teach no table)."""
    for setting in _OUTSIDE_TABLES:
        used, file_name = getattr(config, setting), TABLE_FILES[setting]
        if used != (file_name in resources):
            raise ModelError(f"{path}: features.{setting} is {str(used).lower()} but resources "
                             f"{'lack' if used else 'list'} {file_name}")
    if TRUECASE_FILE in resources and not config.truecase:
        raise ModelError(f"{path}: resources list {TRUECASE_FILE} but features.truecase is false")


def verify_files(directory: Path, metadata: dict[str, Any]) -> None:
    """Check that every file ``metadata["files"]`` records is in ``directory`` with its size and
    sha256, and that the files the model needs are recorded; a :class:`ModelError` otherwise."""
    recorded = metadata["files"]
    needed = [MODEL_FILE, *metadata.get("resources", [])]
    for name in needed:
        if name not in recorded:
            raise ModelError(f"{directory / META_FILE}: files: {name} is not recorded (the model needs it; "
                             "a model written by an older hgner: retrain it)")
    for name, expected in recorded.items():
        path = directory / name
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            raise ModelError(f"{path}: missing ({META_FILE} names it but the model folder lacks it)") from None
        except OSError as error:
            raise ModelError(f"{path}: cannot read ({error.strerror or error})") from None
        if size != expected["size"]:
            raise ModelError(f"{path}: damaged: {size} bytes, {META_FILE} records {expected['size']}")
        try:
            digest = file_sha256(path)
        except OSError as error:
            raise ModelError(f"{path}: cannot read ({error.strerror or error})") from None
        if digest != expected["sha256"]:
            raise ModelError(f"{path}: damaged: its sha256 differs from the one {META_FILE} records")


def check_model_target(out: Path, inputs: Iterable[str | Path | None] = ()) -> None:
    """A :class:`ModelError` unless ``out`` can become a model directory: missing, an empty
    folder, or a writable model directory (which is replaced, keeping files that are not
    model files) none of whose model files is one of ``inputs`` (the files training reads; see
    :func:`~hgner.fileio.refuse_inputs`)."""
    inputs = list(inputs)
    for name in (META_FILE, *MODEL_FILES):
        refuse_inputs(out / name, inputs, "--out")
    if out.is_symlink() or out.exists():
        if not out.is_dir():
            raise ModelError(f"{out}: exists and is not a directory; expected a model directory to write")
        if not stat.S_IMODE(out.stat().st_mode) & stat.S_IWUSR:
            raise ModelError(f"{out}: the model directory is read-only; refusing to replace it")
        if any(out.iterdir()) and not (out / META_FILE).is_file():
            raise ModelError(f"{out}: exists and is not a model directory (no {META_FILE}); refusing to write "
                             "a model among its files")
    parent = out.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise ModelError(f"{out}: cannot create the model directory ({parent} is not a writable folder)")


@contextmanager
def model_workspace(out: Path) -> Iterator[Path]:
    """A temporary folder beside ``out`` to build a model in; when the block succeeds it becomes
    ``out`` (see :func:`_swap_in`), when it fails or is interrupted it is deleted."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".part", dir=out.parent))
        work.chmod(0o777 & ~umask())  # mkdtemp's folder is private; a model directory is made as mkdir makes one
    except OSError as error:
        raise ModelError(f"{out}: cannot create the model directory ({error.strerror or error})") from None
    try:
        yield work
        _swap_in(work, out)
    except OSError as error:
        shutil.rmtree(work, ignore_errors=True)
        raise ModelError(f"{out}: cannot write the model ({error.strerror or error})") from None
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _swap_in(work: Path, out: Path) -> None:
    """Make the complete model in ``work`` the directory ``out``. An existing ``out`` is swapped
    with ``work`` in one step where the system can (Linux's ``RENAME_EXCHANGE``), else renamed
    aside first, with signals held back between the two renames; its files that are not model files are moved into the
    new model (unless the new model has one of that name), its model files are deleted with it. On
    failure the previous ``out`` is restored."""
    if not out.exists():
        os.rename(work, out)
        return
    check_model_target(out)
    with signals_deferred():  # SIGINT/SIGTERM/SIGHUP wait until the swap and the carrying over are done
        if exchange_paths(work, out):  # one step: out holds the old model, then the new one, never nothing
            old = work
        else:  # two renames
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
            os.rmdir(old)
            os.rename(out, old)
            try:
                os.rename(work, out)
            except BaseException:
                os.rename(old, out)
                raise
        ours = {META_FILE, *MODEL_FILES, integrity.SEAL_FILE}
        for entry in list(old.iterdir()):
            if entry.name not in ours and not (out / entry.name).exists():
                os.rename(entry, out / entry.name)  # the user's file: carried over, never deleted
        shutil.rmtree(old)
