"""English experiments for the unlabelled-data and case features, decided on the English dev sets
only: eng.testa and Wikigold together (eng.testa understates what helps out of domain), each also
lowercased and uppercased.

    python experiments/tune_english.py NAME [NAME ...]   # train on eng.train, score on the dev sets
    python experiments/tune_english.py --list            # the experiments
    python experiments/tune_english.py --spurious DIR    # a trained model's spurious entities on Wikigold (recorded)
    python experiments/tune_english.py --companies DIR   # how it tags well-known companies in short sentences (recorded)

Results are appended to ``experiments/tuning_english.jsonl`` (one JSON object per run); eng.testb is
never looked at here.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from itertools import product
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))  # build_models

from build_models import (  # noqa: E402
    CONLL03,
    FEATURES,
    GAZETTEER_SOURCES,
    ROOT,
    SCHEME,
    TRAINING,
    build_capitalised_share,
    build_gazetteer,
    build_outside_truecase,
    build_word_clusters,
    f1,
    gold_tags,
    predict,
    record,
    tokens_per_second,
)

from hgner.core.scoring import entity_spans  # noqa: E402
from hgner.crf.model import CrfModel  # noqa: E402
from hgner.data.augment import CASINGS, PROSE, augmented, case_augmented, is_table, prose_augmented, recased  # noqa: E402
from hgner.data.corpus import Corpus, load_corpus  # noqa: E402
from hgner.tagging.settings import TagSettings  # noqa: E402
from hgner.tagging.tagger import Tagger  # noqa: E402
from hgner.training import TrainOptions, WordTables  # noqa: E402
from hgner.training.crf import train  # noqa: E402

RESULTS = ROOT / "experiments" / "tuning_english.jsonl"
CLUSTERS = replace(FEATURES, word_clusters=True)
# en-conll03 as shipped before the neighbours' clusters and word frequencies (clusters with the lowercase
# forms', the outside truecasing table, caseless weights of their own, lower/upper copies): the
# experiments on top of it
AUGMENTED = replace(CLUSTERS, lowercase_clusters=True, outside_truecase=True, caseless_features=True)
UPPER_LOWER = tuple(CONLL03["case_augment"])
PROSE_RECASED = "prose, recased"  # the prose copy, and the recased copies of it too
PROSE_TABLES = "prose-tables"  # the prose copy of the table documents only (hgner.data.augment.is_table)
ORGANISATIONS = "org"  # the gazetteer's ORG list too (organisation_names below)
TABLES_AGAIN = "tables-again"  # a control: the table documents once more, as they are (not as prose)
# name -> (feature settings, changes to the corpus and tables: casings, "prose", PROSE_RECASED, PROSE_TABLES,
# TABLES_AGAIN, ORGANISATIONS[, L-BFGS settings over TRAINING])
EXPERIMENTS: dict[str, tuple] = {
    "shipped": (FEATURES, ()),
    "clusters": (CLUSTERS, ()),
    "clusters+lc": (replace(CLUSTERS, lowercase_clusters=True), ()),
    "clusters+nb": (replace(CLUSTERS, neighbour_clusters=1), ()),
    "clusters+nb+zipf": (replace(CLUSTERS, neighbour_clusters=1, frequency="en"), ()),
    "clusters+zipf": (replace(CLUSTERS, frequency="en"), ()),
    "clusters+nb+lower": (replace(CLUSTERS, neighbour_clusters=1), ("lower",)),
    "clusters+nb+lower+upper": (replace(CLUSTERS, neighbour_clusters=1), ("lower", "upper")),
    "clusters+lower+upper": (CLUSTERS, ("lower", "upper")),
    "clusters+otc": (replace(CLUSTERS, outside_truecase=True), ()),
    "clusters+nb+otc": (replace(CLUSTERS, neighbour_clusters=1, outside_truecase=True), ()),
    "clusters+nb+zipf+otc": (replace(CLUSTERS, neighbour_clusters=1, frequency="en", outside_truecase=True), ()),
    "clusters+lc+otc": (replace(CLUSTERS, lowercase_clusters=True, outside_truecase=True), ()),
    "clusters+otc+lower+upper": (replace(CLUSTERS, outside_truecase=True), ("lower", "upper")),
    "clusters+otc+sep+lower+upper": (replace(CLUSTERS, outside_truecase=True, caseless_features=True),
                                     ("lower", "upper")),
    "clusters+lc+nb+otc+sep+lower+upper": (replace(CLUSTERS, lowercase_clusters=True, neighbour_clusters=1,
                                                   outside_truecase=True, caseless_features=True), ("lower", "upper")),
    "en-conll03": (AUGMENTED, UPPER_LOWER),
    "en-conll03+it300": (AUGMENTED, UPPER_LOWER, {"max_iterations": 300}),
    "en-conll03+nb": (replace(AUGMENTED, neighbour_clusters=1), UPPER_LOWER),
    "en-conll03+zipf": (replace(AUGMENTED, frequency="en"), UPPER_LOWER),
    # en-conll03 as shipped now (tools/build_models.py), and L1 / L2 variants of it
    "en-conll03+nb+zipf": (replace(AUGMENTED, neighbour_clusters=1, frequency="en"), UPPER_LOWER),
    "en-conll03+nb+zipf+c1=0.1": (replace(AUGMENTED, neighbour_clusters=1, frequency="en"), UPPER_LOWER, {"c1": 0.1}),
    "en-conll03+nb+zipf+c2=0.03": (replace(AUGMENTED, neighbour_clusters=1, frequency="en"), UPPER_LOWER, {"c2": 0.03}),
    # the prose copy (hgner.data.augment.prose_augmented) on top of c2 0.03, and c2 0.05 (docs/development/research-log.md)
    "en-conll03+nb+zipf+c2=0.03+prose": (replace(AUGMENTED, neighbour_clusters=1, frequency="en"),
                                         (*UPPER_LOWER, PROSE), {"c2": 0.03}),
    "en-conll03+nb+zipf+c2=0.05": (replace(AUGMENTED, neighbour_clusters=1, frequency="en"), UPPER_LOWER, {"c2": 0.05}),
    # the prose copy recased too: eng.train and its prose copy, each also lowercased and uppercased (6 times eng.train)
    "en-conll03+nb+zipf+c2=0.03+prose-recased": (replace(AUGMENTED, neighbour_clusters=1, frequency="en"),
                                                 (*UPPER_LOWER, PROSE_RECASED), {"c2": 0.03}),
    "en-conll03+nb+zipf+c2=0.05+prose": (replace(AUGMENTED, neighbour_clusters=1, frequency="en"),
                                         (*UPPER_LOWER, PROSE), {"c2": 0.05}),
    # second round (docs/development/research-log.md): every document's prose copy with c2 scaled to the corpus (4 times
    # eng.train: 0.04), and the prose copy of the table documents only (hgner.data.augment.is_table)
    "en-conll03+nb+zipf+c2=0.04+prose": (replace(AUGMENTED, neighbour_clusters=1, frequency="en"),
                                         (*UPPER_LOWER, PROSE), {"c2": 0.04}),
    "en-conll03+nb+zipf+c2=0.03+prose-tables": (replace(AUGMENTED, neighbour_clusters=1, frequency="en"),
                                                (*UPPER_LOWER, PROSE_TABLES), {"c2": 0.03}),
    # E7: the table documents' prose copy with c2 scaled to its corpus (3.27 times eng.train's tokens: 0.035)
    "en-conll03+nb+zipf+c2=0.035+prose-tables": (replace(AUGMENTED, neighbour_clusters=1, frequency="en"),
                                                 (*UPPER_LOWER, PROSE_TABLES), {"c2": 0.035}),
    # E8, a control run after the choice: the table documents once more as they are, the same reweighting of
    # tables as E5 without the prose split
    "en-conll03+nb+zipf+c2=0.03+tables-again": (replace(AUGMENTED, neighbour_clusters=1, frequency="en"),
                                                (*UPPER_LOWER, TABLES_AGAIN), {"c2": 0.03}),
    # E9, a diagnostic after the choice: the prose copy recased too (6 times eng.train) with c2 scaled to it
    "en-conll03+nb+zipf+c2=0.06+prose-recased": (replace(AUGMENTED, neighbour_clusters=1, frequency="en"),
                                                 (*UPPER_LOWER, PROSE_RECASED), {"c2": 0.06}),
    # issue 41 item 5 (docs/development/research-log.md): E10, E1 plus each word's capitalised and upper-case shares in spaCy's
    # word probabilities in tenths (cs=0..10, cu=0..10); E11, the same in quarters
    "en-conll03+nb+zipf+c2=0.03+cs10": (replace(AUGMENTED, neighbour_clusters=1, frequency="en", capitalised_share=10),
                                        UPPER_LOWER, {"c2": 0.03}),
    "en-conll03+nb+zipf+c2=0.03+cs4": (replace(AUGMENTED, neighbour_clusters=1, frequency="en", capitalised_share=4),
                                       UPPER_LOWER, {"c2": 0.03}),
    # E12: E10 plus the neighbours' shares (the tokens one position away give theirs)
    "en-conll03+nb+zipf+c2=0.03+cs10+nb": (replace(AUGMENTED, neighbour_clusters=1, frequency="en", capitalised_share=10,
                                                   neighbour_shares=True), UPPER_LOWER, {"c2": 0.03}),
    # E13, a diagnostic after the decision: E12 in quarters
    "en-conll03+nb+zipf+c2=0.03+cs4+nb": (replace(AUGMENTED, neighbour_clusters=1, frequency="en", capitalised_share=4,
                                                  neighbour_shares=True), UPPER_LOWER, {"c2": 0.03}),
    # E14: E1 plus an ORG gazetteer list, the companies of twenty stock indices (pytickersymbols)
    "en-conll03+nb+zipf+c2=0.03+org": (replace(AUGMENTED, neighbour_clusters=1, frequency="en"),
                                       (*UPPER_LOWER, ORGANISATIONS), {"c2": 0.03}),
}


def organisation_names() -> list[str]:
    """E14's ``ORG`` gazetteer list: the companies of the twenty stock indices of ``pytickersymbols``
    (S&P 500, NASDAQ 100, DAX, FTSE 100, CAC 40, IBEX 35, AEX, NIKKEI 225, ...), each without its
    legal form (``cleanco``: ``Siemens AG`` -> ``Siemens``), with ``'s`` and commas split off as the
    corpora split them (``pip install pytickersymbols==1.17.10 cleanco==2.3``)."""
    from cleanco import basename
    from pytickersymbols.indices_data import INDICES

    names = {basename(company["name"]) for index in INDICES.values() for company in index["companies"]}
    return sorted(" ".join(re.sub(r"('s)\b|,", r" \g<0>", name).split()) for name in names if len(name) > 1)


# A diagnostic of the "everyday short sentences" (not a dev set, and no choice rests on it): well-known
# companies, written here by hand (not taken from E14's list), in short sentences of the kind users try first
COMPANIES = ("Google", "Microsoft", "Amazon", "Facebook", "Apple", "Siemens", "Toyota", "Nestle", "Samsung", "Intel",
             "Netflix", "Boeing", "Volkswagen", "Unilever", "Pfizer", "Nvidia", "Oracle", "Tesla", "Walmart", "Spotify",
             "Airbus", "Nokia", "Philips", "Shell", "Bayer")
COMPANY_SENTENCES = ("Maria Lopez joined {} last year.", "{} opened an office in Paris on Monday.",
                     "Shares of {} fell 3 percent.", "The deal gives {} a stake in the firm.",
                     "{} said it would cut 500 jobs.", "Analysts expect {} to report higher profits.",
                     "John Smith, a spokesman for {}, declined to comment.", "She worked at {} for ten years.")


def companies(model: CrfModel) -> Counter:
    """How the companies come out in the sentences (:data:`COMPANIES` in each of
    :data:`COMPANY_SENTENCES`), tagged by Viterbi as ``hgner tag`` tags them: counts of the type of
    the entity that covers the company's first character, or ``missed``."""
    tagger = Tagger(TagSettings(model.directory, "viterbi"), model)
    outcomes: Counter = Counter()
    for company, template in product(COMPANIES, COMPANY_SENTENCES):
        text = template.format(company)
        start = text.index(company)
        found = [entity.label for entity in tagger.tag(text) if entity.start <= start < entity.end]
        outcomes[found[0] if found else "missed"] += 1
    return outcomes


def spurious(model: CrfModel, corpus: Corpus) -> list[str]:
    """The entities Viterbi predicts on ``corpus`` that overlap no gold entity (of any type), as text."""
    found = []
    for sentence, gold, predicted in zip(corpus.sentences, gold_tags(corpus, model), predict(model, corpus)):
        covered = {i for start, end, _ in entity_spans(gold, corpus.scheme) for i in range(start, end)}
        found += [" ".join(sentence.tokens[start:end]) for start, end, _ in entity_spans(predicted, corpus.scheme)
                  if covered.isdisjoint(range(start, end))]
    return found


def run(name: str, train_corpus, devs: dict, keep: Path | None = None) -> dict:
    """Train experiment ``name`` on ``train_corpus``, score it on ``devs`` (each also lowercased and
    uppercased) and record the result; the model is kept in ``keep/NAME`` when given (to time it
    with ``hgner tag``), else thrown away."""
    config, augment, *more = EXPERIMENTS[name]
    training = {**TRAINING, **(more[0] if more else {})}
    casings = [a for a in augment if a in CASINGS]
    corpus = (case_augmented(prose_augmented(train_corpus, "en"), casings) if PROSE_RECASED in augment
              else augmented(train_corpus, casings, "all" if PROSE in augment else "tables" if PROSE_TABLES in augment
                             else "", "en"))
    if TABLES_AGAIN in augment:
        again = [replace(d, name=f"{d.name}:again") for d in train_corpus.documents if is_table(d)]
        corpus = replace(corpus, name=f"{corpus.name}+{TABLES_AGAIN}", documents=corpus.documents + again)
    clusters, sources = build_word_clusters("en") if config.word_clusters else (None, None)
    truecase, truecase_sources = build_outside_truecase("en") if config.outside_truecase else (None, None)
    shares, shares_sources = build_capitalised_share("en") if config.capitalised_share else (None, None)
    options = TrainOptions(config=config, scheme=SCHEME, **training, language="en")
    organisations = ORGANISATIONS in augment
    gazetteer = build_gazetteer() | ({"ORG": organisation_names()} if organisations else {})
    gazetteer_sources = GAZETTEER_SOURCES + (", pytickersymbols==1.17.10 and cleanco==2.3 (ORG, MIT)"
                                             if organisations else "")
    tables = WordTables(gazetteer, gazetteer_sources, clusters, sources, truecase, truecase_sources, shares,
                        shares_sources)
    with tempfile.TemporaryDirectory(prefix="hgner-tune-") as out:
        model = train(corpus, (keep or Path(out)) / name, options, tables)
        scores = {}
        for dev_name, dev in devs.items():
            scores[dev_name] = f1(model, dev)["f1"]
            for how in ("lower", "upper"):
                scores[f"{dev_name} {how}"] = f1(model, recased(dev, how))["f1"]
        result = {"name": name, "features": config.to_json(), "augment": list(augment), "training": training,
                  **scores,
                  "mean testa+wikigold": round((scores["conll2003:testa"] + scores["wikigold"]) / 2, 2),
                  # lowercased and uppercased text are first-class conditions: the mean of all six
                  "mean dev conditions": round(sum(scores.values()) / len(scores), 2),
                  "wikigold spurious": len(spurious(model, devs["wikigold"])),
                  "training_seconds": model.metadata["training"]["seconds"],
                  "model_bytes": model.metadata["model_bytes"], "attributes": len(model.attribute_index),
                  "tokens_per_second": round(tokens_per_second(model, devs["conll2003:testa"], repeats=2)),
                  "when": time.strftime("%Y-%m-%d %H:%M")}
    return record(RESULTS, result)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiments", nargs="*", metavar="NAME", help="experiments to run (see --list)")
    parser.add_argument("--list", action="store_true", help="list the experiments and their settings")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep each trained model in DIR/NAME")
    parser.add_argument("--spurious", type=Path, metavar="DIR",
                        help="print the entities the model in DIR predicts on Wikigold that overlap no gold entity")
    parser.add_argument("--companies", type=Path, metavar="DIR",
                        help="how the model in DIR tags well-known companies in short sentences (a diagnostic)")
    args = parser.parse_args(argv)
    if args.spurious:
        model = CrfModel.load(args.spurious)
        found = spurious(model, load_corpus("wikigold"))
        print(f"{model.name} ({args.spurious}): {len(found)} spurious entities on Wikigold:", "; ".join(sorted(found)))
        record(RESULTS, {"name": f"spurious: {model.name}", "model": str(args.spurious),
                         "features": model.feature_config.to_json(), "wikigold spurious": len(found),
                         "when": time.strftime("%Y-%m-%d %H:%M")})
        return
    if args.companies:
        model = CrfModel.load(args.companies)
        outcomes = companies(model)
        print(f"{model.name} ({args.companies}): {sum(outcomes.values())} sentences, the company tagged", dict(outcomes))
        record(RESULTS, {"name": f"companies: {model.name}", "model": str(args.companies), "companies": dict(outcomes),
                         "when": time.strftime("%Y-%m-%d %H:%M")})
        return
    if args.list or not args.experiments:
        for name, spec in EXPERIMENTS.items():
            print(name, spec)
        return
    unknown = sorted(set(args.experiments) - set(EXPERIMENTS))
    if unknown:
        parser.error(f"unknown experiment(s) {', '.join(unknown)}; see --list")
    train_corpus = load_corpus("conll2003:train")
    devs = {"conll2003:testa": load_corpus("conll2003:testa"), "wikigold": load_corpus("wikigold")}
    for name in args.experiments:
        run(name, train_corpus, devs, args.keep)


if __name__ == "__main__":
    main(argv=sys.argv[1:])
