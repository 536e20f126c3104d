"""Why herded Gibbs at 800 sweeps agrees less with Viterbi on some dev sets: per sentence, its
length and the exact probability of the Viterbi labelling, p(MAP) = exp(score(MAP) - log Z).

    python scripts/herded_lag.py MODEL DEV [--documents MODE] [--sweeps 800]

Herded returns the best labelling it visited (per sentence: sentences are separate components of
a chain graph), so it misses the MAP of a sentence whose MAP it never visits; a sampler visits a
labelling about p(MAP) x sweeps times. Prints agreement by sentence length and by p(MAP), how
many disagreements herded's labelling scores lower than Viterbi's (a search miss), and how many
are *type swaps*: the same entity spans, some with another type. Single-site updates cannot make
that move in one step: every state between the two mixes two types inside one entity.

It also asks whether the model is sharper or flatter than the dev set supports (``calibration``):
the factor on every potential that minimises the dev set's gold negative log-likelihood (below 1:
the model is overconfident), that likelihood with and without it, and herded's agreement with
Viterbi on the model so scaled (Viterbi's labelling does not change with the factor).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import minimize_scalar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hgner.corpus import relabel_tags  # noqa: E402
from hgner.decoders import make_decoder  # noqa: E402
from hgner.decoders.chain import forward_backward, viterbi  # noqa: E402
from hgner.graph import FactorGraph  # noqa: E402
from hgner.model import CrfModel  # noqa: E402
from hgner.pipeline import Pipeline  # noqa: E402
from hgner.reading import read_tagged  # noqa: E402
from hgner.schemes import chunks  # noqa: E402

LENGTHS = [(1, 10), (11, 20), (21, 40), (41, 80), (81, 10**6)]
P_MAP = [(0.5, 1.01), (0.1, 0.5), (0.01, 0.1), (0.0, 0.01)]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("dev")
    parser.add_argument("--documents", default=None, help="default: the model's documents mode")
    parser.add_argument("--sweeps", type=int, default=800)
    args = parser.parse_args(argv)
    model = CrfModel.load(args.model)
    corpus = read_tagged(args.dev, documents=args.documents or model.metadata.get("documents", "corpus"))[0]
    builder = Pipeline(model, make_decoder("viterbi"))
    herded = make_decoder("herded", sweeps=args.sweeps)
    rows = []  # (length, p_map, agree, herded score - viterbi score, type swap)
    label_ids = {label: k for k, label in enumerate(model.labels)}
    graphs = []  # per document: (unary, sentence lengths, gold labels) for the calibration check
    for document in corpus.documents:
        prepared = builder.prepare([s.tokens for s in document.sentences])
        reference = prepared.split(viterbi(prepared.chain))
        sampled = prepared.split(herded.decode(prepared.chain).labels)
        gold = [label_ids[tag] for s in document.sentences
                for tag in relabel_tags(s.tags, model.metadata.get("label_map"), model.metadata["scheme"])]
        graphs.append((prepared.chain.unary, [len(s) for s in prepared.sentences], np.array(gold)))
        start = 0
        for length, y_ref, y_her in zip(map(len, prepared.sentences), reference, sampled):
            sentence = FactorGraph.chain(prepared.chain.unary[start:start + length], model.transitions, [length])
            start += length
            log_z = forward_backward(sentence)[1]
            p_map = float(np.exp(sentence.score(y_ref) - log_z))
            spans = [[(start, end) for start, end, _ in chunks([model.labels[y] for y in labels])]
                     for labels in (y_ref, y_her)]
            rows.append((length, p_map, bool(np.array_equal(y_ref, y_her)), sentence.score(y_her) - sentence.score(y_ref),
                         spans[0] == spans[1]))
    lengths, p_maps, agree, gaps, same_spans = (np.array(column) for column in zip(*rows))
    summary = {"model": model.name, "dev": args.dev, "sweeps": args.sweeps, "sentences": len(rows),
               "agreement": round(100 * agree.mean(), 2), "mean_length": round(float(lengths.mean()), 1),
               "labels": len(model.labels), "disagreements": int((~agree).sum()),
               "disagreements_scoring_lower": int(((~agree) & (gaps < -1e-9)).sum()),
               "type_swaps": int(((~agree) & same_spans).sum()),
               "by_length": {}, "by_p_map": {}}
    for low, high in LENGTHS:
        chosen = (lengths >= low) & (lengths <= high)
        summary["by_length"][f"{low}-{high if high < 10**6 else ''}"] = [int(chosen.sum()), round(100 * agree[chosen].mean(), 2) if chosen.any() else None]
    for low, high in P_MAP:
        chosen = (p_maps >= low) & (p_maps < high)
        summary["by_p_map"][f"[{low}, {min(high, 1.0)})"] = [int(chosen.sum()), round(100 * agree[chosen].mean(), 2) if chosen.any() else None]
    summary["share_p_map_below_0.1"] = round(100 * float((p_maps < 0.1).mean()), 2)
    summary["median_p_map"] = round(float(np.median(p_maps)), 3)
    summary["calibration"] = calibration(graphs, model.transitions, herded)
    print(json.dumps(summary))


def calibration(graphs: list[tuple[np.ndarray, list[int], np.ndarray]], transitions: np.ndarray, herded) -> dict:
    """The factor on every potential that minimises the gold negative log-likelihood of ``graphs``
    (per document: unary (n, K), sentence lengths, gold labels (n,)), that likelihood at 1 and at
    the factor, and herded's agreement with Viterbi (share of sentences) on the scaled graphs."""

    def scaled(factor: float) -> list[tuple[FactorGraph, list[int], np.ndarray]]:
        return [(FactorGraph.chain(factor * unary, factor * transitions, lengths), lengths, gold)
                for unary, lengths, gold in graphs]

    def gold_nll(factor: float) -> float:
        return sum(forward_backward(graph)[1] - graph.score(gold) for graph, _, gold in scaled(factor))

    factor = float(minimize_scalar(gold_nll, bounds=(0.1, 3.0), method="bounded", options={"xatol": 1e-3}).x)
    agree = []
    for graph, lengths, _ in scaled(factor):
        cuts = np.cumsum(lengths)[:-1]
        agree += [np.array_equal(a, b) for a, b in zip(np.split(viterbi(graph), cuts),
                                                       np.split(herded.decode(graph).labels, cuts))]
    return {"factor": round(factor, 3), "gold_nll": round(gold_nll(1.0), 1), "gold_nll_at_factor": round(gold_nll(factor), 1),
            "agreement_at_factor": round(100 * float(np.mean(agree)), 2)}


if __name__ == "__main__":
    main(sys.argv[1:])
