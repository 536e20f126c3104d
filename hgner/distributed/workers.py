"""The worker side: each worker process builds one :class:`~hgner.tagging.tagger.Tagger` per
:class:`~hgner.tagging.settings.TagSettings` (loading the model once, not once per document or
task), found by a model reference that works on any machine of the cluster."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..crf.modelfiles import model_directory, shipped_models_dir
from ..tagging.settings import TagSettings
from ..tagging.tagger import Tagger

_TAGGERS: dict[TagSettings, Tagger] = {}  # per worker process: one Tagger per settings


def worker_tagger(settings: TagSettings) -> Tagger:
    """This process's Tagger for ``settings``, built on first use."""
    tagger = _TAGGERS.get(settings)
    if tagger is None:
        tagger = _TAGGERS[settings] = Tagger(settings)
    return tagger


def warm_tagger(settings: TagSettings) -> None:
    """Build this process's Tagger for ``settings`` (as workers find it: :func:`for_workers`) and
    tag a sentence with it, so that worker processes forked from this one start with what it
    loads instead of loading it each: the tokenizer, the compiled kernels, and, for a model whose
    frequency table asks wordfreq about words it cannot hold (one trained before the tables
    answered every word: :mod:`hgner.features.frequencies`), wordfreq's list (asked about
    ``Zwölftonstraße``, which no type cache or frequency table holds, since they leave out ``ß``)."""
    worker_tagger(for_workers(settings)).tag("Warm up in Paris on the Zwölftonstraße .")


def tag_texts(tagger: Tagger, texts: Iterable[str]) -> Iterator[tuple[list[dict[str, Any]], int]]:
    """The entities of each document as JSON objects, and its number of tokens, in order (short
    documents decoded together: :meth:`~hgner.tagging.tagger.Tagger.tag_texts`)."""
    for groups in tagger.tag_texts(texts):
        entities, tokens = [], 0
        for group in groups:
            entities += [e.to_json() for e in group.entities]
            tokens += sum(len(s.tokens) for s in group.sentences)
        yield entities, tokens


def model_reference(directory: Path) -> str:
    """How a worker finds the model in ``directory``: a shipped model by name, any other by its
    absolute directory."""
    directory = directory.resolve()
    return directory.name if directory.parent == shipped_models_dir().resolve() else str(directory)



def for_workers(settings: TagSettings) -> TagSettings:
    """``settings`` with the model named as workers find it (:func:`model_reference`)."""
    return settings.with_model(model_reference(model_directory(settings.model)))
