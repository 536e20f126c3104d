"""Learn a model's skip potential and tune its weight, writing skip.npz and skip.json into the model.

The log-ratio table is estimated from the gold label pairs on the skip edges of the training
corpus (see hgner/skip.py); the weight is the one on the grid whose skip-chain decoding (by the
``--decoder``, default ``exact``) scores the best entity F1 on the development corpus (ties go
to the smaller weight). Only the development corpus is decoded: never eng.testb or IEER.

    python scripts/build_skip.py MODEL [--train conll2003:train] [--dev conll2003:testa]
                                 [--weights 0,0.25,0.5,...] [--previous 1] [--decoder exact]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hgner import schemes, skip  # noqa: E402
from hgner.corpus import load_corpus  # noqa: E402
from hgner.decoders import make_decoder  # noqa: E402
from hgner.evaluate import gold_tags  # noqa: E402
from hgner.model import CrfModel  # noqa: E402
from hgner.pipeline import Pipeline  # noqa: E402
from hgner.scoring import score  # noqa: E402

WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="model name or directory")
    parser.add_argument("--train", default="conll2003:train", help="corpus the table is estimated from")
    parser.add_argument("--dev", default="conll2003:testa", help="corpus the weight is tuned on")
    parser.add_argument("--weights", default=",".join(map(str, WEIGHTS)), help="comma-separated weight grid")
    parser.add_argument("--previous", type=int, default=skip.SkipConfig.previous,
                        help=f"join each name to this many earlier occurrences (default {skip.SkipConfig.previous})")
    parser.add_argument("--decoder", default="exact", help="decoder used for tuning (default exact)")
    parser.add_argument("--sweeps", type=int, default=800, help="sweeps, when the decoder is a sampler")
    args = parser.parse_args()

    model = CrfModel.load(args.model)
    started = time.perf_counter()
    table = skip.estimate(load_corpus(args.train), model, skip.SkipConfig(previous=args.previous))
    print(f"{table.info['edges']} skip edges in {args.train}; estimated in {time.perf_counter() - started:.1f}s")

    dev = load_corpus(args.dev)
    gold = gold_tags(dev, model)
    builder = Pipeline(model, make_decoder("viterbi"))
    documents = [[s.tokens for s in d.sentences] for d in dev.documents]
    prepared = [builder.prepare(sentences) for sentences in documents]
    edges = [skip.skip_edges(sentences, table.config) for sentences in documents]
    decoder = make_decoder(args.decoder, shared={"sweeps": args.sweeps, "seed": 0})
    tuning = []
    for weight in (float(w) for w in args.weights.split(",")):
        started = time.perf_counter()
        predicted = []
        certified = 0.0
        for p, e in zip(prepared, edges):
            decoding = decoder.decode(p.chain.with_edges(e, weight * table.log_ratio))
            certified += decoding.stats.get("certified", 0.0)
            predicted += [schemes.convert([model.labels[k] for k in piece], dev.scheme) for piece in p.split(decoding.labels)]
        f1 = score(gold, predicted, dev.scheme).micro.f1
        tuning.append({"weight": weight, "f1": round(f1, 3), "certified": certified / len(prepared)})
        print(f"weight {weight:5.2f}: F1 {f1:.2f} on {args.dev} ({args.decoder}; "
              f"certified {certified:.0f}/{len(prepared)}; {time.perf_counter() - started:.1f}s)")
    best = max(tuning, key=lambda row: (row["f1"], -row["weight"]))
    tuned = skip.SkipModel(table.config, table.labels, table.counts, table.log_ratio, best["weight"],
                           {**table.info, "tuned_on": args.dev, "tuning_decoder": args.decoder, "tuning": tuning})
    skip.save(tuned, model.directory)
    print(f"weight {best['weight']} (F1 {best['f1']:.2f} on {args.dev}); wrote {model.directory / skip.SKIP_ARRAYS} "
          f"and {model.directory / skip.SKIP_META}")


if __name__ == "__main__":
    main()
