"""One evaluation's settings, checked once: :class:`EvaluateOptions`. ``hgner evaluate`` and
:func:`hgner.evaluate` build this object; :func:`~hgner.evaluation.evaluator.evaluate` and
``hgner train``'s development scores take it. Every decoder run is checked here (names, settings,
sweep counts), before any model or corpus is read; no decoder is built."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import HgnerError, named
from ..core.schemes import normalize_scheme
from ..core.scoring import MODES
from ..core.validation import check_argument
from ..data.reading import check_documents
from ..decoders import MAX_SWEEPS, decoder_arguments, decoder_class, decoder_settings, settings_per_decoder
from ..graph.kinds import check_graph_kind
from ..tagging.settings import DEFAULT_MODEL
from ..text.rawtext import LAYOUTS

MAX_SEEDS = 10_000  # evaluate runs each stochastic decoder with seeds 0..seeds-1
MIN_RESAMPLES, MAX_RESAMPLES = 100, 100_000  # bootstrap resamples for an F1 interval
INPUTS = ("tokens", "raw")


@dataclass(frozen=True)
class Run:
    """One decoder run: the decoder, and its sweep count and seed when it takes them."""

    decoder: str
    sweeps: int | None
    seed: int | None

    def graph(self, asked: str) -> str:
        """The graph this run decodes when ``asked`` (chain or skip) is asked for: the chain for a
        chain-only decoder."""
        return "chain" if decoder_class(self.decoder).chain_only else asked

    @property
    def label(self) -> str:
        parts = [self.decoder]
        if self.sweeps is not None:
            parts.append(f"{self.sweeps}sweeps")
        if self.seed is not None:
            parts.append(f"seed{self.seed}")
        return "-".join(parts)


def _whole(value: Any, least: int, most: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and least <= value <= most


def _listed(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str) and len(value) > 0


@dataclass(frozen=True)
class EvaluateOptions:
    """What to score and how. ``model``: a model name or directory; ``corpus``: a CoNLL file or a
    catalogue name (both read by :func:`~hgner.evaluation.evaluator.load_inputs`); ``decoders``;
    ``sweeps``: the sweep counts of the decoders that take them; ``seeds``: runs with seeds
    0..seeds-1 of the decoders that take one; ``mode``: scoring mode; ``graph``: chain or skip;
    ``settings``: decoder settings, given to every decoder that takes them; ``input``: the
    corpus's tokens, or its documents rebuilt as raw text (``layout``); ``predictions``: a file
    for ``token gold predicted`` lines; ``scheme``, ``documents``: how the corpus is read;
    ``calibration``: the factor on every potential instead of the model's; ``offline``: never
    download a missing corpus; ``labels``: score these entity types only (None: every type);
    ``bootstrap``: resamples of the documents for a 95% interval on each run's F1 (0: none;
    :mod:`~hgner.evaluation.interval`), drawn by a generator seeded with ``bootstrap_seed``."""

    model: str | Path = DEFAULT_MODEL
    corpus: str | Path | None = None
    decoders: tuple[str, ...] = ("viterbi",)
    sweeps: tuple[int, ...] = (100,)
    seeds: int = 1
    mode: str = "conlleval"
    graph: str = "chain"
    settings: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    input: str = "tokens"
    layout: str = "lines"
    predictions: str | Path | None = None
    scheme: str | None = None
    documents: str = "auto"
    calibration: float | None = None
    offline: bool = False
    labels: tuple[str, ...] | None = None
    bootstrap: int = 0
    bootstrap_seed: int = 0

    def __post_init__(self) -> None:
        self._check_types()
        check_graph_kind(self.graph)
        check_documents(self.documents)
        if self.scheme is not None:
            try:
                normalize_scheme(self.scheme)
            except ValueError as error:
                raise HgnerError(f"{named('scheme')}: {error}") from None
        if self.input == "raw" and (self.mode != "conlleval" or self.predictions):
            raise HgnerError(f"{named('input')} raw scores entities by character span: it takes neither "
                             f"{named('mode')} strict nor {named('predictions')}")
        if self.input != "raw" and self.layout != "lines":
            raise HgnerError(f"{named('layout')} {self.layout} lays out raw text: it needs {named('input')} raw")
        object.__setattr__(self, "decoders", tuple(self.decoders))
        object.__setattr__(self, "sweeps", tuple(self.sweeps))
        object.__setattr__(self, "settings", dict(self.settings))
        object.__setattr__(self, "labels", None if self.labels is None else tuple(self.labels))
        per_decoder = self._per_decoder()  # unknown names and bad values fail here
        runs = self._runs()
        for run in runs:  # and every run's arguments, before any model or corpus is read
            decoder_arguments(run.decoder, per_decoder[run.decoder], shared={"sweeps": run.sweeps, "seed": run.seed})
        object.__setattr__(self, "_checked", (per_decoder, runs))  # checked once, here

    def _check_types(self) -> None:
        check_argument(isinstance(self.model, (str, os.PathLike)), "model", "a model name or directory", self.model)
        check_argument(self.corpus is None or isinstance(self.corpus, (str, os.PathLike)), "corpus",
                       "a corpus name or a CoNLL file", self.corpus)
        check_argument(_listed(self.decoders) and all(isinstance(d, str) for d in self.decoders), "decoders",
                       "a non-empty list of decoder names", self.decoders)
        bad = next((n for n in self.sweeps if not _whole(n, 1, MAX_SWEEPS)), None) if _listed(self.sweeps) else None
        check_argument(_listed(self.sweeps) and bad is None, "sweeps", f"a non-empty list of whole numbers 1..{MAX_SWEEPS}",
                       self.sweeps if bad is None else bad)
        check_argument(_whole(self.seeds, 1, MAX_SEEDS), "seeds", f"a whole number 1..{MAX_SEEDS}", self.seeds)
        check_argument(self.mode in MODES, "mode", f"one of {', '.join(MODES)}", self.mode)
        check_argument(self.input in INPUTS, "input", f"one of {', '.join(INPUTS)}", self.input)
        check_argument(self.layout in LAYOUTS, "layout", f"one of {', '.join(LAYOUTS)}", self.layout)
        check_argument(self.scheme is None or isinstance(self.scheme, str), "scheme", "a tag scheme name or None",
                       self.scheme)
        check_argument(isinstance(self.settings, Mapping), "settings", "a mapping of decoder settings", self.settings)
        check_argument(self.predictions is None or (isinstance(self.predictions, (str, os.PathLike))
                                                    and str(self.predictions).strip() != ""),
                       "predictions", "a file name or None", self.predictions)
        check_argument(self.labels is None or (_listed(self.labels) and all(isinstance(v, str) and v for v in self.labels)),
                       "labels", "a non-empty list of entity types or None", self.labels)
        check_argument(self.bootstrap == 0 or _whole(self.bootstrap, MIN_RESAMPLES, MAX_RESAMPLES), "bootstrap",
                       f"0 (no interval) or a whole number {MIN_RESAMPLES}..{MAX_RESAMPLES}", self.bootstrap)
        check_argument(_whole(self.bootstrap_seed, 0, 2**63 - 1), "bootstrap_seed", "a whole number >= 0",
                       self.bootstrap_seed)
        check_argument(self.calibration is None or (isinstance(self.calibration, (int, float))
                                                    and not isinstance(self.calibration, bool)),
                       "calibration", "a number or None", self.calibration)

    @property
    def per_decoder(self) -> dict[str, dict[str, Any]]:
        """Each decoder's share of :attr:`settings`, typed."""
        return {name: dict(values) for name, values in self._checked[0].items()}  # type: ignore[attr-defined]

    @property
    def runs(self) -> list[Run]:
        """One run per decoder, times each sweep count it accepts, times each seed it accepts."""
        return list(self._checked[1])  # type: ignore[attr-defined]

    def _per_decoder(self) -> dict[str, dict[str, Any]]:
        """Each decoder's share of :attr:`settings`, typed; sweeps and seed are refused there:
        evaluation varies them itself."""
        for name, option in (("sweeps", "sweeps"), ("seed", "seeds")):
            if name in self.settings:
                raise HgnerError(f"{named('settings')} {name}=...: give {name} with {named(option)}, "
                                 "which evaluate varies")
        return settings_per_decoder(self.settings, self.decoders)

    def _runs(self) -> list[Run]:
        """One run per decoder, times each sweep count it accepts, times each seed it accepts; each
        decoder, sweep count and seed given once."""
        seeds = list(range(self.seeds))
        for what, values in (("decoder", self.decoders), ("sweep count", self.sweeps)):
            repeated = next((value for i, value in enumerate(values) if value in values[:i]), None)
            if repeated is not None:
                raise HgnerError(f"{what} {repeated!r} is given twice: each run would be the same")
        runs = []
        for name in self.decoders:
            options = decoder_settings(name)
            for n_sweeps in (self.sweeps if "sweeps" in options else [None]):
                for seed in (seeds if "seed" in options else [None]):
                    runs.append(Run(name, n_sweeps, seed))
        return runs
