"""The CRF model: :class:`CrfModel`, a trained linear-chain CRF's labels, feature configuration
and weights as numpy arrays, so a document becomes a :class:`~hgner.graph.factor_graph.FactorGraph` by one
sparse matrix product. Its folder on disk is :mod:`hgner.crf.modelfiles`' business, crfsuite's file
and tagger :mod:`hgner.crf.crfsuite_adapter`'s, and training :mod:`hgner.training`'s."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cached_property
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np

from ..core import schemes
from ..core.errors import HgnerError, ModelError, named, warn
from ..core.integrity import SEAL_FILE
from ..features import (
    TABLE_FILES,
    WORD_FREQUENCY_FILE,
    AttributeScores,
    FeatureConfig,
    FeatureResources,
    document_features,
)
from ..features.scores import given_width, marks
from ..features.typecache import TYPES_FILE, TypeCache, load_type_cache, made_for
from ..graph.factor_graph import FactorGraph
from ..text.sentence_starts import INSIDE, START, SentenceStarts, recorded_penalty
from .crfsuite_adapter import open_tagger, read_crfsuite_weights
from .modelfiles import (
    _OUTSIDE_TABLES,
    META_FILE,
    MODEL_FILE,
    STARTS_FILE,
    check_resources,
    model_directory,
    model_name,
    read_metadata,
    verify_files,
)

MAX_CALIBRATION = 100  # the largest calibration factor (meta.schema.json's calibration.factor too)
CONFIDENCE_GROUPS = ("known", "new")  # an entity of words of the training corpus (CrfModel.knows), or a new name
CONFIDENCE_CLIP = 1e-6  # confidences are clipped to [CLIP, 1 - CLIP] before their log-odds are taken

Features = list[list[list[str]]]  # sentences -> tokens -> attribute strings


def numbered_sentences(documents: Sequence[Sequence[Sequence[str]]]) -> tuple[list[Sequence[str]], np.ndarray]:
    """The sentences of several documents in order, and (S,) each one's document number: what
    :meth:`CrfModel.document_unary` takes to featurise them together, each as if alone."""
    sentences = [sentence for document in documents for sentence in document]
    return sentences, np.repeat(np.arange(len(documents)), [len(document) for document in documents])


def type_cache_key(metadata: dict[str, Any]) -> str:
    """The :func:`~hgner.features.typecache.made_for` of a model: its features, weights and word tables."""
    depends = {MODEL_FILE, *TABLE_FILES.values()}
    return made_for(metadata["features"], {k: v for k, v in metadata["files"].items() if k in depends})


def log_odds(confidence: Any) -> Any:
    """The log-odds of a confidence or of (N,) confidences, clipped to [:data:`CONFIDENCE_CLIP`, 1 - it] first."""
    clipped = np.clip(confidence, CONFIDENCE_CLIP, 1 - CONFIDENCE_CLIP)
    return np.log(clipped / (1 - clipped))


class ConfidenceMap:
    """The map of an entity's confidence fitted on a development corpus (``meta.json``'s
    ``entity_confidence``, fitted by :func:`hgner.training.confidence.fit`): for each group of
    :data:`CONFIDENCE_GROUPS`, ``p -> sigmoid(slope * logit(p) + intercept)``, increasing in ``p``
    (``slope > 0``, checked by ``meta.schema.json``)."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.groups = {name: (float(record["groups"][name]["slope"]), float(record["groups"][name]["intercept"]))
                       for name in CONFIDENCE_GROUPS}

    def __call__(self, confidence: np.ndarray, known: np.ndarray) -> np.ndarray:
        """(N,) the mapped confidences of (N,) ``confidence``s of entities of known words or not
        (``known``, (N,) booleans)."""
        slope, intercept = (np.where(known, self.groups["known"][k], self.groups["new"][k]) for k in (0, 1))
        return _sigmoid(slope * log_odds(np.asarray(confidence, dtype=float)) + intercept)

    def one(self, confidence: float, known: bool) -> float:
        """The mapped confidence of one entity (as :meth:`__call__`, without building arrays: it is
        called for every entity tagged)."""
        slope, intercept = self.groups["known" if known else "new"]
        return float(_sigmoid(slope * log_odds(confidence) + intercept))


def _sigmoid(x: Any) -> Any:
    """The logistic function of ``x`` (a number or an array), computed stably."""
    return np.exp(-np.logaddexp(0, -x))


class CrfModel:
    """A trained linear-chain CRF: its labels, feature configuration and weights as arrays.

    Attributes:
        labels: (K,) label names in the model's tag scheme.
        state_weights: (A, K) weight of each attribute for each label.
        transitions: (K, K) weight of label a followed by label b.
        calibration: the factor on every potential of the model's graphs (``meta.json``'s
            ``calibration.factor``, fitted by :func:`hgner.calibration.fit`; 1 when it records
            none). The weights above are crfsuite's as trained; :meth:`chain_graph` and the skip
            potential (:func:`hgner.crf.skip.load`) apply the factor, so MAP labellings do not change
            with it, while marginals, confidences and samplers do.
        confidence_map: the map of entity confidences fitted on the development corpus
            (:class:`ConfidenceMap`; ``meta.json``'s ``entity_confidence``), or None: a model without
            one or without its training corpus's words (``types.npz``, which the map's groups need),
            or one loaded with another ``calibration`` than the one the map was fitted at.
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
            if getattr(self.feature_config, setting) and not self.resources.has_entries(setting):
                raise ModelError(f"{directory / TABLE_FILES[setting]}: no entries, but the model's features.{setting} is true")
        table = self.resources.word_frequency
        if table is not None and table.language != self.feature_config.frequency:
            raise ModelError(f"{directory / WORD_FREQUENCY_FILE}: made for language {table.language!r}, "
                             f"expected the features' {self.feature_config.frequency!r}")
        self.scheme: str = metadata["scheme"]
        recorded = float(metadata.get("calibration", {}).get("factor", 1.0))
        self.calibration = float(calibration if calibration is not None else recorded)
        self.confidence_map = (ConfidenceMap(metadata["entity_confidence"])
                               if "entity_confidence" in metadata and self.calibration == recorded else None)
        try:
            labels, attributes, self.state_weights, self.transitions = read_crfsuite_weights(directory / MODEL_FILE)
        except ValueError as error:
            raise ModelError(f"{directory / MODEL_FILE}: {error}") from None
        if sorted(labels) != sorted(metadata["labels"]):
            raise ModelError(f"{directory / MODEL_FILE}: labels {sorted(labels)} differ from {directory / META_FILE}'s "
                             f"{sorted(metadata['labels'])}")
        self.labels: tuple[str, ...] = tuple(labels)
        self.attribute_index: dict[str, int] = dict(zip(attributes, range(len(attributes))))
        self._types = self._type_cache(len(attributes))
        self.attribute_scores = AttributeScores(self.attribute_index, self.state_weights, self.feature_config,
                                                self.resources, self._types)
        if self._types is None:  # the map's groups need the training corpus's words
            self.confidence_map = None

    @cached_property
    def sentence_starts(self) -> SentenceStarts | None:
        """The sentence starts learned from the training corpus (``sentence_starts.crfsuite``,
        :mod:`hgner.text.sentence_starts`), or None for a model without them (the rules alone); with the
        penalty ``meta.json`` records (:func:`~hgner.text.sentence_starts.recorded_penalty`)."""
        if STARTS_FILE not in self.metadata.get("files", {}):
            return None
        path = self.directory / STARTS_FILE
        try:
            labels, attributes, state_weights, transitions = read_crfsuite_weights(path)
        except ValueError as error:
            raise ModelError(f"{path}: {error}") from None
        if sorted(labels) != sorted((START, INSIDE)):
            raise ModelError(f"{path}: expected the labels {START}, {INSIDE}, got {', '.join(labels)}")
        return SentenceStarts(labels, attributes, state_weights, transitions, recorded_penalty(self.metadata))

    def _type_cache(self, attributes: int) -> TypeCache | None:
        """The word types of the training corpus and their rows (``types.npz``, made when the model
        was built), when the model has them and they were made for it; the model has ``attributes``."""
        if TYPES_FILE not in self.metadata.get("files", {}):
            return None
        path, config = self.directory / TYPES_FILE, self.feature_config
        types = load_type_cache(path, type_cache_key(self.metadata), marks(config), len(self.labels), attributes,
                                given_width(config))
        if types is None:
            effect = ("slower at first, and its entity confidences are not mapped (the map needs the training words)"
                      if "entity_confidence" in self.metadata else "slower at first, not different")
            warn(f"{path}: made for other features, weights or word tables than the model's "
                 f"(a meta.json edited by hand?): not used; tagging is then {effect}")
        return types

    @classmethod
    def load(cls, name_or_path: str | Path, calibration: float | None = None) -> CrfModel:
        """The model in a directory or shipped under a name, validated and checksum-verified.
        ``calibration`` replaces the factor ``meta.json`` records (1: the model as trained)."""
        if calibration is not None and not (math.isfinite(calibration) and 0 < calibration <= MAX_CALIBRATION):
            raise HgnerError(f"{named('calibration')}: expected a number > 0 and at most {MAX_CALIBRATION}, got {calibration}")
        directory = model_directory(name_or_path)
        metadata = read_metadata(directory)
        verify_files(directory, metadata)
        try:
            return cls(directory, metadata, calibration)
        except OSError as error:
            raise ModelError(f"model {directory}: cannot load ({error.strerror or error})") from None

    def files(self) -> list[Path]:
        """The model's files (meta.json and every recorded file): inputs no output may overwrite."""
        return [self.directory / META_FILE, self.directory / SEAL_FILE,
                *(self.directory / name for name in self.metadata["files"])]

    @cached_property
    def training_words(self) -> frozenset[str] | None:
        """The word types of the training corpus (``types.npz``, :mod:`hgner.features.typecache`),
        or None for a model without them (or whose file was made for other features)."""
        return None if self._types is None else frozenset(self._types.words)

    def knows(self, tokens: Sequence[str]) -> bool:
        """Whether every one of ``tokens`` is a word of the training corpus (:attr:`training_words`):
        an entity of known words, not a new name. False for a model without its training words."""
        words = self.training_words
        return words is not None and all(token in words for token in tokens)

    def entity_confidence(self, confidence: float, tokens: Sequence[str]) -> float:
        """The confidence reported for an entity of ``tokens`` whose tokens' least marginal of its
        label is ``confidence``: mapped by :attr:`confidence_map` when the model has one."""
        if self.confidence_map is None:
            return confidence
        return self.confidence_map.one(confidence, self.knows(tokens))

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
        return schemes.relabel_tags(tags, self.metadata.get("label_map"), scheme or self.scheme)

    def features(self, sentences: Sequence[Sequence[str]]) -> Features:
        """Attributes of a document given as token lists, one list per sentence."""
        return document_features(sentences, self.feature_config, self.resources)

    def document_unary(self, sentences: Sequence[Sequence[str]], documents: np.ndarray | None = None) -> np.ndarray:
        """(n, K) state scores of a document's tokens, per-word-type work cached (the tagging path):
        equal to ``unary(features(sentences))`` bit for bit. With ``documents`` (S,), each
        sentence's document number: several documents at once, each scored as if alone."""
        return self.attribute_scores.unary(sentences, documents)

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

    def chain_graph(self, sentences: Sequence[Sequence[str]], documents: np.ndarray | None = None) -> FactorGraph:
        """A document's factor graph: one chain per sentence, no edge across sentences; its
        potentials are the CRF's scores times :attr:`calibration`. ``documents``: as
        :meth:`document_unary`'s."""
        return FactorGraph.chain(self.calibration * self.document_unary(sentences, documents),
                                 self.calibration * self.transitions,
                                 [len(s) for s in sentences], labels=self.labels)

    def chain_graphs(self, documents: Sequence[Sequence[Sequence[str]]]) -> list[FactorGraph]:
        """Each document's :meth:`chain_graph`, the documents featurised together (each as if alone)."""
        unary = self.calibration * self.document_unary(*numbered_sentences(documents))
        graphs, start = [], 0
        for document in documents:
            size = sum(map(len, document))
            graphs.append(FactorGraph.chain(unary[start:start + size], self.calibration * self.transitions,
                                            [len(s) for s in document], labels=self.labels))
            start += size
        return graphs

    @cached_property
    def _crfsuite(self) -> Any:
        """crfsuite's own tagger on the model file, opened on first use (the reference decoder only)."""
        return open_tagger(self.directory / MODEL_FILE)

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


