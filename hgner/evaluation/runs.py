"""Decoding and scoring documents for an evaluation: an :class:`EvaluationPlan` (the runs, by
value, so a cluster worker can rebuild it), made live for one model by :class:`DocumentScorer`,
which turns each document into a :class:`DocumentOutcome`. :func:`local_outcomes` scores the
documents in this process; :mod:`hgner.distributed` gives the same outcomes from a cluster."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from ..core import schemes
from ..core.scoring import EntityCounts, consistency_pairs, entity_spans
from ..crf.model import CrfModel
from ..crf.pipeline import DocumentGraph, Pipeline
from ..data.corpus import Corpus, Document
from ..decoders import Decoder, decoder_class, make_decoder
from ..decoders.chain import Viterbi, viterbi
from .options import Run

BATCH_TOKENS = 20_000  # tokens of the documents whose graphs are built together


def _is_reference(decoder: Decoder) -> bool:
    """Whether ``decoder`` is hgner's Viterbi, whose labels are the agreement reference, so that its
    run can stand in for decoding the reference again. Identity, not a capability: crfsuite is
    exact and chain-only too, but it is what the reference checks, so it never stands in for it."""
    return type(decoder) is Viterbi


def in_scheme(tags: list[str], model_scheme: str, corpus_scheme: str, mode: str) -> list[str]:
    """Predicted tags (the model's scheme) rewritten in the corpus scheme. In ``strict`` mode the
    chunks that are not well-formed in the model's scheme are dropped first (an ``I-`` that starts
    a chunk in IOB2, a ``B-`` without its ``E-`` in BIOES), as seqeval's strict mode would; gold
    is always scored in the corpus scheme, so both modes count against the same entities."""
    return schemes.render(entity_spans(tags, model_scheme, mode), len(tags), corpus_scheme)


def gold_tags(corpus: Corpus, model: CrfModel) -> list[list[str]]:
    """Gold tags in the corpus scheme, with entity types the model does not know mapped as the
    model's training mapped them (e.g. MISC -> O for a 3-class model)."""
    return [model.gold_labels(s.tags or [], corpus.scheme) for s in corpus.sentences]


def of_types(spans: Iterable[tuple[int, int, str]], labels: tuple[str, ...] | None) -> list[tuple[int, int, str]]:
    """The ``(start, end, type)`` spans whose type is among ``labels`` (all when None)."""
    return list(spans) if labels is None else [span for span in spans if span[2] in labels]


@dataclass
class _Totals:
    """One run's running totals over the documents decoded so far (nothing per token is kept)."""

    entities: EntityCounts = field(default_factory=EntityCounts)
    decode_seconds: float = 0.0
    sentences: int = 0
    agreeing: int = 0
    gap: float = 0.0
    pairs: int = 0
    disagreeing: int = 0
    stats_sum: Counter = field(default_factory=Counter)  # (float sums: Counter adds them)
    stats_count: Counter = field(default_factory=Counter)
    stats_max: dict[str, float] = field(default_factory=dict)
    optimal: int = 0
    optimum_gap: float = 0.0

    def add_stats(self, stats: dict[str, float]) -> None:
        for key, value in stats.items():
            self.stats_sum[key] += value  # type: ignore[assignment]
            self.stats_count[key] += 1
            self.stats_max[key] = max(self.stats_max.get(key, value), value)

    def add(self, other: _Totals) -> None:
        """Add another document's (or batch's) totals to these: counters and numbers add up,
        ``stats_max`` keeps the larger value."""
        for name in (f.name for f in fields(self)):
            mine, theirs = getattr(self, name), getattr(other, name)
            if isinstance(mine, (Counter, EntityCounts)):
                mine.update(theirs)
            elif isinstance(mine, dict):
                for key, value in theirs.items():
                    mine[key] = max(mine.get(key, value), value)
            else:
                setattr(self, name, mine + theirs)


@dataclass(frozen=True)
class EvaluationPlan:
    """What every document is decoded and scored with, by value (so a cluster worker can rebuild
    it): the graph kind, scoring mode, corpus scheme, the runs, each decoder's settings and the
    entity types scored."""

    graph: str
    mode: str
    corpus_scheme: str
    runs: tuple[Run, ...]
    settings: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]  # (decoder, ((name, value), ...))
    labels: tuple[str, ...] | None = None  # the entity types scored (None: every type)

    @property
    def certifying_run(self) -> int | None:
        """Index of the first run whose decoder certifies its optimum (``exact``), if any."""
        return next((i for i, run in enumerate(self.runs) if decoder_class(run.decoder).certifies), None)


@dataclass
class DocumentOutcome:
    """One document decoded by every run: per-run totals, and the predicted tags (corpus scheme,
    per run, per sentence) when predictions are kept."""

    totals: list[_Totals]
    build_seconds: float
    certified: bool
    predicted: list[list[list[str]]] | None = None


class DocumentScorer:
    """An :class:`EvaluationPlan` made live for one model: the graph builder and one pipeline per
    run, kernels compiled (or loaded from numba's cache) up front so no decode time includes them."""

    def __init__(self, model: CrfModel, plan: EvaluationPlan) -> None:
        self.model = model
        self.plan = plan
        self.certifying_run = plan.certifying_run  # asked once: a registry lookup reads the entry points
        settings = dict(plan.settings)
        self.builder = Pipeline(model, make_decoder("viterbi"), plan.graph)
        self.pipelines = []
        for run in plan.runs:
            run_graph = run.graph(plan.graph)
            decoder = make_decoder(run.decoder, dict(settings.get(run.decoder, ())),
                                   shared={"sweeps": run.sweeps, "seed": run.seed})
            self.pipelines.append((run_graph, Pipeline(model, decoder, run_graph)))
        # a Viterbi run (chain-only, so on the chain) decodes the reference labelling itself: reused
        self.reference_run = next((i for i, (_, p) in enumerate(self.pipelines) if _is_reference(p.decoder)), None)
        warm_up = self.builder.prepare([["Warm", "up", "."]])
        for run_graph, pipeline in self.pipelines:
            pipeline.decode_prepared(warm_up if run_graph == plan.graph else replace(warm_up, graph=warm_up.chain))

    def __call__(self, document: Document, keep_predictions: bool = False) -> DocumentOutcome:
        """Decode ``document`` with every run and score it against its gold tags."""
        return next(self.outcomes([document], keep_predictions))

    def outcomes(self, documents: Iterable[Document], keep_predictions: bool = False) -> Iterator[DocumentOutcome]:
        """Each document's outcome, in order: their graphs built a few documents at a time (up to
        :data:`BATCH_TOKENS` tokens: short documents' features found together), each decoded alone."""
        batch: list[tuple[Document, int]] = []  # (document, its tokens)
        size = 0
        for document in documents:
            tokens = sum(len(s.tokens) for s in document.sentences)
            if batch and size + tokens > BATCH_TOKENS:
                yield from self._batch(batch, keep_predictions)
                batch, size = [], 0
            batch.append((document, tokens))
            size += tokens
        yield from self._batch(batch, keep_predictions)

    def _batch(self, batch: list[tuple[Document, int]], keep_predictions: bool) -> Iterator[DocumentOutcome]:
        started = time.perf_counter()
        prepared = self.builder.prepare_documents([[s.tokens for s in d.sentences] for d, _ in batch])
        per_token = (time.perf_counter() - started) / (sum(tokens for _, tokens in batch) or 1)  # shared by tokens
        for (document, tokens), graphs in zip(batch, prepared):
            yield self._outcome(document, graphs, per_token * tokens, keep_predictions)

    def _outcome(self, document: Document, prepared: DocumentGraph, build_seconds: float,
                 keep_predictions: bool) -> DocumentOutcome:
        plan, exact = self.plan, self.certifying_run
        decoded = []  # (result, decode seconds) per run
        for run_graph, pipeline in self.pipelines:
            started = time.perf_counter()
            result = pipeline.decode_prepared(prepared if run_graph == plan.graph else replace(prepared, graph=prepared.chain))
            decoded.append((result, time.perf_counter() - started))
        reference = viterbi(prepared.chain) if self.reference_run is None else decoded[self.reference_run][0].labels
        reference_score = prepared.chain.score(reference)
        reference_sentences = prepared.split(reference)
        gold = [self.model.gold_labels(s.tags or [], plan.corpus_scheme) for s in document.sentences]
        totals, labellings, kept = [], [], []
        certified = False
        for number, (result, seconds) in enumerate(decoded):
            total = _Totals()
            total.decode_seconds = seconds
            predicted = [in_scheme(tags, self.model.scheme, plan.corpus_scheme, plan.mode) for tags in result.tags]
            for gold_tags, predicted_tags in zip(gold, predicted, strict=True):
                total.entities.add(of_types(entity_spans(gold_tags, plan.corpus_scheme, plan.mode), plan.labels),
                                   of_types(entity_spans(predicted_tags, plan.corpus_scheme, plan.mode), plan.labels))
            pieces = prepared.split(result.labels)
            total.sentences = len(pieces)
            total.agreeing = sum(np.array_equal(a, b) for a, b in zip(pieces, reference_sentences))
            total.gap = reference_score - prepared.chain.score(result.labels)
            total.pairs, total.disagreeing = consistency_pairs(document.tokens, [t for tags in result.tags for t in tags])
            total.add_stats(result.stats)
            totals.append(total)
            labellings.append(result.labels)
            certified = certified or (number == exact and result.stats.get("certified") == 1.0)
            if keep_predictions:
                kept.append(predicted)
        if certified and exact is not None:  # labellings scored on the decoded graph against the certifying run's optimum
            optimum = prepared.graph.score(labellings[exact])
            for total, labels in zip(totals, labellings):
                value = prepared.graph.score(labels)
                total.optimal = int(np.isclose(value, optimum, rtol=1e-9, atol=0.0))
                total.optimum_gap = optimum - value
        return DocumentOutcome(totals, build_seconds, certified, kept if keep_predictions else None)


OutcomeProducer = Callable[[CrfModel, EvaluationPlan, Sequence[Document], bool], Iterator[DocumentOutcome]]
"""What :func:`~hgner.evaluation.evaluator.evaluate` takes to score the documents: a model, the
plan, the documents and whether to keep predictions -> each document's outcome, in order."""


def local_outcomes(model: CrfModel, plan: EvaluationPlan, documents: Sequence[Document],
                   keep: bool) -> Iterator[DocumentOutcome]:
    """Each document's :class:`DocumentOutcome`, decoded in this process, one at a time."""
    return DocumentScorer(model, plan).outcomes(documents, keep)
