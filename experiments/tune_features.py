"""Feature / regularisation experiments on eng.testa (the development set) only.

    python experiments/tune_features.py NAME [NAME ...]   # train on eng.train, score on eng.testa
    python experiments/tune_features.py --list            # the experiments
    python experiments/tune_features.py --table           # markdown table of the results so far

Results are appended to ``experiments/tuning_results.jsonl`` (one JSON object per run); the table in
``docs/development/research-log.md`` is made from it. eng.testb and IEER are never looked at here.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))  # build_models

from build_models import ROOT, build_gazetteer, f1, is_all_caps, record, tokens_per_second  # noqa: E402

from hgner.data.corpus import load_corpus  # noqa: E402
from hgner.features import FeatureConfig  # noqa: E402
from hgner.training import TrainOptions, WordTables  # noqa: E402
from hgner.training.crf import train  # noqa: E402

RESULTS = ROOT / "experiments" / "tuning_results.jsonl"

BASE = {"window": 2, "affixes": 4}
RICH = dict(BASE, conjunctions=True)
FULL = dict(RICH, truecase=True, document=True)

# name -> (feature settings, scheme, c1, c2, iterations)
EXPERIMENTS = {
    "baseline": (BASE, "IOB2", 0.05, 0.01, 150),
    "conj": (RICH, "IOB2", 0.05, 0.01, 150),
    "conj+truecase": (dict(RICH, truecase=True), "IOB2", 0.05, 0.01, 150),
    "conj+truecase+doc": (FULL, "IOB2", 0.05, 0.01, 150),
    "full-bioes": (FULL, "BIOES", 0.05, 0.01, 150),
    "full-bioes-c1.1": (FULL, "BIOES", 0.1, 0.01, 150),
    "full-bioes-c1.02": (FULL, "BIOES", 0.02, 0.01, 150),
    "full-bioes-c2.05": (FULL, "BIOES", 0.05, 0.05, 150),
    "full-bioes-it300": (FULL, "BIOES", 0.05, 0.01, 300),
    "full-bioes-aff6": (dict(FULL, affixes=6), "BIOES", 0.05, 0.01, 150),
    "full-bioes-win3": (dict(FULL, window=3), "BIOES", 0.05, 0.01, 150),
    "full-bioes-gaz": (dict(FULL, gazetteer=True), "BIOES", 0.05, 0.01, 150),
    "full-bioes-gaz-it300": (dict(FULL, gazetteer=True), "BIOES", 0.05, 0.01, 300),
    "full-bioes-gaz-ctx5": (dict(FULL, gazetteer=True, context=5), "BIOES", 0.05, 0.01, 150),
    "full-bioes-gaz-ctx5-aff6": (dict(FULL, gazetteer=True, context=5, affixes=6), "BIOES", 0.05, 0.01, 150),
    "full-bioes-gaz-ctx5-c1.1": (dict(FULL, gazetteer=True, context=5), "BIOES", 0.1, 0.01, 150),
    "full-bioes-gaz-ctx5-it300": (dict(FULL, gazetteer=True, context=5), "BIOES", 0.05, 0.01, 300),
    "full-bioes-gaz-ctx10": (dict(FULL, gazetteer=True, context=10), "BIOES", 0.05, 0.01, 150),
    "full-bioes-gaz-ctx25": (dict(FULL, gazetteer=True, context=25), "BIOES", 0.05, 0.01, 150),
}


def run(name: str, train_corpus, dev) -> dict:
    settings, scheme, c1, c2, iterations = EXPERIMENTS[name]
    config = FeatureConfig(**settings)
    gazetteer = build_gazetteer() if config.gazetteer else None
    with tempfile.TemporaryDirectory(prefix="hgner-tune-") as out:
        model = train(train_corpus, out, TrainOptions(config=config, scheme=scheme, c1=c1, c2=c2, max_iterations=iterations),
                      WordTables(gazetteer=gazetteer))
        result = {
            "name": name,
            "features": config.to_json(),
            "scheme": scheme,
            "c1": c1,
            "c2": c2,
            "iterations": iterations,
            "testa_f1": f1(model, dev)["f1"],
            "testa_allcaps_f1": f1(model, dev, is_all_caps)["f1"],
            "training_seconds": model.metadata["training"]["seconds"],
            "model_bytes": model.metadata["model_bytes"],
            "attributes": len(model.attribute_index),
            "tokens_per_second": round(tokens_per_second(model, dev)),
            "when": time.strftime("%Y-%m-%d %H:%M"),
        }
    return record(RESULTS, result)


def table() -> str:
    rows = [json.loads(line) for line in RESULTS.read_text(encoding="utf-8").splitlines() if line.strip()]
    lines = [
        "| configuration | scheme | c1 | c2 | iter | testa F1 | testa all-caps F1 | train s | model MB | tokens/s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['scheme']} | {r['c1']} | {r['c2']} | {r['iterations']} | {r['testa_f1']:.2f} | "
            f"{r['testa_allcaps_f1']:.2f} | {r['training_seconds']:.0f} | {r['model_bytes'] / 1e6:.1f} | "
            f"{r['tokens_per_second']:,} |"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiments", nargs="*", metavar="NAME", help="experiments to run (see --list)")
    parser.add_argument("--list", action="store_true", help="list the experiments and their settings")
    parser.add_argument("--table", action="store_true", help="print the results so far as a markdown table")
    args = parser.parse_args(argv)
    if args.table:
        print(table())
        return
    if args.list or not args.experiments:
        for name, spec in EXPERIMENTS.items():
            print(name, spec)
        return
    unknown = sorted(set(args.experiments) - set(EXPERIMENTS))
    if unknown:
        parser.error(f"unknown experiment(s) {', '.join(unknown)}; see --list")
    train_corpus = load_corpus("conll2003:train")
    dev = load_corpus("conll2003:testa")
    for name in args.experiments:
        run(name, train_corpus, dev)


if __name__ == "__main__":
    main(argv=sys.argv[1:])
