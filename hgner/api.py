"""The Python API, re-exported by :mod:`hgner` (``hgner.load``, ``hgner.evaluate``, ...).

Everything here loads lazily: listing models reads their ``meta.json`` only, and numba and
crfsuite load with the first model.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .tag import DEFAULT_DECODER, DEFAULT_MODEL, Tagger

MAX_SEEDS = 10_000  # evaluate runs each stochastic decoder with seeds 0..seeds-1 (hgner evaluate --seeds)


def load(model: str | Path = DEFAULT_MODEL, decoder: str = DEFAULT_DECODER, *, graph: str = "chain",
         min_confidence: float | None = None, **settings: Any) -> Tagger:
    """A :class:`~hgner.tag.Tagger` for ``model`` (a shipped model name or a model directory)
    decoded by ``decoder`` on the ``graph`` (``"chain"`` or ``"skip"``); ``settings`` go to the
    decoder's constructor (e.g. ``sweeps=400, seed=0``), and an unknown one is an error listing the
    valid ones. ``tagger.tag(text)`` gives a list of :class:`~hgner.tag.Entity`; entities whose
    confidence is below ``min_confidence`` are left out (those without one are kept)."""
    return Tagger(model, decoder, graph, settings=settings, min_confidence=min_confidence)


def evaluate(model: str | Path = DEFAULT_MODEL, corpus: str = "conll2003:testa", decoders: Sequence[str] = ("viterbi",),
             *, sweeps: Sequence[int] = (100,), seeds: int = 1, scheme: str | None = None, mode: str = "conlleval",
             graph: str = "chain", settings: Mapping[str, Any] | None = None, predictions: str | None = None,
             documents: str = "auto", calibration: float | None = None, progress: bool = False) -> dict[str, Any]:
    """Score ``decoders`` on a tagged ``corpus`` (a CoNLL file or a corpus name such as
    ``conll2003:testa``), as ``hgner evaluate`` does: the report is the dict that command prints
    (:func:`hgner.evaluation.format_report`) and writes with ``--json``. Each decoder runs with
    every sweep count and seed ``0..seeds-1`` it accepts and with the ``settings`` it accepts. The
    corpus is read as the command reads it (:func:`hgner.reading.read_tagged`: ``scheme`` detected
    when None, ``documents`` as ``--documents``), and what was detected goes into the report's notes;
    a corpus that looks like another language than the model's is a :class:`UserWarning`, as
    the command's warning. ``calibration`` replaces the model's calibration factor (1: the model
    as trained), as ``--calibration`` does."""
    from . import evaluation
    from .decoders import MAX_SWEEPS
    from .validation import check_argument

    def a_whole_number(value: Any, least: int, most: int) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and least <= value <= most

    def a_list_of(check: Callable[[Any], bool], value: Any) -> bool:
        return isinstance(value, Sequence) and not isinstance(value, str) and len(value) > 0 and all(map(check, value))

    check_argument(isinstance(corpus, (str, os.PathLike)), "corpus", "a corpus name or a CoNLL file", corpus)
    check_argument(a_list_of(lambda name: isinstance(name, str), decoders), "decoders",
                   "a non-empty list of decoder names", decoders)
    check_argument(a_list_of(lambda n: a_whole_number(n, 1, MAX_SWEEPS), sweeps), "sweeps",
                   f"a non-empty list of whole numbers 1..{MAX_SWEEPS}", sweeps)
    check_argument(a_whole_number(seeds, 1, MAX_SEEDS), "seeds", f"a whole number 1..{MAX_SEEDS}", seeds)
    check_argument(scheme is None or isinstance(scheme, str), "scheme", "a tag scheme name or None", scheme)
    check_argument(settings is None or isinstance(settings, Mapping), "settings", "a mapping of decoder settings",
                   settings)
    check_argument(predictions is None or isinstance(predictions, (str, os.PathLike)), "predictions",
                   "a file name or None", predictions)
    check_argument(calibration is None or (isinstance(calibration, (int, float)) and not isinstance(calibration, bool)),
                   "calibration", "a number or None", calibration)
    evaluation.check_runs(decoders, sweeps, list(range(seeds)), settings)  # before any model or corpus is read
    loaded, tagged = evaluation.load_inputs(model, str(corpus), calibration=calibration, graph=graph, scheme=scheme,
                                            documents=documents, warn=warnings.warn)
    return evaluation.evaluate(loaded, tagged, decoders, sweeps=sweeps, seeds=list(range(seeds)), mode=mode, graph=graph,
                               settings=settings or {}, predictions=predictions, progress=progress)


def available_decoders() -> list[str]:
    """Names of every registered decoder (built-in and from the ``hgner_decoders`` entry points)."""
    from .decoders import available_decoders as names

    return names()


def available_models() -> list[str]:
    """Names of the shipped models (``hgner models`` shows them)."""
    from .model import builtin_models

    return builtin_models()


@dataclass(frozen=True)
class ModelInfo:
    """What a model's ``meta.json`` says about it. ``dev`` and ``test``: entity F1 (percent, Viterbi)
    by corpus name; ``size``: bytes of the model directory."""

    name: str
    path: Path
    language: str
    labels: list[str]
    scheme: str
    dev: dict[str, float] = field(default_factory=dict)
    test: dict[str, float] = field(default_factory=dict)
    size: int = 0
    metadata: dict[str, Any] = field(default_factory=dict, repr=False)


def model_info(name_or_path: str | Path) -> ModelInfo:
    """The :class:`ModelInfo` of a shipped model or a model directory, read from ``meta.json``
    alone (no weights are loaded)."""
    from . import schemes
    from .model import model_directory, model_language, model_name, read_metadata

    directory = model_directory(name_or_path)
    metadata = read_metadata(directory)
    labels = schemes.entity_types(metadata["labels"])
    scheme = metadata["scheme"]
    scores = metadata.get("scores", {})
    dev = {corpus: figures["f1"] for corpus, figures in scores.get("dev", {}).items()}
    if "dev" in metadata:  # written by `hgner train --dev`
        dev.setdefault(metadata["dev"]["corpus"], metadata["dev"]["f1"])
    test = {corpus: figures["f1"] for corpus, figures in scores.get("test", {}).items()}
    language = model_language(metadata)  # as the tagger reads it
    size = sum(p.stat().st_size for p in directory.iterdir() if p.is_file())
    return ModelInfo(model_name(directory, metadata), directory, language, labels, scheme, dev, test, size, metadata)


