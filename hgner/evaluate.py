"""``hgner evaluate``: decoders compete on one corpus, scored by entity F1.

Every document is featurised and turned into a graph once; each (decoder, sweeps, seed) run
then decodes every graph. Figures per run: F1/P/R (percent), per-type scores, decode seconds,
total seconds (graph building plus decoding), agreement with Viterbi, the mean score gap to
Viterbi on the chain model, the label-consistency disagreement, and the mean and maximum over
documents of every figure the decoder reports (e.g. herded's ``weight_bytes``).

With ``graph="skip"`` the chain-only decoders (``Decoder.chain_only``: viterbi, crfsuite) decode the
chain graph, so their rows are the linear-chain baseline; their result says so (``"graph":
"chain"``) and the printed table marks them ``@chain``. When ``exact`` is among the decoders,
its result carries ``certified_fraction`` and every result gets ``optimum_fraction`` (share of
the certified documents where its labelling scores the certified optimum on the decoded graph,
within 1e-9 relative) and ``mean_optimum_gap`` (mean over those documents of optimum minus its
score on the decoded graph).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from tqdm import tqdm

from . import schemes
from .corpus import Corpus, write_conll
from .decoders import decoder_class, decoder_options, make_decoder
from .decoders.chain import viterbi
from .graph import FactorGraph
from .model import CrfModel, relabel
from .pipeline import DocumentGraph, Pipeline
from .scoring import consistency_disagreement, entity_spans, score



@dataclass(frozen=True)
class Run:
    decoder: str
    sweeps: int | None
    seed: int | None

    @property
    def label(self) -> str:
        parts = [self.decoder]
        if self.sweeps is not None:
            parts.append(f"{self.sweeps}sweeps")
        if self.seed is not None:
            parts.append(f"seed{self.seed}")
        return "-".join(parts)


def plan_runs(decoders: Sequence[str], sweeps: Sequence[int], seeds: Sequence[int]) -> list[Run]:
    """One run per decoder, times each sweep count it accepts, times each seed it accepts."""
    runs = []
    for name in decoders:
        options = decoder_options(name)
        for n_sweeps in (sweeps if "sweeps" in options else [None]):
            for seed in (seeds if "seed" in options else [None]):
                runs.append(Run(name, n_sweeps, seed))
    return runs


def in_scheme(tags: list[str], model_scheme: str, corpus_scheme: str, mode: str) -> list[str]:
    """Predicted tags (the model's scheme) rewritten in the corpus scheme. In ``strict`` mode the
    chunks that are not well-formed in the model's scheme are dropped first (an ``I-`` that starts
    a chunk in IOB2, a ``B-`` without its ``E-`` in BIOES), as seqeval's strict mode would; gold
    is always scored in the corpus scheme, so both modes count against the same entities."""
    return schemes.render(entity_spans(tags, model_scheme, mode), len(tags), corpus_scheme)


def gold_tags(corpus: Corpus, model: CrfModel) -> list[list[str]]:
    """Gold tags in the corpus scheme, with entity types the model does not know mapped as the
    model's training mapped them (e.g. MISC -> O for a 3-class model)."""
    label_map = model.metadata.get("label_map") or {}
    return [relabel(s.tags, label_map, corpus.scheme) for s in corpus.sentences]


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
) -> dict[str, Any]:
    """Run every decoder on ``corpus`` and return the report (the ``--json`` schema)."""
    gold = gold_tags(corpus, model)
    documents = [[s.tokens for s in d.sentences] for d in corpus.documents]

    started = time.perf_counter()
    builder = Pipeline(model, make_decoder("viterbi"), graph)
    prepared: list[DocumentGraph] = [
        builder.prepare(sentences)
        for sentences in tqdm(documents, desc="building graphs", unit="doc", disable=not progress, leave=False)
    ]
    build_seconds = time.perf_counter() - started
    reference = [viterbi(p.chain) for p in prepared]
    reference_scores = [p.chain.score(y) for p, y in zip(prepared, reference)]
    reference_sentences = [piece for p, y in zip(prepared, reference) for piece in p.split(y)]

    results = []
    labellings: list[list[np.ndarray]] = []
    certified: list[bool] = []  # per document, from the first exact run
    for run in plan_runs(decoders, sweeps, seeds):
        run_graph = "chain" if decoder_class(run.decoder).chain_only else graph
        pipeline = Pipeline(model, make_decoder(run.decoder, sweeps=run.sweeps, seed=run.seed), run_graph)
        inputs = prepared if run_graph == graph else [replace(p, graph=p.chain) for p in prepared]
        if inputs:  # compile (or load from numba's cache) the decoder's kernels outside the timing
            pipeline.decode_prepared(min(inputs, key=lambda p: p.graph.n_variables))
        started = time.perf_counter()
        decoded = [
            pipeline.decode_prepared(p)
            for p in tqdm(inputs, desc=run.label, unit="doc", disable=not progress, leave=False)
        ]
        decode_seconds = time.perf_counter() - started
        predicted = [tags for result in decoded for tags in result.tags]
        in_corpus_scheme = [in_scheme(tags, model.scheme, corpus.scheme, mode) for tags in predicted]
        result_score = score(gold, in_corpus_scheme, corpus.scheme)
        sentences = [piece for p, r in zip(prepared, decoded) for piece in p.split(r.labels)]
        agreement = np.mean([np.array_equal(a, b) for a, b in zip(sentences, reference_sentences)]) if sentences else 1.0
        gaps = [s - p.chain.score(r.labels) for s, p, r in zip(reference_scores, prepared, decoded)]
        flat = zip(
            (d.tokens for d in corpus.documents),
            ([t for tags in r.tags for t in tags] for r in decoded),
        )
        results.append({
            "decoder": run.decoder,
            "sweeps": run.sweeps,
            "seed": run.seed,
            "f1": result_score.micro.f1,
            "precision": result_score.micro.precision,
            "recall": result_score.micro.recall,
            "macro_f1": result_score.macro_f1,
            "per_type": {t: c.as_dict() for t, c in result_score.per_type.items()},
            "decode_seconds": decode_seconds,
            "total_seconds": build_seconds + decode_seconds,
            "viterbi_agreement": float(agreement),
            "mean_score_gap": float(np.mean(gaps)) if gaps else 0.0,
            "consistency_disagreement": consistency_disagreement(flat),
            "graph": run_graph,
            **_stats_summary([r.stats for r in decoded]),
        })
        labellings.append([r.labels for r in decoded])
        if run.decoder == "exact" and not certified:
            certified = [r.stats["certified"] == 1.0 for r in decoded]
        if predictions:
            path = Path(predictions)
            if len(decoders) > 1 or len(sweeps) > 1 or len(seeds) > 1:
                path = path.with_name(f"{path.stem}.{run.label}{path.suffix}")
            with open(path, "w", encoding="utf-8") as out:
                write_conll(out, corpus, in_corpus_scheme)
    if "exact" in decoders:
        _add_optimum_figures(results, labellings, [p.graph for p, c in zip(prepared, certified) if c], certified)
    return {
        "corpus": corpus.name,
        "model": model.name,
        "scheme": corpus.scheme,
        "mode": mode,
        "graph": graph,
        "input": "tokens",
        "documents": len(corpus.documents),
        "sentences": len(corpus.sentences),
        "tokens": corpus.n_tokens,
        "build_seconds": build_seconds,
        "notes": corpus.notes + ([] if corpus.n_tokens else [f"{corpus.name} has no tokens: every figure is 0"]),
        "results": results,
    }


def _stats_summary(stats: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    """``stats_mean`` and ``stats_max``: each decoder figure's mean and maximum over documents."""
    keys = sorted({key for s in stats for key in s})
    values = {key: [s[key] for s in stats if key in s] for key in keys}
    return {"stats_mean": {k: float(np.mean(v)) for k, v in values.items()},
            "stats_max": {k: float(np.max(v)) for k, v in values.items()}}


def _add_optimum_figures(results: list[dict[str, Any]], labellings: list[list[np.ndarray]],
                         graphs: list[FactorGraph], certified: list[bool]) -> None:
    """Add ``certified_fraction`` to the exact results, and ``optimum_fraction`` and
    ``mean_optimum_gap`` to every result: its labellings (per run, per document) scored on the
    decoded ``graphs`` of the ``certified`` documents, against the first exact run's optima."""
    exact = next(i for i, r in enumerate(results) if r["decoder"] == "exact")
    for result in results:
        if result["decoder"] == "exact":
            result["certified_fraction"] = result["stats_mean"].get("certified", 0.0)
    documents = np.flatnonzero(certified)
    optimum = np.array([g.score(labellings[exact][d]) for g, d in zip(graphs, documents)])
    for result, labels in zip(results, labellings):
        scores = np.array([g.score(labels[d]) for g, d in zip(graphs, documents)])
        result["optimum_fraction"] = float(np.mean(np.isclose(scores, optimum, rtol=1e-9, atol=0.0))) if len(documents) else 0.0
        result["mean_optimum_gap"] = float(np.mean(optimum - scores)) if len(documents) else 0.0


def format_report(report: dict[str, Any], out: TextIO) -> None:
    """The results table: one row per run, then a mean (sd) row for decoders run with several seeds."""
    out.write(
        f"model {report['model']} on {report['corpus']}: {report['documents']} documents, "
        f"{report['sentences']} sentences, {report['tokens']} tokens; scheme {report['scheme']}, "
        f"mode {report['mode']}, graph {report['graph']}"
        + (f"; input raw text ({report['layout']})" if report.get("input") == "raw" else "") + "\n"
    )
    for note in report["notes"]:
        out.write(f"note: {note}\n")
    header = (f"{'decoder':<12} {'sweeps':>6} {'seed':>5} {'F1':>14} {'P':>6} {'R':>6} {'macro':>6} {'decode s':>9} "
              f"{'total s':>8} {'=viterbi':>8}")
    out.write(header + "\n")
    groups: dict[tuple, list[dict]] = {}
    for r in report["results"]:
        groups.setdefault((r["decoder"], r["sweeps"]), []).append(r)
    for (decoder, sweeps), rows in groups.items():
        if rows[0].get("graph", report["graph"]) != report["graph"]:
            decoder = f"{decoder}@{rows[0]['graph']}"
        for r in rows:
            out.write(
                f"{decoder:<12} {_blank(sweeps):>6} {_blank(r['seed']):>5} {r['f1']:14.2f} {r['precision']:6.2f} "
                f"{r['recall']:6.2f} {r['macro_f1']:6.2f} {r['decode_seconds']:9.2f} {r['total_seconds']:8.2f} "
                f"{r['viterbi_agreement']:8.2%}\n"
            )
        if len(rows) > 1:
            f1s = [r["f1"] for r in rows]
            mean = f"{statistics.mean(f1s):.2f} ({statistics.stdev(f1s):.2f})"
            seconds = statistics.mean(r["decode_seconds"] for r in rows)
            out.write(f"{decoder:<12} {_blank(sweeps):>6} {'mean':>5} {mean:>14} {'':>6} {'':>6} {'':>6} {seconds:9.2f}\n")
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
    out.write(f"{'decoder':<12} {'sweeps':>6} {'seed':>5} {'consist.':>8} {'=optimum':>8} {'mean gap':>10} {'max weights':>12}\n")
    for r in report["results"]:
        weights = r["stats_max"].get("weight_bytes")
        out.write(f"{r['decoder']:<12} {_blank(r['sweeps']):>6} {_blank(r['seed']):>5} {r['consistency_disagreement']:7.2f}% "
                  f"{r['optimum_fraction']:8.2%} {r['mean_optimum_gap']:10.4f} "
                  f"{'' if weights is None else f'{weights / 2**20:.2f} MiB':>12}\n")


def _blank(value: Any) -> str:
    return "" if value is None else str(value)


def write_json(report: dict[str, Any], path: str) -> None:
    Path(path).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


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
) -> dict[str, Any]:
    """``--input raw``: every document rebuilt as raw text (:mod:`hgner.rawtext`), tokenized and
    tagged by :class:`hgner.tag.Tagger` as ``hgner tag`` does, and scored by exact character span
    and type. The report has the ``--json`` schema with ``"input": "raw"`` and ``"layout"``;
    ``viterbi_agreement`` compares each run's tags with Viterbi's on the same tokens, and there is
    no ``mean_score_gap`` (the tokens are not the corpus's)."""
    from .rawtext import rebuild, score_spans
    from .tag import Tagger

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
    reference_tags: list[list[str]] = []  # Viterbi's tags on the same sentences, computed when first needed
    results = []
    for run in plan_runs(decoders, sweeps, seeds):
        run_graph = "chain" if decoder_class(run.decoder).chain_only else graph
        tagger = Tagger(model, run.decoder, run_graph, run.sweeps, run.seed, warn=lambda message: None)
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
        if run.decoder == "viterbi":
            agreement = 1.0
        else:
            reference_tags = reference_tags or [
                t for d, s in zip(documents, tokenized) for g in reference.tag_sentences(d.text, s) for t in g.tags]
            agreement = float(np.mean([a == b for a, b in zip(tags, reference_tags)])) if tags else 1.0
        flat = (([t for s in doc_sentences for t in s.tokens], [t for g in doc_groups for ts in g.tags for t in ts])
                for doc_sentences, doc_groups in zip(tokenized, groups))
        results.append({
            "decoder": run.decoder,
            "sweeps": run.sweeps,
            "seed": run.seed,
            "f1": result_score.micro.f1,
            "precision": result_score.micro.precision,
            "recall": result_score.micro.recall,
            "macro_f1": result_score.macro_f1,
            "per_type": {t: c.as_dict() for t, c in result_score.per_type.items()},
            "decode_seconds": decode_seconds,
            "total_seconds": tokenize_seconds + decode_seconds,
            "viterbi_agreement": agreement,
            "consistency_disagreement": consistency_disagreement(flat),
            "graph": run_graph,
            **_stats_summary([]),
        })
    n_sentences = sum(len(s) for s in tokenized)
    return {
        "corpus": corpus.name,
        "model": model.name,
        "scheme": corpus.scheme,
        "mode": "conlleval",
        "graph": graph,
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
