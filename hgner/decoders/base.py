"""The decoder interface, its declared capabilities and settings, and registration by name.

Decoders live in the :data:`hgner.core.registry.decoders` catalogue registry: built-ins register with
:func:`register` when their module is imported (:mod:`hgner.core.registry` imports them as names are
looked up), other packages through the entry-point group ``hgner_decoders``. A decoder declares
its settings by its constructor signature (see :mod:`hgner.decoders.settings`) and its
capabilities by class attributes; callers ask them (``decoder.gives_marginals``,
``decoder_class(name).certifies``), never test names.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..core import registry
from ..core.errors import HgnerError, UnknownNameError
from ..graph.factor_graph import FactorGraph
from .settings import Setting, SettingError, checked, settings_of


@dataclass
class Decoding:
    """A decoder's answer for one graph.

    labels: (n,) label indices. marginals: (n, K) estimated or exact P(y_i = k), when the decoder
    gives marginals (:attr:`Decoder.gives_marginals`), else None. stats: decoder-specific figures
    (updates, weight_bytes, certified, gap, ...).
    """

    labels: np.ndarray
    marginals: np.ndarray | None = None
    stats: dict[str, float] = field(default_factory=dict)


class Decoder(ABC):
    """Finds a labelling of a :class:`FactorGraph`. All settings go to the constructor, as
    annotated keywords with defaults; every call is checked against the annotations.

    Capabilities (class attributes; ``gives_marginals`` may depend on the settings, so ask an instance):

    - ``gives_marginals``: :meth:`decode` returns marginals (n, K) that estimate the model's
      one-variable marginals P(y_i = k) (exactly, or consistently as sweeps grow);
    - ``certifies``: its stats carry ``certified`` (1.0 when the labelling is the proven MAP) and ``gap``;
    - ``exact``: always returns the exact MAP labelling (of the graphs it accepts);
    - ``searches_map``: returns the best labelling it visited (False: argmax of approximate marginals);
      these two tell users (``hgner decoders``) and the shared decoder tests what to expect, and no
      caller needs them;
    - ``chain_only``: refuses skip edges (evaluate gives it the chain graph);
    - ``decodes_features``: stands for the model's own tagger (crfsuite's) on the model's features,
      not a graph decoder; :class:`~hgner.crf.pipeline.Pipeline` runs the model's tagger instead;
    - ``separable``: its answer for each sentence of a chain graph depends on that sentence alone
      (no random stream or state shared between sentences), so
      :meth:`~hgner.crf.pipeline.Pipeline.decode_documents` decodes many short documents in one call.
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""  # one line on what it is, for ``hgner decoders``
    gives_marginals: bool = False
    certifies: ClassVar[bool] = False
    exact: ClassVar[bool] = False
    searches_map: ClassVar[bool] = True
    chain_only: ClassVar[bool] = False
    decodes_features: ClassVar[bool] = False
    separable: ClassVar[bool] = False
    settings: ClassVar[dict[str, Setting]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.settings = settings_of(cls.__init__)
            cls.__init__ = checked(cls.settings, cls.__init__)  # type: ignore[method-assign]

    @abstractmethod
    def decode(self, graph: FactorGraph) -> Decoding:
        """Decode one graph."""

    def __repr__(self) -> str:
        settings = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.settings if hasattr(self, k))
        return f"{type(self).__name__}({settings})"


CAPABILITIES = ("gives_marginals", "certifies", "exact", "searches_map", "chain_only", "decodes_features")
"""The capability attributes of :class:`Decoder`, as ``hgner decoders`` lists them."""

CAPABILITY_WORDS = {
    "gives_marginals": "confidences",
    "certifies": "certifies its optimum",
    "exact": "always the exact MAP",
    "searches_map": "best labelling visited",
    "chain_only": "chain graphs only",
    "decodes_features": "crfsuite's own tagger",
}
"""What each capability means, in the words ``hgner decoders`` and ``hgner serve``'s page use."""

D = type[Decoder]


def register(name: str) -> Callable[[D], D]:
    """Class decorator: make a decoder available under ``name`` to the CLI, evaluate and the tagger."""

    def add(cls: D) -> D:
        if name in registry.decoders and registry.decoders.get(name) is not cls:
            raise ValueError(f"decoder name {name!r} is already registered by {registry.decoders.get(name).__name__}")
        cls.name = name
        registry.decoders.register(name, func=cls)
        return cls

    return add


def available_decoders() -> list[str]:
    """Every registered decoder name, built-in and from entry points, sorted."""
    return registry.names(registry.decoders)


def decoder_class(name: str) -> type[Decoder]:
    """The class registered as ``name``; :class:`UnknownNameError` lists the registered names."""
    if not isinstance(name, str):
        raise HgnerError(f"decoder: expected a decoder name, got {type(name).__name__}")
    cls = registry.lookup(registry.decoders, name)
    if not (isinstance(cls, type) and issubclass(cls, Decoder)):
        raise HgnerError(f"decoder {name!r} is registered as {cls!r}, which is not a Decoder subclass")
    return cls


def decoder_settings(name: str) -> dict[str, Setting]:
    """The settings decoder ``name`` takes (name -> :class:`Setting` with type, default, range), in
    signature order."""
    return dict(decoder_class(name).settings)


def decoder_arguments(name: str, settings: Mapping[str, Any] | None = None, /, *,
                      shared: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The checked constructor keywords of decoder ``name`` for ``settings`` (strict: a setting it
    does not take is an :class:`UnknownNameError` listing the valid ones; strings are parsed by
    the annotations) plus the ``shared`` options it takes (lenient: one command line's
    ``sweeps``/``seed`` drive exact and sampling decoders alike). None values count as not given.
    Nothing is built: :func:`make_decoder` builds from these."""
    known = decoder_class(name).settings
    given = dict(settings or {})
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise UnknownNameError(f"{name} setting", unknown[0], known)
    chosen = {k: v for k, v in (shared or {}).items() if k in known and v is not None}
    try:
        for key, value in given.items():
            if value is not None:
                chosen[key] = known[key].read(value)
    except SettingError as error:
        raise SettingError(f"decoder {name!r}: {error}", error.setting) from None
    return chosen


def make_decoder(name: str, settings: Mapping[str, Any] | None = None, /, *,
                 shared: Mapping[str, Any] | None = None, **more: Any) -> Decoder:
    """Decoder ``name`` built with ``settings`` and ``more`` plus the ``shared`` options it takes
    (see :func:`decoder_arguments`)."""
    arguments = decoder_arguments(name, {**(settings or {}), **more}, shared=shared)
    try:
        return decoder_class(name)(**arguments)
    except SettingError as error:
        raise SettingError(f"decoder {name!r}: {error}", error.setting) from None


def settings_per_decoder(settings: Mapping[str, Any], decoders: Sequence[str]) -> dict[str, dict[str, Any]]:
    """For each decoder, the ``settings`` its constructor accepts, as values of their types (text
    is parsed). A setting that none of ``decoders`` accepts is an :class:`UnknownNameError` listing
    the ones they do; a value a decoder cannot take is a :class:`SettingError` naming it. None
    values count as not given."""
    options = {name: decoder_settings(name) for name in decoders}
    valid = set().union(*options.values())
    for name in settings:
        if name not in valid:
            raise UnknownNameError(f"{'/'.join(decoders)} setting", name, valid)
    per_decoder = {}
    for decoder, accepted in options.items():
        try:
            per_decoder[decoder] = {k: accepted[k].read(v) for k, v in settings.items() if k in accepted and v is not None}
        except SettingError as error:
            raise SettingError(f"decoder {decoder!r}: {error}", error.setting) from None
    return per_decoder


def describe_decoder(name: str, shared: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Decoder ``name`` as ``hgner decoders`` and ``hgner serve``'s ``/v1/decoders`` show it: its
    one-line summary, its capabilities (of an instance built with ``shared``, e.g. the
    ``marginals`` hgner tag gives viterbi) and its settings (type, default, valid values)."""
    decoder = make_decoder(name, shared=shared)
    settings = [{"name": s.name, "type": s.type.__name__, "default": s.default, "valid": s.describe()}
                for s in decoder_settings(name).values()]
    return {"name": name, "summary": decoder_class(name).summary,
            "capabilities": {c: bool(getattr(decoder, c)) for c in CAPABILITIES}, "settings": settings}
