"""How often an entity of a given confidence is right: the tagger's entities on a tagged corpus's
own tokens, binned by confidence, against the gold spans.

    python benchmarks/confidence_calibration.py MODEL CORPUS [--documents MODE] [--decoder viterbi]

The entities and their confidences are ``hgner tag``'s (:class:`hgner.tag.Tagger` on each document's
own tokens and sentences, laid out as text by :func:`hgner.text.rawtext.rebuild`, so the tokenizer plays
no part); an entity is right when the gold has the same character span with the same type.
Prints one JSON line: per bin, the entities, their mean
confidence and the share that is right, and the expected calibration error (the entity-weighted
mean gap between the two).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hgner.data.reading import read_tagged  # noqa: E402
from hgner.tagging.settings import TagSettings
from hgner.tagging.tagger import Tagger  # noqa: E402
from hgner.text.rawtext import rebuild  # noqa: E402
from hgner.text.tokenizer import TokenizedSentence  # noqa: E402

BINS = [0.0, 0.5, 0.7, 0.9, 0.99, 1.0]  # the last bin is [0.99, 1.0], the others [low, high)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("corpus")
    parser.add_argument("--documents", default="auto")
    parser.add_argument("--decoder", default="viterbi")
    args = parser.parse_args(argv)
    tagger = Tagger(TagSettings(args.model, args.decoder))
    corpus = read_tagged(args.corpus, documents=args.documents, announce=False)[0]
    confidences, right = [], []
    for document in corpus.documents:
        raw = rebuild([s.tokens for s in document.sentences], [s.tags for s in document.sentences])
        sentences = [TokenizedSentence(list(s.tokens), offsets) for s, offsets in zip(document.sentences, raw.sentences)]
        gold = set(raw.entities)
        for group in tagger.tag_sentences(raw.text, sentences):
            for entity in group.entities:
                if entity.confidence is None:
                    raise SystemExit(f"decoder {args.decoder!r} gives no confidences")
                confidences.append(entity.confidence)
                right.append((entity.start, entity.end, entity.label) in gold)
    confidence, correct = np.array(confidences), np.array(right)
    bins, gap = {}, 0.0
    for low, high in zip(BINS, BINS[1:]):
        chosen = (confidence >= low) & ((confidence < high) | (high == BINS[-1]))
        if chosen.any():
            mean, share = float(confidence[chosen].mean()), float(correct[chosen].mean())
            bins[f"[{low}, {high}{']' if high == BINS[-1] else ')'}"] = {
                "entities": int(chosen.sum()), "mean_confidence": round(mean, 3), "right": round(share, 3)}
            gap += chosen.sum() * abs(mean - share)
    print(json.dumps({"model": args.model, "corpus": args.corpus, "decoder": args.decoder, "entities": len(confidence),
                      "mean_confidence": round(float(confidence.mean()), 3), "right": round(float(correct.mean()), 3),
                      "bins": bins, "expected_calibration_error": round(gap / len(confidence), 3)}))


if __name__ == "__main__":
    main(sys.argv[1:])
