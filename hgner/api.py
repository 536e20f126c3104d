"""The Python API, re-exported by :mod:`hgner` (``hgner.load``, ``hgner.evaluate``, ...): thin
functions that build the settings objects the command line builds (:class:`TagSettings`,
:class:`EvaluateOptions`, :class:`SelectSettings`) and call the same code. Listing models reads
their ``meta.json`` only, and numba and crfsuite load with the first model.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .adaptation.select import Selection
from .adaptation.select import select as _select
from .adaptation.settings import SelectSettings
from .core import schemes
from .core.errors import UnknownNameError
from .core.validation import check_argument
from .crf.modelfiles import builtin_models, model_directory, model_language, model_name, read_metadata, user_models
from .decoders import available_decoders as _decoder_names
from .evaluation import EvaluateOptions, Report, load_inputs
from .evaluation import evaluate as _evaluate
from .tagging.settings import DEFAULT_MODEL, TagSettings
from .tagging.tagger import Tagger


def load(model: str | Path = DEFAULT_MODEL, decoder: str | None = None, **settings: Any) -> Tagger:
    """A :class:`~hgner.tagging.tagger.Tagger` for ``model`` (a model name or directory) decoded by
    ``decoder`` (None: the graph's default, as ``hgner tag`` chooses it: ``exact`` on a skip
    graph, with a warning). ``settings``: the fields of :class:`~hgner.tagging.settings.TagSettings`
    (``graph``, ``sweeps``, ``seed``, ``min_confidence``, ...) and the decoder's own settings
    (e.g. ``schedule="constant"``; an unknown one is an error listing the valid ones).
    ``tagger.tag(text)`` gives a list of :class:`~hgner.tagging.tagger.Entity`."""
    return Tagger(TagSettings.from_keywords(model, decoder, settings))


def evaluate(model: str | Path = DEFAULT_MODEL, corpus: str | Path = "conll2003:testa",
             decoders: Sequence[str] = ("viterbi",), *, progress: bool = False, **options: Any) -> Report:
    """Score ``decoders`` on a tagged ``corpus`` (a CoNLL file or a corpus name such as
    ``conll2003:testa``), as ``hgner evaluate`` does: ``options`` are the other fields of
    :class:`~hgner.evaluation.EvaluateOptions` (``sweeps``, ``seeds``, ``scheme``, ``mode``,
    ``graph``, ``settings``, ``predictions``, ``documents``, ``calibration``, ``input``,
    ``layout``). The report is the command's (``report.to_json()`` is what ``--json`` writes); a
    corpus that looks like another language than the model's is a :class:`UserWarning`, as the
    command's warning."""
    known = {f.name for f in dataclasses.fields(EvaluateOptions)} - {"model", "corpus", "decoders"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise UnknownNameError("evaluate option", unknown[0], known)
    checked = EvaluateOptions(model=model, corpus=corpus, decoders=_listed(decoders), **options)
    loaded, tagged = load_inputs(checked)
    return _evaluate(loaded, tagged, checked, progress=progress)


def select(inputs: str | Path | Sequence[str | Path], n: int, model: str | Path = DEFAULT_MODEL, *,
           progress: bool = False, **settings: Any) -> Selection:
    """Choose the ``n`` sentences of ``inputs`` (a file, folder or corpus name, or a list of them)
    most worth labelling, as ``hgner select`` does: ``settings`` are the other fields of
    :class:`~hgner.adaptation.settings.SelectSettings` (``strategy``, ``seed``, ``sweeps``,
    ``lines``, ``offline``, ``exclude``: a file or a list of files of sentences already labelled).
    The :class:`~hgner.adaptation.select.Selection`'s ``sentences`` are the chosen ones in order;
    ``write(path)`` writes the CoNLL file the command writes."""
    known = {f.name for f in dataclasses.fields(SelectSettings)} - {"model", "n"}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise UnknownNameError("select setting", unknown[0], known)
    names = _paths(inputs)
    check_argument(isinstance(names, tuple) and bool(names), "inputs", "a file, folder or corpus name, or a list of them",
                   inputs)
    for name in names:
        check_argument(isinstance(name, (str, os.PathLike)) and bool(str(name).strip()), "inputs",
                       "a file, folder or corpus name", name)
    if "exclude" in settings:
        settings["exclude"] = _paths(settings["exclude"])
    return _select(SelectSettings(model=model, n=n, **settings), names, progress=progress)


def _paths(value: Any) -> Any:
    """``value`` as a tuple of names: one name (a string or a Path) alone, a list of them as a tuple."""
    return (value,) if isinstance(value, (str, os.PathLike)) else _listed(value)


def _listed(values: Any) -> Any:
    """``values`` as a tuple when it is a list of them (anything else is left for the check to refuse)."""
    return tuple(values) if isinstance(values, (list, tuple)) else values


def available_decoders() -> list[str]:
    """Names of every registered decoder (built-in and from the ``hgner_decoders`` entry points)."""
    return _decoder_names()


def available_models() -> list[str]:
    """Names of the shipped models, then of those in the data home's ``models/`` folder (``hgner
    models`` shows them)."""
    return builtin_models() + user_models()


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


