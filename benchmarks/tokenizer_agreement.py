"""Tokenizer agreement: the share of corpus sentences whose tokens hgner's tokenizer reproduces
from the rebuilt raw text (see hgner.text.rawtext), and how well it finds the sentence boundaries.

Each document is rebuilt in the chosen layout and tokenized whole, as ``hgner tag`` would. A
sentence agrees when the tokens found inside its character span are exactly the corpus tokens
(none crossing its edges). Boundaries: of the corpus's sentence boundaries, the share the
splitter finds (recall), and of the splitter's boundaries, the share that are the corpus's
(precision).

With ``--model``, sentences are split as tagging with that model splits them: the rules, and the
model's learned sentence starts (:mod:`hgner.text.sentence_starts`) where the rules leave a run without
an end; without it, by the rules alone.

Usage: python benchmarks/tokenizer_agreement.py [--corpora conll2003:testa,conll2003:testb]
       [--layout lines] [--language en] [--model NAME] [--spacy-default] [--show N] [--json FILE]
``--show N`` prints N disagreeing sentences per corpus (tune on testa and train only).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from hgner.data.corpus import load_corpus
from hgner.tagging.settings import TagSettings
from hgner.tagging.tagger import Tagger
from hgner.text.rawtext import LAYOUTS, rebuild
from hgner.text.tokenizer import SpacyDefaultTokenizer, TextTokenizer


def agreement(corpus_name: str, tokenizer: TextTokenizer, layout: str, show: int) -> dict[str, float]:
    corpus = load_corpus(corpus_name)
    agree = total = 0
    found_boundaries = gold_boundaries = predicted_boundaries = right_boundaries = 0
    shown = 0
    for document in corpus.documents:
        sentences = [s.tokens for s in document.sentences]
        raw = rebuild(sentences, [s.tags for s in document.sentences], layout)
        predicted = tokenizer(raw.text)
        spans = [(start, end) for s in predicted for start, end in s.offsets]
        starts = {s.offsets[0][0] for s in predicted[1:]}
        gold_starts = {offsets[0][0] for offsets in raw.sentences[1:]}
        gold_boundaries += len(gold_starts)
        predicted_boundaries += len(starts)
        right_boundaries += len(starts & gold_starts)
        found_boundaries += len(starts & gold_starts)
        position = 0
        for tokens, offsets in zip(sentences, raw.sentences):
            first, last = offsets[0][0], offsets[-1][1]
            while position < len(spans) and spans[position][1] <= first:
                position += 1
            inside = []
            j = position
            while j < len(spans) and spans[j][0] < last:
                inside.append(spans[j])
                j += 1
            total += 1
            if inside == offsets:
                agree += 1
            elif shown < show:
                shown += 1
                print(f"  {corpus_name}: {' '.join(tokens)}\n    got: {' | '.join(raw.text[a:b] for a, b in inside)}")
    return {
        "sentences": total,
        "agreement": 100.0 * agree / total if total else 0.0,
        "boundary_recall": 100.0 * found_boundaries / gold_boundaries if gold_boundaries else 0.0,
        "boundary_precision": 100.0 * right_boundaries / predicted_boundaries if predicted_boundaries else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpora", default="conll2003:testa,conll2003:testb", help="comma-separated corpora")
    parser.add_argument("--layout", choices=LAYOUTS, default="lines", help="how sentences are laid out (default lines)")
    parser.add_argument("--language", default="en", help="tokenizer language (default en)")
    parser.add_argument("--model", help="split as tagging with this model does (its learned sentence starts too)")
    parser.add_argument("--spacy-default", action="store_true",
                        help="measure spaCy's default tokenizer and sentencizer instead (hgner's before the CoNLL rules)")
    parser.add_argument("--show", type=int, default=0, metavar="N", help="print N disagreeing sentences per corpus")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    if args.spacy_default:
        tokenizer: TextTokenizer = SpacyDefaultTokenizer(args.language)
    else:
        tokenizer = Tagger(TagSettings(args.model)).tokenizer if args.model else TextTokenizer(args.language)
    figures = {}
    print(f"tokenizer {tokenizer.name} v{tokenizer.version} ({tokenizer.language}), layout {args.layout}")
    print(f"{'corpus':<20} {'sentences':>9} {'agreement':>9} {'bound. R':>9} {'bound. P':>9}")
    for name in args.corpora.split(","):
        result = agreement(name, tokenizer, args.layout, args.show)
        figures[name] = result
        print(f"{name:<20} {result['sentences']:9d} {result['agreement']:8.2f}% "
              f"{result['boundary_recall']:8.2f}% {result['boundary_precision']:8.2f}%")
    if args.json:
        Path(args.json).write_text(json.dumps({"layout": args.layout, "corpora": figures}, indent=2) + "\n",
                                   encoding="utf-8")


if __name__ == "__main__":
    main()
