"""Why herded Gibbs at 800 sweeps agrees less with Viterbi on some dev sets: per sentence, its
length and the exact probability of the Viterbi labelling, p(MAP) = exp(score(MAP) - log Z).

    python experiments/herded_lag.py MODEL DEV [--documents MODE] [--sweeps 800]

Herded returns the best labelling it visited (per sentence: sentences are separate components of
a chain graph), so it misses the MAP of a sentence whose MAP it never visits; a sampler visits a
labelling about p(MAP) x sweeps times. Prints agreement by sentence length and by p(MAP), how
many disagreements herded's labelling scores lower than Viterbi's (a search miss), and how many
are *type swaps*: the same entity spans, some with another type. Single-site updates cannot make
that move in one step: every state between the two mixes two types inside one entity.

The model is measured as it loads, with its calibration factor (``meta.json``, printed as
``calibration``; :mod:`hgner.calibration`) on every potential.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hgner.core.schemes import chunks  # noqa: E402
from hgner.crf.model import CrfModel  # noqa: E402
from hgner.crf.pipeline import Pipeline  # noqa: E402
from hgner.data.reading import read_tagged  # noqa: E402
from hgner.decoders import make_decoder  # noqa: E402
from hgner.decoders.chain import forward_backward, viterbi  # noqa: E402
from hgner.graph.factor_graph import FactorGraph  # noqa: E402

LENGTHS = [(1, 10), (11, 20), (21, 40), (41, 80), (81, 10**6)]
P_MAP = [(0.5, 1.01), (0.1, 0.5), (0.01, 0.1), (0.0, 0.01)]


def _share(chosen: np.ndarray, agree: np.ndarray) -> list:
    """[sentences chosen, % of them on which herded agrees with Viterbi (None when none)]."""
    return [int(chosen.sum()), round(100 * agree[chosen].mean(), 2) if chosen.any() else None]


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
    for document in corpus.documents:
        prepared = builder.prepare([s.tokens for s in document.sentences])
        reference = prepared.split(viterbi(prepared.chain))
        sampled = prepared.split(herded.decode(prepared.chain).labels)
        start = 0
        for length, y_ref, y_her in zip(map(len, prepared.sentences), reference, sampled):
            sentence = FactorGraph.chain(prepared.chain.unary[start:start + length], prepared.chain.potentials[0],
                                         [length])
            start += length
            log_z = forward_backward(sentence)[1]
            p_map = float(np.exp(sentence.score(y_ref) - log_z))
            spans = [[(start, end) for start, end, _ in chunks([model.labels[y] for y in labels])]
                     for labels in (y_ref, y_her)]
            rows.append((length, p_map, bool(np.array_equal(y_ref, y_her)), sentence.score(y_her) - sentence.score(y_ref),
                         spans[0] == spans[1]))
    lengths, p_maps, agree, gaps, same_spans = (np.array(column) for column in zip(*rows))
    summary = {"model": model.name, "calibration": model.calibration, "dev": args.dev, "sweeps": args.sweeps,
               "sentences": len(rows),
               "agreement": round(100 * agree.mean(), 2), "mean_length": round(float(lengths.mean()), 1),
               "labels": len(model.labels), "disagreements": int((~agree).sum()),
               "disagreements_scoring_lower": int(((~agree) & (gaps < -1e-9)).sum()),
               "type_swaps": int(((~agree) & same_spans).sum()),
               "by_length": {}, "by_p_map": {}}
    for low, high in LENGTHS:
        chosen = (lengths >= low) & (lengths <= high)
        summary["by_length"][f"{low}-{high if high < 10**6 else ''}"] = _share(chosen, agree)
    for low, high in P_MAP:
        chosen = (p_maps >= low) & (p_maps < high)
        summary["by_p_map"][f"[{low}, {min(high, 1.0)})"] = _share(chosen, agree)
    summary["share_p_map_below_0.1"] = round(100 * float((p_maps < 0.1).mean()), 2)
    summary["median_p_map"] = round(float(np.median(p_maps)), 3)
    print(json.dumps(summary))


if __name__ == "__main__":
    main(sys.argv[1:])
