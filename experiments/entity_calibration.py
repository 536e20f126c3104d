"""The candidates of experiments/entity_calibration.md on the shipped models' dev sets, cross-fitted.

    python experiments/entity_calibration.py [MODEL ...] [--json FILE]

For each model: its dev corpus (meta.json's dev corpus and documents), the entities and their raw
confidences (no confidence map), then each candidate map (A: one Platt map, B: Platt per type, C: one
isotonic map, D: isotonic per type, E: Platt per novelty group; experiments/entity_calibration.md)
fitted on the even documents and applied to the odd ones and the other way round; prints the
cross-fitted ECE (the benchmark's bins, and 10 equal bins; pooled and within the novelty groups).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
from sklearn.isotonic import IsotonicRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hgner.crf.model import CrfModel, log_odds  # noqa: E402
from hgner.data.reading import read_tagged  # noqa: E402
from hgner.training import confidence  # noqa: E402
from hgner.training.confidence import EntitySample, expected_calibration_error, tagged_entities  # noqa: E402

MIN_TYPE = 100  # entities a type needs for a map of its own
TEN = tuple(np.linspace(0, 1, 11))
Map = Callable[[np.ndarray], np.ndarray]


def platt(confidences: np.ndarray, right: np.ndarray) -> Map:
    fitted = confidence.platt(confidences, right)
    return lambda p: 1 / (1 + np.exp(-(fitted["slope"] * log_odds(p) + fitted["intercept"])))


def isotonic(confidences: np.ndarray, right: np.ndarray) -> Map:
    fitted = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(confidences, right.astype(float))
    return lambda p: fitted.predict(p)


def per_type(fit: Callable[[np.ndarray, np.ndarray], Map]) -> Callable[[EntitySample], Callable[[EntitySample], np.ndarray]]:
    def fitted(sample: EntitySample) -> Callable[[EntitySample], np.ndarray]:
        pooled = fit(sample.confidences, sample.right)
        maps = {t: fit(sample.confidences[sample.types == t], sample.right[sample.types == t])
                for t in set(sample.types) if (sample.types == t).sum() >= MIN_TYPE}

        def apply(other: EntitySample) -> np.ndarray:
            out = pooled(other.confidences)
            for t, m in maps.items():
                chosen = other.types == t
                if chosen.any():
                    out[chosen] = m(other.confidences[chosen])
            return out
        return apply
    return fitted


def pooled(fit: Callable[[np.ndarray, np.ndarray], Map]) -> Callable[[EntitySample], Callable[[EntitySample], np.ndarray]]:
    def fitted(sample: EntitySample) -> Callable[[EntitySample], np.ndarray]:
        m = fit(sample.confidences, sample.right)
        return lambda other: m(other.confidences)
    return fitted


def per_group(fit: Callable[[np.ndarray, np.ndarray], Map]) -> Callable[[EntitySample], Callable[[EntitySample], np.ndarray]]:
    """Candidate E: one map for entities of known words, one for new names (too few: the pooled map)."""
    def fitted(sample: EntitySample) -> Callable[[EntitySample], np.ndarray]:
        pooled = fit(sample.confidences, sample.right)
        maps = {k: fit(sample.confidences[sample.known == k], sample.right[sample.known == k])
                for k in (True, False) if (sample.known == k).sum() >= MIN_TYPE}

        def apply(other: EntitySample) -> np.ndarray:
            out = pooled(other.confidences)
            for k, m in maps.items():
                chosen = other.known == k
                if chosen.any():
                    out[chosen] = m(other.confidences[chosen])
            return out
        return apply
    return fitted


def within_groups(confidences: np.ndarray, sample: EntitySample) -> float:
    """The entity-weighted mean of the known and new groups' ECE."""
    return sum(expected_calibration_error(confidences[sample.known == k], sample.right[sample.known == k])
               * (sample.known == k).sum() for k in (True, False) if (sample.known == k).any()) / len(sample.right)


CANDIDATES = {"A platt": pooled(platt), "B platt per type": per_type(platt), "C isotonic": pooled(isotonic),
              "D isotonic per type": per_type(isotonic), "E platt per novelty": per_group(platt)}


def cross_fitted(sample: EntitySample, fit: Callable[[EntitySample], Callable[[EntitySample], np.ndarray]]) -> np.ndarray:
    """Each entity's confidence under the map fitted on the other half of the documents."""
    even = sample.documents % 2 == 0
    out = np.empty_like(sample.confidences)
    out[even] = fit(sample.part(~even))(sample.part(even))
    out[~even] = fit(sample.part(even))(sample.part(~even))
    return out


def run(name: str) -> dict:
    model = CrfModel.load(name)
    dev = model.metadata["dev"]
    corpus = read_tagged(dev["corpus"], documents=dev["documents"], announce=False)[0]
    sample = tagged_entities(model, corpus, raw=True)
    row = {"model": name, "corpus": dev["corpus"], "documents": len(corpus.documents), "entities": len(sample.right),
           "right": round(float(sample.right.mean()), 4), "mean_confidence": round(float(sample.confidences.mean()), 4),
           "raw": {"ece": round(expected_calibration_error(sample.confidences, sample.right), 4),
                   "ece10": round(expected_calibration_error(sample.confidences, sample.right, TEN), 4),
                   "within_groups": round(within_groups(sample.confidences, sample), 4)},
           "known": round(float(sample.known.mean()), 4),
           "right_known": round(float(sample.right[sample.known].mean()), 4),
           "right_new": round(float(sample.right[~sample.known].mean()), 4),
           "types": {t: int((sample.types == t).sum()) for t in sorted(set(sample.types))}}
    for label, fit in CANDIDATES.items():
        mapped = cross_fitted(sample, fit)
        row[label] = {"ece": round(expected_calibration_error(mapped, sample.right), 4),
                      "ece10": round(expected_calibration_error(mapped, sample.right, TEN), 4),
                      "within_groups": round(within_groups(mapped, sample), 4),
                      "mean_confidence": round(float(mapped.mean()), 4)}
    return row


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=["en-conll03", "en-3class", "es-conll02", "nl-conll02"])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    for name in args.models:
        row = run(name)
        print(json.dumps(row), flush=True)
        if args.json:
            with args.json.open("a", encoding="utf-8") as out:
                out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
