"""Feature and document-mode experiments for the Spanish and Dutch models, on esp.testa / ned.testa only.

    python scripts/tune_conll02.py NAME [NAME ...]   # train on {esp,ned}.train, score Viterbi F1 on testa
    python scripts/tune_conll02.py --list            # the experiments
    python scripts/tune_conll02.py --table           # markdown table of the results so far

Results are appended to ``scripts/tuning_conll02.jsonl``; the table in ``scripts/TUNING.md`` is
made from it. The CoNLL-2002 test sets (testb) are not used anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_models import ROOT, build_gazetteer, f1, record, tokens_per_second  # noqa: E402

from hgner.corpus import load_corpus, regroup_documents  # noqa: E402
from hgner.features import FeatureConfig, learn_truecase  # noqa: E402
from hgner.model import train  # noqa: E402

RESULTS = ROOT / "scripts" / "tuning_conll02.jsonl"
FULL = dict(window=2, affixes=4, conjunctions=True, truecase=True, document=True, context=10)

# name -> (language, documents mode, feature settings, c1)
EXPERIMENTS = {
    "es-corpus": ("es", "corpus", FULL, 0.05),
    "es-sentence": ("es", "sentence", FULL, 0.05),
    "es-10": ("es", "10", FULL, 0.05),
    "es-sentence-aff6": ("es", "sentence", dict(FULL, affixes=6), 0.05),
    "es-sentence-win3": ("es", "sentence", dict(FULL, window=3), 0.05),
    "es-sentence-gaz": ("es", "sentence", dict(FULL, gazetteer=True), 0.05),
    "es-sentence-c1.02": ("es", "sentence", FULL, 0.02),
    "nl-corpus": ("nl", "corpus", FULL, 0.05),
    "nl-sentence": ("nl", "sentence", FULL, 0.05),
    "nl-corpus-aff6": ("nl", "corpus", dict(FULL, affixes=6), 0.05),
    "nl-corpus-gaz": ("nl", "corpus", dict(FULL, gazetteer=True), 0.05),
    "nl-corpus-win3": ("nl", "corpus", dict(FULL, window=3), 0.05),
}
CORPORA = {"es": ("nltk:conll2002/esp.train", "nltk:conll2002/esp.testa"),
           "nl": ("nltk:conll2002/ned.train", "nltk:conll2002/ned.testa")}


def run(name: str) -> dict:
    language, documents, settings, c1 = EXPERIMENTS[name]
    train_name, dev_name = CORPORA[language]
    train_corpus = regroup_documents(load_corpus(train_name), documents)
    dev = regroup_documents(load_corpus(dev_name), documents)
    config = FeatureConfig(**settings)
    gazetteer = build_gazetteer(learn_truecase(s.tokens for s in train_corpus.sentences)) if config.gazetteer else None
    keep = os.environ.get("HGNER_TUNE_KEEP")  # a folder to keep the trained models in, for later experiments
    with tempfile.TemporaryDirectory(prefix="hgner-tune-") as scratch:
        out = Path(keep) / name if keep else scratch
        model = train(train_corpus, out, config=config, scheme="IO", c1=c1, c2=0.01, max_iterations=150,
                      verbose=False, gazetteer=gazetteer)
        result = {
            "name": name,
            "language": language,
            "documents": documents,
            "features": config.to_json(),
            "c1": c1,
            "testa_f1": f1(model, dev)["f1"],
            "training_seconds": model.metadata["training"]["seconds"],
            "model_bytes": model.metadata["model_bytes"],
            "attributes": len(model.attribute_index),
            "tokens_per_second": round(tokens_per_second(model, dev, repeats=1)),
            "when": time.strftime("%Y-%m-%d %H:%M"),
        }
    return record(RESULTS, result)


def table() -> None:
    print("| experiment | documents | features | c1 | testa F1 | train s | model MB |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for line in RESULTS.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        f = r["features"]
        changes = ", ".join(f"{k} {v}" for k, v in f.items() if FULL.get(k, False if k == "gazetteer" else None) != v)
        print(f"| {r['name']} | {r['documents']} | {changes or 'full'} | {r['c1']} | {r['testa_f1']:.2f} | "
              f"{r['training_seconds']:.0f} | {r['model_bytes'] / 1e6:.1f} |")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(EXPERIMENTS))
    if args.table:
        table()
    unknown = sorted(set(args.names) - set(EXPERIMENTS))
    if unknown:
        parser.error(f"unknown experiment(s) {', '.join(unknown)}; see --list")
    for name in args.names:
        run(name)


if __name__ == "__main__":
    main(sys.argv[1:])
