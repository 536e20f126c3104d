"""How well does the skip weight tuned on a dev set carry over to unseen documents? Split halves.

    python experiments/skip_weight_halves.py [--models en-conll03,en-3class,es-conll02,nl-conll02] [--splits 30] [--seed 0]

For each shipped model, the dev set its skip weight was tuned on (documents ``auto``) is split into two random
halves of documents ``--splits`` times. On each half the skip weight is tuned with ``exact`` over
hgner.training.skip.WEIGHTS (the model's skip table, learned from its training corpus, as shipped) and
scored on the other half, for several rules choosing the weight from the tuning half's F1 curve
(each document is decoded once per weight, ``hgner.training.skip.weight_counts``, and the halves' curves
summed from those counts, ``hgner.training.skip.held_out_gains``, whose ``argmax`` rule is the held-out
check of ``hgner.training.skip.tune``):
``argmax`` (hgner.training.skip.tune's rule: the best F1, ties to the smaller weight), ``within-D`` (the
smallest weight within D F1 of the best) and ``smooth3`` (the best mean of a weight's F1 and its
grid neighbours'). Printed per model and rule: the mean gain over the chain (weight 0) on the
held-out half, its standard deviation, how often it was below the chain, and the mean weight.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hgner.crf import skip  # noqa: E402
from hgner.crf.model import CrfModel  # noqa: E402
from hgner.data.reading import read_tagged  # noqa: E402
from hgner.training import skip as skip_training  # noqa: E402


def within(delta: float) -> Callable[[np.ndarray], int]:
    return lambda f1: int(np.flatnonzero(f1 >= f1.max() - delta)[0])


def smooth3(f1: np.ndarray) -> int:
    smoothed = np.array([f1[max(0, i - 1): i + 2].mean() for i in range(len(f1))])
    return int(np.flatnonzero(smoothed == smoothed.max())[0])


RULES: dict[str, Callable[[np.ndarray], int]] = {
    "argmax": skip_training.best_weight, "within-0.05": within(0.05), "within-0.1": within(0.1), "within-0.2": within(0.2),
    "smooth3": smooth3,
}


def counts_of(name: str) -> np.ndarray:
    """(W, D, 3) the entity counts of ``name``'s dev set (documents ``auto``, as the weight was tuned)
    per grid weight and document, decoded with the model's skip table (:func:`hgner.training.skip.weight_counts`)."""
    model = CrfModel.load(name)
    table = skip.load(model)
    dev, _ = read_tagged(table.info["tuned_on"], announce=False)
    return skip_training.weight_counts(table, model, dev)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="en-conll03,en-3class,es-conll02,nl-conll02")
    parser.add_argument("--splits", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    weights = np.array(skip_training.WEIGHTS)
    print("| model | rule | gain over the chain on the other half, mean (sd) | below the chain | mean weight |")
    print("| --- | --- | --- | --- | --- |")
    for name in args.models.split(","):
        counts = counts_of(name)
        for rule_name, rule in RULES.items():  # the same halvings for every rule
            gains, picked = skip_training.held_out_gains(counts, np.random.default_rng(args.seed), args.splits, rule)
            print(f"| {name} | {rule_name} | {gains.mean():+.3f} ({gains.std():.3f}) | {int((gains < 0).sum())} of "
                  f"{len(gains)} | {weights[picked].mean():.2f} |", flush=True)


if __name__ == "__main__":
    main()
