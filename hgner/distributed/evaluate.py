"""Evaluation on a cluster: documents featurised and decoded on the workers in batches, every
decoder run on each batch; the report's scores equal the local run's exactly (every decoder
reseeds per document, so batching changes nothing)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..crf.model import CrfModel
from ..data.corpus import Document
from ..evaluation.runs import DocumentOutcome, DocumentScorer, EvaluationPlan, OutcomeProducer
from .connect import result, scheduler_workers
from .workers import model_reference

if TYPE_CHECKING:
    from distributed import Client


EVALUATE_BATCHES_PER_WORKER = 4


@functools.lru_cache(maxsize=4)
def _worker_scorer(reference: str, calibration: float, plan: EvaluationPlan) -> DocumentScorer:
    """A worker's scorer for ``plan``, built (model loaded with the driver's ``calibration``,
    kernels compiled) once per worker."""
    return DocumentScorer(CrfModel.load(reference, calibration), plan)


def _score_batch(reference: str, calibration: float, plan: EvaluationPlan, documents: list[Document],
                 keep: bool) -> list[DocumentOutcome]:
    scorer = _worker_scorer(reference, calibration, plan)
    return list(scorer.outcomes(documents, keep))


def score_documents(client: Client, model: CrfModel, plan: EvaluationPlan, documents: list[Document],
                    keep: bool) -> Iterator[DocumentOutcome]:
    """What :class:`~hgner.evaluation.DocumentScorer` gives for each document, computed in batches on
    the cluster's workers and yielded in document order."""
    if not documents:
        return
    workers = scheduler_workers(client)
    count = min(len(documents), EVALUATE_BATCHES_PER_WORKER * workers)
    bounds = [round(i * len(documents) / count) for i in range(count + 1)]
    reference = model_reference(model.directory)
    futures = [client.submit(_score_batch, reference, model.calibration, plan, documents[a:b], keep, pure=False)
               for a, b in zip(bounds, bounds[1:])]
    for future in futures:
        yield from result(client, future)



def cluster_outcomes(client: Client) -> OutcomeProducer:
    """The outcome producer of :func:`~hgner.evaluation.evaluator.evaluate` that scores on
    ``client``'s cluster."""
    return functools.partial(score_documents, client)
