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
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from tqdm import tqdm

from . import schemes
from .corpus import Corpus, Document, write_conll
from .decoders import Decoder, decoder_class, decoder_settings, make_decoder
from .decoders.chain import Viterbi, viterbi
from .decoders.settings import settings_per_decoder
from .errors import HgnerError
from .fileio import STANDARD_OUTPUT, check_writable, output_stream, refuse_inputs
from .model import CrfModel
from .pipeline import Pipeline
from .report import counted, name_width
from .scoring import MODES, EntityCounts, Score, consistency_disagreement, consistency_pairs, entity_spans


def _is_reference(decoder: Decoder) -> bool:
    """Whether ``decoder`` is hgner's Viterbi, whose labels are the agreement reference, so that its
    run can stand in for decoding the reference again. Identity, not a capability: crfsuite is
    exact and chain-only too, but it is what the reference checks, so it never stands in for it."""
    return type(decoder) is Viterbi


@dataclass(frozen=True)
class Run:
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


def load_inputs(model: str | Path, corpus: str, *, calibration: float | None = None, graph: str = "chain",
                scheme: str | None = None, documents: str = "auto", offline: bool = False,
                warn: Callable[[str], None]) -> tuple[CrfModel, Corpus]:
    """The model and the tagged corpus, as ``hgner evaluate`` and :func:`hgner.evaluate` read them:
    the model first (with ``calibration``; for a skip ``graph`` its skip potential, so a missing one
    fails before the corpus is read), then the corpus (:func:`hgner.reading.read_tagged`); ``warn``
    gets the warnings: a corpus without documents, one that looks like another language than the
    model's, entity types the model lacks."""
    from .model import model_advice, model_language
    from .reading import read_tagged
    from .skip import load as load_skip
    from .tokenizer import likelier_language

    loaded = CrfModel.load(model, calibration)
    if graph == "skip":
        load_skip(loaded)
    tagged, _ = read_tagged(corpus, scheme, documents, offline=offline, announce=False,  # the report prints the scheme
                            warn=warn)
    other = likelier_language(tagged.tokens, model_language(loaded.metadata))
    if other is not None:
        warn(f"corpus {tagged.name}: {other.evidence}, the language of model {loaded.name}: "
             f"{model_advice(other.language)}")
    unknown = unknown_types_warning(loaded, tagged, "corpus")
    if unknown is not None:
        warn(unknown)
    return loaded, tagged


def unknown_types_warning(model: CrfModel, corpus: Corpus, what: str) -> str | None:
    """The warning for a gold ``corpus`` with entity types the model never predicts (after its
    label map: a 3-class model's MISC is O), which count as misses; None when it has none."""
    found = {t for sentence in corpus.sentences for t in schemes.entity_types(model.gold_labels(sentence.tags or []))}
    unknown = sorted(found - set(model.entity_types))
    if not unknown:
        return None
    return (f"{what} {corpus.name}: entity types {', '.join(unknown)} are not among model {model.name}'s "
            f"({', '.join(model.entity_types)}); they count as misses")


def plan_runs(decoders: Sequence[str], sweeps: Sequence[int], seeds: Sequence[int]) -> list[Run]:
    """One run per decoder, times each sweep count it accepts, times each seed it accepts; each
    decoder, sweep count and seed given once."""
    for what, values in (("decoder", decoders), ("sweep count", sweeps), ("seed", seeds)):
        repeated = next((value for i, value in enumerate(values) if value in values[:i]), None)
        if repeated is not None:
            raise HgnerError(f"{what} {repeated!r} is given twice: each run would be the same")
    runs = []
    for name in decoders:
        options = decoder_settings(name)
        for n_sweeps in (sweeps if "sweeps" in options else [None]):
            for seed in (seeds if "seed" in options else [None]):
                runs.append(Run(name, n_sweeps, seed))
    return runs


def check_runs(decoders: Sequence[str], sweeps: Sequence[int], seeds: Sequence[int],
               settings: Mapping[str, Any] | None) -> None:
    """Build each run's decoder once from its settings, so that unknown or repeated names and bad
    settings or sweep counts fail before any model or corpus is read."""
    per_decoder = _per_decoder(settings, decoders)
    for run in plan_runs(decoders, sweeps, seeds):
        make_decoder(run.decoder, dict(per_decoder[run.decoder]), shared={"sweeps": run.sweeps, "seed": run.seed})


def in_scheme(tags: list[str], model_scheme: str, corpus_scheme: str, mode: str) -> list[str]:
    """Predicted tags (the model's scheme) rewritten in the corpus scheme. In ``strict`` mode the
    chunks that are not well-formed in the model's scheme are dropped first (an ``I-`` that starts
    a chunk in IOB2, a ``B-`` without its ``E-`` in BIOES), as seqeval's strict mode would; gold
    is always scored in the corpus scheme, so both modes count against the same entities."""
    return schemes.render(entity_spans(tags, model_scheme, mode), len(tags), corpus_scheme)


def gold_tags(corpus: Corpus, model: CrfModel) -> list[list[str]]:
    """Gold tags in the corpus scheme, with entity types the model does not know mapped as the
    model's training mapped them (e.g. MISC -> O for a 3-class model)."""
    return [model.gold_labels(s.tags, corpus.scheme) for s in corpus.sentences]


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
    stats_sum: Counter = field(default_factory=Counter)
    stats_count: Counter = field(default_factory=Counter)
    stats_max: dict[str, float] = field(default_factory=dict)
    optimal: int = 0
    optimum_gap: float = 0.0

    def add_stats(self, stats: dict[str, float]) -> None:
        for key, value in stats.items():
            self.stats_sum[key] += value
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
    it): the graph kind, scoring mode, corpus scheme, the runs and each decoder's settings."""

    graph: str
    mode: str
    corpus_scheme: str
    runs: tuple[Run, ...]
    settings: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]  # (decoder, ((name, value), ...))

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
        plan, exact = self.plan, self.certifying_run
        started = time.perf_counter()
        prepared = self.builder.prepare([s.tokens for s in document.sentences])
        build_seconds = time.perf_counter() - started
        decoded = []  # (result, decode seconds) per run
        for run_graph, pipeline in self.pipelines:
            started = time.perf_counter()
            result = pipeline.decode_prepared(prepared if run_graph == plan.graph else replace(prepared, graph=prepared.chain))
            decoded.append((result, time.perf_counter() - started))
        reference = viterbi(prepared.chain) if self.reference_run is None else decoded[self.reference_run][0].labels
        reference_score = prepared.chain.score(reference)
        reference_sentences = prepared.split(reference)
        gold = [self.model.gold_labels(s.tags, plan.corpus_scheme) for s in document.sentences]
        totals, labellings, kept = [], [], []
        certified = False
        for number, (result, seconds) in enumerate(decoded):
            total = _Totals()
            total.decode_seconds = seconds
            predicted = [in_scheme(tags, self.model.scheme, plan.corpus_scheme, plan.mode) for tags in result.tags]
            for gold_tags, predicted_tags in zip(gold, predicted, strict=True):
                total.entities.add(entity_spans(gold_tags, plan.corpus_scheme, plan.mode),
                                   entity_spans(predicted_tags, plan.corpus_scheme, plan.mode))
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
        if certified:  # labellings scored on the decoded graph against the certifying run's optimum
            optimum = prepared.graph.score(labellings[exact])
            for total, labels in zip(totals, labellings):
                value = prepared.graph.score(labels)
                total.optimal = int(np.isclose(value, optimum, rtol=1e-9, atol=0.0))
                total.optimum_gap = optimum - value
        return DocumentOutcome(totals, build_seconds, certified, kept if keep_predictions else None)


def evaluate(
    model: CrfModel,
    corpus: Corpus,
    decoders: Sequence[str],
    *,
    sweeps: Sequence[int] = (100,),
    seeds: Sequence[int] = (0,),
    mode: str = "conlleval",
    graph: str = "chain",
    predictions: str | None = None,
    progress: bool = True,
    settings: Mapping[str, Any] | None = None,
    client: Any = None,
) -> dict[str, Any]:
    """Run every decoder on ``corpus`` and return the report (the ``--json`` schema). ``settings``
    (``--set``) go to the decoders that accept them; sweeps and seeds come from ``sweeps`` and ``seeds``.

    Documents stream: each is featurised and turned into a graph once, decoded by every run, scored
    into running totals and dropped, so memory does not grow with the corpus beyond the corpus
    itself (predictions are kept only as the ``predictions`` files, written as they come). With a
    Dask ``client`` the documents are scored in batches on its workers (:mod:`hgner.cluster`):
    the same figures; the seconds are then summed over the workers."""
    if mode not in MODES:
        raise HgnerError(f"mode {mode!r}: expected one of {', '.join(MODES)}")
    per_decoder = _per_decoder(settings, decoders)
    plan = EvaluationPlan(graph, mode, corpus.scheme, tuple(plan_runs(decoders, sweeps, seeds)),
                          tuple((name, tuple(sorted(values.items()))) for name, values in per_decoder.items()))
    keep = bool(predictions)
    if client is None:
        scorer = DocumentScorer(model, plan)
        outcomes: Iterable[DocumentOutcome] = (scorer(document, keep) for document in corpus.documents)
    else:
        from .cluster import score_documents

        outcomes = score_documents(client, model, plan, corpus.documents, keep)
    totals = [_Totals() for _ in plan.runs]
    certified_documents = 0
    build_seconds = 0.0
    with ExitStack() as stack:
        outputs = [stack.enter_context(output_stream(path)) for path in _prediction_paths(predictions, list(plan.runs), corpus)]
        for document, outcome in zip(tqdm(corpus.documents, desc="decoding", unit="doc", disable=not progress,
                                          leave=False), outcomes):
            build_seconds += outcome.build_seconds
            certified_documents += outcome.certified
            for number, (total, part) in enumerate(zip(totals, outcome.totals)):
                total.add(part)
                if outputs:
                    write_conll(outputs[number], Corpus(corpus.name, corpus.scheme, [document]), outcome.predicted[number])
    n_documents = len(corpus.documents)
    exact = plan.certifying_run
    results = [_result(run, run.graph(graph), per_decoder[run.decoder],
                       total.entities.score(corpus.scheme, mode), total, n_documents, build_seconds, exact is not None,
                       certified_documents)
               for run, total in zip(plan.runs, totals)]
    return {
        "corpus": corpus.name,
        "model": model.name,
        "calibration": model.calibration,
        "scheme": corpus.scheme,
        "mode": mode,
        "graph": graph,
        "settings": _given_settings(per_decoder),
        "input": "tokens",
        "documents": n_documents,
        "sentences": len(corpus.sentences),
        "tokens": corpus.n_tokens,
        "build_seconds": build_seconds,
        "notes": corpus.notes + ([] if corpus.n_tokens else [f"{corpus.name} has no tokens: every figure is 0"]),
        "results": results,
    }


def _per_decoder(settings: Mapping[str, Any] | None, decoders: Sequence[str]) -> dict[str, dict[str, Any]]:
    """:func:`settings_per_decoder`, refusing sweeps and seed: evaluation varies them itself."""
    for name, option in (("sweeps", "--sweeps"), ("seed", "--seeds")):
        if name in (settings or {}):
            raise HgnerError(f"--set {name}=...: give {name} with {option}, which evaluate varies")
    return settings_per_decoder(settings or {}, decoders)


def _prediction_paths(predictions: str | None, runs: list[Run], corpus: Corpus) -> list[str | Path]:
    """One ``--predictions`` file per run (suffixed with the run's label when there are several);
    standard output (``-``) for one run only."""
    if not predictions:
        return []
    if predictions == STANDARD_OUTPUT:
        if len(runs) > 1:
            raise HgnerError(f"--predictions -: the {len(runs)} runs write one file each (suffixed with the run's "
                             "label); give a file name, or one decoder and one sweep count")
        return [predictions]
    path = Path(predictions)
    paths = [path.with_name(f"{path.stem}.{run.label}{path.suffix}") if len(runs) > 1 else path for run in runs]
    for each in paths:
        check_writable(each)
        refuse_inputs(each, [corpus.file], "--predictions")
    return paths


def _given_settings(per_decoder: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The ``--set`` settings as the decoders took them (typed), one entry per name: the report's
    top-level ``settings``."""
    return {name: value for given in per_decoder.values() for name, value in given.items()}


def _scores(run: Run, run_graph: str, settings: Mapping[str, Any], result_score: Score) -> dict[str, Any]:
    """The entries of every report row, on corpus tokens or raw text: the run, its graph, the
    ``--set`` settings its decoder took, its scores."""
    return {
        "decoder": run.decoder,
        "sweeps": run.sweeps,
        "seed": run.seed,
        "graph": run_graph,
        "settings": dict(settings),
        "f1": result_score.micro.f1,
        "precision": result_score.micro.precision,
        "recall": result_score.micro.recall,
        "macro_f1": result_score.macro_f1,
        "per_type": {t: c.as_dict() for t, c in result_score.per_type.items()},
    }


def _result(run: Run, run_graph: str, settings: Mapping[str, Any], result_score: Score, total: _Totals,
            n_documents: int, build_seconds: float, with_exact: bool, certified_documents: int) -> dict[str, Any]:
    """A run's entry in the report, from its totals."""
    result = {
        **_scores(run, run_graph, settings, result_score),
        "decode_seconds": total.decode_seconds,
        "total_seconds": build_seconds + total.decode_seconds,
        "viterbi_agreement": total.agreeing / total.sentences if total.sentences else 1.0,
        "mean_score_gap": total.gap / n_documents if n_documents else 0.0,
        "consistency_disagreement": 100.0 * total.disagreeing / total.pairs if total.pairs else 0.0,
        "stats_mean": {k: total.stats_sum[k] / total.stats_count[k] for k in sorted(total.stats_count)},
        "stats_max": {k: float(total.stats_max[k]) for k in sorted(total.stats_max)},
    }
    if with_exact:
        if decoder_class(run.decoder).certifies:
            result["certified_fraction"] = result["stats_mean"].get("certified", 0.0)
        result["optimum_fraction"] = total.optimal / certified_documents if certified_documents else 0.0
        result["mean_optimum_gap"] = total.optimum_gap / certified_documents if certified_documents else 0.0
    return result


def format_report(report: dict[str, Any], out: TextIO) -> None:
    """The results table: one row per run, then a mean (sd) row for decoders run with several seeds."""
    out.write(
        f"model {report['model']} on {report['corpus']}: {counted(report['documents'], 'document')}, "
        f"{counted(report['sentences'], 'sentence')}, {counted(report['tokens'], 'token')}; scheme {report['scheme']}, "
        f"mode {report['mode']}, graph {report['graph']}"
        + (f", calibration {report['calibration']:g}" if "calibration" in report else "")  # older reports have none
        + (f"; input raw text ({report['layout']})" if report.get("input") == "raw" else "")
        + (f"; --set {' '.join(f'{k}={v}' for k, v in report['settings'].items())}" if report.get("settings") else "")
        + "\n"
    )
    for note in report["notes"]:
        out.write(f"note: {note}\n")
    groups: dict[tuple, list[dict]] = {}
    for r in report["results"]:
        groups.setdefault((_shown_name(r, report), r["sweeps"]), []).append(r)
    width = name_width(decoder for decoder, _ in groups)
    header = (f"{'decoder':<{width}} {'sweeps':>6} {'seed':>5} {'F1':>14} {'P':>6} {'R':>6} {'macro':>6} {'decode s':>9} "
              f"{'total s':>8} {'=viterbi':>8}")
    out.write(header + "\n")
    for (decoder, sweeps), rows in groups.items():
        for r in rows:
            out.write(
                f"{decoder:<{width}} {_blank(sweeps):>6} {_blank(r['seed']):>5} {r['f1']:14.2f} {r['precision']:6.2f} "
                f"{r['recall']:6.2f} {r['macro_f1']:6.2f} {r['decode_seconds']:9.2f} {r['total_seconds']:8.2f} "
                f"{r['viterbi_agreement']:8.2%}\n"
            )
        if len(rows) > 1:
            f1s = [r["f1"] for r in rows]
            mean = f"{statistics.mean(f1s):.2f} ({statistics.stdev(f1s):.2f})"
            seconds = statistics.mean(r["decode_seconds"] for r in rows)
            out.write(f"{decoder:<{width}} {_blank(sweeps):>6} {'mean':>5} {mean:>14} {'':>6} {'':>6} {'':>6} {seconds:9.2f}\n")
    if any(r.get("graph", report["graph"]) != report["graph"] for r in report["results"]):
        out.write(f"note: decoders marked @chain cannot take skip edges: they decoded the chain graph "
                  f"(the linear-chain baseline), not the {report['graph']} graph\n")
    if any("optimum_fraction" in r for r in report["results"]):
        _format_optimum(report, out)


def _format_optimum(report: dict[str, Any], out: TextIO) -> None:
    """Per run: label-consistency disagreement, share of certified documents at the optimum,
    mean optimum gap, and the largest per-document weight table (herded)."""
    certified = next(r["certified_fraction"] for r in report["results"] if "certified_fraction" in r)
    out.write(f"\nagainst the certified optimum of the {report['graph']} graph "
              f"(exact certified {certified:.2%} of documents):\n")
    width = name_width(r["decoder"] for r in report["results"])
    out.write(f"{'decoder':<{width}} {'sweeps':>6} {'seed':>5} {'consist.':>8} {'=optimum':>8} {'mean gap':>10} {'max weights':>12}\n")
    for r in report["results"]:
        weights = r["stats_max"].get("weight_bytes")
        out.write(f"{r['decoder']:<{width}} {_blank(r['sweeps']):>6} {_blank(r['seed']):>5} {r['consistency_disagreement']:7.2f}% "
                  f"{r['optimum_fraction']:8.2%} {r['mean_optimum_gap']:10.4f} "
                  f"{'' if weights is None else f'{weights / 2**20:.2f} MiB':>12}\n")


def _shown_name(result: dict[str, Any], report: dict[str, Any]) -> str:
    """The decoder's name, marked ``@chain`` when it decoded the chain instead of the report's graph."""
    graph = result.get("graph", report["graph"])
    return result["decoder"] if graph == report["graph"] else f"{result['decoder']}@{graph}"


def _blank(value: Any) -> str:
    return "" if value is None else str(value)


def write_json(report: dict[str, Any], path: str) -> None:
    """The report as JSON to ``path`` (``-``: standard output)."""
    with output_stream(path) as out:
        out.write(json.dumps(report, indent=2) + "\n")


def evaluate_raw(
    model: CrfModel,
    corpus: Corpus,
    decoders: Sequence[str],
    *,
    sweeps: Sequence[int] = (100,),
    seeds: Sequence[int] = (0,),
    graph: str = "chain",
    layout: str = "lines",
    progress: bool = True,
    settings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``--input raw``: every document rebuilt as raw text (:mod:`hgner.rawtext`), tokenized and
    tagged by :class:`hgner.tag.Tagger` as ``hgner tag`` does, and scored by exact character span
    and type. The report has the ``--json`` schema with ``"input": "raw"`` and ``"layout"``;
    ``viterbi_agreement`` compares each run's tags with Viterbi's on the same tokens, and there is
    no ``mean_score_gap`` (the tokens are not the corpus's)."""
    from .rawtext import rebuild, score_spans
    from .tag import Tagger

    per_decoder = _per_decoder(settings, decoders)

    gold = gold_tags(corpus, model)
    documents = []
    position = 0
    for document in corpus.documents:
        n = len(document.sentences)
        documents.append(rebuild([s.tokens for s in document.sentences], gold[position:position + n], layout))
        position += n
    started = time.perf_counter()
    reference = Tagger(model, "viterbi", "chain", warn=lambda message: None)
    tokenized = [list(reference.sentences(d.text)) for d in documents]
    tokenize_seconds = time.perf_counter() - started
    reference_tags: list[list[str]] | None = None  # Viterbi's tags on the same sentences, when first needed
    results = []
    for run in plan_runs(decoders, sweeps, seeds):
        run_graph = run.graph(graph)
        tagger = Tagger(model, run.decoder, run_graph, run.sweeps, run.seed, warn=lambda message: None,
                        settings=per_decoder[run.decoder])
        if documents:  # compile (or load from numba's cache) the decoder's kernels outside the timing
            list(tagger.tag_sentences(documents[0].text, tokenized[0][:1]))
        started = time.perf_counter()
        groups = [
            list(tagger.tag_sentences(d.text, s))
            for d, s in tqdm(list(zip(documents, tokenized)), desc=run.label, unit="doc", disable=not progress, leave=False)
        ]
        decode_seconds = time.perf_counter() - started
        predicted = [[(e.start, e.end, e.label) for g in doc_groups for e in g.entities] for doc_groups in groups]
        result_score = score_spans((d.entities for d in documents), predicted, corpus.scheme)
        tags = [t for doc_groups in groups for g in doc_groups for t in g.tags]
        if reference_tags is None:  # a Viterbi run (chain-only, so on the chain) has just decoded it: reused
            reference_tags = tags if _is_reference(tagger.pipeline.decoder) else [
                t for d, s in zip(documents, tokenized) for g in reference.tag_sentences(d.text, s) for t in g.tags]
        agreement = float(np.mean([a == b for a, b in zip(tags, reference_tags)])) if tags else 1.0
        flat = (([t for s in doc_sentences for t in s.tokens], [t for g in doc_groups for ts in g.tags for t in ts])
                for doc_sentences, doc_groups in zip(tokenized, groups))
        results.append({
            **_scores(run, run_graph, per_decoder[run.decoder], result_score),
            "decode_seconds": decode_seconds,
            "total_seconds": tokenize_seconds + decode_seconds,
            "viterbi_agreement": agreement,
            "consistency_disagreement": consistency_disagreement(flat),
            "stats_mean": {},
            "stats_max": {},
        })
    n_sentences = sum(len(s) for s in tokenized)
    return {
        "corpus": corpus.name,
        "model": model.name,
        "calibration": model.calibration,
        "scheme": corpus.scheme,
        "mode": "conlleval",
        "graph": graph,
        "settings": _given_settings(per_decoder),
        "input": "raw",
        "layout": layout,
        "documents": len(corpus.documents),
        "sentences": len(corpus.sentences),
        "tokens": corpus.n_tokens,
        "raw_sentences": n_sentences,
        "raw_tokens": sum(len(s.tokens) for sentences in tokenized for s in sentences),
        "build_seconds": tokenize_seconds,
        "notes": corpus.notes + [
            f"input raw ({layout}): each document rebuilt as text, tokenized into {n_sentences} sentences by the "
            "tagger's tokenizer, entities scored by exact character span and type"
        ],
        "results": results,
    }
