"""``hgner evaluate``: decoders compete on one corpus, scored by entity F1.

Every document is featurised and turned into a graph once; each (decoder, sweeps, seed) run
then decodes every graph. Figures per run: F1/P/R (percent), per-type scores, decode seconds,
total seconds (graph building plus decoding), agreement with Viterbi, the mean score gap to
Viterbi on the chain model, the label-consistency disagreement, and the mean and maximum over
documents of every figure the decoder reports (e.g. herded's ``weight_bytes``).

With ``graph="skip"`` the chain-only decoders (``Decoder.chain_only``: viterbi, crfsuite) decode the
chain graph, so their rows are the linear-chain baseline; their result says so (``"graph":
"chain"``) and the printed table marks them ``@chain``. When a certifying decoder
(``Decoder.certifies``: exact) is among the decoders, its result carries ``certified_fraction``
and every result gets ``optimum_fraction`` (share of
the certified documents where its labelling scores the certified optimum on the decoded graph,
within 1e-9 relative) and ``mean_optimum_gap`` (mean over those documents of optimum minus its
score on the decoded graph).

Where the documents are decoded is the caller's choice: :func:`evaluate` takes an outcome
producer (:func:`~hgner.evaluation.runs.local_outcomes` by default; ``hgner evaluate --cluster``
gives :func:`hgner.distributed.evaluate.cluster_outcomes`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO, cast

import numpy as np
from tqdm import tqdm

from ..core import schemes
from ..core.errors import HgnerError, named, warn
from ..core.fileio import STANDARD_OUTPUT, check_writable, output_stream, refuse_inputs
from ..core.integrity import refuse_model_folder
from ..core.scoring import Score, consistency_disagreement
from ..crf.model import CrfModel
from ..crf.modelfiles import model_advice, model_language
from ..crf.skip import load as load_skip
from ..data.corpus import Corpus, write_conll
from ..data.reading import read_tagged
from ..decoders import decoder_class
from ..tagging.settings import TagSettings
from ..tagging.tagger import TaggedGroup, Tagger
from ..text.languages import likelier_language
from ..text.rawtext import RawDocument, rebuild, score_spans
from ..text.tokenizer import TokenizedSentence
from .interval import LEVEL, f1_intervals, micro, span_counts
from .options import EvaluateOptions, Run
from .results import Report, RunResult
from .runs import EvaluationPlan, OutcomeProducer, _is_reference, _Totals, gold_tags, local_outcomes, of_types


def load_inputs(options: EvaluateOptions) -> tuple[CrfModel, Corpus]:
    """The model and the tagged corpus ``options`` name, as ``hgner evaluate`` and
    :func:`hgner.evaluate` read them: the model first (with ``calibration``; for a skip ``graph``
    its skip potential, so a missing one fails before the corpus is read), then the corpus
    (:func:`hgner.data.reading.read_tagged`). Warnings: a corpus without documents, one that looks like
    another language than the model's, entity types the model lacks."""
    if options.corpus is None:
        raise HgnerError(f"{named('corpus')}: expected a corpus name or a CoNLL file, got None")
    loaded = CrfModel.load(options.model, options.calibration)
    if options.graph == "skip":
        load_skip(loaded)
    tagged, _ = read_tagged(str(options.corpus), options.scheme, options.documents, offline=options.offline,
                            announce=False, language=model_language(loaded.metadata))  # the report prints the scheme
    other = likelier_language(tagged.tokens, model_language(loaded.metadata))
    if other is not None:
        warn(f"corpus {tagged.name}: {other.evidence}, the language of model {loaded.name}: "
             f"{model_advice(other.language)}")
    unknown = unknown_types_warning(loaded, tagged, "corpus")
    if unknown is not None:
        warn(unknown)
    check_labels(options.labels, loaded, tagged)
    return loaded, tagged


def check_labels(labels: Sequence[str] | None, model: CrfModel, corpus: Corpus) -> None:
    """An :class:`HgnerError` naming ``labels`` when one of them is neither among the model's
    entity types nor in the corpus's gold tags (a misspelt type would score nothing, silently)."""
    if labels is None:
        return
    known = set(model.entity_types) | {t for s in corpus.sentences for t in schemes.entity_types(s.tags or [])}
    unknown = [label for label in labels if label not in known]
    if unknown:
        raise HgnerError(f"{named('labels')}: no entity type {', '.join(map(repr, unknown))} in model {model.name} "
                         f"or corpus {corpus.name} (their types: {', '.join(sorted(known)) or 'none'})")


def unknown_types_warning(model: CrfModel, corpus: Corpus, what: str) -> str | None:
    """The warning for a gold ``corpus`` with entity types the model never predicts (after its
    label map: a 3-class model's MISC is O), which count as misses; None when it has none."""
    found = {t for sentence in corpus.sentences for t in schemes.entity_types(model.gold_labels(sentence.tags or []))}
    unknown = sorted(found - set(model.entity_types))
    if not unknown:
        return None
    return (f"{what} {corpus.name}: entity types {', '.join(unknown)} are not among model {model.name}'s "
            f"({', '.join(model.entity_types)}); they count as misses")


def evaluate(model: CrfModel, corpus: Corpus, options: EvaluateOptions | None = None, *,
             outcomes: OutcomeProducer = local_outcomes, progress: bool = False) -> Report:
    """Run every decoder ``options`` name on ``corpus`` and return the report: on the corpus's
    tokens, or (``options.input == "raw"``) on its documents rebuilt as raw text (:func:`evaluate_raw`).

    Documents stream: each is featurised and turned into a graph once, decoded by every run, scored
    into running totals and dropped, so memory does not grow with the corpus beyond the corpus
    itself (predictions are kept only as the ``predictions`` files, written as they come).
    ``outcomes`` decodes the documents (in this process by default; on a cluster the figures are
    the same, the seconds then summed over the workers)."""
    options = options or EvaluateOptions()
    if options.input == "raw":
        return evaluate_raw(model, corpus, options, progress=progress)
    per_decoder = options.per_decoder
    runs = options.runs
    plan = EvaluationPlan(options.graph, options.mode, corpus.scheme, tuple(runs),
                          tuple((name, tuple(sorted(values.items()))) for name, values in per_decoder.items()),
                          options.labels)
    per_document: list[list[tuple[int, int, int]]] = [[] for _ in runs]  # (correct, predicted, gold) per document
    keep = bool(options.predictions)
    totals = [_Totals() for _ in runs]
    certified_documents, build_seconds = 0, 0.0
    with ExitStack() as stack:
        paths = _prediction_paths(options.predictions, runs, corpus, model)
        outputs = [stack.enter_context(output_stream(path, refuse=refuse_model_folder)) for path in paths]
        documents = tqdm(corpus.documents, desc="decoding", unit="doc", disable=not progress, leave=False)
        for document, outcome in zip(documents, outcomes(model, plan, corpus.documents, keep)):
            build_seconds += outcome.build_seconds
            certified_documents += outcome.certified
            for number, (total, part) in enumerate(zip(totals, outcome.totals)):
                total.add(part)
                per_document[number].append(micro(part.entities))
                if outputs and outcome.predicted is not None:
                    write_conll(cast(TextIO, outputs[number]), Corpus(corpus.name, corpus.scheme, [document]),
                                outcome.predicted[number])
    with_exact = plan.certifying_run is not None
    results = [_result(run, run.graph(options.graph), per_decoder[run.decoder],
                       total.entities.score(corpus.scheme, options.mode), total, len(corpus.documents),
                       build_seconds, with_exact, certified_documents)
               for run, total in zip(runs, totals)]
    notes = corpus.notes + ([] if corpus.n_tokens else [f"{corpus.name} has no tokens: every figure is 0"])
    bootstrap = _with_intervals(results, per_document, options)
    return Report(corpus=corpus.name, model=model.name, calibration=model.calibration, scheme=corpus.scheme,
                  mode=options.mode, graph=options.graph, skip=_skip_used(model, options.graph),
                  labels=_labels(options), bootstrap=bootstrap,
                  settings=_given_settings(per_decoder), input="tokens",
                  documents=len(corpus.documents), sentences=len(corpus.sentences), tokens=corpus.n_tokens,
                  build_seconds=build_seconds, notes=notes, results=results)


def _labels(options: EvaluateOptions) -> list[str] | None:
    return None if options.labels is None else list(options.labels)


def _with_intervals(results: list[RunResult], per_document: list[list[tuple[int, int, int]]],
                    options: EvaluateOptions) -> dict[str, Any] | None:
    """With ``options.bootstrap``, each result's ``f1_interval`` set from its per-document counts,
    and the report's ``bootstrap`` entry; else None."""
    if not options.bootstrap:
        return None
    counts = [np.array(rows, dtype=np.int64).reshape(-1, 3) for rows in per_document]
    intervals = f1_intervals(counts, options.bootstrap, np.random.default_rng(options.bootstrap_seed))
    for result, (low, high) in zip(results, intervals):
        result.f1_interval = [low, high]
    return {"resamples": options.bootstrap, "seed": options.bootstrap_seed, "level": LEVEL,
            "units": len(per_document[0]) if per_document else 0}


def _skip_used(model: CrfModel, graph: str) -> dict[str, Any] | None:
    """With a skip ``graph``, what the model's skip potential gives it (:meth:`SkipModel.describe`), else None."""
    return load_skip(model).describe() if graph == "skip" else None


def prediction_paths(predictions: str | Path | None, runs: Sequence[Run]) -> list[str | Path]:
    """The predictions file of each run: ``predictions``, suffixed with the run's label when there
    are several (``out.gibbs-100.conll``); standard output (``-``) for one run only."""
    if not predictions:
        return []
    if str(predictions) == STANDARD_OUTPUT:
        if len(runs) > 1:
            raise HgnerError(f"{named('predictions')} -: the {len(runs)} runs write one file each (suffixed with "
                             "the run's label); give a file name, or one decoder and one sweep count")
        return [predictions]
    path = Path(predictions)
    return [path.with_name(f"{path.stem}.{run.label}{path.suffix}") if len(runs) > 1 else path for run in runs]


def _prediction_paths(predictions: str | Path | None, runs: list[Run], corpus: Corpus,
                      model: CrfModel) -> list[str | Path]:
    """:func:`prediction_paths`, each checked writable and none the corpus or a model file."""
    paths = prediction_paths(predictions, runs)
    for each in paths:
        check_writable(each)
        refuse_inputs(each, [corpus.file, *model.files()], named("predictions"))
    return paths


def _given_settings(per_decoder: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The decoder settings as the decoders took them (typed), one entry per name: the report's
    top-level ``settings``."""
    return {name: value for given in per_decoder.values() for name, value in given.items()}


def _scores(run: Run, run_graph: str, settings: Mapping[str, Any], result_score: Score) -> dict[str, Any]:
    """The entries of every report row, on corpus tokens or raw text: the run, its graph, the
    settings its decoder took, its scores."""
    return {
        "decoder": run.decoder, "sweeps": run.sweeps, "seed": run.seed, "graph": run_graph, "settings": dict(settings),
        "f1": result_score.micro.f1, "precision": result_score.micro.precision,
        "recall": result_score.micro.recall, "macro_f1": result_score.macro_f1,
        "per_type": {t: c.as_dict() for t, c in result_score.per_type.items()},
    }


def _result(run: Run, run_graph: str, settings: Mapping[str, Any], result_score: Score, total: _Totals,
            n_documents: int, build_seconds: float, with_exact: bool, certified_documents: int) -> RunResult:
    """A run's entry in the report, from its totals."""
    stats_mean = {k: total.stats_sum[k] / total.stats_count[k] for k in sorted(total.stats_count)}
    result = RunResult(
        **_scores(run, run_graph, settings, result_score),
        decode_seconds=total.decode_seconds,
        total_seconds=build_seconds + total.decode_seconds,
        viterbi_agreement=total.agreeing / total.sentences if total.sentences else 1.0,
        mean_score_gap=total.gap / n_documents if n_documents else 0.0,
        consistency_disagreement=100.0 * total.disagreeing / total.pairs if total.pairs else 0.0,
        stats_mean=stats_mean,
        stats_max={k: float(total.stats_max[k]) for k in sorted(total.stats_max)},
    )
    if with_exact:
        if decoder_class(run.decoder).certifies:
            result.certified_fraction = stats_mean.get("certified", 0.0)
        result.optimum_fraction = total.optimal / certified_documents if certified_documents else 0.0
        result.mean_optimum_gap = total.optimum_gap / certified_documents if certified_documents else 0.0
    return result


def evaluate_raw(model: CrfModel, corpus: Corpus, options: EvaluateOptions, *, progress: bool = False) -> Report:
    """``input="raw"``: every document rebuilt as raw text (:mod:`hgner.text.rawtext`, laid out as
    ``options.layout``), tokenized and tagged by :class:`~hgner.tagging.tagger.Tagger` as ``hgner
    tag`` does, and scored by exact character span and type. ``viterbi_agreement`` compares each
    run's tags with Viterbi's on the same tokens, and there is no ``mean_score_gap`` (the tokens
    are not the corpus's)."""
    per_decoder = options.per_decoder
    documents = rebuilt_documents(corpus, model, options.layout)
    started = time.perf_counter()
    reference = Tagger(TagSettings(model.directory, "viterbi"), model)
    tokenized = [list(reference.sentences(d.text)) for d in documents]
    tokenize_seconds = time.perf_counter() - started
    reference_tags: list[list[str]] | None = None  # Viterbi's tags on the same sentences, when first needed
    results = []
    per_document: list[list[tuple[int, int, int]]] = []  # per run: (correct, predicted, gold) per document
    for run in options.runs:
        run_graph = run.graph(options.graph)
        tagger = Tagger(TagSettings(model.directory, run.decoder, run_graph, run.sweeps, run.seed,
                                    per_decoder[run.decoder]), model)
        groups, decode_seconds = _tag_documents(tagger, documents, tokenized, run.label, progress)
        predicted = [of_types([(e.start, e.end, e.label) for g in doc_groups for e in g.entities], options.labels)
                     for doc_groups in groups]
        gold = [of_types(d.entities, options.labels) for d in documents]
        result_score = score_spans(gold, predicted, corpus.scheme)
        per_document.append([span_counts(g, p) for g, p in zip(gold, predicted)])
        tags = [t for doc_groups in groups for g in doc_groups for t in g.tags]
        if reference_tags is None:  # a Viterbi run (chain-only, so on the chain) has just decoded it: reused
            reference_tags = tags if _is_reference(tagger.pipeline.decoder) else [
                t for d, s in zip(documents, tokenized) for g in reference.tag_sentences(d.text, s) for t in g.tags]
        agreement = float(np.mean([a == b for a, b in zip(tags, reference_tags)])) if tags else 1.0
        flat = (([t for s in doc_sentences for t in s.tokens], [t for g in doc_groups for ts in g.tags for t in ts])
                for doc_sentences, doc_groups in zip(tokenized, groups))
        results.append(RunResult(**_scores(run, run_graph, per_decoder[run.decoder], result_score),
                                 decode_seconds=decode_seconds, total_seconds=tokenize_seconds + decode_seconds,
                                 viterbi_agreement=agreement, consistency_disagreement=consistency_disagreement(flat),
                                 stats_mean={}, stats_max={}))
    bootstrap = _with_intervals(results, per_document, options)
    return replace(_raw_report(model, corpus, options, per_decoder, tokenized, tokenize_seconds, results),
                   labels=_labels(options), bootstrap=bootstrap)


def rebuilt_documents(corpus: Corpus, model: CrfModel, layout: str) -> list[RawDocument]:
    """Each document of ``corpus`` as raw text laid out as ``layout``, with its gold entities (the
    model's label map applied) as character spans."""
    gold = gold_tags(corpus, model)
    documents, position = [], 0
    for document in corpus.documents:
        n = len(document.sentences)
        documents.append(rebuild([s.tokens for s in document.sentences], gold[position:position + n], layout))
        position += n
    return documents


def _tag_documents(tagger: Tagger, documents: Sequence[RawDocument], tokenized: list[list[TokenizedSentence]],
                   label: str, progress: bool) -> tuple[list[list[TaggedGroup]], float]:
    """Each document's decoded groups, and the seconds decoding took (the decoder's kernels
    compiled, or loaded from numba's cache, beforehand)."""
    if documents:
        list(tagger.tag_sentences(documents[0].text, tokenized[0][:1]))
    started = time.perf_counter()
    groups = [list(tagger.tag_sentences(d.text, s))
              for d, s in tqdm(list(zip(documents, tokenized)), desc=label, unit="doc", disable=not progress,
                               leave=False)]
    return groups, time.perf_counter() - started


def _raw_report(model: CrfModel, corpus: Corpus, options: EvaluateOptions, per_decoder: dict[str, dict[str, Any]],
                tokenized: list[list[TokenizedSentence]], tokenize_seconds: float,
                results: list[RunResult]) -> Report:
    n_sentences = sum(len(s) for s in tokenized)
    note = (f"input raw ({options.layout}): each document rebuilt as text, tokenized into {n_sentences} sentences "
            "by the tagger's tokenizer, entities scored by exact character span and type")
    return Report(corpus=corpus.name, model=model.name, calibration=model.calibration, scheme=corpus.scheme,
                  mode="conlleval", graph=options.graph, skip=_skip_used(model, options.graph),
                  settings=_given_settings(per_decoder), input="raw",
                  layout=options.layout, documents=len(corpus.documents), sentences=len(corpus.sentences),
                  tokens=corpus.n_tokens, raw_sentences=n_sentences,
                  raw_tokens=sum(len(s.tokens) for sentences in tokenized for s in sentences),
                  build_seconds=tokenize_seconds, notes=corpus.notes + [note], results=results)
