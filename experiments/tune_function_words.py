"""Choose the skip edges' function-word rule on the development sets of all three languages.

    python experiments/tune_function_words.py MODEL TRAIN DEV LANG [--documents MODE] [--rules r1,r2,...]

For each rule, the skip potential is estimated from TRAIN with that function-word list and its
weight tuned on DEV with ``exact`` (hgner.training.skip.tune); printed: the list size, the skip edges in
DEV, the share of them joining two gold-O tokens, and the tuned weight and dev F1. Rules:
``english`` (the 87 English words of the first models), ``stop`` (spaCy's stop words),
``learnedC-F`` (learned: seen capitalised >= C times, O in >= F of them, no fallback), and
``fallbackC-F`` (learned, spaCy's stop words only for the words seen capitalised fewer than C
times), ``unionC-F`` (learned, plus all of spaCy's stop words: the rule chosen, hgner.training.skip.function_words).
Results are appended to ``experiments/tuning_function_words.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hgner.crf import skip  # noqa: E402
from hgner.crf.model import CrfModel  # noqa: E402
from hgner.data.corpus import Corpus  # noqa: E402
from hgner.data.reading import read_tagged  # noqa: E402
from hgner.training import skip as skip_training  # noqa: E402

RESULTS = ROOT / "experiments" / "tuning_function_words.jsonl"


def words_for(rule: str, train: Corpus, language: str) -> tuple[str, ...]:
    if rule == "english":
        return skip.FUNCTION_WORDS
    if rule == "stop":
        return tuple(sorted(skip.stop_words(language)))
    kind, _, fraction = rule.partition("-")
    count = int(kind.lstrip("abcdefghijklmnopqrstuvwxyz"))
    learned = skip_training.function_words(train, None, min_count=count, o_fraction=float(fraction))
    if kind.startswith("fallback"):  # stop words only for the words seen capitalised fewer than `count` times
        rare = Counter(t.lower() for s in train.sentences for t in s.tokens if len(t) >= 2 and t[0].isupper())
        return tuple(sorted(set(learned) | {w for w in skip.stop_words(language) if rare[w] < count}))
    if kind.startswith("union"):  # hgner.training.skip.function_words: learned plus every stop word
        return skip_training.function_words(train, language, min_count=count, o_fraction=float(fraction))
    return learned


def o_share(dev: Corpus, config: skip.SkipConfig) -> tuple[int, float]:
    edges, both_o = 0, 0
    for document in dev.documents:
        tags = [t for s in document.sentences for t in s.tags]
        for a, b in skip.skip_edges([s.tokens for s in document.sentences], config):
            edges += 1
            both_o += tags[a] == "O" and tags[b] == "O"
    return edges, both_o / edges if edges else 0.0


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("train")
    parser.add_argument("dev")
    parser.add_argument("language")
    parser.add_argument("--documents", default="auto")
    parser.add_argument("--rules", default="english,stop,learned3-0.95,fallback3-0.95,fallback3-0.9,fallback5-0.99")
    args = parser.parse_args(argv)
    model = CrfModel.load(args.model)
    train, _ = read_tagged(args.train, documents=args.documents)
    dev, _ = read_tagged(args.dev, documents=args.documents)
    for rule in args.rules.split(","):
        started = time.perf_counter()
        config = skip.SkipConfig(function_words=words_for(rule, train, args.language))
        tuned = skip_training.tune(skip_training.estimate(train, model, config), model, dev)
        edges, share = o_share(dev, config)
        result = {"model": model.name, "dev": args.dev, "documents": args.documents, "rule": rule,
                  "words": len(config.function_words), "dev_edges": edges, "dev_edges_both_o": round(100 * share, 2),
                  "chain_f1": tuned.info["tuning"][0]["f1"], "weight": tuned.weight,
                  "skip_f1": max(r["f1"] for r in tuned.info["tuning"]),
                  "seconds": round(time.perf_counter() - started, 1)}
        print(json.dumps(result), flush=True)
        with open(RESULTS, "a", encoding="utf-8") as stream:
            stream.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
