"""Scoring decoders on tagged corpora (``hgner evaluate``, :func:`hgner.evaluate`): the options
(:mod:`.options`), decoding and scoring documents (:mod:`.runs`), the evaluation itself
(:mod:`.evaluate`), the typed report (:mod:`.results`) and its views (:mod:`.report`)."""

from .evaluator import evaluate, evaluate_raw, load_inputs, unknown_types_warning
from .options import MAX_SEEDS, EvaluateOptions, Run
from .results import Report, RunResult
from .runs import DocumentOutcome, DocumentScorer, EvaluationPlan, OutcomeProducer, gold_tags, local_outcomes

__all__ = ["MAX_SEEDS", "DocumentOutcome", "DocumentScorer", "EvaluateOptions", "EvaluationPlan", "OutcomeProducer",
           "Report", "Run", "RunResult", "evaluate", "evaluate_raw", "gold_tags", "load_inputs", "local_outcomes",
           "unknown_types_warning"]
