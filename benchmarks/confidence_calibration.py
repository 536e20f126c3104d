"""How often an entity of a given confidence is right: the tagger's entities on a tagged corpus's
own tokens, binned by confidence, against the gold spans, before and after the model's confidence map.

    python benchmarks/confidence_calibration.py MODEL CORPUS [--documents MODE] [--decoder viterbi]
        [--cross-fit] [--json FILE]

The entities and their confidences are ``hgner tag``'s (:func:`hgner.training.confidence.tagged_entities`:
:class:`hgner.tagging.tagger.Tagger` on each document's own tokens and sentences, laid out as text by
:func:`hgner.text.rawtext.rebuild`, so the tokenizer plays no part); an entity is right when the gold
has the same character span with the same type. "before" is the confidence without the model's map
(``meta.json``'s ``entity_confidence``), "after" with it; with ``--cross-fit`` (for the corpus the map
was fitted on, the dev set) "after" is each entity's confidence under the map fitted on the other half
of the corpus's documents (:func:`hgner.training.confidence.cross_fitted`), an honest held-out figure.
Prints one JSON line: per bin, the entities, their mean confidence and the share that is right; the
expected calibration error (the entity-weighted mean gap between the two) over the bins
[0, 0.5, 0.7, 0.9, 0.99, 1] and over 10 equal bins (the curve); the same per novelty group (entities
of words the model knows, new names). ``--json FILE`` also keeps it in FILE (a JSON list, one record
per model, corpus and decoder, replaced when run again): docs/results/confidence.json is the docs'.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hgner.core.fileio import write_text  # noqa: E402
from hgner.crf.model import CONFIDENCE_GROUPS, CrfModel  # noqa: E402
from hgner.data.reading import read_tagged  # noqa: E402
from hgner.training.confidence import (  # noqa: E402
    EntitySample,
    cross_fitted,
    expected_calibration_error,
    reliability,
    tagged_entities,
)

CURVE = tuple(round(float(x), 1) for x in np.linspace(0, 1, 11))  # the reliability curve's bins


def summary(confidences: np.ndarray, right: np.ndarray) -> dict[str, Any]:
    """Mean confidence, share right, the bins, the curve and their ECEs of (N,) entities."""
    rounded = {name: {k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}
               for name, row in reliability(confidences, right).items()}
    curve = {name: {k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}
             for name, row in reliability(confidences, right, CURVE).items()}
    return {"mean_confidence": round(float(confidences.mean()), 4), "right": round(float(right.mean()), 4),
            "bins": rounded, "expected_calibration_error": round(expected_calibration_error(confidences, right), 4),
            "curve": curve, "curve_calibration_error": round(expected_calibration_error(confidences, right, CURVE), 4)}


def measure(model: CrfModel, corpus_name: str, documents: str, decoder: str, cross_fit: bool) -> dict[str, Any]:
    """The record of ``model``'s entities on the corpus, before and after its confidence map."""
    corpus = read_tagged(corpus_name, documents=documents, announce=False)[0]
    sample = tagged_entities(model, corpus, raw=True, decoder=decoder)
    if not len(sample.right):
        raise SystemExit(f"model {model.name} finds no entity in {corpus_name}")
    if np.isnan(sample.confidences).any():
        raise SystemExit(f"decoder {decoder!r} gives no confidences")
    if cross_fit:
        after, how = cross_fitted(sample), "cross-fitted on the corpus's halves"
    elif model.confidence_map is not None:
        after, how = model.confidence_map(sample.confidences, sample.known), \
            f"the model's map (fitted on {model.metadata['entity_confidence'].get('corpus', 'its dev set')})"
    else:
        after, how = None, "none: the model has no confidence map"
    record: dict[str, Any] = {"model": model.name, "corpus": corpus_name, "documents": documents, "decoder": decoder,
                              "entities": len(sample.right), "map": how, "before": summary(sample.confidences, sample.right)}
    if after is not None:
        record["after"] = summary(after, sample.right)
        record["groups"] = groups(sample, after)
    return record


def groups(sample: EntitySample, after: np.ndarray) -> dict[str, dict[str, Any]]:
    """Per novelty group: its entities, share right, mean confidence and ECE before and after."""
    found = {}
    for name, chosen in zip(CONFIDENCE_GROUPS, (sample.known, ~sample.known)):
        if chosen.any():
            right = sample.right[chosen]
            found[name] = {"entities": int(chosen.sum()), "right": round(float(right.mean()), 4),
                           **{f"{when}_{what}": round(value, 4) for when, confidences in
                              (("before", sample.confidences[chosen]), ("after", after[chosen]))
                              for what, value in (("mean_confidence", float(confidences.mean())),
                                                  ("ece", expected_calibration_error(confidences, right)))}}
    return found


def keep(path: Path, record: dict[str, Any]) -> None:
    """``record`` in the JSON list in ``path``, replacing one of the same model, corpus and decoder."""
    key = ("model", "corpus", "decoder")
    records = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
    records = [r for r in records if tuple(r[k] for k in key) != tuple(record[k] for k in key)] + [record]
    write_text(path, json.dumps(records, indent=1) + "\n")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("corpus")
    parser.add_argument("--documents", default="auto")
    parser.add_argument("--decoder", default="viterbi")
    parser.add_argument("--cross-fit", action="store_true",
                        help="after: the map fitted on the other half of the corpus's documents (for the dev set)")
    parser.add_argument("--json", type=Path, help="keep the record in this JSON list too")
    args = parser.parse_args(argv)
    record = measure(CrfModel.load(args.model), args.corpus, args.documents, args.decoder, args.cross_fit)
    print(json.dumps(record))
    if args.json:
        keep(args.json, record)


if __name__ == "__main__":
    main(sys.argv[1:])
