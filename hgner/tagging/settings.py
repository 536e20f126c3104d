"""One tagging use's settings, checked once: :class:`TagSettings`. ``hgner tag``, :func:`hgner.load`,
the spaCy component's config and the Dask workers all build this object, so an option is a field
here, used by :class:`~hgner.tagging.tagger.Tagger`, and a flag of ``hgner tag``."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import HgnerError, named, warn
from ..core.validation import check_argument
from ..decoders import available_decoders, decoder_arguments, decoder_class
from ..graph.kinds import check_graph_kind
from .defaults import DEFAULT_DECODER, DEFAULT_MODEL, DEFAULT_SPLIT, SKIP_DEFAULT_DECODER
from .splitting import SPLITS


@dataclass(frozen=True)
class TagSettings:
    """How to tag, checked when built (an :class:`HgnerError` naming the field, with what was
    expected and what came): no model is loaded.

    ``model``: a shipped model name or a model directory. ``decoder``: a decoder name, or None for
    the graph's default (:func:`decoder_for_graph`; after construction it holds the decoder used).
    ``graph``: ``chain`` or ``skip``. ``sweeps``, ``seed``: given to the decoder when it takes
    them. ``decoder_settings``: the decoder's own settings (values typed here; text is parsed).
    ``min_confidence``: entities whose confidence is below it are left out (those without one are
    kept). ``labels``: the entity types to keep (None: all the model's). ``split``: how a text is
    cut into documents (:data:`~hgner.tagging.splitting.SPLITS`): ``none``, the text is one
    document; ``lines``, each non-blank line is one, offsets still into the whole text.
    """

    model: str | Path = DEFAULT_MODEL
    decoder: str | None = None
    graph: str = "chain"
    sweeps: int | None = None
    seed: int | None = None
    decoder_settings: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    min_confidence: float | None = None
    labels: tuple[str, ...] | None = None
    split: str = DEFAULT_SPLIT

    def __post_init__(self) -> None:
        check_argument(isinstance(self.model, (str, Path)) and bool(str(self.model).strip()), "model",
                       "a model name or directory", self.model)
        check_argument(isinstance(self.decoder_settings, Mapping), "decoder_settings",
                       "a mapping of decoder settings", self.decoder_settings)
        check_argument(self.min_confidence is None or (isinstance(self.min_confidence, (int, float))
                                                       and not isinstance(self.min_confidence, bool)
                                                       and 0 <= self.min_confidence <= 1),
                       "min_confidence", "a number from 0 to 1 or None", self.min_confidence)
        check_argument(self.labels is None or (isinstance(self.labels, (list, tuple)) and len(self.labels) > 0
                                                and all(isinstance(v, str) and v for v in self.labels)),
                       "labels", "a non-empty list of entity types or None", self.labels)
        check_argument(isinstance(self.split, str) and self.split in SPLITS, "split",
                       f"one of {', '.join(SPLITS)}", self.split)
        decoder = decoder_for_graph(self.decoder, self.graph)
        for name in ("sweeps", "seed"):  # given as a field and as a decoder setting: which one counts?
            value = getattr(self, name)
            if value is not None and name in self.decoder_settings:
                raise HgnerError(f"{named(name)} {value} and {named('decoder_settings')} "
                                 f"{name}={self.decoder_settings[name]}: give {name} once")
        arguments = decoder_arguments(decoder, self.decoder_settings,
                                      shared={"sweeps": self.sweeps, "seed": self.seed, "marginals": True})
        typed = decoder_arguments(decoder, self.decoder_settings)
        object.__setattr__(self, "decoder", decoder)
        object.__setattr__(self, "decoder_settings", _Frozen(typed))
        object.__setattr__(self, "labels", None if self.labels is None else tuple(self.labels))
        object.__setattr__(self, "_arguments", arguments)

    @property
    def decoder_arguments(self) -> dict[str, Any]:
        """The decoder's constructor keywords, checked (the shared ``marginals`` on: viterbi gives
        confidences)."""
        return dict(self._arguments)  # type: ignore[attr-defined]

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> TagSettings:
        """Settings from a mapping holding the fields among other keys (parsed command-line
        arguments, a config), None meaning the field's default."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in options.items() if k in names and v is not None})

    @classmethod
    def from_keywords(cls, model: str | Path, decoder: str | None, keywords: Mapping[str, Any]) -> TagSettings:
        """Settings as :func:`hgner.load` takes them: the fields by name, and the rest of
        ``keywords`` as the decoder's own settings."""
        names = {f.name for f in dataclasses.fields(cls)} - {"model", "decoder", "decoder_settings"}
        fields = {k: v for k, v in keywords.items() if k in names}
        own = {k: v for k, v in keywords.items() if k not in names and k != "decoder_settings"}
        given = keywords.get("decoder_settings") or {}
        check_argument(isinstance(given, Mapping), "decoder_settings", "a mapping of decoder settings", given)
        return cls(model, decoder, decoder_settings={**given, **own}, **fields)

    def to_config(self) -> dict[str, Any]:
        """The fields as JSON values (the spaCy component's config)."""
        config = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        config["model"] = str(self.model)
        config["decoder_settings"] = dict(self.decoder_settings)
        return config

    def with_model(self, model: str | Path) -> TagSettings:
        """These settings for another model reference (a worker's)."""
        return dataclasses.replace(self, model=model)


class _Frozen(dict):
    """A dict that hashes by its items, so that :class:`TagSettings` is a cache key."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items())))


def decoder_for_graph(name: str | None, graph: str) -> str:
    """The decoder to tag with: ``name``, or the default when it is None. On a graph with skip
    edges a chain-only decoder is an error naming the decoders that take them, except the default,
    which gives way to :data:`SKIP_DEFAULT_DECODER` with a warning."""
    check_graph_kind(graph)
    if graph == "chain":
        decoder_class(name or DEFAULT_DECODER)
        return name or DEFAULT_DECODER
    if name is None and decoder_class(DEFAULT_DECODER).chain_only:
        warn(f"{named('graph')} {graph}: the default decoder {DEFAULT_DECODER} decodes chains only; tagging with "
             f"{SKIP_DEFAULT_DECODER} instead", stacklevel=4)
        return SKIP_DEFAULT_DECODER
    name = name or DEFAULT_DECODER
    if decoder_class(name).chain_only:
        others = [d for d in available_decoders() if not decoder_class(d).chain_only]
        raise HgnerError(f"decoder {name!r} decodes chains only, not a {graph} graph; use {named('decoder')} "
                         f"{SKIP_DEFAULT_DECODER} (certified MAP) or another of: {', '.join(others)}")
    return name
