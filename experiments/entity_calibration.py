"""The candidates of experiments/entity_calibration.md on the shipped models' dev sets, cross-fitted.

    python experiments/entity_calibration.py [MODEL ...] [--json FILE]

For each model: its dev corpus (meta.json's dev corpus and documents), the entities and their raw
confidences (no confidence map), then each candidate map (A: one Platt map, B: Platt per type, C: one
isotonic map, D: isotonic per type, E: Platt per novelty group, E2: per group of the training corpus's
words; experiments/entity_calibration.md)
fitted on the even documents and applied to the odd ones and the other way round; prints the
cross-fitted ECE (the benchmark's bins, and 10 equal bins; pooled, within E's novelty groups, and within
the yardstick's groups: the entity's text an entity of the training corpus or not).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np
from sklearn.isotonic import IsotonicRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hgner.core import schemes  # noqa: E402
from hgner.crf.model import CrfModel, log_odds  # noqa: E402
from hgner.data.corpus import Corpus  # noqa: E402
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


Fitted = Callable[[EntitySample], Callable[[EntitySample], np.ndarray]]


def per_group(fit: Callable[[np.ndarray, np.ndarray], Map], field: str = "known") -> Fitted:
    """Candidates E and E2: one map for entities of known words, one for new names (too few: the
    pooled map); ``field``: the sample's grouping (``attributes``: E's, ``known``: E2's)."""
    def fitted(sample: EntitySample) -> Callable[[EntitySample], np.ndarray]:
        pooled = fit(sample.confidences, sample.right)
        groups = getattr(sample, field)
        maps = {k: fit(sample.confidences[groups == k], sample.right[groups == k])
                for k in (True, False) if (groups == k).sum() >= MIN_TYPE}

        def apply(other: EntitySample) -> np.ndarray:
            out = pooled(other.confidences)
            for k, m in maps.items():
                chosen = getattr(other, field) == k
                if chosen.any():
                    out[chosen] = m(other.confidences[chosen])
            return out
        return apply
    return fitted


def within_groups(confidences: np.ndarray, sample: EntitySample, groups: np.ndarray | None = None) -> float:
    """The entity-weighted mean of the ECE of each group (default: the known and new groups)."""
    groups = sample.known if groups is None else groups
    return sum(expected_calibration_error(confidences[groups == k], sample.right[groups == k])
               * (groups == k).sum() for k in (True, False) if (groups == k).any()) / len(sample.right)


@dataclass(frozen=True)
class Grouped(EntitySample):
    """A sample with E's groups (``attributes``: every token has a ``w=`` or ``l=`` attribute in the
    model) beside E2's (``known``, the library's: every token a word of the training corpus), and the
    yardstick's (``seen``: the entity's text an entity of the training corpus)."""

    attributes: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    seen: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))

    def part(self, chosen: np.ndarray) -> Grouped:
        return Grouped(*(getattr(self, f.name)[chosen] for f in fields(self)))


def grouped(model: CrfModel, corpus: Corpus) -> Grouped:
    """The raw sample of ``model`` on ``corpus`` with the groups of E and the yardstick's."""
    train = read_tagged(model.metadata["training"]["corpus"].split("+")[0], announce=False)[0]
    entities = {" ".join(s.tokens[a:b]) for s in train.sentences for a, b, _ in schemes.chunks(s.tags or [])}
    tokens: list[list[str]] = []
    knows = model.knows

    def recorded(entity: list[str]) -> bool:
        tokens.append(list(entity))
        return knows(entity)

    model.knows = recorded  # type: ignore[method-assign]
    sample = tagged_entities(model, corpus, raw=True)
    model.knows = knows  # type: ignore[method-assign]
    index = model.attribute_index
    return Grouped(*(getattr(sample, f.name) for f in fields(sample)),
                   attributes=np.array([all(f"w={t}" in index or f"l={t.lower()}" in index for t in entity)
                                        for entity in tokens]),
                   seen=np.array([" ".join(entity) in entities for entity in tokens]))


CANDIDATES = {"A platt": pooled(platt), "B platt per type": per_type(platt), "C isotonic": pooled(isotonic),
              "D isotonic per type": per_type(isotonic), "E platt per novelty": per_group(platt, "attributes"),
              "E2 platt per training words": per_group(platt)}


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
    sample = grouped(model, corpus)
    row = {"model": name, "corpus": dev["corpus"], "documents": len(corpus.documents), "entities": len(sample.right),
           "right": round(float(sample.right.mean()), 4), "mean_confidence": round(float(sample.confidences.mean()), 4),
           "raw": {"ece": round(expected_calibration_error(sample.confidences, sample.right), 4),
                   "ece10": round(expected_calibration_error(sample.confidences, sample.right, TEN), 4),
                   "within_attributes": round(within_groups(sample.confidences, sample, sample.attributes), 4),
                   "within_words": round(within_groups(sample.confidences, sample), 4),
                   "yardstick": round(within_groups(sample.confidences, sample, sample.seen), 4)},
           "attributes_known": round(float(sample.attributes.mean()), 4), "seen": round(float(sample.seen.mean()), 4),
           "known": round(float(sample.known.mean()), 4),
           **{f"{name}_right_confidence": [[round(float(sample.right[groups == k].mean()), 4),
                                             round(float(sample.confidences[groups == k].mean()), 4)] for k in (True, False)]
              for name, groups in (("attributes", sample.attributes), ("words", sample.known), ("seen", sample.seen))},
           "types": {t: int((sample.types == t).sum()) for t in sorted(set(sample.types))}}
    for label, fit in CANDIDATES.items():
        mapped = cross_fitted(sample, fit)
        row[label] = {"ece": round(expected_calibration_error(mapped, sample.right), 4),
                      "ece10": round(expected_calibration_error(mapped, sample.right, TEN), 4),
                      "within_attributes": round(within_groups(mapped, sample, sample.attributes), 4),
                      "within_words": round(within_groups(mapped, sample), 4),
                      "yardstick": round(within_groups(mapped, sample, sample.seen), 4),
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
