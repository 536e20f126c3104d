"""``hgner evaluate``: decoders compete on one corpus, scored by entity F1.

Every document is featurised and turned into a graph once; each (decoder, sweeps, seed) run
then decodes every graph. Figures per run: F1/P/R (percent), per-type scores, decode seconds,
total seconds (graph building plus decoding), agreement with Viterbi, the mean score gap to
Viterbi on the chain model, and the label-consistency disagreement.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from tqdm import tqdm

from . import schemes
from .corpus import Corpus, write_conll
from .decoders import decoder_options, make_decoder
from .decoders.chain import viterbi
from .model import CrfModel, map_types
from .pipeline import DocumentGraph, Pipeline
from .scoring import consistency_disagreement, score


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


def gold_tags(corpus: Corpus, model: CrfModel) -> list[list[str]]:
    """Gold tags in the corpus scheme, with entity types the model does not know mapped as the
    model's training mapped them (e.g. MISC -> O for a 3-class model)."""
    label_map = model.metadata.get("label_map") or {}
    return [
        schemes.render(map_types(schemes.chunks(s.tags), label_map), len(s.tokens), corpus.scheme)
        for s in corpus.sentences
    ]


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
    score_scheme = corpus.scheme if mode == "conlleval" else model.scheme
    gold_scored = gold if mode == "conlleval" else [schemes.convert(t, model.scheme) for t in gold]
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
    for run in plan_runs(decoders, sweeps, seeds):
        pipeline = Pipeline(model, make_decoder(run.decoder, sweeps=run.sweeps, seed=run.seed), graph)
        started = time.perf_counter()
        decoded = [
            pipeline.decode_prepared(p)
            for p in tqdm(prepared, desc=run.label, unit="doc", disable=not progress, leave=False)
        ]
        decode_seconds = time.perf_counter() - started
        predicted = [tags for result in decoded for tags in result.tags]
        in_corpus_scheme = [schemes.convert(tags, corpus.scheme) for tags in predicted]
        result_score = score(gold_scored, in_corpus_scheme if mode == "conlleval" else predicted, score_scheme, mode)
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
            "per_type": {t: c.as_dict() for t, c in result_score.per_type.items()},
            "decode_seconds": decode_seconds,
            "total_seconds": build_seconds + decode_seconds,
            "viterbi_agreement": float(agreement),
            "mean_score_gap": float(np.mean(gaps)) if gaps else 0.0,
            "consistency_disagreement": consistency_disagreement(flat),
        })
        if predictions:
            path = Path(predictions)
            if len(decoders) > 1 or len(sweeps) > 1 or len(seeds) > 1:
                path = path.with_name(f"{path.stem}.{run.label}{path.suffix}")
            with open(path, "w", encoding="utf-8") as out:
                write_conll(out, corpus, in_corpus_scheme)
    return {
        "corpus": corpus.name,
        "model": model.name,
        "scheme": score_scheme,
        "mode": mode,
        "graph": graph,
        "documents": len(corpus.documents),
        "sentences": len(corpus.sentences),
        "tokens": corpus.n_tokens,
        "build_seconds": build_seconds,
        "notes": corpus.notes,
        "results": results,
    }


def format_report(report: dict[str, Any], out: TextIO) -> None:
    """The results table: one row per run, then a mean (sd) row for decoders run with several seeds."""
    out.write(
        f"model {report['model']} on {report['corpus']}: {report['documents']} documents, "
        f"{report['sentences']} sentences, {report['tokens']} tokens; scheme {report['scheme']}, "
        f"mode {report['mode']}, graph {report['graph']}\n"
    )
    for note in report["notes"]:
        out.write(f"note: {note}\n")
    header = f"{'decoder':<12} {'sweeps':>6} {'seed':>5} {'F1':>14} {'P':>6} {'R':>6} {'decode s':>9} {'total s':>8} {'=viterbi':>8}"
    out.write(header + "\n")
    groups: dict[tuple, list[dict]] = {}
    for r in report["results"]:
        groups.setdefault((r["decoder"], r["sweeps"]), []).append(r)
    for (decoder, sweeps), rows in groups.items():
        for r in rows:
            out.write(
                f"{decoder:<12} {_blank(sweeps):>6} {_blank(r['seed']):>5} {r['f1']:14.2f} {r['precision']:6.2f} "
                f"{r['recall']:6.2f} {r['decode_seconds']:9.2f} {r['total_seconds']:8.2f} {r['viterbi_agreement']:8.2%}\n"
            )
        if len(rows) > 1:
            f1s = [r["f1"] for r in rows]
            mean = f"{statistics.mean(f1s):.2f} ({statistics.stdev(f1s):.2f})"
            seconds = statistics.mean(r["decode_seconds"] for r in rows)
            out.write(f"{decoder:<12} {_blank(sweeps):>6} {'mean':>5} {mean:>14} {'':>6} {'':>6} {seconds:9.2f}\n")


def _blank(value: Any) -> str:
    return "" if value is None else str(value)


def write_json(report: dict[str, Any], path: str) -> None:
    Path(path).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
