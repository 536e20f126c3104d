"""The Python API for code already on Dask: :func:`tag_bag` (texts -> records) and
:func:`tag_dataframe` (adds an ``entities`` column)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..core.errors import HgnerError
from ..tagging.settings import DEFAULT_MODEL, TagSettings
from .workers import for_workers, tag_texts, worker_tagger


def _tag_texts(texts: Iterable[str], settings: TagSettings) -> list[dict[str, Any]]:
    texts = list(texts)
    return [{"text": text, "entities": entities} for text, (entities, _) in zip(texts, tag_texts(worker_tagger(settings), texts))]


def tag_bag(bag: Any, model: str | Path = DEFAULT_MODEL, decoder: str | None = None, **settings: Any) -> Any:
    """A ``dask.bag`` of texts -> a bag of records ``{"text", "entities"}`` in the same order
    (``settings``: :class:`~hgner.tagging.settings.TagSettings` fields and decoder settings, as
    :func:`hgner.load` takes them)."""
    checked = for_workers(TagSettings.from_keywords(model, decoder, settings))
    return bag.map_partitions(_tag_texts, checked)


def _tag_frame(frame: Any, text_column: str, settings: TagSettings) -> Any:
    texts = [text for text in frame[text_column] if isinstance(text, str)]
    tagged = tag_texts(worker_tagger(settings), texts)
    return frame.assign(entities=[next(tagged)[0] if isinstance(text, str) else [] for text in frame[text_column]])


def tag_dataframe(ddf: Any, text_column: str = "text", model: str | Path = DEFAULT_MODEL,
                  decoder: str | None = None, **settings: Any) -> Any:
    """A ``dask.dataframe`` with a text column -> the same frame with an ``entities`` column (a list
    of entity objects per row; missing texts get none)."""
    import pandas  # (with dask.dataframe)

    if text_column not in ddf.columns:
        raise HgnerError(f"no column {text_column!r} (columns: {', '.join(map(str, ddf.columns))})")
    checked = for_workers(TagSettings.from_keywords(model, decoder, settings))
    meta = ddf._meta.assign(entities=pandas.Series([], dtype=object))
    return ddf.map_partitions(_tag_frame, text_column, checked, meta=meta)

