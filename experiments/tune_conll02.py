"""Feature and document-mode experiments for the Spanish and Dutch models, on esp.testa / ned.testa only.

    python experiments/tune_conll02.py NAME [NAME ...]   # train on {esp,ned}.train, score Viterbi F1 on testa
    python experiments/tune_conll02.py --list            # the experiments
    python experiments/tune_conll02.py --table           # markdown table of the results so far

Results are appended to ``experiments/tuning_conll02.jsonl``; the table in ``docs/development/research-log.md`` is
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))  # build_models

from build_models import ROOT, TRAINING, build_gazetteer, build_word_clusters, f1, record, tokens_per_second  # noqa: E402

from hgner.core import schemes  # noqa: E402
from hgner.data.corpus import Corpus, Document, Sentence, load_corpus, regroup_documents  # noqa: E402
from hgner.features import FeatureConfig  # noqa: E402
from hgner.training import TrainOptions, WordTables  # noqa: E402
from hgner.training.crf import train  # noqa: E402

RESULTS = ROOT / "experiments" / "tuning_conll02.jsonl"
FULL = {"window": 2, "affixes": 4, "conjunctions": True, "truecase": True, "document": True, "context": 10}

GAZ = dict(FULL, gazetteer=True)  # the shipped es-conll02 / nl-conll02 features
TRAIN = TRAINING  # the shipped models' default L-BFGS settings (c1 0.05, c2 0.01, 150 iterations)
ES_TRAIN = dict(TRAIN, c2=0.05)  # es-conll02's since this tuning (tools/build_models.py)

# L-BFGS changes tried on the models with word clusters: name suffix -> change
ES_WC_LBFGS = {"c2.03": {"c2": 0.03}, "c2.1": {"c2": 0.1}, "c1.02": {"c1": 0.02}, "c1.1": {"c1": 0.1},
               "it200": {"max_iterations": 200}}
NL_WC_LBFGS = {"c2.03": {"c2": 0.03}, "c2.05": {"c2": 0.05}, "c2.1": {"c2": 0.1}, "c1.02": {"c1": 0.02},
               "it200": {"max_iterations": 200}}

# name -> (language, documents mode, feature settings, L-BFGS settings)
EXPERIMENTS = {
    "es-corpus": ("es", "corpus", FULL, TRAIN),
    "es-sentence": ("es", "sentence", FULL, TRAIN),
    "es-10": ("es", "10", FULL, TRAIN),
    "es-sentence-aff6": ("es", "sentence", dict(FULL, affixes=6), TRAIN),
    "es-sentence-win3": ("es", "sentence", dict(FULL, window=3), TRAIN),
    "es-sentence-gaz": ("es", "sentence", GAZ, TRAIN),
    "es-sentence-c1.02": ("es", "sentence", FULL, dict(TRAIN, c1=0.02)),
    # es-conll02 (documents 10, gazetteer; c2 0.01 before this tuning) with other L-BFGS settings and features
    "es-10-gaz": ("es", "10", GAZ, TRAIN),
    "es-10-gaz-it100": ("es", "10", GAZ, dict(TRAIN, max_iterations=100)),
    "es-10-gaz-it300": ("es", "10", GAZ, dict(TRAIN, max_iterations=300)),
    "es-10-gaz-c1.02": ("es", "10", GAZ, dict(TRAIN, c1=0.02)),
    "es-10-gaz-c1.1": ("es", "10", GAZ, dict(TRAIN, c1=0.1)),
    "es-10-gaz-c1.2": ("es", "10", GAZ, dict(TRAIN, c1=0.2)),
    "es-10-gaz-c2.03": ("es", "10", GAZ, dict(TRAIN, c2=0.03)),
    "es-10-gaz-c2.05": ("es", "10", GAZ, ES_TRAIN),  # the shipped es-conll02
    "es-10-gaz-c2.07": ("es", "10", GAZ, dict(TRAIN, c2=0.07)),
    "es-10-gaz-c2.1": ("es", "10", GAZ, dict(TRAIN, c2=0.1)),
    "es-10-gaz-c2.2": ("es", "10", GAZ, dict(TRAIN, c2=0.2)),
    "es-10-gaz-c2.05-it200": ("es", "10", GAZ, dict(ES_TRAIN, max_iterations=200)),
    "es-10-gaz-c2.05-it300": ("es", "10", GAZ, dict(ES_TRAIN, max_iterations=300)),
    "es-10-gaz-c1.02-c2.05": ("es", "10", GAZ, dict(ES_TRAIN, c1=0.02)),
    "es-10-gaz-c2.05-aff5": ("es", "10", dict(GAZ, affixes=5), ES_TRAIN),
    "es-10-gaz-c2.05-aff6": ("es", "10", dict(GAZ, affixes=6), ES_TRAIN),
    "es-10-gaz-c2.05-win3": ("es", "10", dict(GAZ, window=3), ES_TRAIN),
    "es-10-gaz-c2.05-ctx0": ("es", "10", dict(GAZ, context=0), ES_TRAIN),
    "es-10-gaz-c2.05-ctx20": ("es", "10", dict(GAZ, context=20), ES_TRAIN),
    "es-10-gaz-c2.05-noconj": ("es", "10", dict(GAZ, conjunctions=False), ES_TRAIN),
    "es-10-gaz-c2.05-notc": ("es", "10", dict(GAZ, truecase=False), ES_TRAIN),
    "es-10-gaz-c2.05-alt": ("es", "10", GAZ, ES_TRAIN),  # with GAZETTEER_OPTIONS below
    # esp.train with its quoted entities extended over their quote marks (TRAINING_TRANSFORMS)
    "es-10-gaz-c2.05-qmarks": ("es", "10", GAZ, ES_TRAIN),
    # the shipped settings with other document groupings (esp.train has no -DOCSTART-)
    **{f"es-{n}-gaz-c2.05": ("es", str(n), GAZ, ES_TRAIN) for n in (5, 20, 30, 40, 80, 160)},
    "nl-corpus": ("nl", "corpus", FULL, TRAIN),
    "nl-sentence": ("nl", "sentence", FULL, TRAIN),
    "nl-corpus-aff6": ("nl", "corpus", dict(FULL, affixes=6), TRAIN),
    "nl-corpus-gaz": ("nl", "corpus", GAZ, TRAIN),
    "nl-corpus-win3": ("nl", "corpus", dict(FULL, window=3), TRAIN),
    # nl-conll02 (the corpus's documents, gazetteer, c2 0.01) with es-conll02's more L2
    "nl-corpus-gaz-c2.05": ("nl", "corpus", GAZ, dict(TRAIN, c2=0.05)),
    "nl-corpus-gaz-c2.1": ("nl", "corpus", GAZ, dict(TRAIN, c2=0.1)),
    "nl-corpus-gaz-c2.003": ("nl", "corpus", GAZ, dict(TRAIN, c2=0.003)),
    "nl-corpus-gaz-c1.02": ("nl", "corpus", GAZ, dict(TRAIN, c1=0.02)),
    "nl-corpus-gaz-ctx20": ("nl", "corpus", dict(GAZ, context=20), TRAIN),
    "nl-corpus-gaz-aff5": ("nl", "corpus", dict(GAZ, affixes=5), TRAIN),
    # the shipped settings with Brown word clusters (WORD_CLUSTERS below)
    "es-10-gaz-c2.05-wc": ("es", "10", dict(GAZ, word_clusters=True), ES_TRAIN),
    "nl-corpus-gaz-wc": ("nl", "corpus", dict(GAZ, word_clusters=True), TRAIN),
    "nl-corpus-gaz-wc-en": ("nl", "corpus", dict(GAZ, word_clusters=True), TRAIN),
    # the L-BFGS settings checked again with the clusters (they were chosen without them)
    **{f"es-10-gaz-wc-{tag}": ("es", "10", dict(GAZ, word_clusters=True), dict(ES_TRAIN, **change))
       for tag, change in ES_WC_LBFGS.items()},
    **{f"nl-corpus-gaz-wc-{tag}": ("nl", "corpus", dict(GAZ, word_clusters=True), dict(TRAIN, **change))
       for tag, change in NL_WC_LBFGS.items()},
    # and the lowercase form's cluster for a capitalised word (FeatureConfig.lowercase_clusters)
    "es-10-gaz-wc-lc": ("es", "10", dict(GAZ, word_clusters=True, lowercase_clusters=True), ES_TRAIN),
    "nl-corpus-gaz-wc-lc": ("nl", "corpus", dict(GAZ, word_clusters=True, lowercase_clusters=True), TRAIN),
}

# experiments with word clusters: name -> the language of spaCy's cluster table (build_models.build_word_clusters;
# spaCy has none for Dutch)
WORD_CLUSTERS = {"es-10-gaz-c2.05-wc": "es", "nl-corpus-gaz-wc": "de", "nl-corpus-gaz-wc-en": "en",
                 **{f"es-10-gaz-wc-{tag}": "es" for tag in ES_WC_LBFGS},
                 **{f"nl-corpus-gaz-wc-{tag}": "de" for tag in NL_WC_LBFGS},
                 "es-10-gaz-wc-lc": "es", "nl-corpus-gaz-wc-lc": "de"}

# experiments whose gazetteer lists are built with other options (build_models.build_gazetteer)
GAZETTEER_OPTIONS = {
    "es-10-gaz-c2.05-alt": {"alternate_names": True},
}
CORPORA = {"es": ("nltk:conll2002/esp.train", "nltk:conll2002/esp.testa"),
           "nl": ("nltk:conll2002/ned.train", "nltk:conll2002/ned.testa")}


ENTITY_QUOTES = {'"': '"', "«": "»", "“": "”"}  # opening quotation mark -> its closing mark


def quoted_entities_include_marks(corpus: Corpus) -> tuple[Corpus, int]:
    """``corpus`` with every chunk that is immediately preceded by an opening quotation mark token
    and immediately followed by its closing one (``ENTITY_QUOTES``; straight ``"`` on both sides),
    both tagged O, extended over the two marks (same type; tags rewritten in the corpus's scheme),
    and how many chunks changed. A mark joins at most one chunk (``" A " B "``: B keeps out)."""
    changed = 0
    documents = []
    for document in corpus.documents:
        sentences = []
        for sentence in document.sentences:
            tokens, tags = sentence.tokens, sentence.tags
            spans, taken, moved = [], set(), 0
            for start, end, entity_type in schemes.chunks(tags or []):
                before, after = start - 1, end
                if (before >= 0 and after < len(tokens) and before not in taken
                        and ENTITY_QUOTES.get(tokens[before]) == tokens[after]
                        and tags[before] == "O" and tags[after] == "O"):
                    start, end = before, after + 1
                    taken.add(after)
                    moved += 1
                spans.append((start, end, entity_type))
            if moved:
                tags = schemes.render(spans, len(tokens), corpus.scheme)
                if corpus.scheme != "IO":  # (IO merges touching chunks of one type)
                    assert schemes.chunks(tags) == spans, (document.name, sentence.line)
                changed += moved
            sentences.append(Sentence(tokens, tags, sentence.line))
        documents.append(Document(document.name, sentences))
    return Corpus(corpus.name, corpus.scheme, documents, list(corpus.notes)), changed


# experiments whose training corpus is transformed first (name -> transform: corpus -> (corpus, chunks changed))
TRAINING_TRANSFORMS = {name: quoted_entities_include_marks for name in EXPERIMENTS if "-qmarks" in name}


def run(name: str) -> dict:
    language, documents, settings, lbfgs = EXPERIMENTS[name]
    train_name, dev_name = CORPORA[language]
    train_corpus = regroup_documents(load_corpus(train_name), documents)
    transform = TRAINING_TRANSFORMS.get(name)
    if transform is not None:
        train_corpus, changed = transform(train_corpus)
    dev = regroup_documents(load_corpus(dev_name), documents)
    config = FeatureConfig(**settings)
    lists = GAZETTEER_OPTIONS.get(name, {})
    gazetteer = None
    if config.gazetteer:
        gazetteer = build_gazetteer(**lists)
    clusters = build_word_clusters(WORD_CLUSTERS[name])[0] if config.word_clusters else None
    keep = os.environ.get("HGNER_TUNE_KEEP")  # a folder to keep the trained models in, for later experiments
    with tempfile.TemporaryDirectory(prefix="hgner-tune-") as scratch:
        out = Path(keep) / name if keep else scratch
        model = train(train_corpus, out, TrainOptions(config=config, scheme="IO", **lbfgs),
                      WordTables(gazetteer=gazetteer, word_clusters=clusters))
        scores = f1(model, dev)
        result = {
            "name": name,
            "language": language,
            "documents": documents,
            "features": config.to_json(),
            **lbfgs,
            **({"gazetteer_options": lists} if lists else {}),
            **({"word_clusters": WORD_CLUSTERS[name]} if clusters else {}),
            # the dev set is never transformed; how many of its chunks the rule would change is a check of the rule
            **({"training_transform": transform.__name__, "train_chunks_changed": changed,
                "testa_chunks_matching": transform(dev)[1]} if transform else {}),
            "testa_f1": scores["f1"],
            "testa_per_type": scores["per_type"],
            "training_seconds": model.metadata["training"]["seconds"],
            "model_bytes": model.metadata["model_bytes"],
            "attributes": len(model.attribute_index),
            "tokens_per_second": round(tokens_per_second(model, dev, repeats=1)),
            "when": time.strftime("%Y-%m-%d %H:%M"),
        }
    return record(RESULTS, result)


def table() -> None:
    print("| experiment | documents | features | c1 | c2 | iterations | testa F1 | train s | model MB |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for line in RESULTS.read_text(encoding="utf-8").splitlines():
        r = {**TRAIN, **json.loads(line)}  # the early results have c1 only
        features = r["features"].items()
        defaults = {**FeatureConfig().to_json(), **FULL}
        # a setting no longer in FeatureConfig (quotes: tried, then removed) was off by default
        changes = [f"{k} {v}" for k, v in features if defaults.get(k, False) != v]
        changes += [f"lists {k} {v}" for k, v in r.get("gazetteer_options", {}).items()]
        changes += [f"spaCy's {r['word_clusters']} clusters"] if "word_clusters" in r else []
        changes += [f"train {r['training_transform']}"] if "training_transform" in r else []
        changes = ", ".join(changes + [f"{k} {v}" for k, v in r.get("feature_options", {}).items()])
        print(f"| {r['name']} | {r['documents']} | {changes or 'full'} | {r['c1']} | {r['c2']} | "
              f"{r['max_iterations']} | {r['testa_f1']:.2f} | {r['training_seconds']:.0f} | "
              f"{r['model_bytes'] / 1e6:.1f} |")


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
