"""What a training run is given, checked when built: :class:`TrainOptions` (the CRF's features,
scheme, regularisation, label map, language) and :class:`WordTables` (gazetteer lists and word
clusters from outside the corpus, with where they came from)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core import schemes
from ..core.errors import ModelError, named
from ..core.validation import check_argument
from ..features import FeatureConfig
from ..features.frequencies import check_frequency_language
from ..text.languages import language_defaults
from ..text.sentence_starts import ENDED_PENALTY, MAX_PENALTY
from ..text.tokenizer import DEFAULT_LANGUAGE

WordTable = dict[str, list[str]]  # list name or cluster path -> words
# the feature settings whose table comes from outside
TABLES = ("gazetteer", "word_clusters", "outside_truecase", "capitalised_share", "vector_clusters")


@dataclass(frozen=True)
class TrainOptions:
    """How to fit the CRF. ``config``: the features; ``scheme``: the tag scheme the model predicts;
    ``c1``, ``c2``: L1 and L2 regularisation; ``max_iterations``: of L-BFGS; ``label_map``: entity
    types renamed (a type mapped to ``"O"`` is dropped, e.g. MISC for a 3-class model);
    ``language``: ISO code, recorded in ``meta.json`` for tagging; ``documents``: how the corpus
    was grouped into documents (recorded); ``name``: the model's (default: its folder's);
    ``sentence_start_penalty``: what a learned sentence start must beat inside a sentence the rules
    ended (:mod:`hgner.text.sentence_starts`; lower cuts more, recorded in ``meta.json``)."""

    config: FeatureConfig = FeatureConfig()
    scheme: str = "IO"
    c1: float = 0.05
    c2: float = 0.01
    max_iterations: int = 150
    label_map: Mapping[str, str] | None = dataclasses.field(default_factory=dict)
    language: str = DEFAULT_LANGUAGE
    documents: str = "corpus"
    name: str | None = None
    sentence_start_penalty: float = ENDED_PENALTY

    def __post_init__(self) -> None:
        check_argument(isinstance(self.config, FeatureConfig), "config", "a FeatureConfig", self.config)
        try:
            object.__setattr__(self, "scheme", schemes.normalize_scheme(self.scheme))
        except ValueError as error:
            raise ModelError(f"{named('model_scheme')}: {error}") from None
        for name in ("c1", "c2"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ModelError(f"{named(name)} must be finite and >= 0, got {value}")
        penalty = self.sentence_start_penalty
        if not (isinstance(penalty, (int, float)) and 0 <= penalty <= MAX_PENALTY):
            raise ModelError(f"{named('sentence_start_penalty')} must be from 0 to {MAX_PENALTY:g}, got {penalty}")
        if not (isinstance(self.max_iterations, int) and self.max_iterations >= 1):
            raise ModelError(f"{named('max_iterations')} must be at least 1, got {self.max_iterations}")
        check_argument(self.label_map is None or isinstance(self.label_map, Mapping), "label_map",
                       "a mapping of entity types", self.label_map)
        if (self.config.lowercase_clusters or self.config.neighbour_clusters) and not self.config.word_clusters:
            raise ModelError(f"{named('lowercase_clusters')} and {named('neighbour_clusters')} add to the word-cluster "
                             f"features: give {named('word_clusters')} too")
        if self.config.neighbour_shares and not self.config.capitalised_share:
            raise ModelError(f"{named('neighbour_shares')} adds to the capitalised-share features: give "
                             f"{named('capitalised_share')} too")
        language_defaults(self.language)  # an unknown language code fails before any corpus is read
        if self.config.frequency:
            check_frequency_language(self.config.frequency)
        object.__setattr__(self, "label_map", dict(self.label_map or {}))


@dataclass(frozen=True)
class WordTables:
    """Tables from outside the training corpus for the features that need one: ``gazetteer``
    (list name -> entries), ``word_clusters`` (cluster path -> words), ``outside_truecase``
    (lowercase form -> usual spelling), ``capitalised_share`` (``"C U"``, percentages capitalised
    and upper case -> lowercase forms) and ``vector_clusters`` (cluster path -> words), each with
    the text saying where it came from (``meta.json``'s ``*_sources``)."""

    gazetteer: WordTable | None = None
    gazetteer_sources: str | None = None
    word_clusters: Mapping[str, list[str]] | None = None  # (held as a dict: a model's ClusterTable is copied)
    word_clusters_sources: str | None = None
    outside_truecase: Mapping[str, str] | None = None  # (held as a dict: a model's SpellingTable is copied)
    outside_truecase_sources: str | None = None
    capitalised_share: WordTable | None = None
    capitalised_share_sources: str | None = None
    vector_clusters: Mapping[str, list[str]] | None = None  # (a model's ClusterTable is copied too)
    vector_clusters_sources: str | None = None

    def __post_init__(self) -> None:
        for setting in ("word_clusters", "outside_truecase", "vector_clusters"):
            table = getattr(self, setting)
            if isinstance(table, Mapping) and not isinstance(table, dict):
                object.__setattr__(self, setting, dict(table.items()))

    def table(self, setting: str) -> tuple[Any, Any]:
        """``(table, sources)`` of the feature setting ``setting`` (:data:`TABLES`)."""
        return getattr(self, setting), getattr(self, f"{setting}_sources")
