"""The evaluation report as typed objects: :class:`Report` holds one :class:`RunResult` per
decoder run; ``to_json`` gives the ``--json`` schema (fields in its order; the optional ones only
when they apply). Formatting is :mod:`hgner.evaluation.report`'s."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

_RUN_OPTIONAL = ("f1_interval", "mean_score_gap", "certified_fraction", "optimum_fraction", "mean_optimum_gap")
_REPORT_OPTIONAL = ("layout", "raw_sentences", "raw_tokens", "calibration", "skip", "labels", "bootstrap")


def _json(item: Any, optional: tuple[str, ...]) -> dict[str, Any]:
    return {f.name: getattr(item, f.name) for f in dataclasses.fields(item)
            if not (f.name in optional and getattr(item, f.name) is None)}


@dataclass(kw_only=True)
class RunResult:
    """One run's figures: entity F1, precision, recall (percent), macro F1, per-type scores
    (``{type: {precision, recall, f1, support}}``), decoding and total seconds, agreement with
    Viterbi, mean score gap to it (corpus tokens only), label-consistency disagreement, the
    decoder's own figures (mean and maximum over documents), and against a certifying decoder's
    optimum (when one ran); with a bootstrap, the 95% interval of the F1 over resampled documents."""

    decoder: str
    sweeps: int | None
    seed: int | None
    graph: str
    settings: dict[str, Any]
    f1: float
    f1_interval: list[float] | None = None  # [low, high]: the bootstrap interval (hgner.evaluation.interval)
    precision: float
    recall: float
    macro_f1: float
    per_type: dict[str, dict[str, float]]
    decode_seconds: float
    total_seconds: float
    viterbi_agreement: float
    mean_score_gap: float | None = None
    consistency_disagreement: float
    stats_mean: dict[str, float]
    stats_max: dict[str, float]
    certified_fraction: float | None = None
    optimum_fraction: float | None = None
    mean_optimum_gap: float | None = None

    def to_json(self) -> dict[str, Any]:
        return _json(self, _RUN_OPTIONAL)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunResult:
        return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data})


@dataclass(kw_only=True)
class Report:
    """What an evaluation scored (corpus, model, its calibration, scheme, mode, graph, with a skip
    graph the non-local evidence the model's skip potential gives it, the entity types scored and
    the bootstrap of the F1 intervals (when asked), the decoder settings given,
    input and raw-text layout, counts, seconds spent building graphs, notes) and one
    :class:`RunResult` per run."""

    corpus: str
    model: str
    calibration: float | None = None
    scheme: str
    mode: str
    graph: str
    skip: dict[str, Any] | None = None  # graph "skip": hgner.crf.skip.SkipModel.describe() of the model's potential
    labels: list[str] | None = None  # the entity types scored, when not every type
    bootstrap: dict[str, Any] | None = None  # {"resamples", "seed", "level", "units"} of the F1 intervals
    settings: dict[str, Any]
    input: str
    layout: str | None = None
    documents: int
    sentences: int
    tokens: int
    raw_sentences: int | None = None
    raw_tokens: int | None = None
    build_seconds: float
    notes: list[str]
    results: list[RunResult]

    def to_json(self) -> dict[str, Any]:
        data = _json(self, _REPORT_OPTIONAL)
        data["results"] = [result.to_json() for result in self.results]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Report:
        """A report read back from its JSON (older ones may lack the calibration and input)."""
        known = {f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data}
        known.setdefault("input", "tokens")
        known["results"] = [RunResult.from_json(r) for r in data["results"]]
        return cls(**known)
