"""One selection's settings, checked once: :class:`SelectSettings`. ``hgner select`` and the
benchmark build this object; :func:`~hgner.adaptation.select.select` takes it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.validation import check_argument
from ..decoders import MAX_SWEEPS
from ..tagging.defaults import DEFAULT_MODEL
from .defaults import DEFAULT_STRATEGY, DEFAULT_SWEEPS

MAX_SELECTED = 1_000_000


def _whole(value: Any, least: int, most: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and least <= value <= most


def _path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike)) and bool(str(value).strip())


@dataclass(frozen=True)
class SelectSettings:
    """What to select and how. ``model``: a model name or directory; ``n``: how many sentences;
    ``strategy``: a registered strategy name (:mod:`hgner.adaptation.strategies`); ``seed``: the
    seed of the one random generator (the random strategy's draw, annealed Gibbs's chain);
    ``sweeps``: of herded and annealed Gibbs; ``lines``: every line of a raw text file is a text of
    its own; ``offline``: never download a catalogue corpus; ``exclude``: files of sentences
    already labelled (CoNLL, an annotation tool's export or a catalogue name, as ``hgner train
    --train`` reads them), which are not selected again (:func:`~hgner.adaptation.select.select`)."""

    model: str | Path = DEFAULT_MODEL
    n: int = 200
    strategy: str = DEFAULT_STRATEGY
    seed: int = 0
    sweeps: int = DEFAULT_SWEEPS
    lines: bool = False
    offline: bool = False
    exclude: tuple[str | Path, ...] = ()

    def __post_init__(self) -> None:
        from .strategies import strategy  # (the registry: an unknown name lists the valid ones)

        check_argument(_path(self.model), "model", "a model name or directory", self.model)
        check_argument(_whole(self.n, 1, MAX_SELECTED), "n", f"a whole number 1..{MAX_SELECTED}", self.n)
        check_argument(_whole(self.seed, 0, 2**63 - 1), "seed", "a whole number >= 0", self.seed)
        check_argument(_whole(self.sweeps, 1, MAX_SWEEPS), "sweeps", f"a whole number 1..{MAX_SWEEPS}", self.sweeps)
        check_argument(isinstance(self.strategy, str), "strategy", "a strategy name", self.strategy)
        for flag in ("lines", "offline"):
            check_argument(isinstance(getattr(self, flag), bool), flag, "True or False", getattr(self, flag))
        check_argument(isinstance(self.exclude, tuple), "exclude", "a tuple of file names", self.exclude)
        for name in self.exclude:
            check_argument(_path(name), "exclude", "a file name", name)
        strategy(self.strategy)
