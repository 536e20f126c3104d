"""The decoder interface and the open registry that maps names to decoder classes."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..errors import HgnerError, UnknownDecoderError
from ..graph import FactorGraph


@dataclass
class Decoding:
    """A decoder's answer for one graph.

    labels: (n,) label indices. marginals: (n, K) estimated or exact P(y_i = k), when the decoder
    has them. stats: decoder-specific figures (updates, weight_bytes, certified, gap, ...).
    """

    labels: np.ndarray
    marginals: np.ndarray | None = None
    stats: dict[str, float] = field(default_factory=dict)


class Decoder(ABC):
    """Finds a labelling of a :class:`FactorGraph`. All settings go to the constructor."""

    name: ClassVar[str] = ""
    exact: ClassVar[bool] = False  # always returns the exact MAP labelling
    # True: returns the highest-scoring labelling it visited (a MAP search); False: labels by the
    # argmax of approximate marginals (mean field), which need not score well jointly
    searches_map: ClassVar[bool] = True
    chain_only: ClassVar[bool] = False  # cannot take skip edges: evaluate gives it the chain graph

    @abstractmethod
    def decode(self, graph: FactorGraph) -> Decoding:
        """Decode one graph."""

    def __repr__(self) -> str:
        settings = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({settings})"


_REGISTRY: dict[str, type[Decoder]] = {}

D = type[Decoder]


def register(name: str) -> Callable[[D], D]:
    """Class decorator: make a decoder available under ``name`` to the CLI, evaluate and the tagger."""

    def add(cls: D) -> D:
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ValueError(f"decoder name {name!r} is already registered by {_REGISTRY[name].__name__}")
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return add


def available_decoders() -> list[str]:
    return sorted(_REGISTRY)


def decoder_class(name: str) -> type[Decoder]:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownDecoderError(name, _REGISTRY) from None


def decoder_options(name: str) -> set[str]:
    """Keyword settings the decoder's constructor accepts (e.g. ``sweeps``, ``seed``)."""
    return set(inspect.signature(decoder_class(name).__init__).parameters) - {"self"}


def make_decoder(name: str, **settings: Any) -> Decoder:
    """A decoder built from the settings it accepts; settings it does not take are ignored, so
    one command line (``--sweeps``, ``--seed``) can drive exact and sampling decoders alike."""
    cls = decoder_class(name)
    accepted = decoder_options(name)
    try:
        return cls(**{k: v for k, v in settings.items() if k in accepted and v is not None})
    except (TypeError, ValueError) as error:
        raise HgnerError(f"decoder {name!r}: {error}") from None
